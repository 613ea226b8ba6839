// The compression threads' queue: a job whose piece nobody wants any more is dropped
// before it is sent (its callback never runs, its shared memory goes back to the pool),
// every wanted job comes back with the bytes deflatedBytes() gives and the CRC-32, and
// a producer that waits for room (whenCompressionRoom) finds the queue back at half its
// limit: the queue, and the memory it holds, stay bounded however fast pieces are made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { compressionBacklogBytes, compressionQueueLimitBytes, compressOnWorker, setCompressionThreads, sharedPiece, whenCompressionRoom } from '../../engine/snapshot/compressionWorkers.ts';
import { deflatedBytes } from '../../engine/snapshot/deflatePiece.ts';
import { pieceBuffers } from '../../engine/snapshot/pieceBuffers.ts';

const MiB = 1 << 20;
// One thread (this file runs in a process of its own): the queue drains at one thread's pace on any machine.
setCompressionThreads(1);

function compressed(raw: Uint8Array, wanted: () => boolean = () => true): { result: Promise<{ deflated: Buffer; crc: number }>; called: () => boolean } {
  let called = false;
  const result = new Promise<{ deflated: Buffer; crc: number }>((resolve, reject) =>
    compressOnWorker(
      raw,
      1,
      (error, deflated, crc) => {
        called = true;
        if (error !== null || deflated === null) reject(error);
        else resolve({ deflated, crc });
      },
      wanted,
    ),
  );
  return { result, called: () => called };
}

test('a job nobody wants by the time it would be sent is dropped: no callback, its memory back in the pool', async () => {
  const bytes = Buffer.from('{"a":1},{"b":2},'.repeat(4000));
  const kept = sharedPiece(bytes);
  const dropped = sharedPiece(bytes);
  let want = true;
  const first = compressed(kept);
  const second = compressed(dropped, () => want);
  const third = compressed(sharedPiece(bytes));
  want = false; // before the queue is flushed (a microtask later)
  const freeBefore = pieceBuffers.freeListBytes;
  const [a, c] = await Promise.all([first.result, third.result]);
  assert.ok(a.deflated.equals(deflatedBytes(bytes, 1)) && c.deflated.equals(a.deflated), 'the bytes deflatedBytes() gives');
  assert.equal(a.crc >>> 0, crc32(bytes) >>> 0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(second.called(), false, 'the dropped job never answered');
  assert.ok(pieceBuffers.freeListBytes > freeBefore, 'the dropped piece\'s memory went back to the pool');
});

test('the queue stays bounded: a producer waiting for room finds it at half its limit, and every job comes back right', async () => {
  const limit = compressionQueueLimitBytes();
  // Incompressible pieces of 4 MiB, a quarter more than the limit, queued in one go.
  const source = randomBytes(4 * MiB);
  const pieces = Array.from({ length: Math.ceil((1.25 * limit) / (4 * MiB)) }, (_, i) => {
    const piece = sharedPiece(source);
    piece.writeUInt32LE(i); // each its own bytes (and CRC)
    return piece;
  });
  const jobs = pieces.map((piece) => compressed(piece));
  await Promise.resolve(); // the flush: each thread takes its batches, the rest waits here
  assert.ok(compressionBacklogBytes() > limit, `backlog ${compressionBacklogBytes()} over the limit ${limit}`);
  await whenCompressionRoom();
  assert.ok(compressionBacklogBytes() <= limit / 2, `room at ${compressionBacklogBytes()} bytes: at most half the limit`);
  assert.ok(jobs.some((job) => !job.called()), 'room came before the whole queue was done');
  const results = await Promise.all(jobs.map((job) => job.result));
  for (let i = 0; i < pieces.length; i += 7) assert.equal(results[i].crc >>> 0, crc32(pieces[i]) >>> 0);
  assert.equal(compressionBacklogBytes(), 0);
  await whenCompressionRoom(); // within the limit: at once
});
