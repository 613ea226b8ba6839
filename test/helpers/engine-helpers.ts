// Test helpers for the engine: a small deterministic random board (events + odds rows
// with histories) shaped like the fixture boards, and brute-force references that
// recompute what the engine's indexes and queries should hold from a plain scan.
// Ids deliberately include parts that are prefixes of each other ('ev3' / 'ev3-b',
// 'TOTAL' / 'TOTAL_POINTS') and characters on both sides of ':' in code-unit order,
// so ordering bugs show up.

import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine, type Change, type EngineOptions } from '../../engine/engine.ts';
import {
  EVENT_STATUSES,
  createHistoryBuffer,
  decimalToAmerican,
  oddsId,
  type Board,
  type EventRecord,
  type HistoryBuffer,
  type OddsInput,
  type Side,
  type TeamSide,
} from '../../engine/model.ts';
import type { OddsFilter } from '../../engine/oddsQuery.ts';
import type { PostingList } from '../../engine/postingList.ts';
import assert from 'node:assert/strict';

import { NOW } from '../../fixtures/harness/now.ts';
export { NOW };

import { mulberry32 } from '../../engine/random.ts';
export { mulberry32 };

export const TEST_BOOKS = ['pinnacle', 'draftkings', 'fanduel', 'bet365', 'betmgm', 'prizepicks', 'underdog'];
const DFS_BOOKS = new Set(['prizepicks', 'underdog']);
const LEAGUES = ['nba', 'nfl', 'nhl'];

export interface TestBoard {
  events: EventRecord[];
  rows: OddsInput[];
}

function pick<T>(rand: () => number, values: readonly T[]): T {
  return values[Math.floor(rand() * values.length)];
}

function priceFor(probability: number): number {
  const p = Math.min(0.95, Math.max(0.05, probability));
  return decimalToAmerican(Math.max(1.01, Math.round((1 / p) * 1000) / 1000));
}

export function lineKey(line: number): string {
  return line < 0 ? `m${-line}` : String(line);
}

function baseRow(event: EventRecord, book: string): OddsInput {
  return {
    eventId: event.id,
    sportsbook: book,
    league: event.league,
    market: 'MONEYLINE',
    marketSubtype: 'MONEYLINE',
    period: 'FULL',
    selectionId: '',
    selection: '',
    side: 'HOME',
    teamSide: 'HOME',
    teamName: '',
    priceAmerican: null,
    dfsMultiplier: null,
    line: null,
    playerId: null,
    playerName: null,
    teamId: null,
    suspended: false,
    eventStartTime: event.startTime,
    updated: NOW - 60_000,
    marketScope: null,
    segment: null,
  };
}

/** Events: games with teams (some ids prefixes of others) and one futures anchor per league. */
export function makeEvents(rand: () => number, games: number): EventRecord[] {
  const events: EventRecord[] = [];
  for (let i = 0; i < games; i++) {
    const league = LEAGUES[i % LEAGUES.length];
    const suffix = i % 4 === 1 ? '-b' : i % 4 === 2 ? '.c' : i % 4 === 3 ? '_d' : '';
    const base = Math.floor(i / 4);
    const home = `${league}-t${Math.floor(rand() * 12)}`;
    let away = `${league}-t${Math.floor(rand() * 12)}`;
    if (away === home) away = `${league}-t99`;
    const startTime = NOW + Math.floor((rand() * 48 - 6) * 3600_000 / 60_000) * 60_000;
    events.push({
      id: `ev${base}${suffix}`,
      league,
      homeTeamId: home,
      homeTeamName: home.toUpperCase(),
      awayTeamId: away,
      awayTeamName: away.toUpperCase(),
      startTime,
      status: startTime < NOW ? 'in_progress' : 'scheduled',
      venueId: null,
      seasonYear: 2026,
      context: {},
      isFutures: false,
    });
  }
  for (const league of LEAGUES) {
    events.push({
      id: `${league}-2026-futures`,
      league,
      homeTeamId: null,
      homeTeamName: null,
      awayTeamId: null,
      awayTeamName: null,
      startTime: Date.parse('2027-06-20T00:00:00Z'),
      status: 'in_progress',
      venueId: null,
      seasonYear: 2026,
      context: {},
      isFutures: true,
    });
  }
  return events;
}

