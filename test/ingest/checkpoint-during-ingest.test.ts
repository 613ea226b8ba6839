// A checkpoint taken while batches keep arriving: applies wait while the board is
// copied (batches are validated, logged and acknowledged in order all the same), the
// copy is packed in a worker thread, and the checkpoint holds exactly the board after
// the record it is named for: a restart from it plus the log after it gives the same
// board and the same seq (a checkpoint that had caught a later batch would apply it
// twice on replay and move the seq further).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { referenceDoc } from '../helpers/snapshot-helpers.ts';
import { openBoard, tempDataDir } from './ingest-helpers.ts';

const dir = tempDataDir('ingest-checkpoint-');
after(() => rmSync(dir, { recursive: true, force: true }));

test('batches submitted during a checkpoint are acknowledged in order; a restart from that checkpoint plus the log gives the same board', async () => {
  const clock = new ManualClock(NOW);
  const board = testBoard('small');
  // small copy steps: the copy yields to the event loop many times, and batches queue behind it
  let opened = await openBoard(dir, clock, board, { checkpointCopyStepBytes: 16 * 1024 });
  const engine = () => opened.durable.engine;
  const s = engine().store;
  const ids: string[] = [];
  for (let slot = 0; slot < s.size && ids.length < 200; slot++) {
    if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE) ids.push(engine().idOf(slot));
  }
  // a batch that moves the same row twice (the second tick only suspends it) and many others
  const batch = (k: number) => [
    ...ids.map((id, i) => ({ op: 'price', id, priceAmerican: -101 - ((k * 13 + i) % 300) })),
    { op: 'price', id: ids[0], suspended: k % 2 === 0 },
  ];

  const before = engine().seq;
  const results: Promise<{ seq: number; index: number }>[] = [];
  for (let k = 0; k < 5; k++) results.push(opened.durable.ingest.submit(batch(k)));
  await results[0]; // the checkpoint has something new to hold; batches 1-4 are still in flight
  const checkpoint = opened.durable.checkpointNow();
  for (let k = 5; k < 40; k++) {
    clock.advance(100);
    results.push(opened.durable.ingest.submit(batch(k)));
    if (k % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  const acks = await Promise.all(results);
  const report = (await checkpoint)!;
  assert.ok(report !== null);
  assert.ok(report.copySteps > 10, `the copy took ${report.copySteps} steps`);
  assert.ok(report.logIndex >= 1 && report.logIndex <= opened.durable.log.lastIndex);
  for (let i = 1; i < acks.length; i++) {
    assert.equal(acks[i].index, acks[i - 1].index + 1, 'acknowledged in log order');
    assert.ok(acks[i].seq > acks[i - 1].seq, 'each batch moves the seq');
  }
  assert.equal(acks.at(-1)!.seq, engine().seq);
  assert.equal(engine().seq - before, 40 * (ids.length + 1));
  const seq = engine().seq;
  const doc = referenceDoc(engine(), true);
  const lastIndex = opened.durable.log.lastIndex;
  await opened.close(); // no last checkpoint: the restart replays what came after the one above

  opened = await openBoard(dir, clock, board, { checkpointCopyStepBytes: 16 * 1024 });
  assert.equal(opened.durable.restore.checkpoint?.logIndex, report.logIndex);
  assert.equal(opened.durable.restore.replayedRecords, lastIndex - report.logIndex);
  assert.equal(engine().seq, seq);
  assert.deepEqual(referenceDoc(engine(), true), doc);
  await opened.close();
});
