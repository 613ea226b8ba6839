// The served OpenAPI document: structure, parameter constraints, and the component
// schemas' presence rules (the validator every HTTP test relies on must be able to fail).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { defineRoute } from '../../http/router.ts';
import { COMMON_PARAMS } from '../../http/schemas.ts';
import { buildOpenApi } from '../../http/openapi.ts';
import { createServer } from '../../http/server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const GAME_ROW = {
  id: 'ev1:pinnacle:TOTAL:FULL_OVER_45.5',
  sportsbook: 'pinnacle',
  league: 'nfl',
  eventId: 'ev1',
  market: 'TOTAL',
  marketSubtype: 'TOTAL',
  period: 'FULL',
  selection: 'Over 45.5',
  side: 'OVER',
  teamSide: 'NONE',
  teamName: 'Over',
  priceAmerican: -110,
  priceDecimal: 1.9091,
  line: 45.5,
  suspended: false,
  eventStartTime: '2026-11-21T18:00',
  updated: '2026-11-21T12:00:00.000Z',
};

let served: Record<string, unknown>[] = [GAME_ROW];
const odds = defineRoute({
  path: '/api/v1/odds',
  auth: 'key',
  response: 'OddsRow',
  summary: 'Odds rows',
  query: [
    { name: 'league', kind: 'list', case: 'lower', description: 'League codes.' },
    { name: 'odds_format', kind: 'enum', values: ['american', 'decimal', 'probability', 'all'], default: 'all' },
    { name: 'is_main', kind: 'boolean', default: false },
    { name: 'since', kind: 'instant' },
    COMMON_PARAMS.cursor,
    COMMON_PARAMS.limit,
  ],
  handle: () => ({ kind: 'data', data: served, updated: 0 }),
});

describe('OpenAPI document', () => {
  let t: TestServer;
  let doc: any;
  before(async () => {
    t = await startTestServer({ routes: [odds] });
    doc = (await t.call('/api/v1/openapi.json', '/api/v1/openapi.json')).body;
  });
  after(() => t.close());

  it('describes each route with its parameters and constraints', () => {
    const op = doc.paths['/api/v1/odds'].get;
    const param = (name: string) => op.parameters.find((p: { name: string }) => p.name === name);
    assert.deepEqual(param('limit').schema, { type: 'integer', minimum: 1, maximum: 1000, default: 100 });
    assert.deepEqual(param('league').schema, { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1 } });
    assert.equal(param('league').style, 'form');
    assert.equal(param('league').explode, false);
    assert.deepEqual(param('odds_format').schema.enum, ['american', 'decimal', 'probability', 'all']);
    assert.equal(param('since').schema.type, 'string');
    assert.equal(param('If-None-Match').in, 'header');
    assert.ok(op.responses['400'] && op.responses['304'] && op.responses['429'] && op.responses['500']);
    assert.equal(op.responses['200'].content['application/json'].schema.properties.data.items.$ref, '#/components/schemas/OddsRow');
    assert.ok(op.responses['200'].content['application/msgpack']);
    for (const name of ['Envelope', 'Error', 'OddsRow', 'Team', 'Player', 'Sportsbook', 'MarketType', 'Status']) assert.ok(doc.components.schemas[name], name);
  });

  it('compiles every response schema with ajv 2020', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addFormat('date-time', true);
    ajv.addFormat('int32', true);
    ajv.addSchema(doc, 'doc');
    for (const name of Object.keys(doc.components.schemas)) assert.ok(ajv.getSchema(`doc#/components/schemas/${name}`), name);
  });

  it('accepts every documented odds row shape', async () => {
    const { probability, dfs, tombstone, future, prop } = rowShapes();
    served = [GAME_ROW, probability, dfs, tombstone, future, prop];
    const { reply } = await t.call('/api/v1/odds', '/api/v1/odds');
    assert.equal(reply.status, 200);
  });

  it('rejects rows that break a presence rule (the validator can fail)', async () => {
    const { probability, dfs, future, prop } = rowShapes();
    const broken: [string, Record<string, unknown>][] = [
      ['probability with a price', { ...probability, priceAmerican: -110 }],
      ['DFS multiplier with a price', { ...dfs, priceDecimal: 1.9 }],
      ['playerId without playerName', { ...prop, playerName: undefined }],
      ['segment without marketScope', { ...future, marketScope: undefined }],
      ['eventStartTime with seconds', { ...GAME_ROW, eventStartTime: '2026-11-21T18:00:00' }],
      ['updated without milliseconds', { ...GAME_ROW, updated: '2026-11-21T12:00:00Z' }],
      ['an unknown field', { ...GAME_ROW, extra: 1 }],
      ['removed: false', { ...GAME_ROW, removed: false }],
      ['American price inside (-100, 100)', { ...GAME_ROW, priceAmerican: 50 }],
      ['lower-case market', { ...GAME_ROW, market: 'total' }],
      ['missing suspended', { ...GAME_ROW, suspended: undefined }],
    ];
    for (const [label, row] of broken) {
      served = [JSON.parse(JSON.stringify(row))];
      await assert.rejects(t.call('/api/v1/odds', '/api/v1/odds'), /does not match/, label);
    }
    served = [GAME_ROW];
  });

  it('refuses at start-up a route naming an unknown response schema', async () => {
    const bad = defineRoute({ path: '/api/v1/x', auth: 'none', response: 'Nope', query: [], handle: () => ({ kind: 'data', data: [], updated: 0 }) });
    await assert.rejects(createServer({ routes: [bad], port: 0 }), /unknown response schema Nope/);
    assert.throws(() => buildOpenApi([bad]), /unknown response schema/);
  });
});

