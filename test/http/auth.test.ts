// The Authenticator hook: key extraction, 401/429 answers, rate-limit headers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { apiKeyFrom, type Authenticator, type AuthResult } from '../../http/auth.ts';
import { defineRoute, type RouteAuth } from '../../http/router.ts';
import { ManualClock } from '../../engine/clock.ts';
import { httpRequest, startTestServer, type TestServer } from '../helpers/server.ts';

import { NOW } from '../../fixtures/harness/now.ts';

/** A small real authenticator: one good key with a budget of 3 requests, one revoked key. */
class BudgetAuthenticator implements Authenticator {
  calls: { key: string | null; routeAuth: RouteAuth; now: number }[] = [];
  remaining = 3;
  check(key: string | null, routeAuth: RouteAuth, now: number): AuthResult {
    this.calls.push({ key, routeAuth, now });
    if (key === null) {
      return routeAuth === 'key' && process.env.TEST_REQUIRE_KEY === '1'
        ? { ok: false, code: 'missing_api_key', detail: 'this endpoint needs an API key' }
        : { ok: true, headers: [] };
    }
    if (key !== 'ok_good') return { ok: false, code: 'invalid_api_key', detail: 'unknown or revoked API key' };
    if (this.remaining === 0) return { ok: false, code: 'rate_limited', detail: 'per-minute limit reached', retryAfter: 42 };
    this.remaining--;
    const reset = String(Math.floor(now / 60000) * 60 + 60);
    return { ok: true, headers: [['X-RateLimit-Limit', '3'], ['X-RateLimit-Remaining', String(this.remaining)], ['X-RateLimit-Reset', reset]] };
  }
}

const data = defineRoute({
  path: '/api/v1/odds',
  auth: 'key',
  response: 'Status',
  query: [],
  cache: { validity: () => 1 },
  handle: () => ({ kind: 'data', data: [{ totalMarkets: 5, sportsbooks: 2 }], updated: NOW }),
});
const reference = defineRoute({
  path: '/api/v1/status',
  auth: 'none',
  response: 'Status',
  query: [],
  handle: () => ({ kind: 'data', data: [{ totalMarkets: 5, sportsbooks: 2 }], updated: NOW }),
});

describe('authentication hook', () => {
  let t: TestServer;
  const auth = new BudgetAuthenticator();
  before(async () => {
    t = await startTestServer({ routes: [data, reference], authenticator: auth, clock: new ManualClock(NOW) });
  });
  after(() => t.close());

  it('extracts X-Api-Key first, then Authorization: Bearer', () => {
    assert.equal(apiKeyFrom('abc', 'Bearer xyz'), 'abc');
    assert.equal(apiKeyFrom('', 'Bearer xyz'), 'xyz');
    assert.equal(apiKeyFrom('', 'bearer   xyz '), 'xyz');
    assert.equal(apiKeyFrom('  ', 'Basic dXNlcg=='), null);
    assert.equal(apiKeyFrom('', 'Bearer '), null);
    assert.equal(apiKeyFrom('', ''), null);
  });

  it('passes the key, the route designation and the clock time to the authenticator', async () => {
    auth.calls.length = 0;
    await t.call('/api/v1/odds', '/api/v1/odds');
    await t.call('/api/v1/status', '/api/v1/status', { headers: { Authorization: 'Bearer ok_nope' } });
    assert.deepEqual(auth.calls, [
      { key: null, routeAuth: 'key', now: NOW },
      { key: 'ok_nope', routeAuth: 'none', now: NOW },
    ]);
  });

  it('answers 401 invalid_api_key for an unknown key, with CORS', async () => {
    const { reply, body } = await t.call('/api/v1/odds', '/api/v1/odds', { headers: { 'X-Api-Key': 'ok_revoked' } });
    assert.equal(reply.status, 401);
    assert.deepEqual(body, { success: false, code: 'invalid_api_key', detail: 'unknown or revoked API key', param: null });
    assert.equal(reply.headers['access-control-allow-origin'], '*');
  });

  it('adds the authenticator headers to keyed responses, 304s included, then answers 429 with Retry-After', async () => {
    auth.remaining = 3;
    const first = await t.call('/api/v1/odds', '/api/v1/odds', { headers: { 'X-Api-Key': 'ok_good' } });
    assert.equal(first.reply.status, 200);
    assert.equal(first.reply.headers['x-ratelimit-limit'], '3');
    assert.equal(first.reply.headers['x-ratelimit-remaining'], '2');
    assert.equal(first.reply.headers['x-ratelimit-reset'], String(NOW / 1000 + 60));
    const second = await t.call('/api/v1/odds', '/api/v1/odds', { headers: { 'X-Api-Key': 'ok_good', 'If-None-Match': String(first.reply.headers.etag) } });
    assert.equal(second.reply.status, 304);
    assert.equal(second.reply.headers['x-ratelimit-remaining'], '1');
    await t.call('/api/v1/odds', '/api/v1/odds', { headers: { Authorization: 'Bearer ok_good' } });
    const limited = await t.call('/api/v1/odds', '/api/v1/odds', { headers: { 'X-Api-Key': 'ok_good' } });
    assert.equal(limited.reply.status, 429);
    assert.equal(limited.body.code, 'rate_limited');
    assert.equal(limited.reply.headers['retry-after'], '42');
    const anonymous = await t.call('/api/v1/odds', '/api/v1/odds');
    assert.equal(anonymous.reply.status, 200, 'no key: anonymous and allowed');
    assert.equal(anonymous.reply.headers['x-ratelimit-limit'], undefined);
  });

  it('lets the authenticator refuse a missing key on key-designated routes only', async () => {
    process.env.TEST_REQUIRE_KEY = '1';
    try {
      const refused = await t.call('/api/v1/odds', '/api/v1/odds');
      assert.equal(refused.reply.status, 401);
      assert.equal(refused.body.code, 'missing_api_key');
      const open = await t.call('/api/v1/status', '/api/v1/status');
      assert.equal(open.reply.status, 200);
    } finally {
      delete process.env.TEST_REQUIRE_KEY;
    }
  });

  it('does not consult the authenticator for unknown paths or preflights', async () => {
    auth.calls.length = 0;
    await t.call('/api/v1/status', '/api/v1/nowhere', { headers: { 'X-Api-Key': 'ok_good' } });
    const preflight = await httpRequest(t.port, '/api/v1/odds', { method: 'OPTIONS' });
    assert.equal(preflight.status, 204);
    assert.equal(auth.calls.length, 0);
  });
});

describe('without an authenticator', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ routes: [data] });
  });
  after(() => t.close());

  it('treats every request as anonymous and allowed, keys included', async () => {
    const { reply } = await t.call('/api/v1/odds', '/api/v1/odds', { headers: { 'X-Api-Key': 'anything' } });
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['x-ratelimit-limit'], undefined);
  });
});
