// Indexes, id lookup, counters and tombstones must equal a brute-force scan of the
// columns after every kind of change, including 100k random applies with slot reuse.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadBoard } from '../engine/loadBoard.ts';
import { oddsId, type OddsInput } from '../engine/model.ts';
import type { OddsEngine } from '../engine/engine.ts';
import type { PostingList } from '../engine/postingList.ts';
import { boardOf, liveSlots, makeTestBoard, mulberry32, newEngine, randomBatch, referenceSort, tombstoneSlots } from './engine-helpers.ts';

function listContents(list: PostingList | undefined): number[] {
  return list === undefined ? [] : Array.from(list.items.subarray(0, list.length));
}

function checkFamily(name: string, family: PostingList[], expected: Map<number, number[]>, engine: OddsEngine): void {
  const ids = new Set<number>([...expected.keys()]);
  family.forEach((_, id) => ids.add(id));
  for (const id of ids) {
    const want = referenceSort(engine, expected.get(id) ?? []);
    assert.deepEqual(listContents(family[id]), want, `${name} list ${id}`);
  }
}

function push(map: Map<number, number[]>, key: number, slot: number): void {
  const list = map.get(key);
  if (list) list.push(slot);
  else map.set(key, [slot]);
}

function checkConsistency(engine: OddsEngine): void {
  const s = engine.store;
  const ix = engine.indexes;
  const live = liveSlots(engine);
  const dead = tombstoneSlots(engine);
  const byLeague = new Map<number, number[]>();
  const byBook = new Map<number, number[]>();
  const byEvent = new Map<number, number[]>();
  const byPlayer = new Map<number, number[]>();
  const byTeam = new Map<number, number[]>();
  const byScope = new Map<number, number[]>();
  const pairs = new Map<string, number>();
  for (const slot of live) {
    push(byLeague, s.league[slot], slot);
    push(byBook, s.book[slot], slot);
    push(byEvent, s.event[slot], slot);
    push(byScope, s.scope[slot], slot);
    if (s.player[slot] >= 0) push(byPlayer, s.player[slot], slot);
    const ev = s.event[slot];
    if (s.scope[slot] === 0 && engine.eventTable.futures[ev] === 0) {
      const home = engine.eventTable.home[ev];
      const away = engine.eventTable.away[ev];
      if (home >= 0) push(byTeam, home, slot);
      if (away >= 0 && away !== home) push(byTeam, away, slot);
    }
    const key = `${s.markets.get(s.market[slot])}|${s.subtypes.get(s.subtype[slot])}`;
    pairs.set(key, (pairs.get(key) ?? 0) + 1);
  }
  checkFamily('league', ix.byLeague, byLeague, engine);
  checkFamily('book', ix.byBook, byBook, engine);
  checkFamily('event', ix.byEvent, byEvent, engine);
  checkFamily('player', ix.byPlayer, byPlayer, engine);
  checkFamily('team', ix.byTeam, byTeam, engine);
  checkFamily('scope', ix.byScope, byScope, engine);
  assert.deepEqual(listContents(ix.tombstones), referenceSort(engine, dead), 'tombstone list');
  for (const slot of [...live, ...dead]) assert.equal(engine.slotOf(engine.idOf(slot)), slot, `id lookup ${engine.idOf(slot)}`);
  assert.equal(engine.keys.size, live.length + dead.length);
  assert.equal(engine.liveRows, live.length);
  assert.equal(engine.status().totalMarkets, live.length);
  assert.deepEqual(
    engine.marketCounts().map((m) => [`${m.marketType}|${m.marketSubtype}`, m.liveCount]),
    [...pairs.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  );
  const books = new Map<string, number>();
  for (const slot of live) books.set(s.books.get(s.book[slot]), (books.get(s.books.get(s.book[slot])) ?? 0) + 1);
  assert.deepEqual(engine.bookCounts(), [...books.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([id, marketCount]) => ({ id, marketCount })));
  assert.equal(live.length + dead.length + s.freeSlotCount, s.size, 'every slot is live, a tombstone or free');
}

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