function rowShapes() {
  const { priceAmerican: _a, priceDecimal: _d, ...unpriced } = GAME_ROW;
  return {
    probability: { ...unpriced, priceProbability: 0.5238 },
    dfs: { ...unpriced, id: 'ev1:prizepicks:PLAYER_TOTAL_POINTS:FULL_OVER_24.5_p1', sportsbook: 'prizepicks', dfsMultiplier: 1, playerId: 'p1', playerName: 'A Player' },
    tombstone: { ...GAME_ROW, removed: true },
    future: { ...unpriced, priceAmerican: 450, id: 'nfl-2026:draftkings:DIVISION_WINNER:REG_SEASON_YES_kc', eventId: 'nfl-2026', market: 'CATEGORICAL', marketSubtype: 'DIVISION_WINNER', period: 'REG_SEASON', side: 'YES', teamSide: 'NONE', line: undefined, marketScope: 'SEASON', segment: 'AFC West' },
    prop: { ...GAME_ROW, id: 'ev1:draftkings:PLAYER_TOTAL_POINTS:FULL_OVER_24.5_p1', playerId: 'p1', playerName: 'A Player', teamSide: 'HOME' },
  };
}

describe('component schemas for later routes', () => {
  const doc = buildOpenApi([]);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => Number.isFinite(Date.parse(text)) });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addSchema(doc, 'doc');
  const valid = (name: string, value: unknown) => {
    const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!;
    return validate(value) ? true : ajv.errorsText(validate.errors);
  };

  const event = {
    id: 'nfl-2026-11-21-kc-buf', homeTeamId: 'nfl-buf', homeTeamName: 'Buffalo Bills', awayTeamId: 'nfl-kc', awayTeamName: 'Kansas City Chiefs',
    startTime: '2026-11-21T18:00Z', status: 'scheduled', league: 'nfl', hasOdds: true, venueId: 'v1', seasonYear: 2026, context: {},
  };
  const leg = { oddsId: 'ev1:pinnacle:TOTAL:FULL_OVER_45.5', sportsbook: 'pinnacle', side: 'OVER', selection: 'Over 45.5', priceAmerican: 110, priceDecimal: 2.1, stake: 0.48, updated: '2026-11-21T12:00:00.000Z' };
  const samples: [string, unknown, Record<string, unknown>][] = [
    ['Event', event, { startTime: '2026-11-21T18:00' }],
    ['EventDetail', { ...event, status: 'final', homeScore: 24, awayScore: 21 }, { homeScore: 24, awayScore: undefined }],
    ['Season', { id: 'nfl-2026', league: 'nfl', year: 2026, name: 'NFL 2026', startDate: '2026-09-10', endDate: '2027-02-14', status: 'in_progress', futuresEventId: 'nfl-2026-futures' }, { status: 'live' }],
    ['TeamBoxRow', { eventId: 'e', teamId: 'a', homeId: 'a', awayId: 'b', league: 'nfl', homeScore: 3, awayScore: 0, result: 1, stats: {} }, { result: 2 }],
    ['PlayerBoxRow', { eventId: 'e', playerId: 'p', teamId: 't', date: '2026-11-21', data: { pts: 3 } }, { date: '2026-11-21T00:00' }],
    ['Edge', {
      id: 'ev1:prizepicks:PLAYER_TOTAL_POINTS:FULL_OVER_24.5_p1', eventId: 'ev1', league: 'nba', source: 'prizepicks', market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', period: 'FULL',
      playerId: 'p1', playerName: 'A Player', selection: 'Over 24.5', side: 'OVER', line: 24.5, dfsMultiplier: 1, breakevenProbability: 0.5774, fairProbability: 0.61, fairPriceAmerican: -156, edge: 0.0326,
      sharpBooks: ['pinnacle'], devig: 'multiplicative', eventStartTime: '2026-11-21T18:00', updated: '2026-11-21T12:00:00.000Z',
    }, { devig: 'magic' }],
    ['Arbitrage', {
      id: 'arb1', type: 'two_way', eventId: 'ev1', league: 'nfl', market: 'TOTAL', marketSubtype: 'TOTAL', period: 'FULL', line: 45.5, profit: 0.01, impliedSum: 0.99,
      legs: [leg, { ...leg, side: 'UNDER', sportsbook: 'draftkings' }], flaggedBooks: [], eventStartTime: '2026-11-21T18:00', updated: '2026-11-21T12:00:00.000Z',
    }, { legs: [leg] }],
    ['HistoricalOddsRow', { id: 'ev1:pinnacle:TOTAL:FULL_OVER_45.5', eventId: 'ev1', sportsbook: 'pinnacle', market: 'TOTAL', marketSubtype: 'TOTAL', period: 'FULL', selection: 'Over 45.5', side: 'OVER', line: 45.5, priceAmerican: -110, asOf: '2026-11-21T11:00:00.000Z', suspended: false }, { playerId: 'p1' }],
    ['AccountUsage', { plan: 'ENTERPRISE', monthlyUsed: null, monthlyCap: null, rateLimitPerMinute: null, key: null }, { plan: 'GOLD' }],
    ['Snapshot', {
      updated: '2026-11-21T12:00:00.000Z', syncToken: '1795262400000', count: 1,
      events: [{ id: 'ev1', league: 'nfl', startTime: '2026-11-21T18:00Z', status: 'scheduled', homeTeamId: 'a', awayTeamId: 'b', odds: [{ ...GAME_ROW, priceHistory: [{ fs: 1795260000, ls: 1795262400, pa: -110, pd: 1.9091 }] }] }],
    }, { count: -1 }],
  ];

  it('accept a sample of each record and refuse a broken one', () => {
    for (const [name, sample, breakage] of samples) {
      assert.equal(valid(name, sample), true, name);
      const broken = JSON.parse(JSON.stringify({ ...(sample as object), ...breakage }));
      assert.notEqual(valid(name, broken), true, `${name} broken by ${JSON.stringify(breakage)}`);
    }
    assert.notEqual(valid('SnapshotOddsRow', GAME_ROW), true, 'snapshot rows carry priceHistory (null or array)');
    assert.equal(valid('SnapshotOddsRow', { ...GAME_ROW, priceHistory: null }), true);
  });
});
