// Queries against brute force: every filter combination walked page by page with the
// keyset cursor must return exactly the brute-force filtered rows in (sportsbook, id)
// order; is_main against an independent implementation; the delta feed (change-log
// path and list-walk path) against a scan of live rows and tombstones.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadBoard } from '../../engine/loadBoard.ts';
import { americanToDecimal, type OddsInput } from '../../engine/model.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import type { OddsFilter } from '../../engine/oddsQuery.ts';
import { boardOf, filterOf, liveSlots, makeTestBoard, mulberry32, newEngine, randomBatch, referenceSort, tombstoneSlots, walkAll } from '../helpers/engine-helpers.ts';

type Row = Record<string, unknown>;

function bruteMainLosers(engine: OddsEngine): Set<number> {
  const groups = new Map<string, number[]>();
  for (const slot of liveSlots(engine)) {
    const row = engine.rowObject(slot, 'all');
    if (row.side !== 'OVER' && row.side !== 'UNDER') continue;
    if (row.priceAmerican === undefined || row.line === undefined) continue;
    const team = engine.store.team[slot] < 0 ? '' : engine.store.teams.get(engine.store.team[slot]);
    const scope = row.playerId !== undefined ? `p:${row.playerId}` : row.market === 'TEAM_TOTAL' ? `t:${team}` : '';
    const key = `${row.eventId}|${row.sportsbook}|${row.marketSubtype}|${row.period}|${scope}`;
    groups.set(key, [...(groups.get(key) ?? []), slot]);
  }
  const losers = new Set<number>();
  for (const slots of groups.values()) {
    const byLine = new Map<number, { over?: number; under?: number }>();
    for (const slot of slots) {
      const row = engine.rowObject(slot, 'all');
      const entry = byLine.get(row.line as number) ?? {};
      if (row.side === 'OVER') entry.over ??= slot;
      else entry.under ??= slot;
      byLine.set(row.line as number, entry);
    }
    const competing = [...byLine.entries()].filter(([, e]) => e.over !== undefined && e.under !== undefined);
    if (competing.length < 2) continue;
    const gap = ([, e]: [number, { over?: number; under?: number }]) =>
      Math.abs(1 / americanToDecimal(engine.store.priceAmerican[e.over!]) - 1 / americanToDecimal(engine.store.priceAmerican[e.under!]));
    competing.sort((a, b) => gap(a) - gap(b) || a[0] - b[0]);
    for (const [, e] of competing.slice(1)) {
      losers.add(e.over!);
      losers.add(e.under!);
    }
  }
  return losers;
}

function bruteFilter(engine: OddsEngine, filter: OddsFilter, slots: number[], losers: Set<number> | null): number[] {
  return referenceSort(
    engine,
    slots.filter((slot) => {
      const row = engine.rowObject(slot, 'all') as Row;
      const event = engine.event(row.eventId as string)!;
      if (filter.leagues && filter.leagues.length && !filter.leagues.includes(row.league as string)) return false;
      if (filter.sportsbooks && filter.sportsbooks.length && !filter.sportsbooks.includes(row.sportsbook as string)) return false;
      if (filter.markets && filter.markets.length && !filter.markets.some((t) => (row.market as string).includes(t) || (row.marketSubtype as string).includes(t))) return false;
      if (filter.eventIds && filter.eventIds.length && !filter.eventIds.includes(row.eventId as string)) return false;
      if (filter.playerId !== null && row.playerId !== filter.playerId) return false;
      if (filter.teamId !== null) {
        if (row.marketScope !== undefined || event.isFutures) return false;
        if (event.homeTeamId !== filter.teamId && event.awayTeamId !== filter.teamId) return false;
      }
      if (filter.scope === 'event' && row.marketScope !== undefined) return false;
      if (filter.scope === 'season' && row.marketScope !== 'SEASON') return false;
      if (filter.scope === 'tournament' && row.marketScope !== 'TOURNAMENT') return false;
      if (filter.isMain && losers!.has(slot)) return false;
      return true;
    }),
  );
}

function busyEngine(seed: number) {
  const board = makeTestBoard(seed, 16);
  const { engine, clock } = newEngine({ tombstoneRetentionMs: 60_000 });
  loadBoard(engine, boardOf(board));
  const rand = mulberry32(seed);
  const removed: OddsInput[] = [];
  const counter = { n: 0, revivals: 0 };
  for (let i = 0; i < 30; i++) {
    clock.advance(250);
    engine.apply(randomBatch(engine, rand, removed, 100, counter));
  }
  return { board, engine, clock };
}

