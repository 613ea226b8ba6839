// Keyset cursors: round trip, tamper and replay detection, and a real paginated walk.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CursorCodec, fingerprintOf } from '../../http/cursor.ts';
import { HttpError } from '../../http/errors.ts';
import { defineRoute } from '../../http/router.ts';
import { COMMON_PARAMS } from '../../http/schemas.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const isInvalidCursor = (error: unknown) => error instanceof HttpError && error.status === 400 && error.code === 'invalid_cursor' && error.param === 'cursor';

/** The codec of a process without CURSOR_SECRET. */
const cursors = new CursorCodec();
const encodeCursor = cursors.encode.bind(cursors);
const decodeCursor = cursors.decode.bind(cursors);

describe('cursor encoding', () => {
  it('round-trips key, fingerprint and asOf (property)', () => {
    const key = fc.oneof(fc.string(), fc.integer(), fc.tuple(fc.string(), fc.string()), fc.constant(null));
    fc.assert(
      fc.property(key, fc.string({ maxLength: 30 }), fc.option(fc.integer({ min: 0, max: 2 ** 45 }), { nil: undefined }), (k, fingerprint, asOf) => {
        const token = encodeCursor({ key: k, fingerprint, asOf });
        assert.match(token, /^[A-Za-z0-9_-]+$/);
        const payload = decodeCursor(token, fingerprint);
        assert.deepEqual(payload.key, k);
        assert.equal(payload.fingerprint, fingerprint);
        assert.equal(payload.asOf, asOf);
      }),
    );
  });

  it('detects any changed character as invalid_cursor (property)', () => {
    const token = encodeCursor({ key: 'ev1:pinnacle:TOTAL:FULL_OVER_45.5', fingerprint: 'abc', asOf: 1_790_000_000_000 });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(fc.nat({ max: token.length - 1 }), fc.constantFrom(...alphabet), (index, replacement) => {
        fc.pre(token[index] !== replacement);
        const altered = token.slice(0, index) + replacement + token.slice(index + 1);
        // The last base64url character can carry unused bits; a change that decodes to the same bytes is the same cursor.
        if (Buffer.from(altered, 'base64url').equals(Buffer.from(token, 'base64url'))) return;
        assert.throws(() => decodeCursor(altered, 'abc'), isInvalidCursor);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses undecodable tokens and cursors replayed under other filters', () => {
    for (const garbage of ['', 'not a cursor', '!!!!', 'AAAA', Buffer.from('x'.repeat(40)).toString('base64url')]) {
      assert.throws(() => decodeCursor(garbage, 'f'), isInvalidCursor, JSON.stringify(garbage));
    }
    const token = encodeCursor({ key: 10, fingerprint: fingerprintOf('/api/v1/odds', { league: ['nfl'] }) });
    assert.throws(() => decodeCursor(token, fingerprintOf('/api/v1/odds', { league: ['nba'] })), isInvalidCursor);
    assert.equal(decodeCursor(token, fingerprintOf('/api/v1/odds', { league: ['nfl'], limit: 5, cursor: 'x', team_id: undefined })).key, 10);
  });

  it('refuses a cursor signed under another secret; an empty secret is the default one', () => {
    const token = encodeCursor({ key: 'ev1', fingerprint: 'f' });
    assert.throws(() => new CursorCodec('rotated').decode(token, 'f'), isInvalidCursor);
    assert.equal(new CursorCodec('rotated').decode(new CursorCodec('rotated').encode({ key: 'ev1', fingerprint: 'f' }), 'f').key, 'ev1');
    assert.equal(new CursorCodec('').decode(token, 'f').key, 'ev1');
  });

  it('fingerprints ignore key order, cursor, limit and absent values but not routes or values', () => {
    const a = fingerprintOf('/api/v1/odds', { league: ['nfl'], sportsbook: ['pinnacle'] });
    assert.equal(a, fingerprintOf('/api/v1/odds', { sportsbook: ['pinnacle'], limit: 7, league: ['nfl'], scope: null }));
    assert.notEqual(a, fingerprintOf('/api/v1/edges', { league: ['nfl'], sportsbook: ['pinnacle'] }));
    assert.notEqual(a, fingerprintOf('/api/v1/odds', { league: ['nfl'], sportsbook: ['draftkings'] }));
  });
});

const TEAMS = Array.from({ length: 57 }, (_, i) => ({
  id: `t${String(i).padStart(3, '0')}`,
  name: `Team ${i}`,
  abbreviation: `T${i}`,
  league: i % 3 === 0 ? 'nfl' : 'nba',
}));
const ROUTE = '/api/v1/teams';

const teams = defineRoute({
  path: ROUTE,
  auth: 'none',
  response: 'Team',
  query: [{ name: 'league', kind: 'list', case: 'lower' }, COMMON_PARAMS.cursor, COMMON_PARAMS.limit],
  handle(req) {
    const fingerprint = fingerprintOf(ROUTE, { league: req.query.league });
    const after = req.query.cursor === undefined ? '' : String(decodeCursor(req.query.cursor, fingerprint).key);
    const matching = TEAMS.filter((team) => (req.query.league === undefined || req.query.league.includes(team.league)) && team.id > after);
    const page = matching.slice(0, req.query.limit);
    const more = matching.length > page.length;
    return {
      kind: 'data',
      data: page,
      nextCursor: more ? encodeCursor({ key: page[page.length - 1]!.id, fingerprint }) : null,
      updated: 0,
    };
  },
});

describe('cursor over HTTP', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ routes: [teams] });
  });
  after(() => t.close());

  it('walks every row exactly once, page by page', async () => {
    for (const [filter, limit] of [['', 10], ['league=nfl&', 4], ['league=NBA,nfl&', 57], ['', 1000]] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const path = `${ROUTE}?${filter}limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
        const { reply, body } = await t.call(ROUTE, path);
        assert.equal(reply.status, 200, JSON.stringify(body));
        assert.equal(body.meta.count, body.data.length);
        seen.push(...body.data.map((team: { id: string }) => team.id));
        cursor = body.nextCursor;
        pages++;
      } while (cursor !== null && pages < 100);
      const league = filter.includes('nfl') && !filter.includes('NBA') ? ['nfl'] : ['nfl', 'nba'];
      const expected = TEAMS.filter((team) => league.includes(team.league)).map((team) => team.id);
      assert.deepEqual(seen, expected, `${filter} limit ${limit}`);
    }
  });

  it('answers 400 invalid_cursor to a replay under other filters and to a tampered cursor', async () => {
    const first = await t.call(ROUTE, `${ROUTE}?league=nfl&limit=2`);
    const cursor: string = first.body.nextCursor;
    const replay = await t.call(ROUTE, `${ROUTE}?league=nba&limit=2&cursor=${cursor}`);
    assert.equal(replay.reply.status, 400);
    assert.equal(replay.body.code, 'invalid_cursor');
    assert.equal(replay.body.param, 'cursor');
    const sameFilterOtherLimit = await t.call(ROUTE, `${ROUTE}?league=nfl&limit=3&cursor=${cursor}`);
    assert.equal(sameFilterOtherLimit.reply.status, 200, 'limit is not part of the fingerprint');
    const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    const tampered = await t.call(ROUTE, `${ROUTE}?league=nfl&limit=2&cursor=${flipped}`);
    assert.equal(tampered.reply.status, 400);
    assert.equal(tampered.body.code, 'invalid_cursor');
    const garbage = await t.call(ROUTE, `${ROUTE}?cursor=hello%20world`);
    assert.equal(garbage.body.code, 'invalid_cursor');
  });
});
