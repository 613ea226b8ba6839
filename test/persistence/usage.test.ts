// Usage metering: in-memory minute and month counts, batched flushes that
// survive close + reopen, enforcement with retryAfter, and account usage records.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ApiKeys, type ApiKeyRecord } from '../../persistence/apiKeys.ts';
import { openDatabase, type Db } from '../../persistence/database.ts';
import { PLANS } from '../../persistence/plans.ts';
import { UsageMeter } from '../../persistence/usageMeter.ts';
import { tempDbPath } from '../../fixtures/harness/persistence-fixture.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

const T0 = Date.parse('2026-11-21T12:00:10Z');
const MINUTE_END = Date.parse('2026-11-21T12:01:00Z');
const MONTH_END = Date.parse('2026-12-01T00:00:00Z');

const tmp = tempDbPath();
after(() => tmp.cleanup());

function stored(db: Db, key: ApiKeyRecord, month: string): number | undefined {
  return db.prepare('SELECT count FROM api_usage WHERE key_hash = ? AND month = ?').pluck().get(key.keyHash, month) as number | undefined;
}

describe('UsageMeter counting', () => {
  it('counts per minute and per month in memory, without writing per request', () => {
    const db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'FREE' }).record;
    const meter = new UsageMeter(db, { flushIntervalMs: 0 });
    const first = meter.check(key, T0);
    assert.deepEqual(first, { allowed: true, limit: 60, remaining: 59, window: 'minute', reset: MINUTE_END / 1000 });
    for (let i = 0; i < 9; i++) meter.check(key, T0 + i);
    assert.equal(meter.check(key, T0 + 100).remaining, 49);
    assert.equal(stored(db, key, '2026-11'), undefined, 'nothing written yet');
    // The next minute starts a fresh per-minute window; the month keeps counting.
    const next = meter.check(key, MINUTE_END + 5);
    assert.equal(next.remaining, 59);
    assert.equal(next.reset, MINUTE_END / 1000 + 60);
    assert.equal(meter.monthlyUsed(key, MINUTE_END + 5), 12);
    assert.equal(meter.flush(), 12);
    assert.equal(stored(db, key, '2026-11'), 12);
    assert.equal(meter.flush(), 0, 'a second flush has nothing to add');
    meter.close();
    db.close();
  });

  it('month counts survive close and reopen, and keep adding up', () => {
    let db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'PRO' }).record;
    let meter = new UsageMeter(db, { flushIntervalMs: 0 });
    for (let i = 0; i < 25; i++) meter.check(key, T0 + i * 1000);
    meter.close(); // flushes
    db.close();

    db = openDatabase(tmp.path);
    meter = new UsageMeter(db, { flushIntervalMs: 0 });
    assert.equal(meter.monthlyUsed(key, T0 + 60_000), 25);
    meter.check(key, T0 + 61_000);
    assert.equal(meter.accountUsage(key, T0 + 62_000).monthlyUsed, 26);
    meter.close();
    assert.equal(stored(db, key, '2026-11'), 26);
    db.close();
  });

  it('a new month starts at zero, and the old month keeps its unflushed counts', () => {
    const db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'PRO' }).record;
    const meter = new UsageMeter(db, { flushIntervalMs: 0 });
    for (let i = 0; i < 5; i++) meter.check(key, MONTH_END - 10_000 + i);
    const december = meter.check(key, MONTH_END + 1);
    assert.equal(meter.monthlyUsed(key, MONTH_END + 2), 1);
    assert.equal(december.remaining, PLANS.PRO.rateLimitPerMinute - 1);
    meter.close();
    assert.equal(stored(db, key, '2026-11'), 5);
    assert.equal(stored(db, key, '2026-12'), 1);
    db.close();
  });

  it('the timer flushes on its own', async () => {
    const db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'FREE' }).record;
    const meter = new UsageMeter(db, { flushIntervalMs: 20 });
    meter.check(key, T0);
    meter.check(key, T0 + 1);
    await eventually(() => stored(db, key, '2026-11') !== undefined);
    assert.equal(stored(db, key, '2026-11'), 2);
    meter.close();
    db.close();
  });
});