const arbFilter = (engine: OddsEngine) => {
  const s = engine.store;
  const events = Array.from({ length: s.events.size }, (_, i) => s.events.get(i));
  const players = Array.from({ length: s.players.size }, (_, i) => s.players.get(i));
  const teams = Array.from({ length: s.teams.size }, (_, i) => s.teams.get(i));
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 2 });
  return fc.record({
    leagues: maybe(fc.subarray(['nba', 'nfl', 'nhl', 'mlb'], { minLength: 1 })),
    sportsbooks: maybe(fc.subarray(['pinnacle', 'draftkings', 'fanduel', 'bet365', 'betmgm', 'prizepicks', 'underdog', 'nobook'], { minLength: 1 })),
    markets: maybe(fc.subarray(['TOTAL', 'SPREAD', 'POINTS', 'MONEY', 'WINNER', 'REBOUNDS'], { minLength: 1 })),
    eventIds: fc.option(fc.subarray(events, { minLength: 1, maxLength: 4 }), { nil: null, freq: 3 }),
    playerId: fc.option(fc.constantFrom(...players), { nil: null, freq: 4 }),
    teamId: fc.option(fc.constantFrom(...teams), { nil: null, freq: 4 }),
    scope: fc.option(fc.constantFrom('event' as const, 'season' as const, 'tournament' as const), { nil: null, freq: 3 }),
    isMain: fc.boolean(),
  });
};

test('every filter walked page by page equals the brute-force result', () => {
  const { engine } = busyEngine(31);
  const live = liveSlots(engine);
  const losers = bruteMainLosers(engine);
  assert.ok(losers.size > 0, 'the board has alternate lines that lose is_main');
  fc.assert(
    fc.property(arbFilter(engine), fc.integer({ min: 1, max: 400 }), (filter, limit) => {
      const expected = bruteFilter(engine, filter, live, losers);
      const got = walkAll(engine, filter, limit);
      assert.deepEqual(got, expected);
    }),
    { numRuns: 250 },
  );
});

test('page metadata: count, hasMore, lastId, maxUpdated; afterId need not exist', () => {
  const { engine } = busyEngine(32);
  const filter = filterOf({ leagues: ['nba'] });
  const all = walkAll(engine, filter, 1000);
  const page = engine.odds.page(filter, null, 10);
  assert.equal(page.count, 10);
  assert.ok(page.hasMore);
  assert.equal(page.lastId, engine.idOf(all[9]));
  assert.equal(page.maxUpdated, Math.max(...all.slice(0, 10).map((s) => engine.store.updated[s])));
  const tail = engine.odds.page(filter, engine.idOf(all[all.length - 3]), 10);
  assert.equal(tail.count, 2);
  assert.equal(tail.hasMore, false);
  const exact = engine.odds.page(filter, engine.idOf(all[all.length - 3]), 2);
  assert.equal(exact.hasMore, false, 'no more rows after exactly the last ones');
  // A key between rows: the id of row 5 with a suffix sorts right after it.
  const between = engine.odds.page(filter, engine.idOf(all[5]) + '-gone', 3);
  assert.deepEqual(Array.from(between.slots.subarray(0, between.count)), all.slice(6, 9));
  const none = engine.odds.page(filterOf({ leagues: ['nope'] }), null, 10);
  assert.deepEqual([none.count, none.hasMore, none.lastId, none.maxUpdated], [0, false, null, 0]);
});

test('the delta feed equals a scan of live rows and tombstones (log path and walk path)', () => {
  const { engine, clock } = busyEngine(33);
  const loadedAsOf = engine.changeLog.coveredAfter;
  const rand = mulberry32(5);
  const candidates = [...liveSlots(engine), ...tombstoneSlots(engine)];
  const times = [...new Set(candidates.map((s) => engine.store.updated[s]))].sort((a, b) => a - b);
  const sinces = [0, loadedAsOf, loadedAsOf + 1, times[Math.floor(times.length / 2)], times[times.length - 5], times[times.length - 1], clock.now() + 1];
  for (let i = 0; i < 10; i++) sinces.push(times[Math.floor(rand() * times.length)]);
  const filters = [
    { leagues: null, sportsbooks: null, markets: null },
    { leagues: ['nba'], sportsbooks: null, markets: null },
    { leagues: ['nfl', 'nhl'], sportsbooks: ['bet365', 'fanduel'], markets: ['TOTAL'] },
    { leagues: null, sportsbooks: ['prizepicks'], markets: null },
  ];
  for (const since of sinces) {
    for (const filter of filters) {
      const expected = bruteFilter(engine, filterOf(filter), candidates.filter((s) => engine.store.updated[s] >= since), null);
      for (const limit of [7, 1000]) {
        const got: number[] = [];
        let after: string | null = null;
        for (;;) {
          const page = engine.delta(filter, since, after, limit);
          for (let i = 0; i < page.count; i++) got.push(page.slots[i]);
          if (!page.hasMore) break;
          after = page.lastId;
        }
        assert.deepEqual(got, expected, `since ${since} filter ${JSON.stringify(filter)} limit ${limit}`);
      }
    }
  }
});

