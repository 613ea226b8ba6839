// /api/v1/edges over HTTP on the real app (devig methods, filters,
// out-of-season notes, cursors): every devig method's full walk equals the brute force over the
// /odds rows, filters, parameter errors, cursors bound to filters, the board's time (the
// last logged change's) expiring sharp quotes (and the cached page with them), suspended
// sharp quotes not counting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { bruteForceEdges, type OddsRowJson } from '../helpers/bruteForce.ts';
import { DEVIG_METHODS, type DevigMethod } from '../../engine/signals/devig.ts';
import type { EdgeRecord } from '../../engine/signals/records.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

const ROUTE = '/api/v1/edges';
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

async function walk(query: string, limit = 5): Promise<EdgeRecord[]> {
  const out: EdgeRecord[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const path: string = `${ROUTE}?${query}&limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const { reply, body } = await t.call(ROUTE, path);
    assert.equal(reply.status, 200, path);
    assert.ok(body.data.length <= limit);
    out.push(...body.data);
    cursor = body.nextCursor;
    pages++;
  } while (cursor !== null && pages < 10_000);
  return out;
}

test('default request: multiplicative, min_edge 0.02, sorted by edge desc then id, equal to the brute force', async () => {
  const expected = bruteForceEdges(rows(), t.clock.now(), { minEdge: 0.02 });
  assert.ok(expected.length > 3, 'the small board has edges above 2%');
  const { body } = await t.call(ROUTE, ROUTE);
  assert.deepEqual(body.data, expected.slice(0, 100));
  for (const edge of body.data) assert.equal(edge.devig, 'multiplicative');
  assert.equal(body.meta.updated, new Date(Math.max(...expected.map((e) => Date.parse(e.updated)))).toISOString());
});

test('every devig method: the full walk equals the brute force, the method is echoed in each row', async () => {
  const now = t.clock.now();
  for (const method of DEVIG_METHODS) {
    const expected = bruteForceEdges(rows(), now, { devig: method, minEdge: 0 });
    const served = await walk(`devig=${method}&min_edge=0`, 4);
    assert.deepEqual(served, expected, method);
    assert.ok(served.length > 0);
    for (const edge of served) assert.equal(edge.devig, method);
  }
  // the methods disagree somewhere, so the parameter is really applied
  const shin = bruteForceEdges(rows(), now, { devig: 'shin', minEdge: 0 }).map((e) => e.fairProbability);
  const mult = bruteForceEdges(rows(), now, { devig: 'multiplicative', minEdge: 0 }).map((e) => e.fairProbability);
  assert.notDeepEqual(shin, mult);
});

test('filters: league, source, event_id and min_edge select exactly the brute-force rows', async () => {
  const now = t.clock.now();
  const all = bruteForceEdges(rows(), now, { minEdge: 0 });
  const league = all[0].league;
  const eventId = all[0].eventId;
  const source = all[0].source;
  const cases: Array<[string, (e: EdgeRecord) => boolean]> = [
    [`league=${league.toUpperCase()}&min_edge=0`, (e) => e.league === league],
    [`source=${source}&min_edge=0`, (e) => e.source === source],
    [`source=nosuchsource&min_edge=0`, () => false],
    [`event_id=${eventId}&min_edge=0`, (e) => e.eventId === eventId],
    [`min_edge=0.05`, (e) => e.edge >= 0.05],
    [`min_edge=1`, (e) => e.edge >= 1],
  ];
  for (const [query, keep] of cases) assert.deepEqual(await walk(query, 3), all.filter(keep), query);
});

test('parameter errors: min_edge outside [0, 1], unknown devig, more than 20 leagues, foreign cursor', async () => {
  for (const value of ['-0.01', '1.5', 'abc']) {
    const { reply, body } = await t.call(ROUTE, `${ROUTE}?min_edge=${value}`);
    assert.equal(reply.status, 400, value);
    assert.equal(body.code, 'invalid_parameter');
    assert.equal(body.param, 'min_edge');
  }
  const devig = await t.call(ROUTE, `${ROUTE}?devig=logit`);
  assert.equal(devig.reply.status, 400);
  assert.equal(devig.body.code, 'invalid_parameter');
  assert.deepEqual(devig.body.validValues, [...DEVIG_METHODS]);
  const many = Array.from({ length: 21 }, (_, i) => `l${i}`).join(',');
  assert.equal((await t.call(ROUTE, `${ROUTE}?league=${many}`)).reply.status, 400);

  const first = await t.call(ROUTE, `${ROUTE}?min_edge=0&limit=1`);
  const cursor = first.body.nextCursor as string;
  assert.ok(cursor);
  const replay = await t.call(ROUTE, `${ROUTE}?min_edge=0.01&limit=1&cursor=${cursor}`);
  assert.equal(replay.reply.status, 400);
  assert.equal(replay.body.code, 'invalid_cursor');
  const otherMethod = await t.call(ROUTE, `${ROUTE}?min_edge=0&devig=shin&limit=1&cursor=${cursor}`);
  assert.equal(otherMethod.body.code, 'invalid_cursor');
  const tampered = await t.call(ROUTE, `${ROUTE}?min_edge=0&limit=1&cursor=${cursor.slice(0, -2)}xx`);
  assert.equal(tampered.body.code, 'invalid_cursor');
});

test('out-of-season league: 200, [] and meta.note; a mixed list keeps the in-season rows', async () => {
  const { reply, body } = await t.call(ROUTE, `${ROUTE}?league=mlb&min_edge=0`);
  assert.equal(reply.status, 200);
  assert.deepEqual(body.data, []);
  assert.match(body.meta.note, /mlb has no active season/);
  const all = bruteForceEdges(rows(), t.clock.now(), { minEdge: 0 });
  const league = all[0].league;
  const mixed = await t.call(ROUTE, `${ROUTE}?league=mlb,${league}&min_edge=0&limit=1000`);
  assert.deepEqual(mixed.body.data, all.filter((e) => e.league === league));
  assert.match(mixed.body.meta.note, /mlb/);
});

test('a suspended sharp quote never counts: the edge loses that book (or disappears) at once', async () => {
  const now = t.clock.now();
  const before = bruteForceEdges(rows(), now, { minEdge: 0 });
  const edge = before.find((e) => e.sharpBooks.length >= 1)!;
  const book = edge.sharpBooks[0];
  const sharpRow = rows().find((r) => r.sportsbook === book && r.eventId === edge.eventId && r.marketSubtype === edge.marketSubtype
    && r.period === edge.period && r.side === edge.side && (r.line ?? null) === edge.line && (r.playerId ?? null) === edge.playerId)!;
  assert.ok(sharpRow, 'the sharp quote the edge uses');
  const slot = t.app.engine.slotOf(sharpRow.id);
  t.clock.advance(1000);
  t.app.engine.apply([{ op: 'price', slot, priceAmerican: sharpRow.priceAmerican!, suspended: true }]);
  const served = await walk('min_edge=0', 50);
  assert.deepEqual(served, bruteForceEdges(rows(), t.clock.now(), { minEdge: 0 }));
  const after = served.find((e) => e.id === edge.id);
  assert.ok(after === undefined || !after.sharpBooks.includes(book), 'the suspended book is not used');
  t.clock.advance(1000);
  t.app.engine.apply([{ op: 'price', slot, priceAmerican: sharpRow.priceAmerican!, suspended: false }]);
  assert.deepEqual(await walk('min_edge=0', 50), bruteForceEdges(rows(), t.clock.now(), { minEdge: 0 }));
});

test('staleness follows the board\'s time: with no change to any quote in an edge, sharp quotes age out as logged changes elsewhere move the board\'s time, and the (cached) answer follows', async () => {
  const query = `${ROUTE}?min_edge=0&limit=1000`;
  // a row no edge reads (neither a sharp book nor a DFS source): re-pricing it only moves the board's time
  const clockRow = rows().find((r) => !['pinnacle', 'circa', 'bookmaker'].includes(r.sportsbook) && r.dfsMultiplier == null && r.priceAmerican != null)!;
  const clockSlot = t.app.engine.slotOf(clockRow.id);
  const first = await t.call(ROUTE, query);
  assert.ok(first.body.data.length > 0);
  const again = await t.call(ROUTE, query, { headers: { 'If-None-Match': String(first.reply.headers.etag) } });
  assert.equal(again.reply.status, 304, 'unchanged result: 304');
  const methods: DevigMethod[] = ['multiplicative', 'power'];
  let changed = false;
  for (let minute = 1; minute <= 30; minute++) {
    t.clock.advance(60_000);
    t.app.engine.apply([{ op: 'price', slot: clockSlot, priceAmerican: clockRow.priceAmerican!, suspended: false }]);
    assert.equal(t.app.engine.asOf(), t.clock.now(), 'the change moved the board\'s time');
    for (const method of methods) {
      const { body } = await t.call(ROUTE, `${query}&devig=${method}`);
      assert.deepEqual(body.data, bruteForceEdges(rows(), t.clock.now(), { minEdge: 0, devig: method }), `${method} at +${minute} min`);
    }
    const now = await t.call(ROUTE, query, { headers: { 'If-None-Match': String(first.reply.headers.etag) } });
    if (now.reply.status === 200) changed = true;
  }
  assert.ok(changed, 'the cached page was replaced once quotes expired');
  const { body } = await t.call(ROUTE, query);
  assert.deepEqual(body.data, [], 'after 30 quiet minutes every sharp quote is stale');
});
