// Indexes, id lookup, counters and tombstones must equal a brute-force scan of the
// columns after every kind of change, including 100k random applies with slot reuse.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadBoard } from '../../engine/loadBoard.ts';
import { oddsId, type OddsInput } from '../../engine/model.ts';
import { boardOf, checkConsistency, makeTestBoard, mulberry32, newEngine, randomBatch, tombstoneSlots } from '../helpers/engine-helpers.ts';

test('after load, every index equals a brute-force scan', () => {
  const { engine } = newEngine();
  loadBoard(engine, boardOf(makeTestBoard(21, 16)));
  checkConsistency(engine);
});

test('indexes stay consistent with a brute-force scan after 100k random applies', () => {
  const { engine, clock } = newEngine({ tombstoneRetentionMs: 20_000, changeLogEntries: 1 << 14 });
  const loadedRows = loadBoard(engine, boardOf(makeTestBoard(22, 20))).rows;
  const rand = mulberry32(99);
  const removed: OddsInput[] = [];
  const counter = { n: 0, revivals: 0 };
  let applied = 0;
  let attempted = 0;
  let lastSeq = engine.seq;
  let batches = 0;
  while (attempted < 100_000) {
    clock.advance(100 + Math.floor(rand() * 200));
    const batch = randomBatch(engine, rand, removed, 100, counter);
    attempted += batch.length;
    const result = engine.apply(batch);
    applied += result.applied;
    assert.ok(result.seq >= lastSeq + result.applied, 'seq grows by at least one per applied change');
    lastSeq = result.seq;
    if (++batches % 200 === 0) checkConsistency(engine);
  }
  checkConsistency(engine);
  assert.ok(applied > 80_000, `most changes applied (${applied})`);
  assert.ok(engine.tombstoneHorizon() > 0, 'some tombstones were recycled');
  const withoutReuse = loadedRows + counter.n + counter.revivals;
  assert.ok(engine.store.size < withoutReuse - 1000, `slots are reused (${engine.store.size} slots for up to ${withoutReuse} allocations)`);
  assert.ok(engine.liveRows > loadedRows / 2, `the board is still populated (${engine.liveRows})`);
  for (const row of removed.slice(-200)) {
    const slot = engine.slotOf(oddsId(row));
    if (slot >= 0) assert.ok(engine.isLive(slot) || engine.isTombstone(slot));
  }
});
