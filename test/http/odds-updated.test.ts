// The delta feed /odds/updated: since is
// required (ISO-8601 or epoch millis), rows updated at or after it in /odds order,
// tombstones included, meta.updated = the board's as-of time at the first page and
// repeated on every page, and the retention-window note.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, NOW, type TestApp } from '../helpers/app.ts';
import { boardRows, idDiff, referenceRows, type ReferenceFilter, type Row } from '../helpers/oddsReference.ts';
import { RETENTION_NOTE } from '../../http/routes/oddsPages.ts';

const ROUTE = '/api/v1/odds/updated';
let t: TestApp;

async function walk(path: string): Promise<{ rows: Row[]; pages: any[] }> {
  const rows: Row[] = [];
  const pages: any[] = [];
  let url = path;
  for (let guard = 0; guard < 1000; guard++) {
    const { reply, body } = await t.call(ROUTE, url);
    assert.equal(reply.status, 200, reply.body.toString());
    pages.push(body);
    rows.push(...body.data);
    if (body.nextCursor === null) return { rows, pages };
    url = `${path}&cursor=${body.nextCursor}`;
  }
  throw new Error('walk did not end');
}

async function expectDelta(path: string, filter: ReferenceFilter, format: 'all' | 'probability' = 'all') {
  const got = await walk(path);
  const expected = referenceRows(t.app.engine, filter, format);
  assert.deepEqual(got.rows, expected, `${path}: ${idDiff(got.rows, expected)}`);
  return got;
}

/** Moves the price of `count` live rows (skipping DFS rows) one tick later each. */
function movePrices(count: number, pick: (row: Row) => boolean = () => true): string[] {
  const engine = t.app.engine;
  const moved: string[] = [];
  for (const row of boardRows(engine, 'all')) {
    if (moved.length === count) break;
    if (row.priceAmerican === undefined || !pick(row)) continue;
    t.clock.advance(1000);
    const price = row.priceAmerican === -110 ? -115 : -110;
    engine.apply([{ op: 'price', slot: engine.slotOf(row.id), priceAmerican: price, suspended: false }]);
    moved.push(row.id);
  }
  return moved;
}

