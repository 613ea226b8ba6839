// Signals cost: one group re-evaluation (arbitrage only, arbitrage + edges), the
// whole per-update path as the engine adapter will drive it (refill the group's batch
// from typed columns, then both books), devig per call, a per-request /edges page
// under a non-default devig method, and RankedSet upserts.
//
// Two boards: a synthetic one with controlled group shapes (game-line groups of 9 books
// x 2 sides, player-prop groups of 9 books + 5 DFS sources x 2 sides) for per-kind
// costs, and the medium fixture board for the realistic mix of rows per tick.

import { Bench } from 'tinybench';
import { americanToDecimal, decimalToAmerican, SOURCES } from '../engine/model.ts';
import { DEVIG_METHODS, devigInto, devigMethodCode } from '../engine/signals/devig.ts';
import type { EdgeQuery } from '../engine/signals/edgeBook.ts';
import type { QuoteBatch } from '../engine/signals/quoteBatch.ts';
import { NONE } from '../engine/signals/marketGroups.ts';
import { RankedSet } from '../engine/signals/rankedSet.ts';
import { SignalBooks } from '../engine/signals/signalBooks.ts';
import type { QuoteSource } from '../engine/signals/quoteBatch.ts';
import { sideCode } from '../engine/signals/sides.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { benchSignalsOnEngine } from './signalsEngine.bench.ts';
import { benchTickToSteam } from './steamLatency.bench.ts';
import { mulberry32 } from '../engine/random.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const GAME_GROUPS = 8_000;
const PROP_GROUPS = 8_000;
const BOOKS = SOURCES.filter((s) => s.kind !== 'dfs').map((s) => s.id);
const DFS = SOURCES.filter((s) => s.kind === 'dfs').map((s) => s.id);


/** What the engine adapter's QuoteSource will be: typed columns read by slot. */
class ColumnQuoteSource implements QuoteSource {
  count = 0;
  book: Int32Array;
  side: Uint8Array;
  suspended: Uint8Array;
  american: Int32Array;
  decimal: Float64Array;
  multiplier: Float64Array;
  line: Float64Array;
  updated: Float64Array;
  id: string[] = [];
  selection: string[] = [];

  constructor(capacity: number) {
    this.book = new Int32Array(capacity);
    this.side = new Uint8Array(capacity);
    this.suspended = new Uint8Array(capacity);
    this.american = new Int32Array(capacity);
    this.decimal = new Float64Array(capacity);
    this.multiplier = new Float64Array(capacity);
    this.line = new Float64Array(capacity);
    this.updated = new Float64Array(capacity);
  }

  pushQuote(ref: number, batch: QuoteBatch): void {
    batch.push(this.book[ref], this.side[ref], this.suspended[ref] === 1, this.decimal[ref], this.american[ref], this.multiplier[ref], this.line[ref], this.updated[ref], this.id[ref], this.selection[ref]);
  }

  setPrice(ref: number, american: number, now: number): void {
    this.american[ref] = american;
    this.decimal[ref] = americanToDecimal(american);
    this.updated[ref] = now;
  }
}

interface SyntheticBoard {
  /** Time inside books.load (grouping) and books.evaluateAll. */
  loadMs: number;
  evaluateMs: number;
  books: SignalBooks;
  source: ColumnQuoteSource;
  gameRefs: Int32Array;
  propRefs: Int32Array;
  /** Prop-group quotes by kind: sharp books move fair value, retail only arbitrage, DFS their own edge. */
  propSharpRefs: Int32Array;
  propRetailRefs: Int32Array;
  propDfsRefs: Int32Array;
}

