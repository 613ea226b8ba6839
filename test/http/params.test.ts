// Query parameters over real HTTP: every kind, every 400 code, warnings, decoding.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { defineRoute } from '../../http/router.ts';
import { COMMON_PARAMS } from '../../http/schemas.ts';
import { parseInstantParam } from '../../http/params.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const UPDATED = Date.UTC(2026, 10, 21, 12, 0, 0, 0);
const ECHO_SCHEMA = { type: 'object', required: ['query'], properties: { query: { type: 'object' } } };

const odds = defineRoute({
  path: '/api/v1/odds',
  auth: 'key',
  response: 'Echo',
  query: [
    { name: 'league', kind: 'list', case: 'lower' },
    { name: 'market', kind: 'list', case: 'upper' },
    { name: 'odds_format', kind: 'enum', values: ['american', 'decimal', 'probability', 'all'], default: 'all' },
    { name: 'scope', kind: 'enum', values: ['event', 'season', 'tournament'] },
    { name: 'is_main', kind: 'boolean', default: false },
    { name: 'min_edge', kind: 'number', minimum: 0, maximum: 1, default: 0.02 },
    { name: 'min_profit', kind: 'number', default: 0.001 },
    { name: 'team', kind: 'string' },
    COMMON_PARAMS.cursor,
    COMMON_PARAMS.limit,
  ],
  handle(req) {
    // The inferred query type: these assignments fail to compile if inference breaks.
    const limit: number = req.query.limit;
    const leagues: string[] | undefined = req.query.league;
    const format: 'american' | 'decimal' | 'probability' | 'all' = req.query.odds_format;
    void [limit, leagues, format];
    return { kind: 'data', data: [{ query: req.query }], updated: UPDATED };
  },
});
const updated = defineRoute({
  path: '/api/v1/odds/updated',
  auth: 'key',
  response: 'Echo',
  query: [{ name: 'since', kind: 'instant', required: true }, COMMON_PARAMS.limit],
  handle: (req) => ({ kind: 'data', data: [{ query: req.query }], updated: UPDATED }),
});

