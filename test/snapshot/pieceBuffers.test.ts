// The shared memory of snapshot pieces is reused, never while someone still reads it:
// a buffer goes back to its free list only when its last holder (the kept rows, a
// compression in flight, a walk that has not placed its pieces yet) released it, and
// versions built on reused memory, with kept pieces dropped in the middle of walks
// while other pieces are still being compressed, are still the board at their syncToken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { BoardSnapshot, type SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { ByteSink } from '../../engine/snapshot/byteSink.ts';
import { sharedPiece } from '../../engine/snapshot/compressionWorkers.ts';
import { bufferSize, PieceBufferPool, pieceBuffers } from '../../engine/snapshot/pieceBuffers.ts';
import { KeptPieceRows } from '../../engine/snapshot/keptPieceRows.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { fixtureEngine, referenceText } from '../helpers/snapshot-helpers.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('sizes: at least the length, at most an eighth more above 4 KiB, and pieces of similar size share one', () => {
  for (const length of [1, 100, 4096, 4097, 5000, 65535, 65536, 65537, 100_000, 1_000_000, 7_654_321]) {
    const size = bufferSize(length);
    assert.ok(size >= length, `${length} -> ${size}`);
    if (length > 4096) assert.ok(size <= length * 1.125 + 1, `${length} -> ${size}`);
    else assert.equal(size, 4096);
  }
  assert.equal(bufferSize(100_001), bufferSize(100_002));
});

test('a released buffer is reused; one still held is not; every holder must release', () => {
  const pool = new PieceBufferPool();
  const a = pool.take(10_000);
  assert.equal(a.length, 10_000);
  assert.ok(a.buffer instanceof SharedArrayBuffer);
  pool.retain(a);
  pool.retain(a); // two holders: the kept rows and a compression in flight
  pool.release(a);
  const b = pool.take(10_000);
  assert.notEqual(b.buffer, a.buffer, 'one holder left: not handed out again');
  pool.release(a);
  const c = pool.take(10_100); // the same size step
  assert.equal(c.buffer, a.buffer, 'no holder left: the memory is reused');
  assert.equal(c.length, 10_100);
  assert.deepEqual(pool.stats, { allocated: 2, reused: 1 });
  pool.release(b); // never retained: ignored, left to the collector
  assert.notEqual(pool.take(10_000).buffer, b.buffer);
});

test('versions built on reused piece memory, kept pieces dropped mid-walk, compression in flight: each is the board at its syncToken', async () => {
  const { engine, clock } = fixtureEngine(6, 3 * 3600_000);
  // A kept-rows budget of a few pieces: keeping one drops others in the middle of a
  // walk, and their memory is taken again by the next pieces, while the pieces of
  // the walk are still to be placed and compressed on the worker threads.
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 2 * 1024, renderedBytes: 16 * 1024, stepMs: 2 });
  const first = snapshot.current(false);
  const reusedBefore = pieceBuffers.stats.reused;
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 9 });
  const boardAt = new Map<string, string>();
  const seen = new Map<string, SnapshotBody>();
  for (let turn = 0; turn < 400 && seen.size < 6; turn++) {
    sim.step(turn % 3 === 0 ? 300 : 20);
    boardAt.set(String(engine.asOf()), referenceText(engine, false));
    const body = snapshot.latest(false)!;
    if (body !== first) seen.set(body.etag, body);
    await nextTurn();
  }
  await snapshot.whenCurrent(false);
  const last = snapshot.latest(false)!;
  seen.set(last.etag, last);
  boardAt.set(String(engine.asOf()), referenceText(engine, false));
  assert.ok(seen.size >= 4, `${seen.size} versions`);
  for (const body of seen.values()) {
    const expected = boardAt.get(body.syncToken);
    assert.ok(expected !== undefined, `syncToken ${body.syncToken} is an asOf the board passed through`);
    assert.equal(gunzipSync(Buffer.concat(body.chunks as Buffer[])).toString('utf8'), expected);
  }
  assert.ok(pieceBuffers.stats.reused > reusedBefore, 'piece memory was reused');
  snapshot.close();
});

test("a kept piece's row table goes after its bytes in its own shared memory, never into memory another buffer uses", () => {
  const rowsOf = (kept: KeptPieceRows, raw: Buffer, key: string) => {
    kept.begin();
    for (let i = 0; i < 3; i++) kept.row(100 + i, 4 * i, 4 * i + 3, 0);
    kept.keep(key, raw);
    const sink = new ByteSink(64);
    kept.begin();
    return [0, 1, 2].map((i) => kept.copy(sink, 100 + i, 0, 0x2c));
  };
  // From sharedPiece with the room asked for: the table is in the piece's own memory.
  const kept = new KeptPieceRows(1 << 20);
  const bytes = Buffer.from('[1],[2],[3]');
  kept.begin();
  for (let i = 0; i < 3; i++) kept.row(100 + i, 4 * i, 4 * i + 3, 0);
  const room = kept.tableBytes(bytes.length);
  assert.ok(room >= 3 * 16);
  const shared = sharedPiece(bytes, room);
  assert.ok(pieceBuffers.roomAfter(shared) >= room);
  assert.deepEqual(rowsOf(kept, shared, 'a'), [3, 3, 3]);
  assert.equal(shared.toString(), '[1],[2],[3]', 'the bytes themselves untouched');
  // One of node's pooled Buffers shares its memory with its neighbours: no room, the
  // table gets an array of its own, and the neighbour keeps its bytes.
  const pooled = Buffer.allocUnsafe(11);
  const neighbour = Buffer.allocUnsafe(64).fill(0xab);
  assert.equal(pooled.buffer, neighbour.buffer, 'two Buffers of the same pool slab');
  pooled.write('[1],[2],[3]');
  assert.equal(pieceBuffers.roomAfter(pooled), 0);
  assert.deepEqual(rowsOf(kept, pooled, 'b'), [3, 3, 3]);
  assert.ok(neighbour.every((byte) => byte === 0xab), 'the neighbour is untouched');
  // Shared memory not from the pool (not of a size step): no room either.
  assert.equal(pieceBuffers.roomAfter(Buffer.from(new SharedArrayBuffer(5000), 0, 100)), 0);
});
