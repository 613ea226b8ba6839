// API keys over HTTP: X-Api-Key and Bearer,
// 401 invalid_api_key for unknown or revoked keys (never on /account/usage), the three
// X-RateLimit headers on keyed responses, REQUIRE_KEY=1 on key-designated routes only,
// RATE_LIMIT_ENFORCE=1 turning exhaustion into 429 with Retry-After, over the real app.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { expectError, type Json } from '../helpers/catalog-helpers.ts';

const USAGE = '/api/v1/account/usage';
const EVENTS = '/api/v1/events';
const EVENT_STATS = '/api/v1/events/:eventId/stats';

const ANONYMOUS = { plan: 'ENTERPRISE', monthlyUsed: null, monthlyCap: null, rateLimitPerMinute: null, key: null };

const keyHeader = (key: string) => ({ 'X-Api-Key': key });
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

function nextMinuteSeconds(now: number): number {
  return (Math.floor(now / 60_000) + 1) * 60;
}

async function usageOf(t: TestApp, headers: Record<string, string> = {}): Promise<Json> {
  const { reply, body } = await t.call(USAGE, USAGE, { headers });
  assert.equal(reply.status, 200);
  assert.equal(reply.headers['x-ratelimit-limit'], undefined, '/account/usage is not metered');
  return body.data[0];
}

describe('keys: authentication, headers and usage', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('no key: anonymous everywhere, /account/usage answers the ENTERPRISE plan with nulls', async () => {
    const events = await t.call(EVENTS, EVENTS);
    assert.equal(events.reply.status, 200);
    assert.equal(events.reply.headers['x-ratelimit-limit'], undefined, 'anonymous responses carry no rate-limit headers');
    assert.deepEqual(await usageOf(t), ANONYMOUS);
  });

  it('a valid key (X-Api-Key or Bearer) is counted per request, with X-RateLimit-Limit/-Remaining/-Reset', async () => {
    const { key, record } = t.app.persistence.apiKeys.create({ plan: 'FREE', label: 'http test', now: t.clock.now() });
    const event = t.app.board.events[0]!.id;
    const paths: [string, string][] = [
      [EVENTS, EVENTS],
      ['/api/v1/teams', '/api/v1/teams?limit=1'],
      [EVENT_STATS, `/api/v1/events/${event}/stats`],
      ['/api/v1/leagues', '/api/v1/leagues'],
    ];
    let n = 0;
    for (const [route, path] of paths) {
      for (const headers of [keyHeader(key), bearer(key)]) {
        const { reply } = await t.call(route, path, { headers });
        n++;
        assert.equal(reply.status, 200, path);
        assert.equal(reply.headers['x-ratelimit-limit'], String(record.rateLimitPerMinute));
        assert.equal(reply.headers['x-ratelimit-remaining'], String(record.rateLimitPerMinute - n));
        assert.equal(reply.headers['x-ratelimit-reset'], String(nextMinuteSeconds(t.clock.now())));
        assert.match(String(reply.headers['access-control-expose-headers']), /X-RateLimit-Remaining/);
      }
    }
    const etag = (await t.call(EVENTS, EVENTS, { headers: keyHeader(key) })).reply.headers.etag!;
    n++;
    const revalidated = await t.call(EVENTS, EVENTS, { headers: { ...keyHeader(key), 'If-None-Match': etag } });
    n++;
    assert.equal(revalidated.reply.status, 304);
    assert.equal(revalidated.reply.headers['x-ratelimit-remaining'], String(record.rateLimitPerMinute - n), 'a 304 is counted and carries the headers');
    const notFound = await t.call('/api/v1/events/:eventId', '/api/v1/events/nope', { headers: keyHeader(key) });
    n++;
    assert.equal(notFound.reply.status, 404);
    assert.equal(notFound.reply.headers['x-ratelimit-remaining'], String(record.rateLimitPerMinute - n));
    const usage = await usageOf(t, keyHeader(key));
    assert.deepEqual(usage, { plan: 'FREE', monthlyUsed: n, monthlyCap: record.monthlyCap, rateLimitPerMinute: record.rateLimitPerMinute, key: key.slice(-4) });
    assert.deepEqual(await usageOf(t, bearer(key)), usage, 'reading the usage does not count');
    t.clock.advance(60_000);
    const nextMinute = await t.call(EVENTS, EVENTS, { headers: keyHeader(key) });
    assert.equal(nextMinute.reply.headers['x-ratelimit-remaining'], String(record.rateLimitPerMinute - 1), 'the minute window starts over');
    assert.equal((await usageOf(t, keyHeader(key))).monthlyUsed, n + 1, 'the month keeps counting');
  });

  it('an unknown key: 401 invalid_api_key on public and key routes alike, but /account/usage answers the anonymous plan', async () => {
    const bad = 'ok_this-key-does-not-exist-anywhere-000';
    for (const headers of [keyHeader(bad), bearer(bad)]) {
      const pub = await t.call(EVENTS, EVENTS, { headers });
      assert.equal(pub.reply.status, 401);
      assert.equal(pub.body.code, 'invalid_api_key');
      const keyed = await t.call(EVENT_STATS, `/api/v1/events/${t.app.board.events[0]!.id}/stats`, { headers });
      assert.equal(keyed.reply.status, 401);
      assert.deepEqual(await usageOf(t, headers), ANONYMOUS);
    }
  });

  it('a revoked key is refused at once (ApiKeys.revoke in this process); /account/usage falls back to anonymous', async () => {
    const { key } = t.app.persistence.apiKeys.create({ plan: 'PRO', now: t.clock.now() });
    assert.equal((await t.call(EVENTS, EVENTS, { headers: keyHeader(key) })).reply.status, 200);
    assert.equal((await usageOf(t, keyHeader(key))).plan, 'PRO');
    t.app.persistence.apiKeys.revoke(key.slice(-4), t.clock.now());
    const refused = await t.call(EVENTS, EVENTS, { headers: keyHeader(key) });
    assert.equal(refused.reply.status, 401);
    assert.equal(refused.body.code, 'invalid_api_key');
    assert.deepEqual(await usageOf(t, keyHeader(key)), ANONYMOUS);
  });
});

