// /api/v1/arbitrage over HTTP on the real app (filters,
// out-of-season notes, cursors): walks equal the brute force over the /odds rows under every filter;
// legs carry stakes summing to 1 and never come from DFS, futures or suspended rows;
// a price change that opens (or a suspension that closes) an arbitrage shows at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { americanToDecimal, decimalToAmerican } from '../../engine/model.ts';
import { bruteForceArbitrage, type OddsRowJson } from '../helpers/bruteForce.ts';
import type { ArbitrageRecord } from '../../engine/signals/records.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

const ROUTE = '/api/v1/arbitrage';
let t: TestApp;

before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

function rows(): OddsRowJson[] {
  return boardRows(t.app.engine, 'all') as OddsRowJson[];
}
const reference = (minProfit = 0.001): ArbitrageRecord[] => bruteForceArbitrage(rows()).filter((r) => r.profit >= minProfit);

async function walk(query: string, limit = 2): Promise<ArbitrageRecord[]> {
  const out: ArbitrageRecord[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `${ROUTE}?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { reply, body } = await t.call(ROUTE, path);
    assert.equal(reply.status, 200, path);
    out.push(...body.data);
    cursor = body.nextCursor;
  } while (cursor !== null);
  return out;
}

/** Opens a two-way arbitrage on a game market with two retail books: the best price on each side, raised. */
function openArbitrage(): { group: string; slots: number[] } {
  const all = rows();
  const candidates = all.filter((r) => r.market === 'TOTAL' && r.marketScope === undefined && r.side === 'OVER' && r.dfsMultiplier === undefined && !r.suspended);
  for (const over of candidates) {
    const under = all.find((r) => r.eventId === over.eventId && r.marketSubtype === over.marketSubtype && r.period === over.period
      && r.side === 'UNDER' && r.line === over.line && r.sportsbook !== over.sportsbook && r.dfsMultiplier === undefined && !r.suspended);
    if (under === undefined) continue;
    const engine = t.app.engine;
    const slots = [engine.slotOf(over.id), engine.slotOf(under.id)];
    t.clock.advance(1000);
    engine.apply([
      { op: 'price', slot: slots[0], priceAmerican: decimalToAmerican(2.2), suspended: false },
      { op: 'price', slot: slots[1], priceAmerican: decimalToAmerican(2.15), suspended: false },
    ]);
    return { group: `${over.eventId}:${over.marketSubtype}:${over.period}:${over.line}:game`, slots };
  }
  throw new Error('no two-book total on the board');
}

test('default request (min_profit 0.001) and full walks equal the brute force; legs are sound', async () => {
  const { body } = await t.call(ROUTE, ROUTE);
  assert.deepEqual(body.data, reference().slice(0, 100));
  const all = await walk('min_profit=0', 1);
  assert.deepEqual(all, reference(0));
  const byId = new Map(rows().map((r) => [r.id, r]));
  for (const record of all) {
    assert.ok(record.profit > 0 && record.impliedSum < 1);
    const stakes = record.legs.reduce((sum, leg) => sum + leg.stake, 0);
    assert.ok(Math.abs(stakes - 1) < 1e-12, `stakes sum to 1 (${stakes})`);
    assert.equal(record.legs.length, record.type === 'three_way' ? 3 : 2);
    for (const leg of record.legs) {
      const row = byId.get(leg.oddsId)!;
      assert.ok(row.dfsMultiplier === undefined && row.marketScope === undefined && !row.suspended, leg.oddsId);
      assert.equal(leg.priceDecimal, americanToDecimal(leg.priceAmerican));
      // equal payout: stake * decimal is the same on every leg
      assert.ok(Math.abs(leg.stake * leg.priceDecimal - record.legs[0].stake * record.legs[0].priceDecimal) < 1e-12);
    }
  }
});

test('an opened arbitrage appears at once, and a suspended leg takes it out again', async () => {
  const { group, slots } = openArbitrage();
  const opened = await walk('min_profit=0', 50);
  assert.deepEqual(opened, reference(0));
  const record = opened.find((r) => r.id === group);
  assert.ok(record !== undefined, `arbitrage ${group} listed`);
  assert.ok(record.profit > 0.05);
  t.clock.advance(1000);
  const legRow = rows().find((r) => r.id === record.legs[0].oddsId)!;
  t.app.engine.apply([{ op: 'price', slot: t.app.engine.slotOf(legRow.id), priceAmerican: legRow.priceAmerican!, suspended: true }]);
  const after = await walk('min_profit=0', 50);
  assert.deepEqual(after, reference(0));
  const still = after.find((r) => r.id === group);
  assert.ok(still === undefined || still.legs.every((leg) => leg.oddsId !== legRow.id), 'the suspended leg is never used');
  t.clock.advance(1000);
  t.app.engine.apply([{ op: 'price', slot: slots[0], priceAmerican: -110, suspended: false }]);
});

test('filters: type, league (case-insensitive, comma list), event_id, min_profit', async () => {
  const all = reference(0);
  assert.ok(all.length >= 2, 'the board has arbitrage to filter');
  const leagues = [...new Set(all.map((r) => r.league))];
  const eventId = all[0].eventId;
  const cases: Array<[string, (r: ArbitrageRecord) => boolean]> = [
    ['type=two_way&min_profit=0', (r) => r.type === 'two_way'],
    ['type=three_way&min_profit=0', (r) => r.type === 'three_way'],
    [`league=${leagues[0].toUpperCase()}&min_profit=0`, (r) => r.league === leagues[0]],
    [`league=${leagues.join(',')},nhl&min_profit=0`, () => true],
    [`event_id=${eventId}&min_profit=0`, (r) => r.eventId === eventId],
    [`min_profit=0.01`, (r) => r.profit >= 0.01],
  ];
  for (const [query, keep] of cases) assert.deepEqual(await walk(query), all.filter(keep), query);
});

test('errors: unknown type, negative min_profit, more than 20 leagues, a cursor replayed under other filters', async () => {
  const type = await t.call(ROUTE, `${ROUTE}?type=middle`);
  assert.equal(type.reply.status, 400);
  assert.deepEqual(type.body.validValues, ['two_way', 'three_way']);
  assert.equal((await t.call(ROUTE, `${ROUTE}?min_profit=-0.1`)).body.code, 'invalid_parameter');
  const many = Array.from({ length: 21 }, (_, i) => `l${i}`).join(',');
  assert.equal((await t.call(ROUTE, `${ROUTE}?league=${many}`)).body.code, 'invalid_parameter');
  const first = await t.call(ROUTE, `${ROUTE}?min_profit=0&limit=1`);
  assert.ok(first.body.nextCursor);
  const replay = await t.call(ROUTE, `${ROUTE}?min_profit=0&type=two_way&limit=1&cursor=${first.body.nextCursor}`);
  assert.equal(replay.reply.status, 400);
  assert.equal(replay.body.code, 'invalid_cursor');
});

test('out-of-season league: 200, [] and meta.note', async () => {
  const { reply, body } = await t.call(ROUTE, `${ROUTE}?league=mlb`);
  assert.equal(reply.status, 200);
  assert.deepEqual(body.data, []);
  assert.match(body.meta.note, /mlb has no active season/);
});

test('ETag: unchanged result -> 304; a change to the result -> 200 with the new body', async () => {
  const query = `${ROUTE}?min_profit=0&limit=1000`;
  const first = await t.call(ROUTE, query);
  const etag = String(first.reply.headers.etag);
  t.clock.advance(60 * 60_000); // arbitrage does not age
  assert.equal((await t.call(ROUTE, query, { headers: { 'If-None-Match': etag } })).reply.status, 304);
  openArbitrage();
  const changed = await t.call(ROUTE, query, { headers: { 'If-None-Match': etag } });
  assert.equal(changed.reply.status, 200);
  assert.deepEqual(changed.body.data, reference(0));
});