function buildBoard(rand: () => number): SyntheticBoard {
  const books = new SignalBooks();
  const perGame = BOOKS.length * 2;
  const perProp = (BOOKS.length + DFS.length) * 2;
  const source = new ColumnQuoteSource(GAME_GROUPS * perGame + PROP_GROUPS * perProp);
  const gameRefs: number[] = [];
  const propRefs: number[] = [];
  const propSharpRefs: number[] = [];
  const propRetailRefs: number[] = [];
  const propDfsRefs: number[] = [];
  let loadMs = 0;
  const add = (fields: {
    eventId: string; market: string; marketSubtype: string; side: 'HOME' | 'AWAY' | 'OVER' | 'UNDER'; teamSide: string;
    line: number | null; playerId: string | null; sportsbook: string; american: number | null; multiplier: number | null;
  }): number => {
    const ref = source.count++;
    const dfs = fields.multiplier !== null;
    source.book[ref] = books.sources.intern(fields.sportsbook, dfs ? 'dfs' : 'retail');
    source.side[ref] = sideCode(fields.side);
    source.american[ref] = fields.american ?? 0;
    source.decimal[ref] = fields.american === null ? NaN : americanToDecimal(fields.american);
    source.multiplier[ref] = fields.multiplier ?? NaN;
    source.line[ref] = fields.line ?? NaN;
    source.updated[ref] = NOW - Math.floor(rand() * 8 * 60_000);
    source.id[ref] = `${fields.eventId}:${fields.sportsbook}:${fields.marketSubtype}:${fields.side}-${fields.line}-${fields.playerId}`;
    source.selection[ref] = `${fields.side} ${fields.line ?? ''}`;
    const input = {
      eventId: fields.eventId, league: 'nba', market: fields.market, marketSubtype: fields.marketSubtype, period: 'FULL',
      side: fields.side, teamSide: fields.teamSide, line: fields.line, playerId: fields.playerId, playerName: fields.playerId,
      marketScope: null, eventStartTime: NOW + 3_600_000,
    };
    const start = performance.now();
    books.load(ref, input);
    loadMs += performance.now() - start;
    return ref;
  };
  // noise tuned like the fixtures: arbs on about 1% of groups, edges >= 0 on a few % of picks
  const price = (p: number, margin: number) => decimalToAmerican(1 / Math.min(0.95, Math.max(0.05, p * (1 + margin) + (rand() - 0.5) * 0.026)));
  const multiplier = () => (rand() < 0.85 ? 1 : Math.round((0.85 + 0.3 * rand()) * 100) / 100);
  for (let g = 0; g < GAME_GROUPS; g++) {
    const eventId = `nba-e${Math.floor(g / 20)}`;
    const line = -(1.5 + (g % 20));
    const p = 0.4 + 0.2 * rand();
    for (const book of BOOKS) {
      gameRefs.push(add({ eventId, market: 'SPREAD', marketSubtype: 'SPREAD', side: 'HOME', teamSide: 'HOME', line, playerId: null, sportsbook: book, american: price(p, 0.027), multiplier: null }));
      gameRefs.push(add({ eventId, market: 'SPREAD', marketSubtype: 'SPREAD', side: 'AWAY', teamSide: 'AWAY', line: -line, playerId: null, sportsbook: book, american: price(1 - p, 0.027), multiplier: null }));
    }
  }
  for (let g = 0; g < PROP_GROUPS; g++) {
    const eventId = `nba-e${Math.floor(g / 20)}`;
    const playerId = `nba-p${Math.floor(g / 4)}`;
    const line = 10.5 + (g % 4);
    const p = 0.42 + 0.16 * rand(); // pick'em lines sit near 50/50
    const prop = { eventId, market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', teamSide: 'HOME', line, playerId };
    for (const book of BOOKS) {
      const over = add({ ...prop, side: 'OVER', sportsbook: book, american: price(p, 0.03), multiplier: null });
      const under = add({ ...prop, side: 'UNDER', sportsbook: book, american: price(1 - p, 0.03), multiplier: null });
      propRefs.push(over, under);
      (books.config.sharpBooks.includes(book) ? propSharpRefs : propRetailRefs).push(over, under);
    }
    for (const dfs of DFS) {
      for (const side of ['OVER', 'UNDER'] as const) {
        const ref = add({ ...prop, side, sportsbook: dfs, american: null, multiplier: multiplier() });
        propRefs.push(ref);
        propDfsRefs.push(ref);
      }
    }
  }
  const start = performance.now();
  books.evaluateAll(source);
  const evaluateMs = performance.now() - start;
  books.edges.refresh(NOW);
  return {
    loadMs,
    evaluateMs,
    books,
    source,
    gameRefs: Int32Array.from(gameRefs),
    propRefs: Int32Array.from(propRefs),
    propSharpRefs: Int32Array.from(propSharpRefs),
    propRetailRefs: Int32Array.from(propRetailRefs),
    propDfsRefs: Int32Array.from(propDfsRefs),
  };
}

/** The medium fixture board in columns, loaded into SignalBooks. */
function fixtureBoard(): { books: SignalBooks; source: ColumnQuoteSource; loadMs: number; evaluateMs: number } {
  const board = generateBoard({ seed: 42, size: 'medium', now: NOW });
  const books = new SignalBooks();
  const source = new ColumnQuoteSource(board.oddsCount);
  let loadMs = 0;
  board.forEachOdds((row) => {
    const ref = source.count++;
    const dfs = row.dfsMultiplier !== null;
    source.book[ref] = books.sources.intern(row.sportsbook, dfs ? 'dfs' : 'retail');
    source.side[ref] = sideCode(row.side);
    source.suspended[ref] = row.suspended ? 1 : 0;
    source.american[ref] = row.priceAmerican ?? 0;
    source.decimal[ref] = row.priceAmerican === null ? NaN : americanToDecimal(row.priceAmerican);
    source.multiplier[ref] = row.dfsMultiplier ?? NaN;
    source.line[ref] = row.line ?? NaN;
    source.updated[ref] = row.updated;
    source.id[ref] = `${row.eventId}:${row.sportsbook}:${row.marketSubtype}:${row.selectionId}`;
    source.selection[ref] = row.selection;
    const start = performance.now();
    books.load(ref, row);
    loadMs += performance.now() - start;
  });
  const start = performance.now();
  books.evaluateAll(source);
  const evaluateMs = performance.now() - start;
  books.edges.refresh(NOW);
  return { books, source, loadMs, evaluateMs };
}

/** Mean ns per call of fn over `iterations` calls (after a warm-up). */
function nsPerCall(iterations: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(iterations, 20_000); i++) fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn(i);
  return Number(process.hrtime.bigint() - start) / iterations;
}

