// A large body on a socket that never pushes back (a fast reader on loopback) is handed
// over a budget per event-loop turn, not to its end in one go: the bytes of one turn
// stay within BODY_BYTES_PER_TURN (plus the chunk that crossed it), the rest follow in
// later turns, in order, and the body still ends exactly once. The socket here is a
// stand-in for uWebSockets.js's HttpResponse that takes every byte offered, as its
// tryEnd documents ([ok, done]); the stream logic under test is ours.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UwsTransport } from '../../http/transport/uwsTransport.ts';
import { BODY_BYTES_PER_TURN, type TransportResponse } from '../../http/transport/transport.ts';
import type { Uws } from '../../http/transport/loadUws.ts';

/** A uWS HttpResponse whose socket takes everything, recording what each turn received. */
class GreedySocket {
  readonly received: Buffer[] = [];
  /** Bytes handed over so far (the test reads it between turns). */
  offset = 0;
  corked = 0;
  ended = false;
  private aborted: (() => void) | null = null;

  tryEnd(bytes: Buffer, total: number): [boolean, boolean] {
    assert.equal(this.ended, false, 'no write after the end');
    this.received.push(Buffer.from(bytes));
    this.offset += bytes.length;
    const done = this.offset === total;
    if (done) this.ended = true;
    return [true, done];
  }
  getWriteOffset(): number {
    return this.offset;
  }
  onWritable(): this {
    throw new Error('a socket that never pushes back is never waited on');
  }
  onAborted(handler: () => void): this {
    this.aborted = handler;
    return this;
  }
  cork(fn: () => void): this {
    this.corked++;
    fn();
    return this;
  }
  end(): this {
    this.ended = true;
    return this;
  }
  abort(): void {
    this.aborted?.();
  }
}

function chunksOf(total: number, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < total; at += size, i++) chunks.push(Buffer.alloc(Math.min(size, total - at), i % 251));
  return chunks;
}

const transport = new UwsTransport({ _cfg: () => undefined } as unknown as Uws, 'uWebSockets.js (stand-in socket)');

describe('a large body on a socket that never pushes back', () => {
  it('is handed over at most a turn budget at a time, in order, and ends once', async () => {
    const chunkSize = 64 * 1024 + 7;
    const chunks = chunksOf(10 * BODY_BYTES_PER_TURN + 12_345, chunkSize);
    const total = chunks.reduce((sum, c) => sum + c.length, 0);
    const socket = new GreedySocket();
    const ends: boolean[] = [];
    transport.streamBody(socket as unknown as TransportResponse, chunks, total, { waited: () => assert.fail('no push-back here'), done: (completed) => ends.push(completed) });
    const perTurn: number[] = [];
    let seen = 0;
    for (let turn = 0; turn < 1000 && ends.length === 0; turn++) {
      perTurn.push(socket.offset - seen);
      seen = socket.offset;
      await nextTurn();
    }
    perTurn.push(socket.offset - seen);
    assert.deepEqual(ends, [true]);
    assert.ok(perTurn.length >= 10, `${perTurn.length} turns for ${total} bytes`);
    for (const bytes of perTurn) assert.ok(bytes <= BODY_BYTES_PER_TURN + chunkSize, `a turn handed over ${bytes} bytes`);
    assert.ok(Buffer.concat(socket.received).equals(Buffer.concat(chunks)), 'the bytes arrive whole and in order');
    assert.ok(socket.corked >= 9, 'a later turn writes inside cork');
  });

  it('stops at the turn it was aborted in, writing nothing after', async () => {
    const chunks = chunksOf(8 * BODY_BYTES_PER_TURN, 256 * 1024);
    const total = chunks.reduce((sum, c) => sum + c.length, 0);
    const socket = new GreedySocket();
    const ends: boolean[] = [];
    transport.streamBody(socket as unknown as TransportResponse, chunks, total, { waited: () => undefined, done: (completed) => ends.push(completed) });
    const before = socket.offset;
    assert.ok(before > 0 && before < total);
    socket.abort();
    for (let turn = 0; turn < 20; turn++) await nextTurn();
    assert.equal(socket.offset, before, 'nothing is written after the client left');
    assert.deepEqual(ends, [false]);
  });
});