describe('UsageMeter enforcement', () => {
  it('without RATE_LIMIT_ENFORCE, exhaustion is reported but allowed', () => {
    const db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'FREE' }).record;
    const meter = new UsageMeter(db, { flushIntervalMs: 0 });
    let last;
    for (let i = 0; i < 70; i++) last = meter.check(key, T0);
    assert.equal(last!.allowed, true);
    assert.equal(last!.remaining, 0);
    assert.equal(meter.monthlyUsed(key, T0), 70);
    meter.close();
    db.close();
  });

  it('per-minute exhaustion: not allowed, retryAfter to the next minute, refused requests not counted', () => {
    const db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'FREE' }).record;
    const meter = new UsageMeter(db, { enforce: true, flushIntervalMs: 0 });
    for (let i = 0; i < 60; i++) assert.equal(meter.check(key, T0).allowed, true, `request ${i + 1}`);
    const refused = meter.check(key, T0 + 5_000);
    assert.deepEqual(refused, { allowed: false, limit: 60, remaining: 0, window: 'minute', reset: MINUTE_END / 1000, retryAfter: 45 });
    meter.check(key, T0 + 6_000);
    assert.equal(meter.monthlyUsed(key, T0), 60, 'refused requests are not counted');
    assert.equal(meter.check(key, MINUTE_END).allowed, true, 'the next minute opens again');
    meter.close();
    db.close();
  });

  it('monthly exhaustion: not allowed until the month ends, across restarts', () => {
    let db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'FREE' }).record;
    // Most of the month's cap was used before this process started.
    db.prepare('INSERT INTO api_usage (key_hash, month, count) VALUES (?, ?, ?)').run(key.keyHash, '2026-11', PLANS.FREE.monthlyCap - 2);
    let meter = new UsageMeter(db, { enforce: true, flushIntervalMs: 0 });
    const nearly = meter.check(key, T0);
    assert.equal(nearly.allowed, true);
    assert.deepEqual([nearly.window, nearly.limit, nearly.remaining, nearly.reset], ['month', PLANS.FREE.monthlyCap, 1, MONTH_END / 1000]);
    assert.equal(meter.check(key, T0).allowed, true);
    meter.close();
    db.close();

    db = openDatabase(tmp.path);
    meter = new UsageMeter(db, { enforce: true, flushIntervalMs: 0 });
    const refused = meter.check(key, T0 + 120_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.window, 'month');
    assert.equal(refused.retryAfter, (MONTH_END - T0 - 120_000) / 1000);
    assert.equal(meter.check(key, MONTH_END).allowed, true, 'December starts fresh');
    meter.close();
    db.close();
  });
});

describe('accountUsage', () => {
  it('reports plan, month use and limits of a key, and the anonymous plan without one', () => {
    const db = openDatabase(tmp.path);
    const key = new ApiKeys(db).create({ plan: 'PRO' }).record;
    const meter = new UsageMeter(db, { flushIntervalMs: 0 });
    meter.check(key, T0);
    meter.check(key, T0);
    const usage = meter.accountUsage(key, T0);
    assert.deepEqual(Object.keys(usage), ['plan', 'monthlyUsed', 'monthlyCap', 'rateLimitPerMinute', 'key']);
    assert.deepEqual(usage, { plan: 'PRO', monthlyUsed: 2, monthlyCap: PLANS.PRO.monthlyCap, rateLimitPerMinute: PLANS.PRO.rateLimitPerMinute, key: key.last4 });
    assert.equal(meter.accountUsage(key, T0).monthlyUsed, 2, 'asking does not count');
    assert.deepEqual(meter.accountUsage(null, T0), { plan: 'ENTERPRISE', monthlyUsed: null, monthlyCap: null, rateLimitPerMinute: null, key: null });
    meter.close();
    db.close();
  });
});
