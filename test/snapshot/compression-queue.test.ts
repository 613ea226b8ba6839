// The compression threads' queue: a job cancelled before it is sent never reaches a
// thread (its callback never runs, its shared memory goes back to the pool at once);
// a piece re-made while its compression waits cancels the old one, so the queue holds
// at most one job per piece however often pieces are re-made; every job that is
// wanted comes back with the bytes deflatedBytes() gives and the CRC-32.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { crc32, gunzipSync } from 'node:zlib';
import { compressionBacklogBytes, compressOnWorker, setCompressionThreads, sharedPiece } from '../../engine/snapshot/compressionWorkers.ts';
import { deflatedBytes } from '../../engine/snapshot/deflatePiece.ts';
import { pieceBuffers } from '../../engine/snapshot/pieceBuffers.ts';
import { PieceSet } from '../../engine/snapshot/pieceSet.ts';

// One thread (this file runs in a process of its own): the queue drains at one thread's pace on any machine.
setCompressionThreads(1);

test('a job cancelled before it is sent never answers, and its memory goes back to the pool at once', async () => {
  const bytes = Buffer.from('{"a":1},{"b":2},'.repeat(4000));
  const answered: string[] = [];
  const onDone = (name: string) => (error: Error | null, deflated: Buffer | null, crc: number) => {
    assert.equal(error, null);
    assert.ok(deflated!.equals(deflatedBytes(bytes, 1)), 'the bytes deflatedBytes() gives');
    assert.equal(crc >>> 0, crc32(bytes) >>> 0);
    answered.push(name);
  };
  compressOnWorker(sharedPiece(bytes), 1, onDone('first'));
  const second = compressOnWorker(sharedPiece(bytes), 1, onDone('second'));
  compressOnWorker(sharedPiece(bytes), 1, onDone('third'));
  const freeBefore = pieceBuffers.freeListBytes;
  const queuedBefore = compressionBacklogBytes();
  second.cancel(); // still queued: the queue is flushed a microtask later
  assert.ok(pieceBuffers.freeListBytes > freeBefore, "the cancelled piece's memory is back in the pool");
  assert.equal(compressionBacklogBytes(), queuedBefore - bytes.length, 'and out of the queue');
  while (answered.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(answered, ['first', 'third']);
});

test('pieces re-made while their compression waits: the queue holds one job per piece, and the body is right', async () => {
  const pieces = new PieceSet({ head: '[', tail: ']' });
  // One slow job first (8 MiB of base64 noise), so the rest wait in the queue.
  pieces.setDeferred('0', sharedPiece(Buffer.from(JSON.stringify(randomBytes(6 << 20).toString('base64')))));
  await Promise.resolve(); // flushed: the thread has it
  const texts = new Map<string, string>();
  for (let round = 0; round < 20; round++) {
    for (let key = 1; key <= 10; key++) {
      const text = JSON.stringify({ key, round, pad: 'x'.repeat(1000 * key) });
      texts.set(String(key), text);
      pieces.setDeferred(String(key), sharedPiece(Buffer.from(text)));
    }
  }
  let newest = 0;
  for (const text of texts.values()) newest += text.length;
  assert.equal(compressionBacklogBytes(), newest, 'only the newest of each piece is queued');
  await pieces.settle();
  const body = JSON.parse(gunzipSync(Buffer.concat(pieces.assemble().chunks as Buffer[])).toString()) as unknown[];
  assert.equal(body.length, 11);
  assert.deepEqual(body.slice(1), [...texts.values()].map((text) => JSON.parse(text)));
  assert.equal(compressionBacklogBytes(), 0);
});
