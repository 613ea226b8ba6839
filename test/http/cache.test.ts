// Response cache and strong ETags: the ETag changes exactly when the
// body changes, polls of unchanged data answer 304 without running the route, and
// the cache stays bounded.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { defineRoute } from '../../http/router.ts';
import { COMMON_PARAMS } from '../../http/schemas.ts';
import { ResponseCache, newEntry } from '../../http/responseCache.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** A tiny mutable board: a version the route reads cheaply, and the rows it renders. */
const board = { version: 1, prices: [-110, 105, 120], updated: Date.UTC(2026, 10, 21, 12) };
let renders = 0;

function oddsRow(i: number, price: number): string {
  return JSON.stringify({
    id: `ev1:pinnacle:TOTAL:FULL_OVER_${i}`,
    sportsbook: 'pinnacle',
    league: 'nfl',
    eventId: 'ev1',
    market: 'TOTAL',
    marketSubtype: 'TOTAL',
    period: 'FULL',
    selection: `Over ${40 + i}.5`,
    side: 'OVER',
    teamSide: 'NONE',
    teamName: 'Over',
    priceAmerican: price,
    line: 40.5 + i,
    suspended: false,
    eventStartTime: '2026-11-21T18:00',
    updated: new Date(board.updated).toISOString(),
  });
}

const odds = defineRoute({
  path: '/api/v1/events/:eventId/odds',
  auth: 'key',
  response: 'OddsRow',
  query: [{ name: 'odds_format', kind: 'enum', values: ['american', 'all'], default: 'all' }, COMMON_PARAMS.limit],
  cache: { validity: () => board.version, capacity: 8 },
  handle(req) {
    renders++;
    const rows = board.prices.slice(0, req.query.limit).map((price, i) => oddsRow(i, price));
    return { kind: 'rows', rows: Buffer.from(rows.join(',')), count: rows.length, updated: board.updated };
  },
});

