// FEED=the-odds-api inside the server process: the settings come through service/config.ts
// (checked at start: FEED without ODDS_API_KEY refuses to start, naming it), the feed
// polls the stub provider and submits in process through the durable board's write path,
// and the public API serves what it sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { ConfigError, readConfig } from '../../service/config.ts';
import type { ProviderEventOdds } from '../../feeds/theOddsApi/providerTypes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { parsePrometheus } from '../helpers/prometheus.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { STUB_API_KEY, StubProvider, nudged, providerEventsFrom } from '../../fixtures/harness/stubProvider.ts';

let stub: StubProvider;
let events: ProviderEventOdds[];

before(async () => {
  stub = new StubProvider();
  events = providerEventsFrom(generateBoard({ seed: 42, size: 'small', now: NOW }), 'nba', 2, 'srv');
  // the feed judges "started" by the system clock
  for (const e of events) e.commence_time = new Date(Date.now() + 86_400_000).toISOString();
  stub.addSport('basketball_nba', events);
  await stub.start();
});
after(async () => stub.close());

function feedEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    FEED: 'the-odds-api',
    ODDS_API_KEY: STUB_API_KEY,
    ODDS_API_BASE_URL: stub.url,
    ODDS_API_SPORTS: 'basketball_nba',
    ODDS_API_MARKETS: 'h2h,spreads,totals',
    ODDS_API_INTERVAL: '0.2',
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

test('the config reads the feed settings and refuses FEED without a key', () => {
  const config = readConfig(feedEnv({ ODDS_API_INTERVAL: '2.5', ODDS_API_BUDGET_PER_DAY: '500', ODDS_API_TIMEOUT: '4' }));
  assert.equal(config.feed, 'the-odds-api');
  assert.deepEqual(config.oddsApiSports, ['basketball_nba']);
  assert.deepEqual(config.oddsApiMarkets, ['h2h', 'spreads', 'totals']);
  assert.equal(config.oddsApiIntervalMs, 2500);
  assert.equal(config.oddsApiBudgetPerDay, 500);
  assert.equal(config.oddsApiTimeoutMs, 4000);
  const defaults = readConfig({});
  assert.equal(defaults.feed, null);
  assert.equal(defaults.oddsApiBaseUrl, 'https://api.the-odds-api.com');
  assert.deepEqual(defaults.oddsApiSports, ['all-in-season']);
  assert.throws(
    () => readConfig({ FEED: 'the-odds-api' }),
    (error: unknown) => error instanceof ConfigError && error.problems.length === 1 && error.problems[0].name === 'ODDS_API_KEY' && /FEED=the-odds-api needs one/.test(error.message),
  );
});

let t: TestApp | undefined;
after(async () => t?.close());

test('FEED=the-odds-api polls inside the server and submits in process: the public API serves the stub odds and their ticks', async () => {
  const app = await startTestApp({ dataDir: true, env: feedEnv() });
  t = app;
  const event = events[0];
  const outcomes = event.bookmakers.reduce((n, b) => n + b.markets.filter((m) => ['h2h', 'spreads', 'totals'].includes(m.key)).reduce((k, m) => k + m.outcomes.length, 0), 0);
  const rows = async () => (await app.call('/api/v1/odds', `/api/v1/odds?event_id=${event.id}&limit=1000`)).body.data as any[];
  assert.ok(await eventually(async () => (await rows()).length === outcomes, 30_000, 50), `${outcomes} rows served`);
  const h2h = event.bookmakers.find((b) => b.key === 'pinnacle')!.markets.find((m) => m.key === 'h2h')!;
  const home = h2h.outcomes.find((o) => o.name === event.home_team)!;
  const id = `${event.id}:pinnacle:MONEYLINE:FULL-HOME`;
  assert.equal((await rows()).find((r) => r.id === id)?.priceAmerican, home.price);
  const logged = app.app.durable!.durable.log.lastIndex;
  home.price = nudged(home.price, 0.02);
  assert.ok(await eventually(async () => (await rows()).find((r) => r.id === id)?.priceAmerican === home.price, 30_000, 50), 'the tick is served');
  // it went through the durable write path: a batch more in the log
  assert.ok(app.app.durable!.durable.log.lastIndex > logged);
  // close stops the feed and waits for its poll before it closes the write path
  await app.close();
});

test('a market the provider refuses shows in /readyz (feed.droppedMarkets, said once) and in the metrics, while the other markets are served', async () => {
  const own = new StubProvider();
  const ownEvents = providerEventsFrom(generateBoard({ seed: 42, size: 'small', now: NOW }), 'nba', 1, 'ops');
  for (const e of ownEvents) e.commence_time = new Date(Date.now() + 86_400_000).toISOString();
  own.addSport('basketball_nba', ownEvents);
  // this provider serves no totals on the sport endpoint: 422 "Markets not supported by this endpoint"
  own.featured = new Set(['h2h', 'spreads', 'outrights']);
  await own.start();
  const app = await startTestApp({ dataDir: true, env: feedEnv({ ODDS_API_BASE_URL: own.url, ODDS_API_CREDITS_PER_HOUR: '100000' }) });
  try {
    const event = ownEvents[0];
    const served = async () => (await app.call('/api/v1/odds', `/api/v1/odds?event_id=${event.id}&limit=1000`)).body.data as any[];
    const h2hSpreads = event.bookmakers.reduce((n, b) => n + b.markets.filter((m) => ['h2h', 'spreads'].includes(m.key)).reduce((k, m) => k + m.outcomes.length, 0), 0);
    assert.ok(await eventually(async () => (await served()).length === h2hSpreads, 30_000, 50), `${h2hSpreads} h2h and spreads rows served`);
    assert.ok((await served()).every((r) => r.market !== 'TOTAL'));
    const ready = async () => JSON.parse((await app.request('/readyz')).body.toString());
    assert.ok(await eventually(async () => (await ready()).feed?.polls >= 3, 30_000, 50), 'a few polls made');
    const body = await ready();
    assert.equal(body.status, 'ready');
    assert.equal(body.checks.feed, 'ok');
    assert.equal(body.feed.state, 'polling');
    assert.deepEqual(body.feed.droppedMarkets.map((d: any) => `${d.sport}/${d.market}/${d.endpoint}`), ['basketball_nba/totals/sport']);
    assert.match(body.feed.droppedMarkets[0].reason, /422 Markets not supported by this endpoint/);
    assert.equal(body.feed.plan.budgetPerHour, 100000);
    const metrics = parsePrometheus(await app.app.operations.registry.metrics());
    assert.equal(metrics.value('odds_feed_markets_dropped'), 1);
    assert.equal(metrics.value('odds_feed_market_dropped', { sport: 'basketball_nba', market: 'totals', endpoint: 'sport' }), 1);
    assert.equal(metrics.value('odds_feed_running'), 1);
    assert.ok((metrics.value('odds_feed_polls_total') ?? 0) >= 3);
    assert.ok((metrics.value('odds_feed_credits_spent_total') ?? 0) > 0);
    // said once, however many polls
    const refused = own.requests.filter((r) => r.status === 422);
    assert.deepEqual(refused.map((r) => r.query.get('markets')), ['h2h,spreads,totals', 'totals'], 'the combined call, then totals alone');
    const after = own.requests.slice(own.requests.indexOf(refused[1]) + 1).filter((r) => r.path.endsWith('/basketball_nba/odds'));
    assert.ok(after.length >= 2 && after.every((r) => r.status === 200 && r.query.get('markets') === 'h2h,spreads'), 'later polls no longer ask for totals');
  } finally {
    await app.close();
    await own.close();
  }
});