test('is_main by hand: ties keep the lower line, one-sided lines and DFS pass, scopes split groups', () => {
  const { engine } = newEngine();
  const base = makeTestBoard(40, 1).rows.find((r) => r.market === 'TOTAL' && r.priceAmerican !== null)!;
  const event = makeTestBoard(40, 1).events[0];
  engine.upsertEvent(event);
  const total = (line: number, side: 'OVER' | 'UNDER', price: number | null, extra: Partial<OddsInput> = {}): OddsInput => ({
    ...base,
    eventId: event.id,
    period: 'FULL',
    selectionId: `FULL-${side}-${extra.playerId ?? extra.teamId ?? ''}-${line}`,
    side,
    line,
    priceAmerican: price,
    ...extra,
  });
  const rows = [
    total(201.5, 'OVER', -110), total(201.5, 'UNDER', -110), // tie with 200.5 (gap 0), higher line: loses
    total(200.5, 'OVER', -110), total(200.5, 'UNDER', -110), // tie, lower line: main
    total(199.5, 'OVER', -150), total(199.5, 'UNDER', 130), // unbalanced: loses
    total(203.5, 'OVER', 150), // one side only: passes
    total(210.5, 'OVER', null, { sportsbook: 'prizepicks', dfsMultiplier: 1 }), total(211.5, 'OVER', null, { sportsbook: 'prizepicks', dfsMultiplier: 1 }),
    total(20.5, 'OVER', -110, { market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', teamId: 'a' }), total(20.5, 'UNDER', -110, { market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', teamId: 'a' }),
    total(22.5, 'OVER', -110, { market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', teamId: 'b' }), total(22.5, 'UNDER', -110, { market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', teamId: 'b' }),
    total(5.5, 'OVER', -110, { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_X', playerId: 'p1', playerName: 'P1' }), total(5.5, 'UNDER', -110, { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_X', playerId: 'p1', playerName: 'P1' }),
    total(6.5, 'OVER', 120, { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_X', playerId: 'p1', playerName: 'P1' }), total(6.5, 'UNDER', -140, { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_X', playerId: 'p1', playerName: 'P1' }),
    total(6.5, 'OVER', 120, { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_X', playerId: 'p2', playerName: 'P2' }), total(6.5, 'UNDER', -140, { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_X', playerId: 'p2', playerName: 'P2' }),
  ];
  assert.equal(engine.apply(rows.map((row) => ({ op: 'upsert' as const, row }))).applied, rows.length);
  const main = walkAll(engine, filterOf({ isMain: true }), 100).map((slot) => {
    const row = engine.rowObject(slot, 'all');
    return `${row.sportsbook} ${row.marketSubtype} ${row.playerId ?? ''}${engine.store.team[slot] >= 0 ? engine.store.teams.get(engine.store.team[slot]) : ''} ${row.line} ${row.side}`;
  });
  const expected = [
    `${base.sportsbook} TOTAL ${base.teamId ?? ''} 200.5 OVER`,
    `${base.sportsbook} TOTAL ${base.teamId ?? ''} 200.5 UNDER`,
    `${base.sportsbook} TOTAL ${base.teamId ?? ''} 203.5 OVER`,
    `${base.sportsbook} TEAM_TOTAL a 20.5 OVER`,
    `${base.sportsbook} TEAM_TOTAL a 20.5 UNDER`,
    `${base.sportsbook} TEAM_TOTAL b 22.5 OVER`,
    `${base.sportsbook} TEAM_TOTAL b 22.5 UNDER`,
    `${base.sportsbook} PLAYER_TOTAL_X p1 5.5 OVER`,
    `${base.sportsbook} PLAYER_TOTAL_X p1 5.5 UNDER`,
    `${base.sportsbook} PLAYER_TOTAL_X p2 6.5 OVER`,
    `${base.sportsbook} PLAYER_TOTAL_X p2 6.5 UNDER`,
    'prizepicks TOTAL  210.5 OVER',
    'prizepicks TOTAL  211.5 OVER',
  ];
  assert.deepEqual(main.sort(), expected.sort());
  // A price move re-decides: 201.5 becomes the most balanced.
  const slot = engine.slotOf(`${event.id}:${base.sportsbook}:TOTAL:FULL-OVER--200.5`);
  assert.ok(slot >= 0);
  engine.apply([{ op: 'price', slot, priceAmerican: -130, suspended: false }]);
  const lines = walkAll(engine, filterOf({ isMain: true, markets: ['TOTAL'], sportsbooks: [base.sportsbook] }), 100)
    .filter((s) => engine.store.markets.get(engine.store.market[s]) === 'TOTAL')
    .map((s) => engine.store.line[s]);
  assert.deepEqual(lines.sort(), [201.5, 201.5, 203.5]);
});