describe('response cache and ETags', () => {
  let t: TestServer;
  const path = '/api/v1/events/ev1/odds';
  const route = '/api/v1/events/:eventId/odds';
  before(async () => {
    t = await startTestServer({ routes: [odds] });
  });
  after(() => t.close());
  beforeEach(() => {
    board.version++;
    board.prices = [-110, 105, 120];
  });

  it('answers 304 to a matching If-None-Match without rendering again', async () => {
    const first = await t.call(route, path);
    assert.equal(first.reply.status, 200);
    const etag = String(first.reply.headers.etag);
    const before = renders;
    for (let i = 0; i < 5; i++) {
      const again = await t.call(route, path, { headers: { 'If-None-Match': etag } });
      assert.equal(again.reply.status, 304);
      assert.equal(again.reply.headers.etag, etag);
      assert.equal(again.reply.headers['access-control-allow-origin'], '*');
      assert.equal(again.reply.headers['content-length'], undefined);
    }
    const plain = await t.call(route, path);
    assert.equal(plain.reply.status, 200);
    assert.deepEqual(plain.reply.body, first.reply.body);
    assert.equal(renders, before, 'no render while the validity token is unchanged');
    const list = await t.call(route, path, { headers: { 'If-None-Match': `"other", W/${etag}` } });
    assert.equal(list.reply.status, 304, 'lists and weak comparison');
    const star = await t.call(route, path, { headers: { 'If-None-Match': '*' } });
    assert.equal(star.reply.status, 304);
  });

  it('keeps the ETag when a new token renders identical bytes, and changes it when bytes change', async () => {
    const first = await t.call(route, path);
    board.version++;
    const same = await t.call(route, path, { headers: { 'If-None-Match': String(first.reply.headers.etag) } });
    assert.equal(same.reply.status, 304, 'token moved but body identical: still 304');
    board.version++;
    board.prices[1] = 110;
    const changed = await t.call(route, path, { headers: { 'If-None-Match': String(first.reply.headers.etag) } });
    assert.equal(changed.reply.status, 200);
    assert.notEqual(changed.reply.headers.etag, first.reply.headers.etag);
    assert.equal(changed.body.data[1].priceAmerican, 110);
  });

  it('shares one entry between spellings of the same request', async () => {
    await t.call(route, `${path}?limit=2&odds_format=all`);
    const before = renders;
    const other = await t.call(route, `${path}?odds_format=all&limit=2`);
    const third = await t.call(route, `${path}?limit=2`);
    assert.equal(renders, before, 'canonical request found the entry');
    assert.equal(other.reply.headers.etag, third.reply.headers.etag);
    const different = await t.call(route, `${path}?limit=1`);
    assert.notEqual(different.reply.headers.etag, third.reply.headers.etag);
    assert.equal(renders, before + 1);
  });

  it('changes the ETag exactly when the body changes, over random change/poll sequences (property)', async () => {
    type Step = { kind: 'poll'; conditional: boolean; query: number } | { kind: 'reprice'; index: number; price: number } | { kind: 'touch' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('poll' as const), conditional: fc.boolean(), query: fc.integer({ min: 0, max: 2 }) }),
      fc.record({ kind: fc.constant('reprice' as const), index: fc.integer({ min: 0, max: 2 }), price: fc.constantFrom(-120, -110, 100, 105, 150) }),
      fc.record({ kind: fc.constant('touch' as const) }),
    );
    const spellings = [path, `${path}?limit=3`, `${path}?odds_format=all&unknown=1`];
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        board.version++;
        const seen = new Map<number, { body: Buffer; etag: string }>();
        for (const s of steps) {
          if (s.kind === 'touch') board.version++;
          if (s.kind === 'reprice') {
            board.prices[s.index] = s.price;
            board.version++;
          }
          if (s.kind !== 'poll') continue;
          const last = seen.get(s.query);
          const headers: Record<string, string> = s.conditional && last !== undefined ? { 'If-None-Match': last.etag } : {};
          const { reply } = await t.call(route, spellings[s.query]!, { headers });
          const etag = String(reply.headers.etag);
          if (reply.status === 304) {
            assert.ok(last !== undefined);
            assert.equal(etag, last.etag);
            const fresh = await t.call(route, spellings[s.query]!);
            assert.deepEqual(fresh.reply.body, last.body, '304 only when the body is unchanged');
            continue;
          }
          assert.equal(reply.status, 200);
          if (last !== undefined) assert.equal(etag === last.etag, reply.body.equals(last.body), 'ETag changes iff body changes');
          seen.set(s.query, { body: reply.body, etag });
        }
      }),
      { numRuns: 40 },
    );
  });

  it('stays within its key capacity', async () => {
    for (let limit = 1; limit <= 20; limit++) await t.call(route, `${path}?limit=${limit}`);
    const cache = t.server.router.routes.find((r) => r.def.path === route)!.cache!;
    assert.ok(cache.size <= 8, `size ${cache.size}`);
    const again = await t.call(route, `${path}?limit=20`);
    assert.equal(again.reply.status, 200);
  });
});

describe('ResponseCache bounds', () => {
  it('evicts least recently used keys and accounts bytes once per shared entry', () => {
    const cache = new ResponseCache<string>(4, 1_000_000);
    const a = newEntry('a', 1, Buffer.alloc(100));
    cache.set('raw-a', a);
    cache.set('canon-a', a);
    assert.equal(cache.totalBytes, 100);
    const b = newEntry('b', 1, Buffer.alloc(50));
    cache.set('raw-b', b);
    cache.set('canon-b', b);
    assert.equal(cache.totalBytes, 150);
    cache.get('raw-a');
    cache.set('raw-c', newEntry('c', 1, Buffer.alloc(10)));
    assert.equal(cache.get('canon-a'), undefined, 'oldest key evicted');
    assert.equal(cache.get('raw-a'), a);
    assert.equal(cache.totalBytes, 160, 'a still held by raw-a');
    cache.set('raw-d', newEntry('d', 1, Buffer.alloc(10)));
    assert.equal(cache.size, 4);
  });

  it('evicts by bytes, variants included', () => {
    const cache = new ResponseCache<string>(100, 3000);
    const big = newEntry('big', 1, Buffer.from(JSON.stringify({ data: 'x'.repeat(1500) })));
    cache.set('big', big);
    const small = newEntry('small', 1, Buffer.from('{"a":1}'));
    cache.set('small', small);
    cache.get('big');
    const variant = cache.select(big, true, false);
    assert.equal(variant, 2);
    assert.ok(cache.totalBytes <= 3000 || cache.size === 1, `${cache.totalBytes} bytes in ${cache.size} keys`);
    assert.equal(cache.get('small'), undefined, 'the variant pushed the least recent entry out');
  });
});