export async function benchSignals(): Promise<Record<string, number | string>> {
  const rand = mulberry32(7);
  const board = buildBoard(rand);
  const out: Record<string, number | string> = {};
  describeBoard(board, out);
  const draws = drawTicks(rand);
  const ticks = tickPaths(board, draws);
  benchGroupReevaluation(board, draws, out);
  benchSyntheticTicks(board, draws, ticks, out);
  benchFixtureTicks(draws, out);
  benchChanged(board, draws, ticks, out);
  benchDevig(draws, out);
  await benchPages(board, draws, ticks, out);
  benchRankedSets(rand, draws, out);
  // on the real engine (large board): apply throughput with signals on/off, reads, history replay
  Object.assign(out, await benchSignalsOnEngine());
  // tick to steam event end to end: ingest POST -> SSE event on the signal stream (same board size)
  Object.assign(out, await benchTickToSteam());
  return out;
}

type Results = Record<string, number | string>;

function describeBoard(board: SyntheticBoard, out: Results): void {
  const { books, source } = board;
  out['board: market groups'] = books.groups.liveCount;
  out['board: quotes'] = source.count;
  out['bulk load: load() per row, ns'] = round((board.loadMs * 1e6) / source.count);
  out['bulk load: evaluateAll, ms'] = Math.round(board.evaluateMs);
  out['board: arbitrage records'] = books.arbitrage.size;
  out['board: edge records (multiplicative, >= 0)'] = books.edges.set.size;
  out['board: DFS picks'] = PROP_GROUPS * DFS.length * 2;
}

/** Pre-drawn random choices, so the timed loops measure signals, not the PRNG. */
interface Draws {
  /** Calls per timed loop. */
  n: number;
  /** Which row a call ticks (modulo the row set's size). */
  picks: Int32Array;
  /** How many notches the tick moves the price, -3..3. */
  ticks: Int32Array;
}

function drawTicks(rand: () => number): Draws {
  const n = 400_000;
  const picks = new Int32Array(n);
  const ticks = new Int32Array(n);
  for (let i = 0; i < n; i++) { picks[i] = Math.floor(rand() * 1e9); ticks[i] = Math.floor(rand() * 7) - 3; }
  return { n, picks, ticks };
}

/**
 * The per-tick path as the engine adapter drives it: the engine writes a price, then
 * books.priced(...). A tick is a few cents either way around the row's loaded price (no
 * random walk); a DFS tick moves the multiplier a notch. The write alone is timed too
 * and subtracted.
 */
interface TickPaths {
  pickOf(refs: Int32Array, i: number): number;
  /** The i-th drawn write to a row of `refs`. */
  move(refs: Int32Array): (i: number) => void;
  /** priced(): the adapter hands over the values it just wrote (no column reads). */
  priced(ref: number): void;
}

