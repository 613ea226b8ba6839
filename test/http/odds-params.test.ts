// Every parameter of /odds and the path routes (as the OpenAPI description states them)
// against the brute-force oracle, over the real app on an ephemeral port; every reply
// validated against the served OpenAPI document.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows, idDiff, referenceRows, type ReferenceFilter, type Row } from '../helpers/oddsReference.ts';

const ODDS = '/api/v1/odds';

let t: TestApp;
let rows: Row[];

/** Follows nextCursor to the end; returns every row and the pages' bodies. */
async function walk(route: string, path: string): Promise<{ rows: Row[]; pages: any[] }> {
  const out: Row[] = [];
  const pages: any[] = [];
  let url = path;
  for (let guard = 0; guard < 1000; guard++) {
    const { reply, body } = await t.call(route, url);
    assert.equal(reply.status, 200, `${url}: ${reply.body.toString()}`);
    pages.push(body);
    out.push(...body.data);
    assert.equal(body.meta.count, body.data.length);
    if (body.nextCursor === null) return { rows: out, pages };
    url = `${path}${path.includes('?') ? '&' : '?'}cursor=${body.nextCursor}`;
  }
  throw new Error('walk did not end');
}

async function expectRows(path: string, filter: ReferenceFilter, format: 'all' | 'american' | 'decimal' | 'probability' = 'all', route = ODDS) {
  const got = await walk(route, path);
  const expected = referenceRows(t.app.engine, filter, format);
  assert.deepEqual(got.rows, expected, `${path}: ${idDiff(got.rows, expected)}`);
  return got;
}

async function expectError(route: string, path: string, status: number, code: string, param?: string) {
  const { reply, body } = await t.call(route, path);
  assert.equal(reply.status, status, `${path}: ${reply.body.toString()}`);
  assert.equal(body.code, code);
  if (param !== undefined) assert.equal(body.param, param);
  return body;
}

const list = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(',');