describe('keys: REQUIRE_KEY=1', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { REQUIRE_KEY: '1' } });
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('key-designated catalog routes answer 401 missing_api_key without a key; reference routes and /account/usage do not', async () => {
    const board = t.app.board;
    const event = board.teamBox[0]!.eventId;
    const team = board.teamBox[0]!.teamId;
    const player = board.playerBox[0]!.playerId;
    const keyed: [string, string][] = [
      [EVENT_STATS, `/api/v1/events/${event}/stats`],
      ['/api/v1/teams/:teamId/stats', `/api/v1/teams/${team}/stats`],
      ['/api/v1/players/:playerId/stats', `/api/v1/players/${player}/stats`],
      ['/api/v1/stats/players', `/api/v1/stats/players?event_id=${event}`],
    ];
    const open: [string, string][] = [
      [EVENTS, EVENTS],
      ['/api/v1/events/active', '/api/v1/events/active'],
      ['/api/v1/events/:eventId', `/api/v1/events/${event}`],
      ['/api/v1/teams', '/api/v1/teams'],
      ['/api/v1/teams/:teamId', `/api/v1/teams/${team}`],
      ['/api/v1/players', '/api/v1/players'],
      ['/api/v1/players/:playerId', `/api/v1/players/${player}`],
      ['/api/v1/leagues', '/api/v1/leagues'],
      ['/api/v1/seasons', '/api/v1/seasons?year=2026'],
      ['/api/v1/sportsbooks', '/api/v1/sportsbooks'],
      ['/api/v1/markets', '/api/v1/markets'],
      ['/api/v1/markets/active', '/api/v1/markets/active'],
      [USAGE, USAGE],
    ];
    for (const [route, path] of keyed) await expectError(t, route, path, 401, 'missing_api_key');
    for (const [route, path] of open) assert.equal((await t.call(route, path)).reply.status, 200, path);
    const { key } = t.app.persistence.apiKeys.create({ plan: 'FREE', now: t.clock.now() });
    for (const [route, path] of keyed) {
      const { reply } = await t.call(route, path, { headers: bearer(key) });
      assert.equal(reply.status, 200, path);
      assert.ok(reply.headers['x-ratelimit-limit']);
    }
  });
});