describe('/odds/updated', () => {
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('since is required (400 missing_parameter) and must be an instant (400 invalid_parameter)', async () => {
    for (const path of [ROUTE, `${ROUTE}?since=`, `${ROUTE}?league=nba`]) {
      const { reply, body } = await t.call(ROUTE, path);
      assert.equal(reply.status, 400);
      assert.equal(body.code, 'missing_parameter');
      assert.equal(body.param, 'since');
    }
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '12.5']) {
      const { reply, body } = await t.call(ROUTE, `${ROUTE}?since=${bad}`);
      assert.equal(reply.status, 400, bad);
      assert.equal(body.code, 'invalid_parameter');
    }
  });

  it('rows updated at or after since, in (sportsbook, id) order; ISO-8601 and epoch millis agree', async () => {
    const since = NOW - 60_000;
    const byMillis = await expectDelta(`${ROUTE}?since=${since}&limit=50`, { since });
    assert.ok(byMillis.rows.length > 50);
    const iso = await walk(`${ROUTE}?since=${new Date(since).toISOString()}&limit=50`);
    assert.deepEqual(iso.rows, byMillis.rows);
    const offset = await walk(`${ROUTE}?since=${encodeURIComponent('2026-11-21T12:59:00+01:00')}&limit=1000`);
    assert.deepEqual(offset.rows, byMillis.rows);
    const boundary = Date.parse(byMillis.rows[0]!.updated);
    const inclusive = await walk(`${ROUTE}?since=${boundary}&limit=1000`);
    assert.ok(inclusive.rows.some((row) => row.id === byMillis.rows[0]!.id), 'since is inclusive');
  });

  it('league, sportsbook, market and odds_format filter the feed; is_main and scope are unknown here (warnings)', async () => {
    const since = NOW - 120_000;
    await expectDelta(`${ROUTE}?since=${since}&league=NBA&sportsbook=pinnacle,fanduel&limit=1000`, { since, leagues: ['nba'], sportsbooks: ['pinnacle', 'fanduel'] });
    await expectDelta(`${ROUTE}?since=${since}&market=spread&odds_format=probability&limit=1000`, { since, markets: ['SPREAD'] }, 'probability');
    const { body } = await t.call(ROUTE, `${ROUTE}?since=${since}&is_main=true&scope=event&limit=5`);
    assert.deepEqual(body.meta.warnings, ["unknown query parameter 'is_main' ignored", "unknown query parameter 'scope' ignored"]);
    const seasonless = await t.call(ROUTE, `${ROUTE}?since=0&league=mlb`);
    assert.deepEqual(seasonless.body.data, []);
    assert.match(seasonless.body.meta.note, /^mlb has no active season; active leagues: /);
  });

  it('meta.updated is the as-of time of the first page, carried by the cursor to every page', async () => {
    const moved = movePrices(3);
    const asOf = new Date(t.app.engine.asOf()).toISOString();
    const path = `${ROUTE}?since=0&limit=400`;
    const first = await t.call(ROUTE, path);
    assert.equal(first.body.meta.updated, asOf);
    movePrices(2);
    const second = await t.call(ROUTE, `${path}&cursor=${first.body.nextCursor}`);
    assert.equal(second.body.meta.updated, asOf, 'the walk keeps its as-of while the board moves');
    const fresh = await t.call(ROUTE, path);
    assert.notEqual(fresh.body.meta.updated, asOf);
    const poll = await walk(`${ROUTE}?since=${encodeURIComponent(asOf)}&limit=1000`);
    assert.ok(moved.every((id) => poll.rows.some((row) => row.id === id)), 'a poll from meta.updated returns the rows changed at that instant');
    const other = await t.call(ROUTE, `${ROUTE}?since=1&limit=400&cursor=${first.body.nextCursor}`);
    assert.equal(other.reply.status, 400);
    assert.equal(other.body.code, 'invalid_cursor');
  });

  it('removed selections come back as tombstones ("removed": true) with their last state', async () => {
    const engine = t.app.engine;
    const victim = boardRows(engine, 'all').find((row) => row.league === 'nfl' && row.priceAmerican !== undefined)!;
    t.clock.advance(1000);
    const since = t.clock.now();
    engine.apply([{ op: 'remove', id: victim.id }]);
    const { body } = await t.call(ROUTE, `${ROUTE}?since=${since}`);
    assert.equal(body.data.length, 1);
    const { removed, updated, ...rest } = body.data[0];
    const { updated: _before, ...expected } = victim;
    assert.equal(removed, true);
    assert.deepEqual(rest, expected);
    assert.equal(updated, new Date(since).toISOString());
    const odds = await t.call('/api/v1/odds', `/api/v1/odds?event_id=${victim.eventId}&sportsbook=${victim.sportsbook}&limit=1000`);
    assert.ok(!odds.body.data.some((row: Row) => row.id === victim.id), '/odds no longer shows it');
  });

  it('304 while nothing changes; any change on the board moves the first page (its as-of), a continuation page follows its own rows only', async () => {
    const path = `${ROUTE}?since=0&league=epl&limit=5`;
    const first = await t.call(ROUTE, path);
    const etag = first.reply.headers.etag!;
    assert.equal((await t.call(ROUTE, path, { headers: { 'If-None-Match': etag } })).reply.status, 304);
    const next = `${path}&cursor=${first.body.nextCursor}`;
    const page2 = await t.call(ROUTE, next);
    movePrices(1, (row) => row.league === 'nba');
    const moved = await t.call(ROUTE, path, { headers: { 'If-None-Match': etag } });
    assert.equal(moved.reply.status, 200, 'meta.updated (the board as-of) changed');
    assert.notEqual(moved.reply.headers.etag, etag);
    assert.equal((await t.call(ROUTE, next, { headers: { 'If-None-Match': page2.reply.headers.etag! } })).reply.status, 304);
    movePrices(1, (row) => row.league === 'epl' && row.id !== page2.body.data[0].id && !page2.body.data.some((r: Row) => r.id === row.id));
    const elsewhere = await t.call(ROUTE, next, { headers: { 'If-None-Match': page2.reply.headers.etag! } });
    assert.equal(elsewhere.reply.status, 304, 'a change to a row off the page leaves the page body, so its ETag holds');
    movePrices(1, (row) => row.id === page2.body.data[0].id);
    const last = await t.call(ROUTE, next, { headers: { 'If-None-Match': page2.reply.headers.etag! } });
    assert.equal(last.reply.status, 200);
  });

  it('a since older than the tombstone retention window: 200 with the re-bootstrap note', async () => {
    const engine = t.app.engine;
    t.clock.advance(1);
    const since = t.clock.now();
    const before = await t.call(ROUTE, `${ROUTE}?since=${since}`);
    assert.equal(before.body.meta.note, undefined);
    t.clock.advance(1000);
    engine.apply([{ op: 'remove', id: boardRows(engine, 'all')[0]!.id }]);
    t.clock.advance(11 * 60_000);
    movePrices(1); // the apply recycles tombstones older than 10 minutes
    assert.ok(engine.tombstoneHorizon() > since);
    const { reply, body } = await t.call(ROUTE, `${ROUTE}?since=${since}`);
    assert.equal(reply.status, 200);
    assert.equal(body.meta.note, RETENTION_NOTE);
    assert.equal(body.data.length, 1, JSON.stringify(body.data));
    const recent = await t.call(ROUTE, `${ROUTE}?since=${engine.tombstoneHorizon()}`);
    assert.equal(recent.body.meta.note, undefined);
    const both = await t.call(ROUTE, `${ROUTE}?since=${since}&league=mlb,nba`);
    assert.equal(both.body.meta.note, `mlb has no active season; active leagues: epl, mls, nba, ncaab, ncaaf, nfl, nhl, pga, ucl. ${RETENTION_NOTE}`);
  });
});