describe('/odds parameters', () => {
  before(async () => {
    t = await startTestApp();
    rows = boardRows(t.app.engine, 'all');
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('unfiltered: every live row once, by (sportsbook, id), 100 per page by default', async () => {
    const { pages } = await expectRows(`${ODDS}?limit=1000`, {});
    assert.equal(pages.length, Math.ceil(rows.length / 1000));
    const first = await t.call(ODDS, ODDS);
    assert.equal(first.body.data.length, 100);
    assert.equal(first.body.meta.updated, first.body.data.map((r: Row) => r.updated).sort().at(-1), 'meta.updated = latest row updated on the page');
  });

  it('league: comma list, case-insensitive exact tokens, any-of; > 20 tokens is 400', async () => {
    await expectRows(`${ODDS}?league=NBA&limit=1000`, { leagues: ['nba'] });
    await expectRows(`${ODDS}?league=nfl,%20Epl&limit=1000`, { leagues: ['nfl', 'epl'] });
    const { rows: nb } = await walk(ODDS, `${ODDS}?league=nb&limit=1000`);
    assert.equal(nb.length, 0, 'no substring match on league');
    await expectError(ODDS, `${ODDS}?league=${list(21, 'l')}`, 400, 'invalid_parameter', 'league');
    const twenty = await t.call(ODDS, `${ODDS}?league=nba,${list(19, 'l')}`);
    assert.equal(twenty.reply.status, 200);
  });

  it('out-of-season and unknown leagues: 200, empty data, a note naming them and listing the active leagues', async () => {
    const { reply, body } = await t.call(ODDS, `${ODDS}?league=mlb`);
    assert.equal(reply.status, 200);
    assert.deepEqual(body.data, []);
    assert.equal(body.nextCursor, null);
    assert.match(body.meta.note, /mlb has no active season/);
    assert.match(body.meta.note, /active leagues: epl, mls, nba, ncaab, ncaaf, nfl, nhl, pga, ucl/);
    const unknown = await t.call(ODDS, `${ODDS}?league=xyz,wnba`);
    assert.deepEqual(unknown.body.data, []);
    assert.match(unknown.body.meta.note, /^xyz, wnba have no active season/);
    const mixed = await expectRows(`${ODDS}?league=mlb,nba&limit=1000`, { leagues: ['nba'] });
    for (const page of mixed.pages) assert.match(page.meta.note, /^mlb has no active season; active leagues: .*nba/);
    const inSeason = await t.call(ODDS, `${ODDS}?league=nba`);
    assert.equal(inSeason.body.meta.note, undefined);
  });

  it('sportsbook: comma list, case-insensitive exact, any-of; > 20 is 400', async () => {
    await expectRows(`${ODDS}?sportsbook=Pinnacle,prizepicks&limit=1000`, { sportsbooks: ['pinnacle', 'prizepicks'] });
    await expectRows(`${ODDS}?sportsbook=nosuchbook`, { sportsbooks: ['nosuchbook'] });
    await expectError(ODDS, `${ODDS}?sportsbook=${list(21, 'b')}`, 400, 'invalid_parameter', 'sportsbook');
  });

  it('market: tokens are case-insensitive substrings of market or marketSubtype, any-of; > 20 is 400', async () => {
    const got = await expectRows(`${ODDS}?market=total&limit=1000`, { markets: ['TOTAL'] });
    const families = new Set(got.rows.map((r) => r.market));
    assert.ok(families.has('TOTAL') && families.has('PLAYER_TOTAL'), [...families].join());
    await expectRows(`${ODDS}?market=moneyline,Points&limit=1000`, { markets: ['MONEYLINE', 'POINTS'] });
    await expectRows(`${ODDS}?market=division_winner&limit=1000`, { markets: ['DIVISION_WINNER'] });
    await expectError(ODDS, `${ODDS}?market=${list(21, 'm')}`, 400, 'invalid_parameter', 'market');
  });

  it('event_id: one id or a comma list of at most 20', async () => {
    const events = [...new Set(rows.map((r) => r.eventId))];
    await expectRows(`${ODDS}?event_id=${events[0]}&limit=1000`, { eventIds: [events[0]!] });
    await expectRows(`${ODDS}?event_id=${events.slice(1, 4).join(',')}&limit=1000`, { eventIds: events.slice(1, 4) });
    await expectRows(`${ODDS}?event_id=nope`, { eventIds: ['nope'] });
    await expectError(ODDS, `${ODDS}?event_id=${list(21, 'e')}`, 400, 'invalid_parameter', 'event_id');
  });

  it('player_id and team_id (home or away, game rows only)', async () => {
    const player = rows.find((r) => r.playerId !== undefined)!.playerId as string;
    const got = await expectRows(`${ODDS}?player_id=${player}&limit=1000`, { playerId: player });
    assert.ok(got.rows.length > 0);
    const game = rows.find((r) => r.league === 'nba' && r.marketScope === undefined)!;
    const team = t.app.engine.event(game.eventId)!.awayTeamId!;
    const teamRows = await expectRows(`${ODDS}?team_id=${team}&limit=1000`, { teamId: team });
    assert.ok(teamRows.rows.length > 0 && teamRows.rows.every((r) => r.marketScope === undefined));
    await expectRows(`${ODDS}?team_id=${team}&market=spread`, { teamId: team, markets: ['SPREAD'] });
  });

  it('scope: event, season or tournament (exact); anything else is 400 with validValues', async () => {
    for (const scope of ['event', 'season', 'tournament'] as const) {
      const got = await expectRows(`${ODDS}?scope=${scope}&limit=1000`, { scope });
      assert.ok(got.rows.length > 0, scope);
    }
    const body = await expectError(ODDS, `${ODDS}?scope=Season`, 400, 'invalid_parameter', 'scope');
    assert.deepEqual(body.validValues, ['event', 'season', 'tournament']);
    assert.match(body.detail, /event, season, tournament/);
  });

  it('odds_format: american, decimal, probability, all; anything else is 400 invalid_parameter', async () => {
    for (const format of ['american', 'decimal', 'probability', 'all'] as const) {
      await expectRows(`${ODDS}?league=nba&odds_format=${format}&limit=1000`, { leagues: ['nba'] }, format);
    }
    const body = await expectError(ODDS, `${ODDS}?odds_format=fractional`, 400, 'invalid_parameter', 'odds_format');
    assert.deepEqual(body.validValues, ['all', 'american', 'decimal', 'probability']);
  });

  it('is_main: true/false/1/0, combined with other filters; other values are 400', async () => {
    await expectRows(`${ODDS}?league=nba&is_main=true&limit=1000`, { leagues: ['nba'], isMain: true });
    await expectRows(`${ODDS}?market=total&is_main=1&limit=1000`, { markets: ['TOTAL'], isMain: true });
    await expectRows(`${ODDS}?league=nfl&is_main=FALSE&limit=1000`, { leagues: ['nfl'] });
    await expectError(ODDS, `${ODDS}?is_main=yes`, 400, 'invalid_parameter', 'is_main');
  });

  it('limit: 1..1000 (default 100); outside or not an integer is 400', async () => {
    for (const limit of [1, 7, 1000]) {
      const { body } = await t.call(ODDS, `${ODDS}?limit=${limit}`);
      assert.equal(body.data.length, limit);
      assert.notEqual(body.nextCursor, null);
    }
    for (const bad of ['0', '1001', '-1', '2.5', 'ten']) await expectError(ODDS, `${ODDS}?limit=${bad}`, 400, 'invalid_parameter', 'limit');
  });

  it('cursor: opaque, bound to the filters; undecodable, tampered or replayed under other filters is 400 invalid_cursor', async () => {
    const { body } = await t.call(ODDS, `${ODDS}?league=nba&limit=5`);
    const cursor = body.nextCursor as string;
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    const next = await t.call(ODDS, `${ODDS}?league=nba&limit=5&cursor=${cursor}`);
    assert.equal(next.reply.status, 200);
    assert.ok(next.body.data[0].id !== body.data[4].id);
    // odds_format and limit are not filters: changing them mid-walk is allowed.
    const reformatted = await t.call(ODDS, `${ODDS}?league=nba&limit=7&odds_format=probability&cursor=${cursor}`);
    assert.deepEqual(reformatted.body.data.map((r: Row) => r.id).slice(0, 5), next.body.data.map((r: Row) => r.id));
    await expectError(ODDS, `${ODDS}?league=nba&cursor=not-a-cursor`, 400, 'invalid_cursor', 'cursor');
    await expectError(ODDS, `${ODDS}?league=nba&cursor=${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'B' : 'A'}A`, 400, 'invalid_cursor');
    await expectError(ODDS, `${ODDS}?league=nfl&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(ODDS, `${ODDS}?league=nba&is_main=true&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(ODDS, `${ODDS}?league=nba&scope=event&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError('/api/v1/odds/updated', `/api/v1/odds/updated?since=0&league=nba&cursor=${cursor}`, 400, 'invalid_cursor');
  });

  it('unknown parameters are ignored and named in meta.warnings', async () => {
    const { reply, body } = await t.call(ODDS, `${ODDS}?league=nba&leagu=nfl&limit=3&foo=1`);
    assert.equal(reply.status, 200);
    assert.deepEqual(body.meta.warnings, ["unknown query parameter 'foo' ignored", "unknown query parameter 'leagu' ignored"]);
    assert.ok(body.data.every((r: Row) => r.league === 'nba'));
  });

  it('If-None-Match with the current ETag: 304 without a body; HEAD: headers only', async () => {
    const first = await t.call(ODDS, `${ODDS}?league=nba&limit=10`);
    const etag = first.reply.headers.etag!;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    const again = await t.call(ODDS, `${ODDS}?league=nba&limit=10`, { headers: { 'If-None-Match': etag } });
    assert.equal(again.reply.status, 304);
    assert.equal(again.reply.body.length, 0);
    assert.equal(again.reply.headers.etag, etag);
    const head = await t.call(ODDS, `${ODDS}?league=nba&limit=10`, { method: 'HEAD' });
    assert.equal(head.reply.status, 200);
    assert.equal(head.reply.headers['content-length'], String(first.reply.body.length));
  });
});

describe('path odds routes', () => {
  before(async () => {
    t = await startTestApp();
    rows = boardRows(t.app.engine, 'all');
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('/events/{id}/odds: every row of the event in one page, is_main and odds_format; cursor/limit are warnings', async () => {
    const route = '/api/v1/events/:eventId/odds';
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.eventId, (counts.get(r.eventId) ?? 0) + 1);
    const [big] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    const { body } = await t.call(route, `/api/v1/events/${big}/odds`);
    assert.ok(body.data.length > 100);
    assert.equal(body.nextCursor, null);
    assert.deepEqual(body.data, referenceRows(t.app.engine, { eventIds: [big] }));
    const main = await t.call(route, `/api/v1/events/${big}/odds?is_main=true&odds_format=american`);
    assert.deepEqual(main.body.data, referenceRows(t.app.engine, { eventIds: [big], isMain: true }, 'american'));
    assert.ok(main.body.data.length < body.data.length);
    const warned = await t.call(route, `/api/v1/events/${big}/odds?limit=5&cursor=abc`);
    assert.equal(warned.body.data.length, body.data.length);
    assert.deepEqual(warned.body.meta.warnings, ["unknown query parameter 'cursor' ignored", "unknown query parameter 'limit' ignored"]);
    const futures = rows.find((r) => r.marketScope === 'SEASON')!.eventId;
    const anchor = await t.call(route, `/api/v1/events/${futures}/odds`);
    assert.deepEqual(anchor.body.data, referenceRows(t.app.engine, { eventIds: [futures] }));
    await expectError(route, '/api/v1/events/no-such-event/odds', 404, 'not_found');
    await expectError(route, `/api/v1/events/${big}/odds?odds_format=x`, 400, 'invalid_parameter', 'odds_format');
  });

  it('/events/{id}/odds of a known event without rows: 200 and empty', async () => {
    const quiet = t.app.board.events.find((e) => !rows.some((r) => r.eventId === e.id))!;
    const { reply, body } = await t.call('/api/v1/events/:eventId/odds', `/api/v1/events/${quiet.id}/odds`);
    assert.equal(reply.status, 200);
    assert.deepEqual(body.data, []);
  });

  it('/players/{id}/odds: props of the player, paginated; scope is a warning; unknown player 404', async () => {
    const route = '/api/v1/players/:playerId/odds';
    const player = rows.find((r) => r.playerId !== undefined && r.marketScope === 'SEASON')?.playerId ?? rows.find((r) => r.playerId !== undefined)!.playerId;
    const got = await walk(route, `/api/v1/players/${player}/odds?limit=3`);
    assert.deepEqual(got.rows, referenceRows(t.app.engine, { playerId: player }));
    const warned = await t.call(route, `/api/v1/players/${player}/odds?scope=event`);
    assert.deepEqual(warned.body.meta.warnings, ["unknown query parameter 'scope' ignored"]);
    const main = await walk(route, `/api/v1/players/${player}/odds?is_main=1&odds_format=probability`);
    assert.deepEqual(main.rows, referenceRows(t.app.engine, { playerId: player, isMain: true }, 'probability'));
    const benched = t.app.board.players.find((p) => !rows.some((r) => r.playerId === p.id))!;
    const empty = await t.call(route, `/api/v1/players/${benched.id}/odds`);
    assert.equal(empty.reply.status, 200);
    assert.deepEqual(empty.body.data, []);
    await expectError(route, '/api/v1/players/no-such-player/odds', 404, 'not_found');
    await expectError(route, `/api/v1/players/${player}/odds?limit=0`, 400, 'invalid_parameter', 'limit');
    const first = await t.call(route, `/api/v1/players/${player}/odds?limit=1`);
    await expectError(route, `/api/v1/players/${benched.id}/odds?limit=1&cursor=${first.body.nextCursor}`, 400, 'invalid_cursor');
  });

  it('/teams/{id}/odds: game rows of the team\'s events; no futures; unknown team 404', async () => {
    const route = '/api/v1/teams/:teamId/odds';
    const game = rows.find((r) => r.league === 'nfl' && r.marketScope === undefined)!;
    const team = t.app.engine.event(game.eventId)!.homeTeamId!;
    const got = await walk(route, `/api/v1/teams/${team}/odds?limit=1000`);
    assert.deepEqual(got.rows, referenceRows(t.app.engine, { teamId: team }));
    assert.ok(got.rows.length > 0 && got.rows.every((r) => r.marketScope === undefined));
    const warned = await t.call(route, `/api/v1/teams/${team}/odds?scope=season&limit=1`);
    assert.deepEqual(warned.body.meta.warnings, ["unknown query parameter 'scope' ignored"]);
    await expectError(route, '/api/v1/teams/no-such-team/odds', 404, 'not_found');
  });
});