/** Every row of one (event, book): moneyline, spreads, totals with alternates, team totals, props, futures. */
export function rowsFor(rand: () => number, event: EventRecord, book: string): OddsInput[] {
  const rows: OddsInput[] = [];
  const dfs = DFS_BOOKS.has(book);
  const add = (patch: Partial<OddsInput>): void => {
    const row = { ...baseRow(event, book), ...patch };
    if (dfs) {
      row.priceAmerican = null;
      row.dfsMultiplier = pick(rand, [1, 1, 0.85, 1.15, 1.25, 0.9]);
    }
    row.suspended = rand() < 0.05;
    row.updated = NOW - Math.floor(rand() * 3600_000);
    rows.push(row);
  };
  if (event.isFutures) {
    if (dfs) return rows;
    for (let t = 0; t < 6; t++) {
      const team = `${event.league}-t${t}`;
      const segment = t < 3 ? 'EAST' : 'WEST';
      add({ market: 'CATEGORICAL', marketSubtype: 'CHAMPIONSHIP_WINNER', selectionId: `FULL-YES-${team}`, selection: team, side: 'YES', teamSide: 'NONE', teamName: team, teamId: team, priceAmerican: priceFor(0.1 + rand() * 0.2), marketScope: 'SEASON' });
      add({ market: 'CATEGORICAL', marketSubtype: 'CONFERENCE_WINNER', selectionId: `FULL-YES-${team}`, selection: team, side: 'YES', teamSide: 'NONE', teamName: team, teamId: team, priceAmerican: priceFor(0.2 + rand() * 0.3), marketScope: 'SEASON', segment });
    }
    const player = `${event.league}-t1-p1`;
    for (const side of ['OVER', 'UNDER'] as const) {
      add({ market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', period: 'REG_SEASON', selectionId: `REG_SEASON-${side}-${player}-1500.5`, selection: `P1 ${side} 1500.5`, side, teamSide: 'NONE', teamName: 'T1', line: 1500.5, playerId: player, playerName: 'Player One', teamId: `${event.league}-t1`, priceAmerican: priceFor(0.5), marketScope: 'SEASON' });
    }
    return rows;
  }
  const home = event.homeTeamId!;
  const away = event.awayTeamId!;
  if (!dfs) {
    const p = 0.3 + rand() * 0.4;
    add({ selectionId: 'FULL-HOME', selection: home, side: 'HOME', teamSide: 'HOME', teamName: home, teamId: home, priceAmerican: priceFor(p) });
    add({ selectionId: 'FULL-AWAY', selection: away, side: 'AWAY', teamSide: 'AWAY', teamName: away, teamId: away, priceAmerican: priceFor(1 - p) });
    for (const spread of [-3.5, -2.5]) {
      add({ market: 'SPREAD', marketSubtype: 'SPREAD', selectionId: `FULL-HOME-${lineKey(spread)}`, selection: `${home} ${spread}`, side: 'HOME', teamSide: 'HOME', teamName: home, teamId: home, line: spread, priceAmerican: priceFor(0.5) });
      add({ market: 'SPREAD', marketSubtype: 'SPREAD', selectionId: `FULL-AWAY-${lineKey(-spread)}`, selection: `${away} ${-spread}`, side: 'AWAY', teamSide: 'AWAY', teamName: away, teamId: away, line: -spread, priceAmerican: priceFor(0.5) });
    }
    for (const period of ['FULL', '1H']) {
      const mainLine = 200 + Math.floor(rand() * 40) + 0.5;
      for (let k = -2; k <= 2; k++) {
        const line = mainLine + k * 2;
        const pOver = 0.5 - k * 0.06 + (rand() - 0.5) * 0.04;
        if (rand() < 0.1 && k !== 0) {
          // one side missing: passes through is_main
          add({ market: 'TOTAL', marketSubtype: 'TOTAL', period, selectionId: `${period}-OVER-${line}`, selection: `Over ${line}`, side: 'OVER', teamSide: 'NONE', teamName: '', line, priceAmerican: priceFor(pOver) });
          continue;
        }
        add({ market: 'TOTAL', marketSubtype: 'TOTAL', period, selectionId: `${period}-OVER-${line}`, selection: `Over ${line}`, side: 'OVER', teamSide: 'NONE', teamName: '', line, priceAmerican: priceFor(pOver) });
        add({ market: 'TOTAL', marketSubtype: 'TOTAL', period, selectionId: `${period}-UNDER-${line}`, selection: `Under ${line}`, side: 'UNDER', teamSide: 'NONE', teamName: '', line, priceAmerican: priceFor(1 - pOver) });
      }
    }
    for (const [team, teamSide] of [[home, 'HOME'], [away, 'AWAY']] as [string, TeamSide][]) {
      for (const line of [100.5, 102.5]) {
        const pOver = line === 100.5 ? 0.52 : 0.4;
        for (const side of ['OVER', 'UNDER'] as Side[]) {
          add({ market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', selectionId: `FULL-${side}-${team}-${line}`, selection: `${team} ${side} ${line}`, side, teamSide, teamName: team, teamId: team, line, priceAmerican: priceFor(side === 'OVER' ? pOver : 1 - pOver) });
        }
      }
    }
  }
  for (let n = 0; n < 3; n++) {
    const team = n % 2 === 0 ? home : away;
    const player = `${team}-p${n}`;
    const teamSide: TeamSide = team === home ? 'HOME' : 'AWAY';
    for (const [subtype, base] of [['PLAYER_TOTAL_POINTS', 20.5], ['PLAYER_TOTAL_POINTS_REBOUNDS', 30.5]] as const) {
      for (const line of [base - 2, base]) {
        for (const side of ['OVER', 'UNDER'] as Side[]) {
          const pOver = line === base ? 0.5 : 0.6;
          add({ market: 'PLAYER_TOTAL', marketSubtype: subtype, selectionId: `FULL-${side}-${player}-${line}`, selection: `${player} ${side} ${line}`, side, teamSide, teamName: team, teamId: team, line, playerId: player, playerName: `Name ${player} \u00e9\u00e8`, priceAmerican: priceFor(side === 'OVER' ? pOver : 1 - pOver) });
        }
      }
    }
  }
  return rows;
}

export function makeTestBoard(seed: number, games: number): TestBoard {
  const rand = mulberry32(seed);
  const events = makeEvents(rand, games);
  const rows: OddsInput[] = [];
  for (const event of events) for (const book of TEST_BOOKS) rows.push(...rowsFor(rand, event, book));
  return { events, rows };
}

/** A history buffer for a row: 0-60 past changes ending at the row's current price and updated. */
export function historyFor(rand: () => number, row: OddsInput, out: HistoryBuffer): HistoryBuffer {
  const count = Math.floor(rand() * 61);
  let buf = out;
  if (buf.fs.length < count + 1) buf = createHistoryBuffer(count + 8);
  const end = row.updated / 1000;
  for (let i = 0; i < count; i++) {
    const ls = end - (count - i) * 60;
    buf.fs[i] = ls - 30;
    buf.ls[i] = i === count - 1 ? end : ls;
    const last = i === count - 1;
    buf.pa[i] = row.priceAmerican === null ? 0 : last ? row.priceAmerican : priceFor(0.3 + ((i * 7) % 10) / 25);
    buf.dm[i] = row.dfsMultiplier === null ? 0 : last ? row.dfsMultiplier : 1;
    buf.su[i] = last ? (row.suspended ? 1 : 0) : i % 9 === 4 ? 1 : 0;
  }
  buf.length = count;
  return buf;
}

/** A Board over the test rows (cold arrays empty), replayable like the fixture boards. */
export function boardOf(test: TestBoard, seed = 7): Board {
  return {
    options: { seed, size: 'small', now: NOW },
    leagues: [],
    seasons: [],
    sources: [],
    venues: [],
    teams: [],
    players: [],
    events: test.events,
    teamBox: [],
    playerBox: [],
    oddsCount: test.rows.length,
    forEachOdds(visit) {
      const rand = mulberry32(seed);
      let buf = createHistoryBuffer(64);
      for (const row of test.rows) {
        buf = historyFor(rand, row, buf);
        visit(row, buf);
      }
    },
  };
}

export function newEngine(options: EngineOptions = {}): { engine: OddsEngine; clock: ManualClock } {
  const clock = new ManualClock(NOW);
  return { engine: new OddsEngine(clock, options), clock };
}

export function filterOf(patch: Partial<OddsFilter> = {}): OddsFilter {
  return { leagues: null, sportsbooks: null, markets: null, eventIds: null, playerId: null, teamId: null, scope: null, isMain: false, ...patch };
}

/** Reference order: sportsbook, then id, as plain string comparison of built ids. */
export function referenceSort(engine: OddsEngine, slots: number[]): number[] {
  const keyed = slots.map((slot) => ({ slot, book: engine.store.books.get(engine.store.book[slot]), id: engine.idOf(slot) }));
  keyed.sort((a, b) => (a.book < b.book ? -1 : a.book > b.book ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return keyed.map((k) => k.slot);
}

export function liveSlots(engine: OddsEngine): number[] {
  const out: number[] = [];
  for (let slot = 0; slot < engine.store.size; slot++) if (engine.isLive(slot)) out.push(slot);
  return out;
}

export function tombstoneSlots(engine: OddsEngine): number[] {
  const out: number[] = [];
  for (let slot = 0; slot < engine.store.size; slot++) if (engine.isTombstone(slot)) out.push(slot);
  return out;
}

/** Every page of a query, walked with the keyset cursor. */
export function walkAll(engine: OddsEngine, filter: OddsFilter, limit: number): number[] {
  const out: number[] = [];
  let after: string | null = null;
  for (let guard = 0; guard < 100_000; guard++) {
    const page = engine.odds.page(filter, after, limit);
    for (let i = 0; i < page.count; i++) out.push(page.slots[i]);
    if (!page.hasMore) return out;
    after = page.lastId;
  }
  throw new Error('walk did not end');
}

export { oddsId };

/** The row in a slot as an OddsInput (for cloning alternates in random tests). */
export function inputOf(engine: OddsEngine, slot: number): OddsInput {
  const o = engine.rowObject(slot, 'all') as Record<string, unknown>;
  const s = engine.store;
  return {
    eventId: o.eventId as string,
    sportsbook: o.sportsbook as string,
    league: o.league as string,
    market: o.market as string,
    marketSubtype: o.marketSubtype as string,
    period: o.period as string,
    selectionId: s.selectionIds.get(s.selectionId[slot]),
    selection: o.selection as string,
    side: o.side as Side,
    teamSide: o.teamSide as TeamSide,
    teamName: o.teamName as string,
    priceAmerican: (o.priceAmerican as number | undefined) ?? null,
    dfsMultiplier: (o.dfsMultiplier as number | undefined) ?? null,
    line: (o.line as number | undefined) ?? null,
    playerId: (o.playerId as string | undefined) ?? null,
    playerName: (o.playerName as string | undefined) ?? null,
    teamId: s.team[slot] < 0 ? null : s.teams.get(s.team[slot]),
    suspended: o.suspended as boolean,
    eventStartTime: s.eventStartTime[slot],
    updated: s.updated[slot],
    marketScope: (o.marketScope as OddsInput['marketScope'] | undefined) ?? null,
    segment: (o.segment as string | undefined) ?? null,
  };
}

/** Random changes in the proportions a live board sees, plus rarer structural ones. */
export function randomBatch(engine: OddsEngine, rand: () => number, removed: OddsInput[], size: number, counter: { n: number; revivals: number }): Change[] {
  const s = engine.store;
  const batch: Change[] = [];
  const randomLive = (): number => {
    for (let tries = 0; tries < 50; tries++) {
      const slot = Math.floor(rand() * s.size);
      if (engine.isLive(slot)) return slot;
    }
    return -1;
  };
  for (let i = 0; i < size; i++) {
    const r = rand();
    const slot = randomLive();
    if (slot < 0) break;
    const dfs = s.priceAmerican[slot] === 0;
    if (r < 0.7) {
      const move = Math.floor(rand() * 7) - 3;
      const current = dfs ? -110 : s.priceAmerican[slot];
      let next = current + move;
      if (next > -100 && next < 100) next = next < 0 ? 100 : -100;
      batch.push({ op: 'price', slot, priceAmerican: dfs ? null : next, dfsMultiplier: dfs ? 1 + Math.floor(rand() * 4) / 20 : undefined, suspended: rand() < 0.05 });
    } else if (r < 0.76) {
      const row = inputOf(engine, slot);
      if (!dfs) row.priceAmerican = rand() < 0.5 ? 105 : -105;
      batch.push({ op: 'upsert', row });
    } else if (r < 0.86) {
      const row = inputOf(engine, slot);
      const n = ++counter.n;
      row.selectionId = `${row.selectionId}-alt${n}`;
      if (row.line !== null) row.line += n % 2 === 0 ? 0.5 * n : -0.5 * n;
      batch.push({ op: 'upsert', row });
    } else if (r < 0.94) {
      removed.push(inputOf(engine, slot));
      batch.push({ op: 'remove', id: engine.idOf(slot) });
    } else if (r < 0.97 && removed.length > 0) {
      counter.revivals++;
      batch.push({ op: 'upsert', row: removed[Math.floor(rand() * removed.length)] });
    } else if (r < 0.9706) {
      const eventId = s.events.get(s.event[slot]);
      batch.push({ op: 'status', eventId, status: EVENT_STATUSES[Math.floor(rand() * EVENT_STATUSES.length)] });
    } else {
      batch.push({ op: 'price', slot, priceAmerican: dfs ? null : s.priceAmerican[slot], suspended: s.suspended[slot] === 1 });
    }
  }
  return batch;
}

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

/** Asserts every index, id lookup and counter equals a brute-force scan of the columns. */
export function checkConsistency(engine: OddsEngine): void {
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
  const byTuple = (a: [string, number], b: [string, number]): number => {
    const [ma, sa] = a[0].split('|');
    const [mb, sb] = b[0].split('|');
    return ma < mb ? -1 : ma > mb ? 1 : sa < sb ? -1 : sa > sb ? 1 : 0;
  };
  assert.deepEqual(
    engine.marketCounts().map((m) => [`${m.marketType}|${m.marketSubtype}`, m.liveCount]),
    [...pairs.entries()].sort(byTuple),
  );
  const books = new Map<string, number>();
  for (const slot of live) books.set(s.books.get(s.book[slot]), (books.get(s.books.get(s.book[slot])) ?? 0) + 1);
  assert.deepEqual(engine.bookCounts(), [...books.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([id, marketCount]) => ({ id, marketCount })));
  assert.equal(live.length + dead.length + s.freeSlotCount, s.size, 'every slot is live, a tombstone or free');
}
