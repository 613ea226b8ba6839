// DFS edges on hand-built props: fair value from sharp books (mean, identical line,
// suspended and stale quotes ignored), breakeven per source, every devig method,
// staleness that expires with the clock alone, and the result book's pages.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oddsId, type OddsInput } from '../../engine/model.ts';
import { bruteForceEdges } from '../helpers/bruteForce.ts';
import { DEVIG_METHODS, type DevigMethod } from '../../engine/signals/devig.ts';
import type { EdgeQuery } from '../../engine/signals/edgeBook.ts';
import type { SignalsConfig } from '../../engine/signals/records.ts';
import { NOW, row, SignalBoard } from '../helpers/signals-harness.ts';

const MIN = 60_000;
const PLAYER = 'nba-bos-jtatum';
const prop = (fields: Partial<OddsInput> = {}) => ({
  market: 'PLAYER_TOTAL',
  marketSubtype: 'PLAYER_TOTAL_POINTS',
  line: 24.5,
  playerId: PLAYER,
  teamSide: 'HOME' as const,
  ...fields,
});
const PICK_OVER = oddsId(row({ sportsbook: 'prizepicks', side: 'OVER', ...prop() }));

const near = (actual: number, expected: number, tolerance = 1e-12): void =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} vs ${expected}`);

// hand-computed (mpmath; the two-way closed forms of docs/signals.md, Jensen-Shannon by findroot) from the 4-place decimals of -125/+105 and -140/+120
const BREAKEVEN_12 = 0.48112522432468814;
const FAIR_OVER: Record<'pin' | 'both' | 'circa', Record<DevigMethod, number>> = {
  pin: { multiplicative: 0.53246753246753244, additive: 0.53387533875338751, power: 0.53458622743288217, shin: 0.53387533875338751, worst: 0.53246753246753244, odds_ratio: 0.53393944403532799, wpo: 0.53387533875338753, balanced_book: 0.53541076487252125, jensen_shannon: 0.53390737117079493 },
  both: { multiplicative: 0.54725463842036409, additive: 0.54913342380601292, power: 0.55007416969340851, shin: 0.54913342380601292, worst: 0.54725463842036409, odds_ratio: 0.54921250776271378, wpo: 0.54913342380601292, balanced_book: 0.55116851718170104, jensen_shannon: 0.54917294418180184 },
  circa: { multiplicative: 0.56204174437319575, additive: 0.56439150885863833, power: 0.56556211195393486, shin: 0.56439150885863833, worst: 0.56204174437319575, odds_ratio: 0.56448557149009956, wpo: 0.5643915088586383, balanced_book: 0.56692626949088083, jensen_shannon: 0.56443851719280875 },
};

function sharp(board: SignalBoard, book: string, over: number, under: number, fields: Partial<OddsInput> = {}): void {
  board.upsert(row({ sportsbook: book, side: 'OVER', priceAmerican: over, ...prop(fields) }));
  board.upsert(row({ sportsbook: book, side: 'UNDER', priceAmerican: under, ...prop(fields) }));
}

function pick(board: SignalBoard, source: string, side: 'OVER' | 'UNDER', multiplier: number, fields: Partial<OddsInput> = {}): void {
  board.upsert(row({ sportsbook: source, side, dfsMultiplier: multiplier, ...prop(fields) }));
}

const everything = (devig: DevigMethod = 'multiplicative'): EdgeQuery => ({ leagues: null, sources: null, eventIds: null, minEdge: 0, devig });

function assertMatchesReference(board: SignalBoard, now = board.now): void {
  for (const devig of DEVIG_METHODS) {
    assert.deepEqual(board.books.edges.all(now, devig), bruteForceEdges(board.json(), now, { devig, minEdge: 0, config: board.books.config }), devig);
  }
}

function propBoard(config: Partial<SignalsConfig> = {}): SignalBoard {
  const board = new SignalBoard(config);
  sharp(board, 'pinnacle', -125, 105, { updated: NOW - 2 * MIN });
  pick(board, 'prizepicks', 'OVER', 1.2);
  pick(board, 'prizepicks', 'UNDER', 1.0);
  return board;
}

test('one sharp book: fair value, breakeven, edge and the Edge record', () => {
  const board = propBoard();
  const edges = board.books.edges.all(NOW);
  assert.equal(edges.length, 1, 'UNDER at 1.0x is negative and left out');
  const edge = edges[0];
  assert.equal(edge.id, PICK_OVER);
  assert.equal(edge.eventId, 'nba-20261121-lal-bos');
  assert.equal(edge.league, 'nba');
  assert.equal(edge.source, 'prizepicks');
  assert.equal(edge.market, 'PLAYER_TOTAL');
  assert.equal(edge.marketSubtype, 'PLAYER_TOTAL_POINTS');
  assert.equal(edge.period, 'FULL');
  assert.equal(edge.playerId, PLAYER);
  assert.equal(edge.playerName, `Player ${PLAYER}`);
  assert.equal(edge.side, 'OVER');
  assert.equal(edge.line, 24.5);
  assert.equal(edge.dfsMultiplier, 1.2);
  near(edge.breakevenProbability, BREAKEVEN_12);
  near(edge.fairProbability, FAIR_OVER.pin.multiplicative);
  near(edge.edge, FAIR_OVER.pin.multiplicative - BREAKEVEN_12);
  assert.equal(edge.fairPriceAmerican, -114);
  assert.deepEqual(edge.sharpBooks, ['pinnacle']);
  assert.equal(edge.devig, 'multiplicative');
  assert.equal(edge.eventStartTime, '2026-11-21T15:00');
  // the DFS row (NOW - 1 min) is newer than the sharp quotes (NOW - 2 min)
  assert.equal(edge.updated, new Date(NOW - MIN).toISOString());
  assertMatchesReference(board);
});

test('several sharp books: the mean of their fair values; retail books never count', () => {
  const board = propBoard();
  sharp(board, 'circa', -140, 120);
  sharp(board, 'draftkings', -300, 250);
  const [edge] = board.books.edges.all(NOW);
  near(edge.fairProbability, FAIR_OVER.both.multiplicative);
  assert.deepEqual(edge.sharpBooks, ['pinnacle', 'circa']);
  assert.equal(edge.fairPriceAmerican, -121);
  assertMatchesReference(board);
});

test('every devig method, per request, against hand-computed fair values', () => {
  const board = propBoard();
  sharp(board, 'circa', -140, 120);
  for (const devig of DEVIG_METHODS) {
    const page = board.books.edges.page(everything(devig), null, 10, NOW);
    assert.equal(page.items.length, 1, devig);
    const [edge] = page.items;
    near(edge.fairProbability, FAIR_OVER.both[devig], 1e-11);
    near(edge.edge, FAIR_OVER.both[devig] - BREAKEVEN_12, 1e-11);
    assert.equal(edge.devig, devig);
  }
  assertMatchesReference(board);
});

test('only sharp quotes at the identical line count', () => {
  const board = propBoard();
  sharp(board, 'circa', -140, 120, { line: 25.5 });
  const [edge] = board.books.edges.all(NOW);
  assert.deepEqual(edge.sharpBooks, ['pinnacle']);
  near(edge.fairProbability, FAIR_OVER.pin.multiplicative);
  assertMatchesReference(board);
});

test('suspended sharp quotes are ignored (the book drops out); a suspended DFS row has no edge', () => {
  const board = propBoard();
  sharp(board, 'circa', -140, 120);
  board.change(oddsId(row({ sportsbook: 'pinnacle', side: 'UNDER', ...prop() })), { suspended: true });
  let [edge] = board.books.edges.all(NOW);
  assert.deepEqual(edge.sharpBooks, ['circa']);
  near(edge.fairProbability, FAIR_OVER.circa.multiplicative);
  assertMatchesReference(board);
  board.change(oddsId(row({ sportsbook: 'circa', side: 'OVER', ...prop() })), { suspended: true });
  assert.equal(board.books.edges.all(NOW).length, 0, 'no sharp book left: no fair value, no edge');
  assertMatchesReference(board);
  board.change(oddsId(row({ sportsbook: 'circa', side: 'OVER', ...prop() })), { suspended: false });
  [edge] = board.books.edges.all(NOW);
  assert.deepEqual(edge.sharpBooks, ['circa']);
  board.change(PICK_OVER, { suspended: true });
  assert.equal(board.books.edges.all(NOW).length, 0);
  assertMatchesReference(board);
});

test('stale sharp quotes are ignored at evaluation time, with no update needed', () => {
  const board = new SignalBoard();
  sharp(board, 'pinnacle', -125, 105, { updated: NOW - 9 * MIN });
  sharp(board, 'circa', -140, 120, { updated: NOW - 2 * MIN });
  sharp(board, 'bookmaker', -300, 250, { updated: NOW - 11 * MIN });
  pick(board, 'prizepicks', 'OVER', 1.2, { updated: NOW - 30 * MIN });
  const edges = board.books.edges;
  const at = (now: number) => edges.all(now)[0];
  assert.deepEqual(at(NOW).sharpBooks, ['pinnacle', 'circa'], 'bookmaker is 11 min old');
  near(at(NOW).fairProbability, FAIR_OVER.both.multiplicative);
  assert.equal(at(NOW).updated, new Date(NOW - 2 * MIN).toISOString(), 'newest used sharp quote');
  assertMatchesReference(board, NOW);
  // exactly 10 minutes old is still fresh
  assert.deepEqual(at(NOW + MIN).sharpBooks, ['pinnacle', 'circa']);
  assert.deepEqual(edges.all(NOW + MIN, 'power')[0].sharpBooks, ['pinnacle', 'circa'], 'per-request pricing agrees');
  assertMatchesReference(board, NOW + MIN);
  const v = edges.version;
  assert.deepEqual(at(NOW + MIN + 1).sharpBooks, ['circa'], 'pinnacle expired by the clock alone');
  assert.ok(edges.version > v);
  near(at(NOW + MIN + 1).fairProbability, FAIR_OVER.circa.multiplicative);
  assertMatchesReference(board, NOW + MIN + 1);
  assert.equal(edges.all(NOW + 8 * MIN + 1).length, 0, 'circa expired too');
  assertMatchesReference(board, NOW + 8 * MIN + 1);
  // a fresh quote brings the book back
  board.now = NOW + 9 * MIN;
  board.change(oddsId(row({ sportsbook: 'pinnacle', side: 'OVER', ...prop() })), { updated: board.now });
  board.change(oddsId(row({ sportsbook: 'pinnacle', side: 'UNDER', ...prop() })), { updated: board.now });
  assert.deepEqual(at(board.now).sharpBooks, ['pinnacle']);
  assertMatchesReference(board);
});

test('breakeven uses the per-source base leg decimal, sqrt(3) by default', () => {
  const board = propBoard({ baseLegDecimal: { underdog: 1.8 } });
  pick(board, 'underdog', 'OVER', 1.1);
  const edges = board.books.edges.all(NOW);
  const underdog = edges.find((e) => e.source === 'underdog')!;
  near(underdog.breakevenProbability, 0.50505050505050505);
  near(underdog.edge, FAIR_OVER.pin.multiplicative - 0.50505050505050505);
  near(edges.find((e) => e.source === 'prizepicks')!.breakevenProbability, BREAKEVEN_12);
  assertMatchesReference(board);
});

test('custom sharp books and staleness window', () => {
  const board = new SignalBoard({ sharpBooks: ['circa'], stalenessMs: MIN });
  sharp(board, 'pinnacle', -125, 105, { updated: NOW });
  sharp(board, 'circa', -140, 120, { updated: NOW - 30_000 });
  pick(board, 'prizepicks', 'OVER', 1.2);
  assert.deepEqual(board.books.edges.all(NOW)[0].sharpBooks, ['circa']);
  assert.equal(board.books.edges.all(NOW + 31_000).length, 0);
  assertMatchesReference(board, NOW + 31_000);
});

test('removing the DFS rows, or the sharp rows, takes the edges away', () => {
  const board = propBoard();
  assert.equal(board.books.edges.all(NOW).length, 1);
  board.remove(oddsId(row({ sportsbook: 'pinnacle', side: 'UNDER', ...prop() })));
  assert.equal(board.books.edges.all(NOW).length, 0);
  sharp(board, 'pinnacle', -125, 105);
  assert.equal(board.books.edges.all(NOW).length, 1);
  board.remove(PICK_OVER);
  board.remove(oddsId(row({ sportsbook: 'prizepicks', side: 'UNDER', ...prop() })));
  assert.equal(board.books.edges.all(NOW).length, 0);
  for (const devig of DEVIG_METHODS) assert.equal(board.books.edges.all(NOW, devig).length, 0);
  assertMatchesReference(board);
});

test('pages: order, filters (league, source, event, min edge), cursor, for incremental and per-request methods', () => {
  const board = new SignalBoard();
  const players = ['p1', 'p2', 'p3'];
  const events = ['nba-e1', 'nba-e2', 'nhl-e3'];
  players.forEach((playerId, i) => {
    const where = { eventId: events[i], league: events[i].slice(0, 3), playerId };
    sharp(board, 'pinnacle', -125, 105, where);
    pick(board, 'prizepicks', 'OVER', 1.2 + 0.05 * i, where);
    pick(board, 'underdog', 'OVER', 1.15, where);
  });
  for (const devig of ['multiplicative', 'power'] as const) {
    const edges = board.books.edges;
    const all = edges.all(NOW, devig);
    assert.equal(all.length, 6);
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].edge > all[i].edge || (all[i - 1].edge === all[i].edge && all[i - 1].id < all[i].id));
    const q = everything(devig);
    const ids = (query: EdgeQuery) => edges.page(query, null, 100, NOW).items.map((e) => e.id);
    assert.deepEqual(ids({ ...q, sources: ['underdog'] }), all.filter((e) => e.source === 'underdog').map((e) => e.id));
    assert.deepEqual(ids({ ...q, leagues: ['nhl'] }), all.filter((e) => e.league === 'nhl').map((e) => e.id));
    assert.deepEqual(ids({ ...q, eventIds: ['nba-e2'] }), all.filter((e) => e.eventId === 'nba-e2').map((e) => e.id));
    const cut = all[2].edge;
    assert.deepEqual(ids({ ...q, minEdge: cut }), all.filter((e) => e.edge >= cut).map((e) => e.id));
    const pages = [edges.page(q, null, 4, NOW)];
    assert.equal(pages[0].hasMore, true);
    pages.push(edges.page(q, pages[0].last, 4, NOW));
    assert.equal(pages[1].hasMore, false);
    assert.deepEqual(pages.flatMap((p) => p.items.map((e) => e.id)), all.map((e) => e.id));
  }
  assertMatchesReference(board);
});

test('a group losing its DFS rows hands its slot to another group without mixing their sharp prices', () => {
  const board = new SignalBoard();
  const players = ['p1', 'p2', 'p3'];
  const prices: [number, number][] = [[-125, 105], [-140, 120], [-200, 165]];
  players.forEach((playerId, i) => {
    sharp(board, 'pinnacle', prices[i][0], prices[i][1], { playerId });
    pick(board, 'prizepicks', 'OVER', 1.25, { playerId });
    pick(board, 'prizepicks', 'UNDER', 1.25, { playerId });
  });
  sharp(board, 'circa', -190, 160, { playerId: 'p3' }); // the group that will move has a different set of sharp books
  for (const side of ['OVER', 'UNDER'] as const) {
    assertMatchesReference(board); // fills the per-method caches
    board.remove(oddsId(row({ sportsbook: 'prizepicks', side, ...prop({ playerId: 'p1' }) })));
  }
  assert.ok(board.books.edges.all(NOW).every((e) => e.playerId !== 'p1'));
  assertMatchesReference(board);
  // p1's picks come back: a fresh slot, priced from p1's own sharp quotes
  pick(board, 'prizepicks', 'OVER', 1.25, { playerId: 'p1' });
  assertMatchesReference(board);
  board.change(oddsId(row({ sportsbook: 'pinnacle', side: 'OVER', ...prop({ playerId: 'p3' }) })), { priceAmerican: -180 });
  assertMatchesReference(board);
});

test('a rescheduled event: both books re-list its records with the new start', () => {
  const board = propBoard();
  board.upsert(row({ sportsbook: 'draftkings', side: 'OVER', priceAmerican: 120, ...prop() }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'UNDER', priceAmerican: 120, ...prop() }));
  assert.equal(board.books.arbitrage.size, 1);
  const moved = Date.parse('2026-11-22T01:30:00Z');
  board.books.eventMoved('nba-20261121-lal-bos', moved, board.source);
  assert.equal(board.books.arbitrage.all()[0].eventStartTime, '2026-11-22T01:30');
  assert.equal(board.books.edges.all(NOW)[0].eventStartTime, '2026-11-22T01:30');
  for (const devig of DEVIG_METHODS) assert.equal(board.books.edges.all(NOW, devig)[0].eventStartTime, '2026-11-22T01:30');
});

test('ticks only mark their group; the next read re-prices it once, at the read clock', () => {
  const board = propBoard();
  const edges = board.books.edges;
  edges.all(NOW);
  assert.equal(edges.pendingGroups, 0);
  const over = oddsId(row({ sportsbook: 'pinnacle', side: 'OVER', ...prop() }));
  const version = edges.version;
  for (const price of [-130, -135, -125]) board.change(over, { priceAmerican: price });
  assert.equal(edges.pendingGroups, 1, 'three ticks on one group: one pending re-price');
  assert.equal(edges.version, version, 'nothing re-priced before a read');
  near(edges.all(NOW)[0].fairProbability, FAIR_OVER.pin.multiplicative);
  assert.equal(edges.pendingGroups, 0);
  // retail ticks never concern the edge book (unless the group must be re-read in full)
  board.upsert(row({ sportsbook: 'draftkings', side: 'OVER', priceAmerican: -150, ...prop() }));
  edges.all(NOW);
  board.change(oddsId(row({ sportsbook: 'draftkings', side: 'OVER', ...prop() })), { priceAmerican: -155 });
  assert.equal(edges.pendingGroups, 0);
});

test('versionAt changes exactly when an answer could: ticks, expiries, per method', () => {
  const board = new SignalBoard();
  sharp(board, 'pinnacle', -125, 105, { updated: NOW - 9 * MIN });
  pick(board, 'prizepicks', 'UNDER', 1.0); // negative under every method: never in the multiplicative set
  const edges = board.books.edges;
  const m0 = edges.versionAt(NOW);
  const p0 = edges.versionAt(NOW, 'power');
  assert.equal(edges.versionAt(NOW), m0, 'stable without changes');
  assert.equal(edges.versionAt(NOW, 'power'), p0);
  board.change(oddsId(row({ sportsbook: 'pinnacle', side: 'OVER', ...prop() })), { priceAmerican: -130 });
  assert.equal(edges.versionAt(NOW), m0, 'no multiplicative edge changed');
  const p1 = edges.versionAt(NOW, 'power');
  assert.notEqual(p1, p0, 'a sharp tick can change any per-request method');
  assert.notEqual(edges.versionAt(NOW + 2 * MIN, 'power'), p1, 'pinnacle went stale with the clock');
});
