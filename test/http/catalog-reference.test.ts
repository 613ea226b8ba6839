// /leagues, /seasons, /sportsbooks, /markets, /markets/active (seasons, counts,
// out-of-season notes) over the real app: the calendar rotates the leagues
// (November: nfl in, mlb out; July: the other way round), and the catalog counts agree
// with a brute-force count of the board's live rows and with /status.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { activeLeagues, seasonsForYear } from '../../engine/calendar.ts';
import { startTestApp, testBoard, type TestApp } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';
import { DAY_MS, expectedEvents, expectError, walk, WINDOW_MS, type Json } from '../helpers/catalog-helpers.ts';

const LEAGUES = '/api/v1/leagues';
const SEASONS = '/api/v1/seasons';
const BOOKS = '/api/v1/sportsbooks';
const MARKETS = '/api/v1/markets';
const ACTIVE_MARKETS = '/api/v1/markets/active';
const STATUS = '/api/v1/status';
const EVENTS = '/api/v1/events';

const JULY_2027 = Date.parse('2027-07-15T12:00:00Z');

/** The most recent UTC midnight at which the active league set changed, found by walking back a day at a time. */
function lastRotation(now: number): number {
  const today = activeLeagues(now).join();
  let midnight = Math.floor(now / DAY_MS) * DAY_MS;
  for (let i = 0; i < 800; i++, midnight -= DAY_MS) {
    if (activeLeagues(midnight - 1).join() !== today) return midnight;
  }
  throw new Error('no rotation in 800 days');
}

function counted(rows: readonly Json[], key: (r: Json) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) out.set(key(r), (out.get(key(r)) ?? 0) + 1);
  return out;
}

const plainOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('reference catalogs (November 2026)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('/leagues: the leagues with a season in progress today (nfl in, mlb out), sorted; meta.updated = the last rotation', async () => {
    const now = t.clock.now();
    const { body } = await t.call(LEAGUES, LEAGUES);
    assert.deepEqual(body.data, activeLeagues(now));
    assert.ok(body.data.includes('nfl') && body.data.includes('nba'));
    assert.ok(!body.data.includes('mlb') && !body.data.includes('wnba'));
    assert.deepEqual(body.data, [...body.data].sort());
    assert.equal(body.meta.updated, new Date(lastRotation(now)).toISOString());
  });

  it('/leagues rotates as the clock moves: 304 across days without a change, mlb in and nfl out by July', async () => {
    const first = await t.call(LEAGUES, LEAGUES);
    const etag = first.reply.headers.etag!;
    const now = t.clock.now();
    // The next rotation after now: the first midnight whose set differs from today's.
    let next = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
    while (activeLeagues(next).join() === first.body.data.join()) next += DAY_MS;
    assert.ok(next - now > DAY_MS, 'at least one quiet day ahead');
    t.clock.set(next - 1);
    const quiet = await t.call(LEAGUES, LEAGUES, { headers: { 'If-None-Match': etag } });
    assert.equal(quiet.reply.status, 304, 'a new day with the same leagues keeps the body and the ETag');
    t.clock.set(next);
    const turned = await t.call(LEAGUES, LEAGUES, { headers: { 'If-None-Match': etag } });
    assert.equal(turned.reply.status, 200);
    assert.deepEqual(turned.body.data, activeLeagues(next));
    assert.equal(turned.body.meta.updated, new Date(next).toISOString());
    t.clock.set(JULY_2027);
    const july = await t.call(LEAGUES, LEAGUES);
    assert.ok(july.body.data.includes('mlb'), 'mlb in by July');
    assert.ok(!july.body.data.includes('nfl') && !july.body.data.includes('nba'), 'nfl and nba out by July');
    const note = await t.call(EVENTS, `${EVENTS}?league=nfl`);
    assert.deepEqual(note.body.data, []);
    assert.equal(note.body.meta.note, `nfl has no active season; active leagues: ${activeLeagues(JULY_2027).join(', ')}.`);
  });
});