function tickPaths(board: SyntheticBoard, draws: Draws): TickPaths {
  const { books, source } = board;
  const base = Float64Array.from(source.decimal);
  const baseMultiplier = Float64Array.from(source.multiplier);
  const pickOf = (refs: Int32Array, i: number) => refs[draws.picks[i] % refs.length];
  const move = (refs: Int32Array) => (i: number) => {
    const ref = pickOf(refs, i);
    if (Number.isNaN(base[ref])) source.multiplier[ref] = baseMultiplier[ref] + 0.01 * draws.ticks[i];
    else source.setPrice(ref, decimalToAmerican(base[ref] * (1 + 0.001 * draws.ticks[i])), NOW);
  };
  const priced = (ref: number) => {
    books.priced(ref, source.decimal[ref], source.suspended[ref] === 1, source.updated[ref], source.multiplier[ref], source);
  };
  return { pickOf, move, priced };
}

/** One group re-evaluation from an already filled batch. */
function benchGroupReevaluation(board: SyntheticBoard, draws: Draws, out: Results): void {
  const { books, source } = board;
  const N = draws.n;
  const gameGroup = books.groups.groupOf(board.gameRefs[0]);
  const propGroup = books.groups.groupOf(board.propRefs[0]);
  const fill = (g: number) => {
    books.batch.clear();
    for (let ref = books.groups.firstMember(g); ref !== NONE; ref = books.groups.nextMember(ref)) {
      source.pushQuote(ref, books.batch);
      books.batch.ref[books.batch.length - 1] = ref;
    }
  };
  fill(gameGroup);
  out['re-eval game group (18 quotes): arbitrage, ns'] = round(nsPerCall(N, () => books.arbitrage.updateGroup(gameGroup, books.batch)));
  fill(propGroup);
  out['re-eval prop group (28 quotes): arbitrage, ns'] = round(nsPerCall(N, () => books.arbitrage.updateGroup(propGroup, books.batch)));
  out['re-eval prop group (28 quotes): edges + re-price, ns'] = round(nsPerCall(N, () => { books.edges.updateGroup(propGroup, books.batch); books.edges.refresh(NOW); }));
  out['refill batch, prop group (28 quotes), ns'] = round(nsPerCall(N, () => fill(propGroup)));
}

/** priced() per kind of row of the synthetic board, and their mix by row count. */
function benchSyntheticTicks(board: SyntheticBoard, draws: Draws, paths: TickPaths, out: Results): void {
  const N = draws.n;
  const kinds: [string, Int32Array][] = [
    ['game-line row', board.gameRefs],
    ['prop, retail book row', board.propRetailRefs],
    ['prop, sharp book row', board.propSharpRefs],
    ['prop, DFS pick row', board.propDfsRefs],
  ];
  let mix = 0;
  for (const [name, refs] of kinds) {
    const moveOnly = paths.move(refs);
    const base = nsPerCall(N, moveOnly);
    const cost = nsPerCall(N, (i) => { moveOnly(i); paths.priced(paths.pickOf(refs, i)); }) - base;
    out[`per tick priced(), ${name}, ns`] = round(cost);
    mix += cost * refs.length / board.source.count;
  }
  out['per tick priced(), board mix by row count, ns'] = round(mix);
}

/** The realistic mix: random rows of the medium fixture board. */
function benchFixtureTicks(draws: Draws, out: Results): void {
  const N = draws.n;
  const fixture = fixtureBoard();
  const fb = fixture.books;
  const fs = fixture.source;
  out['medium fixture: rows'] = fs.count;
  out['medium fixture: market groups'] = fb.groups.liveCount;
  out['medium fixture: load() per row, ns'] = round((fixture.loadMs * 1e6) / fs.count);
  out['medium fixture: evaluateAll, ms'] = Math.round(fixture.evaluateMs);
  out['medium fixture: arbitrage records'] = fb.arbitrage.size;
  out['medium fixture: edge records (>= 0)'] = fb.edges.set.size;
  const all = Int32Array.from({ length: fs.count }, (_, i) => i);
  const pickOf = (i: number) => all[draws.picks[i] % all.length];
  const fixtureBase = Float64Array.from(fs.decimal);
  const fixtureMultiplier = Float64Array.from(fs.multiplier);
  const moveRow = (i: number) => {
    const ref = pickOf(i);
    if (Number.isNaN(fixtureBase[ref])) fs.multiplier[ref] = fixtureMultiplier[ref] + 0.01 * draws.ticks[i];
    else fs.setPrice(ref, decimalToAmerican(fixtureBase[ref] * (1 + 0.001 * draws.ticks[i])), NOW);
  };
  const base = nsPerCall(N, moveRow);
  const perTick = nsPerCall(N, (i) => {
    moveRow(i);
    const ref = pickOf(i);
    fb.priced(ref, fs.decimal[ref], fs.suspended[ref] === 1, fs.updated[ref], fs.multiplier[ref], fs);
  }) - base;
  out['medium fixture: per tick priced(), random rows, ns'] = round(perTick);
  const readStart = performance.now();
  fb.edges.refresh(NOW);
  out['medium fixture: first /edges read after the ticks, ms'] = round(performance.now() - readStart, 3);
  out['medium fixture: arbitrage records after ticks'] = fb.arbitrage.size;
}

