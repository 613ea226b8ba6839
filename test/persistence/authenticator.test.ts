// The SQLite-backed key check (persistence/keyCheck.ts: facts about a presented key)
// and the facade's KeyAuthenticator over it (http/auth.ts: those facts as error codes and
// headers): anonymous access, REQUIRE_KEY, invalid and revoked keys, rate-limit headers
// and RATE_LIMIT_ENFORCE turning exhaustion into 429.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { KeyAuthenticator } from '../../http/auth.ts';
import { defineRoute } from '../../http/router.ts';
import { createServer } from '../../http/server.ts';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';
import { PLANS } from '../../persistence/plans.ts';
import { httpRequest } from '../helpers/server.ts';
import { tempDbPath } from '../../fixtures/harness/persistence-fixture.ts';

/** The authenticator service/app.ts builds: REQUIRE_KEY=1 sets requireKey. */
function authenticatorOf(p: Persistence, requireKey = false): KeyAuthenticator {
  return new KeyAuthenticator(p.keyChecker, { requireKey });
}

const T0 = Date.parse('2026-11-21T12:00:10Z');
const tmp = tempDbPath();
after(() => tmp.cleanup());

describe('KeyChecker', () => {
  it('reports an unknown or revoked key as not found, counting nothing, and a live key with its usage window', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    assert.equal(p.keyChecker.check('ok_nope', T0), null);
    const { key, record } = p.apiKeys.create({ plan: 'PRO' });
    assert.deepEqual(p.keyChecker.check(key, T0), {
      allowed: true,
      limit: PLANS.PRO.rateLimitPerMinute,
      remaining: PLANS.PRO.rateLimitPerMinute - 1,
      window: 'minute',
      reset: Date.parse('2026-11-21T12:01:00Z') / 1000,
    });
    assert.equal(p.usage.accountUsage(record, T0).monthlyUsed, 1);
    p.apiKeys.revoke(record.last4);
    assert.equal(p.keyChecker.check(key, T0), null);
    assert.equal(p.usage.accountUsage(record, T0).monthlyUsed, 1);
    p.close();
  });
});

describe('KeyAuthenticator', () => {
  it('lets anonymous requests through with no headers by default', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    assert.deepEqual(authenticatorOf(p).check(null, 'key', T0), { ok: true, headers: [] });
    assert.deepEqual(authenticatorOf(p).check(null, 'none', T0), { ok: true, headers: [] });
    p.close();
  });

  it('REQUIRE_KEY=1 refuses key-designated routes without a key, not reference routes', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    const refused = authenticatorOf(p, true).check(null, 'key', T0);
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok && refused.code === 'missing_api_key' && refused.detail.length > 0);
    assert.equal(authenticatorOf(p, true).check(null, 'none', T0).ok, true);
    p.close();
  });

  it('an unknown key is 401 invalid_api_key on every route', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    for (const route of ['key', 'none'] as const) {
      const r = authenticatorOf(p).check('ok_nope', route, T0);
      assert.ok(!r.ok && r.code === 'invalid_api_key', route);
    }
    p.close();
  });

  it('a keyed request gets X-RateLimit headers and is counted', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    const { key, record } = p.apiKeys.create({ plan: 'PRO' });
    const r = authenticatorOf(p).check(key, 'key', T0);
    assert.deepEqual(r, {
      ok: true,
      headers: [
        ['X-RateLimit-Limit', String(PLANS.PRO.rateLimitPerMinute)],
        ['X-RateLimit-Remaining', String(PLANS.PRO.rateLimitPerMinute - 1)],
        ['X-RateLimit-Reset', String(Date.parse('2026-11-21T12:01:00Z') / 1000)],
      ],
    });
    authenticatorOf(p).check(key, 'none', T0);
    assert.equal(p.usage.accountUsage(record, T0).monthlyUsed, 2);
    p.close();
  });

  it('a revoked key is refused at once', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    const { key, record } = p.apiKeys.create({ plan: 'FREE' });
    assert.equal(authenticatorOf(p).check(key, 'key', T0).ok, true);
    p.apiKeys.revoke(record.last4);
    const r = authenticatorOf(p).check(key, 'key', T0);
    assert.ok(!r.ok && r.code === 'invalid_api_key');
    p.close();
  });

  it('RATE_LIMIT_ENFORCE=1 turns per-minute exhaustion into 429 rate_limited with retryAfter', () => {
    const p = openPersistence({ path: tmp.path, env: { RATE_LIMIT_ENFORCE: '1' }, flushIntervalMs: 0 });
    const { key } = p.apiKeys.create({ plan: 'FREE' });
    for (let i = 0; i < PLANS.FREE.rateLimitPerMinute; i++) assert.equal(authenticatorOf(p).check(key, 'key', T0).ok, true);
    const r = authenticatorOf(p).check(key, 'key', T0 + 20_000);
    assert.ok(!r.ok);
    assert.equal(r.code, 'rate_limited');
    assert.equal(r.retryAfter, 30);
    assert.match(r.detail, /60 requests per minute/);
    p.close();
  });

  it('without enforcement the same exhaustion is still allowed', () => {
    const p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    const { key } = p.apiKeys.create({ plan: 'FREE' });
    let last;
    for (let i = 0; i <= PLANS.FREE.rateLimitPerMinute; i++) last = authenticatorOf(p).check(key, 'key', T0);
    assert.ok(last!.ok);
    assert.deepEqual(last!.headers[1], ['X-RateLimit-Remaining', '0']);
    p.close();
  });
});

describe('KeyAuthenticator behind the real HTTP facade', () => {
  it('answers 401 for a bad key, rate-limit headers for a good one, 429 + Retry-After when enforced', async () => {
    const p = openPersistence({ path: tmp.path, env: { RATE_LIMIT_ENFORCE: '1' }, flushIntervalMs: 0 });
    const { key } = p.apiKeys.create({ plan: 'FREE' });
    const route = defineRoute({
      path: '/api/v1/status',
      auth: 'key',
      query: [],
      response: 'Status',
      handle: () => ({ kind: 'data', data: [{ totalMarkets: 1, sportsbooks: 1 }], updated: T0 }),
    });
    const server = await createServer({ routes: [route], port: 0, authenticator: authenticatorOf(p, true), clock: new ManualClock(T0) });
    try {
      const missing = await httpRequest(server.port, '/api/v1/status');
      assert.equal(missing.status, 401);
      assert.equal(JSON.parse(missing.body.toString()).code, 'missing_api_key');
      const bad = await httpRequest(server.port, '/api/v1/status', { headers: { 'X-Api-Key': 'ok_wrong' } });
      assert.equal(bad.status, 401);
      assert.equal(JSON.parse(bad.body.toString()).code, 'invalid_api_key');
      const good = await httpRequest(server.port, '/api/v1/status', { headers: { Authorization: `Bearer ${key}` } });
      assert.equal(good.status, 200);
      assert.equal(good.headers['x-ratelimit-limit'], '60');
      assert.equal(good.headers['x-ratelimit-remaining'], '59');
      assert.equal(good.headers['x-ratelimit-reset'], String(Date.parse('2026-11-21T12:01:00Z') / 1000));
      let last = good;
      for (let i = 0; i < 60 && last.status === 200; i++) {
        last = await httpRequest(server.port, '/api/v1/status', { headers: { 'X-Api-Key': key } });
      }
      assert.equal(last.status, 429);
      assert.equal(JSON.parse(last.body.toString()).code, 'rate_limited');
      assert.equal(last.headers['retry-after'], '50');
    } finally {
      await server.close();
      p.close();
    }
  });
});