describe('reference catalogs: counts', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  async function catalogs(): Promise<{ books: Json; markets: Json; pairs: Json; status: Json; etags: string[] }> {
    const replies = await Promise.all([t.call(BOOKS, BOOKS), t.call(MARKETS, MARKETS), t.call(ACTIVE_MARKETS, ACTIVE_MARKETS), t.call(STATUS, STATUS)]);
    const [books, markets, pairs, status] = replies.map((r) => r.body) as Json[];
    return { books: books!, markets: markets!, pairs: pairs!, status: status!, etags: replies.slice(0, 3).map((r) => r.reply.headers.etag!) };
  }

  function expectCounts(c: { books: Json; markets: Json; pairs: Json; status: Json }): void {
    const live = boardRows(t.app.engine, 'all');
    const bySource = counted(live, (r) => r.sportsbook);
    assert.deepEqual(c.books.data, [...bySource.keys()].sort(plainOrder).map((id) => ({ id, marketCount: bySource.get(id) })));
    const byType = counted(live, (r) => r.market);
    assert.deepEqual(c.markets.data, [...byType.keys()].sort(plainOrder).map((marketType) => ({ marketType, liveCount: byType.get(marketType) })));
    const byPair = counted(live, (r) => `${r.market} ${r.marketSubtype}`);
    const expectedPairs = [...byPair.keys()]
      .map((k) => k.split(' ') as [string, string])
      .sort((a, b) => plainOrder(a[0], b[0]) || plainOrder(a[1], b[1]))
      .map(([marketType, marketSubtype]) => ({ marketType, marketSubtype, liveCount: byPair.get(`${marketType} ${marketSubtype}`) }));
    assert.deepEqual(c.pairs.data, expectedPairs);
    const sum = (items: Json[], field: string) => items.reduce((total, item) => total + item[field], 0);
    const total = c.status.data[0].totalMarkets;
    assert.equal(total, live.length);
    assert.equal(sum(c.books.data, 'marketCount'), total, 'sportsbook counts add up to /status');
    assert.equal(sum(c.markets.data, 'liveCount'), total, 'market type counts add up to /status');
    assert.equal(sum(c.pairs.data, 'liveCount'), total);
    assert.equal(c.books.data.length, c.status.data[0].sportsbooks);
  }

  it('/sportsbooks, /markets, /markets/active count live rows (suspended included) and agree with /status', async () => {
    const c = await catalogs();
    expectCounts(c);
    assert.ok(boardRows(t.app.engine, 'all').some((r) => r.suspended), 'suspended rows are on the board and counted');
    assert.ok(c.books.data.some((b: Json) => b.id === 'prizepicks'), 'DFS sources are listed');
    assert.ok(c.pairs.data.some((p: Json) => p.marketType === 'CATEGORICAL'), 'futures count too');
    assert.equal(c.books.meta.updated, new Date(t.app.engine.asOf()).toISOString());
  });

  it('price moves keep the catalogs (ETag, meta.updated); rows added or pulled and finished games change them', async () => {
    const engine = t.app.engine;
    const before = await catalogs();
    const live = boardRows(engine, 'all');
    t.clock.advance(5_000);
    const prices = live.slice(0, 50).map((r) => ({ op: 'price' as const, slot: engine.slotOf(r.id), priceAmerican: r.priceAmerican === undefined ? null : r.priceAmerican + 5, suspended: !r.suspended }));
    assert.ok(engine.apply(prices).applied > 0);
    const moved = await catalogs();
    assert.notEqual(moved.status.meta.updated, before.status.meta.updated, '/status moves with every change');
    for (const [i, path] of [BOOKS, MARKETS, ACTIVE_MARKETS].entries()) {
      const again = await t.call(path, path, { headers: { 'If-None-Match': before.etags[i]! } });
      assert.equal(again.reply.status, 304, `${path}: prices moved, counts did not`);
    }

    t.clock.advance(5_000);
    const pulledAt = t.clock.now();
    const victims = live.filter((r) => r.sportsbook === 'betmgm').slice(0, 20);
    assert.equal(engine.apply(victims.map((r) => ({ op: 'remove' as const, id: r.id }))).applied, victims.length);
    const pulled = await catalogs();
    expectCounts(pulled);
    assert.equal(pulled.books.data.find((b: Json) => b.id === 'betmgm').marketCount, before.books.data.find((b: Json) => b.id === 'betmgm').marketCount - 20);
    assert.equal(pulled.books.meta.updated, new Date(pulledAt).toISOString(), 'meta.updated = when a row last left or joined');

    t.clock.advance(5_000);
    const game = engine.eventIdsWithLiveRows().find((id) => engine.event(id)!.status === 'in_progress' && !engine.event(id)!.isFutures)!;
    engine.apply([{ op: 'status', eventId: game, status: 'final' }]);
    t.app.simulator.step(200);
    const later = await catalogs();
    expectCounts(later);
    assert.ok(later.status.data[0].totalMarkets < pulled.status.data[0].totalMarkets);
  });

  it('/seasons?year=: Season records of every league season overlapping the year, futuresEventId only where the anchor exists', async () => {
    const now = t.clock.now();
    const eventIds = new Set(t.app.board.events.map((e) => e.id));
    for (const year of [2025, 2026, 2027]) {
      const { body } = await t.call(SEASONS, `${SEASONS}?year=${year}`);
      const expected = seasonsForYear(year, now)
        .map((s) => ({ ...s, futuresEventId: s.futuresEventId !== null && eventIds.has(s.futuresEventId) ? s.futuresEventId : null }))
        .sort((a, b) => plainOrder(a.league, b.league) || a.year - b.year);
      assert.deepEqual(body.data, expected, String(year));
    }
    const { body } = await t.call(SEASONS, `${SEASONS}?year=2026`);
    const anchored = body.data.filter((s: Json) => s.futuresEventId !== null);
    assert.ok(anchored.length > 0);
    for (const s of anchored) {
      assert.equal(s.status, 'in_progress');
      const anchor = await t.call('/api/v1/events/:eventId', `/api/v1/events/${s.futuresEventId}`);
      assert.equal(anchor.reply.status, 200, `${s.futuresEventId} is a real event`);
    }
    assert.ok(body.data.some((s: Json) => s.status === 'completed') && body.data.some((s: Json) => s.status === 'in_progress'));
    await expectError(t, SEASONS, SEASONS, 400, 'missing_parameter', 'year');
    await expectError(t, SEASONS, `${SEASONS}?year=`, 400, 'missing_parameter', 'year');
    await expectError(t, SEASONS, `${SEASONS}?year=twenty`, 400, 'invalid_parameter', 'year');
    await expectError(t, SEASONS, `${SEASONS}?year=1066`, 400, 'invalid_parameter', 'year');
  });

  it('the OpenAPI document lists every catalog route with its key designation; /account/usage cannot answer 401 or 429', async () => {
    const { body } = await t.call('/api/v1/openapi.json', '/api/v1/openapi.json');
    const designation: Record<string, string> = {
      '/api/v1/events': 'none',
      '/api/v1/events/active': 'none',
      '/api/v1/events/{eventId}': 'none',
      '/api/v1/events/{eventId}/stats': 'key',
      '/api/v1/teams': 'none',
      '/api/v1/teams/{teamId}': 'none',
      '/api/v1/teams/{teamId}/stats': 'key',
      '/api/v1/players': 'none',
      '/api/v1/players/{playerId}': 'none',
      '/api/v1/players/{playerId}/stats': 'key',
      '/api/v1/stats/players': 'key',
      '/api/v1/leagues': 'none',
      '/api/v1/seasons': 'none',
      '/api/v1/sportsbooks': 'none',
      '/api/v1/markets': 'none',
      '/api/v1/markets/active': 'none',
      '/api/v1/account/usage': 'none',
    };
    for (const [path, auth] of Object.entries(designation)) {
      const op = body.paths[path]?.get;
      assert.ok(op, `${path} is documented`);
      assert.equal(op['x-auth-designation'], auth, path);
    }
    const usage = body.paths['/api/v1/account/usage'].get;
    assert.equal(usage.responses['401'], undefined);
    assert.equal(usage.responses['429'], undefined);
    assert.ok(body.paths['/api/v1/events'].get.responses['401'], 'a bad key on a public route is a 401');
    const params = body.paths['/api/v1/events'].get.parameters.map((p: Json) => p.name);
    for (const name of ['league', 'team_id', 'status', 'starts_after', 'starts_before', 'include_futures', 'cursor', 'limit']) assert.ok(params.includes(name), name);
  });
});

describe('leagues in July 2027 (small board generated at that NOW)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ now: JULY_2027, board: testBoard('small', 42, JULY_2027) });
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('mlb in, nfl out; /events serves mlb and answers nfl with a note', async () => {
    const { body } = await t.call(LEAGUES, LEAGUES);
    assert.deepEqual(body.data, activeLeagues(JULY_2027));
    assert.ok(body.data.includes('mlb') && body.data.includes('wnba'));
    assert.ok(!body.data.includes('nfl'));
    const mlb = await walk(t, EVENTS, `${EVENTS}?league=mlb&limit=5`);
    assert.deepEqual(mlb.rows, expectedEvents(t.app.board, t.app.engine, { leagues: ['mlb'], from: JULY_2027, to: JULY_2027 + WINDOW_MS }));
    assert.ok(mlb.rows.length > 5);
    const nfl = await t.call(EVENTS, `${EVENTS}?league=nfl,mlb&limit=1000`);
    assert.deepEqual(nfl.body.data, mlb.rows);
    assert.equal(nfl.body.meta.note, `nfl has no active season; active leagues: ${activeLeagues(JULY_2027).join(', ')}.`);
  });
});