describe('keys: limits', () => {
  let t: TestApp;
  let counting: TestApp;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_ENFORCE: '1' } });
    counting = await startTestApp({ board: t.app.board });
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    assert.deepEqual(counting.logs, []);
    await t.close();
    await counting.close();
  });

  it('RATE_LIMIT_ENFORCE=1: past the per-minute limit, 429 rate_limited with Retry-After; refusals are not counted; the next minute opens', async () => {
    const { key, record } = t.app.persistence.apiKeys.create({ plan: 'FREE', now: t.clock.now() });
    t.clock.advance(15_000);
    for (let i = 1; i <= record.rateLimitPerMinute; i++) {
      const { reply } = await t.call(EVENTS, `${EVENTS}?limit=1`, { headers: keyHeader(key) });
      assert.equal(reply.status, 200, `request ${i}`);
      assert.equal(reply.headers['x-ratelimit-remaining'], String(record.rateLimitPerMinute - i));
    }
    for (const route of [[EVENTS, EVENTS], ['/api/v1/leagues', '/api/v1/leagues']]) {
      const limited = await t.call(route[0]!, route[1]!, { headers: keyHeader(key) });
      assert.equal(limited.reply.status, 429);
      assert.equal(limited.body.code, 'rate_limited');
      assert.equal(limited.reply.headers['retry-after'], '45');
    }
    const usage = await usageOf(t, keyHeader(key));
    assert.equal(usage.monthlyUsed, record.rateLimitPerMinute, '429s are not counted; /account/usage never answers 429');
    t.clock.advance(45_000);
    const reopened = await t.call(EVENTS, EVENTS, { headers: keyHeader(key) });
    assert.equal(reopened.reply.status, 200);
    assert.equal(reopened.reply.headers['x-ratelimit-remaining'], String(record.rateLimitPerMinute - 1));
  });

  it('RATE_LIMIT_ENFORCE=1: a spent monthly cap answers 429 until the month turns, with the cap in X-RateLimit-Limit', async () => {
    const { key, record } = t.app.persistence.apiKeys.create({ plan: 'PRO', now: t.clock.now() });
    t.app.persistence.db.prepare('UPDATE api_keys SET monthly_cap = 3 WHERE id = ?').run(record.id);
    for (let i = 1; i <= 3; i++) {
      const { reply } = await t.call(EVENTS, EVENTS, { headers: bearer(key) });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['x-ratelimit-limit'], '3', 'the binding window is the month');
      assert.equal(reply.headers['x-ratelimit-remaining'], String(3 - i));
    }
    const limited = await t.call(EVENTS, EVENTS, { headers: bearer(key) });
    assert.equal(limited.reply.status, 429);
    const now = t.clock.now();
    const monthEnd = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() + 1, 1);
    assert.equal(limited.reply.headers['retry-after'], String(Math.ceil((monthEnd - now) / 1000)));
    assert.deepEqual(await usageOf(t, bearer(key)), { plan: 'PRO', monthlyUsed: 3, monthlyCap: 3, rateLimitPerMinute: record.rateLimitPerMinute, key: key.slice(-4) });
  });

  it('without enforcement, exhaustion only shows in the headers (Remaining 0), never as 429', async () => {
    const { key, record } = counting.app.persistence.apiKeys.create({ plan: 'FREE', now: counting.clock.now() });
    let last: Json = {};
    for (let i = 0; i < record.rateLimitPerMinute + 5; i++) {
      const { reply } = await counting.call('/api/v1/leagues', '/api/v1/leagues', { headers: keyHeader(key) });
      assert.equal(reply.status, 200);
      last = reply.headers;
    }
    assert.equal(last['x-ratelimit-remaining'], '0');
    assert.equal((await usageOf(counting, keyHeader(key))).monthlyUsed, record.rateLimitPerMinute + 5);
  });
});