describe('http query parameters', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ routes: [odds, updated], openapi: { schemas: { Echo: ECHO_SCHEMA } } });
  });
  after(() => t.close());

  const query = async (qs: string) => {
    const { reply, body } = await t.call('/api/v1/odds', `/api/v1/odds${qs}`);
    assert.equal(reply.status, 200, JSON.stringify(body));
    return body.data[0].query;
  };
  const error = async (path: string) => {
    const { reply, body } = await t.call(path.split('?')[0]!, path);
    assert.equal(reply.status, 400, JSON.stringify(body));
    return body;
  };

  it('applies defaults', async () => {
    assert.deepEqual(await query(''), { odds_format: 'all', is_main: false, min_edge: 0.02, min_profit: 0.001, limit: 100 });
  });

  it('splits comma lists, trims, drops empty tokens and applies the casing', async () => {
    const q = await query('?league=NFL,%20nba,,Mlb&market=player_total,Spread');
    assert.deepEqual(q.league, ['nfl', 'nba', 'mlb']);
    assert.deepEqual(q.market, ['PLAYER_TOTAL', 'SPREAD']);
  });

  it('accepts 20 list tokens and refuses 21 with invalid_parameter', async () => {
    const tokens = (n: number) => Array.from({ length: n }, (_, i) => `l${i}`).join(',');
    assert.equal((await query(`?league=${tokens(20)}`)).league.length, 20);
    const body = await error(`/api/v1/odds?league=${tokens(21)}`);
    assert.deepEqual(Object.keys(body).sort(), ['code', 'detail', 'param', 'success']);
    assert.equal(body.code, 'invalid_parameter');
    assert.equal(body.param, 'league');
    assert.match(body.detail, /at most 20/);
  });

  it('refuses enum values outside the set, naming them in detail and validValues', async () => {
    const format = await error('/api/v1/odds?odds_format=fractional');
    assert.deepEqual(format, {
      success: false,
      code: 'invalid_parameter',
      detail: 'odds_format must be one of american, decimal, probability, all',
      param: 'odds_format',
      validValues: ['american', 'decimal', 'probability', 'all'],
    });
    const scope = await error('/api/v1/odds?scope=league');
    assert.deepEqual(scope.validValues, ['event', 'season', 'tournament']);
    assert.match(scope.detail, /event, season, tournament/);
    assert.equal((await query('?scope=season')).scope, 'season');
  });

  it('reads booleans as true/false/1/0 in any case and refuses anything else', async () => {
    for (const [text, value] of [['TRUE', true], ['true', true], ['1', true], ['False', false], ['0', false]] as const) {
      assert.equal((await query(`?is_main=${text}`)).is_main, value, text);
    }
    for (const text of ['yes', '2', 'tru']) {
      const body = await error(`/api/v1/odds?is_main=${text}`);
      assert.equal(body.param, 'is_main');
      assert.equal(body.code, 'invalid_parameter');
    }
  });

  it('checks limit is an integer in 1..1000', async () => {
    assert.equal((await query('?limit=1')).limit, 1);
    assert.equal((await query('?limit=1000')).limit, 1000);
    for (const text of ['0', '1001', '-5', 'abc', '10.5', '1e3']) {
      const body = await error(`/api/v1/odds?limit=${text}`);
      assert.equal(body.param, 'limit', text);
      assert.equal(body.detail, 'limit must be an integer in [1, 1000]');
    }
  });

  it('checks number ranges (min_edge in [0, 1])', async () => {
    assert.equal((await query('?min_edge=0')).min_edge, 0);
    assert.equal((await query('?min_edge=1')).min_edge, 1);
    assert.equal((await query('?min_edge=.5')).min_edge, 0.5);
    assert.equal((await query('?min_profit=-0.25')).min_profit, -0.25);
    for (const text of ['-0.01', '1.5', 'abc', 'NaN', 'Infinity']) {
      const body = await error(`/api/v1/odds?min_edge=${text}`);
      assert.equal(body.param, 'min_edge', text);
      assert.equal(body.code, 'invalid_parameter');
    }
  });

  it('reads instants as ISO-8601 or epoch millis; since is required', async () => {
    const since = async (text: string) => {
      const { reply, body } = await t.call('/api/v1/odds/updated', `/api/v1/odds/updated?since=${text}`);
      assert.equal(reply.status, 200, `${text}: ${JSON.stringify(body)}`);
      return body.data[0].query.since;
    };
    const noon = Date.UTC(2026, 10, 21, 12, 0, 0);
    assert.equal(await since('2026-11-21T12:00:00Z'), noon);
    assert.equal(await since('2026-11-21T12:00:00.250Z'), noon + 250);
    assert.equal(await since(String(noon)), noon);
    assert.equal(await since('2026-11-21T13:00:00%2B01:00'), noon, 'encoded + offset');
    assert.equal(await since('2026-11-21T13:00:00+01:00'), noon, 'unencoded + arrives as a space and is repaired');
    assert.equal(await since('2026-11-21T07:00:00-0500'), noon);
    assert.equal(await since('2026-11-21T12:00'), noon, 'no zone reads as UTC');
    assert.equal(await since('2026-11-21'), Date.UTC(2026, 10, 21));
    for (const text of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', '2026-11-21T25:00:00Z', '12:00']) {
      const body = await error(`/api/v1/odds/updated?since=${text}`);
      assert.equal(body.param, 'since', text);
      assert.equal(body.code, 'invalid_parameter');
    }
    const missing = await error('/api/v1/odds/updated');
    assert.deepEqual(missing, { success: false, code: 'missing_parameter', detail: 'since is required', param: 'since' });
    const empty = await error('/api/v1/odds/updated?since=&limit=5');
    assert.equal(empty.code, 'missing_parameter', 'an empty value counts as absent');
  });

  it('ignores unknown parameters and lists them in meta.warnings', async () => {
    const { body } = await t.call('/api/v1/odds', '/api/v1/odds?leauge=nfl&limit=5&zeta=1&leauge=nba');
    assert.deepEqual(body.meta.warnings, ["unknown query parameter 'leauge' ignored", "unknown query parameter 'zeta' ignored"]);
    assert.equal(body.data[0].query.limit, 5);
    assert.equal(body.data[0].query.league, undefined);
    const clean = await t.call('/api/v1/odds', '/api/v1/odds?limit=5');
    assert.equal('warnings' in clean.body.meta, false);
  });

  it('decodes percent-encoding and +, and lets the last repeated parameter win', async () => {
    assert.equal((await query('?team=New+York%20Jets')).team, 'New York Jets');
    assert.equal((await query('?team=a%2Bb')).team, 'a+b');
    assert.equal((await query('?team=%C3%A9quipe')).team, 'équipe');
    assert.equal((await query('?limit=5&limit=7')).limit, 7);
    assert.equal((await query('?limit=5&limit=')).limit, 100, 'last one (empty) wins: default');
    const body = await error('/api/v1/odds?team=%E0%A4%A');
    assert.equal(body.param, 'team');
    assert.match(body.detail, /percent-encoding/);
  });

  it('round-trips any encoded text (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), async (text) => {
        const q = await query(`?team=${encodeURIComponent(text)}`);
        assert.equal(q.team, text);
      }),
      { numRuns: 60 },
    );
  });

  it('accepts limit exactly in 1..1000 (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -50, max: 1100 }), async (n) => {
        const { reply } = await t.call('/api/v1/odds', `/api/v1/odds?limit=${n}`);
        assert.equal(reply.status, n >= 1 && n <= 1000 ? 200 : 400);
      }),
      { numRuns: 80 },
    );
  });
});

describe('parseInstantParam', () => {
  it('agrees with Date for every ISO instant it is given (property)', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }), (date) => {
        assert.equal(parseInstantParam(date.toISOString()), date.getTime());
        assert.equal(parseInstantParam(String(date.getTime())), date.getTime());
      }),
    );
  });
});