/** changed(): the books read the row from the source themselves (game lines). */
function benchChanged(board: SyntheticBoard, draws: Draws, paths: TickPaths, out: Results): void {
  const { books, source } = board;
  const N = draws.n;
  const moveGame = paths.move(board.gameRefs);
  const baseGame = nsPerCall(N, moveGame);
  out['per tick changed() (reads the source), game-line, ns'] = round(nsPerCall(N, (i) => { moveGame(i); books.changed(paths.pickOf(board.gameRefs, i), source); }) - baseGame);
  out['board: arbitrage records after ticks'] = books.arbitrage.size;
  out['board: edge records after ticks'] = books.edges.set.size;
}

/** devig per call (two-way). */
function benchDevig(draws: Draws, out: Results): void {
  const pair = new Float64Array([1.8, 2.05]);
  const fair = new Float64Array(3);
  for (const method of DEVIG_METHODS) {
    const code = devigMethodCode(method);
    out[`devig ${method}, 2-way, ns`] = round(nsPerCall(draws.n, () => devigInto(code, pair, 0, 2, fair, 0)));
  }
}

/** /edges pages: incremental (multiplicative) vs per request (other methods); an /arbitrage page. */
async function benchPages(board: SyntheticBoard, draws: Draws, paths: TickPaths, out: Results): Promise<void> {
  const { books } = board;
  const N = draws.n;
  const query = (devig: EdgeQuery['devig']): EdgeQuery => ({ leagues: null, sources: null, eventIds: null, minEdge: 0.02, devig });
  const bench = new Bench({ time: 300, warmupTime: 50 });
  for (const method of DEVIG_METHODS) bench.add(`edges page ${method}`, () => { books.edges.page(query(method), null, 100, NOW); });
  bench.add('arbitrage page', () => { books.arbitrage.page({ types: null, leagues: null, eventIds: null, minProfit: 0.001 }, null, 100); });
  await bench.run();
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state === 'completed') out[`${task.name} (limit 100), ms`] = round(result.latency.mean, 4);
  }
  // the first per-request page after a tick pays for re-devigging the changed group only
  const moveSharp = paths.move(board.propSharpRefs);
  const afterTick = new Bench({ time: 300, warmupTime: 50 });
  let tick = 0;
  const hundredTicks = () => {
    for (let j = 0; j < 100; j++, tick++) { moveSharp(tick % N); paths.priced(paths.pickOf(board.propSharpRefs, tick % N)); }
  };
  afterTick.add('edges page power after 100 ticks', () => {
    hundredTicks();
    books.edges.page(query('power'), null, 100, NOW);
  });
  afterTick.add('edges page multiplicative after 100 ticks', () => {
    hundredTicks();
    books.edges.page(query('multiplicative'), null, 100, NOW);
  });
  afterTick.add('100 ticks alone', hundredTicks);
  await afterTick.run();
  const [powerPage, multiplicativePage, alone] = afterTick.tasks.map((t) => (t.result.state === 'completed' ? t.result.latency.mean : NaN));
  out['edges page power, 100 sharp ticks since last read, ms'] = round(powerPage - alone, 4);
  out['edges page mult., 100 sharp ticks since last read, ms'] = round(multiplicativePage - alone, 4);
}

/** RankedSet upsert that moves an entry, at result-set sizes. */
function benchRankedSets(rand: () => number, draws: Draws, out: Results): void {
  for (const size of [1_000, 10_000]) {
    const set = new RankedSet<number>();
    const ids = Array.from({ length: size }, (_, i) => `id-${i}`);
    ids.forEach((id, i) => set.upsert(id, rand(), i, 'nba', 'e', 't'));
    const scores = Float64Array.from({ length: draws.n }, () => rand());
    out[`RankedSet upsert (move) at size ${size}, ns`] = round(nsPerCall(draws.n / 4, (i) => set.upsert(ids[draws.picks[i] % size], scores[i], i, 'nba', 'e', 't')));
  }
}

function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await benchSignals();
  for (const [key, value] of Object.entries(results)) console.log(key.padEnd(56), value);
}
