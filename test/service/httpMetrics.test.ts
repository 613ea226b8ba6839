// The request observer (http/metrics.ts) behind real listeners: each answered request is
// counted under its route template and status, a route's row found by its router index;
// one observer told of two servers (whose routers number their routes alike) keeps their
// routes apart; with the access log on every request is timed and its duration lands in
// the histogram.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../../engine/clock.ts';
import { HttpMetrics, type ObservedRequest } from '../../http/metrics.ts';
import { defineRoute } from '../../http/router.ts';
import { createServer, type RunningServer } from '../../http/server.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { parsePrometheus } from '../helpers/prometheus.ts';
import { httpRequest } from '../helpers/server.ts';

const status = (path: string) =>
  defineRoute({
    path,
    auth: 'none',
    response: 'Status',
    query: [],
    cache: { validity: () => 1 },
    handle: () => ({ kind: 'data', data: [{ totalMarkets: 5, sportsbooks: 2 }], updated: NOW }),
  });

describe('HTTP request metrics on real listeners', () => {
  const registry = new Registry();
  const logged: { route: string | null; status: number; seconds: number }[] = [];
  const metrics = new HttpMetrics(registry, {
    accessLog: (request: ObservedRequest, seconds: number) => logged.push({ route: request.route?.def.path ?? null, status: request.status, seconds }),
  });
  let first: RunningServer;
  let second: RunningServer;

  before(async () => {
    // Both routers give index 0 to their first route: '/api/v1/a' here, '/api/v1/c' there.
    first = await createServer({ routes: [status('/api/v1/a'), status('/api/v1/b/:id')], openapi: false, clock: new ManualClock(NOW), port: 0, observer: metrics });
    second = await createServer({ routes: [status('/api/v1/c')], openapi: false, clock: new ManualClock(NOW), port: 0, observer: metrics });
  });
  after(async () => {
    await first?.close();
    await second?.close();
  });

  it('counts by route template and status, keeping apart two routers routes that share an index', async () => {
    const a = await httpRequest(first.port, '/api/v1/a');
    assert.equal(a.status, 200);
    assert.equal((await httpRequest(first.port, '/api/v1/a', { headers: { 'if-none-match': String(a.headers.etag) } })).status, 304);
    for (let i = 0; i < 3; i++) assert.equal((await httpRequest(second.port, '/api/v1/c')).status, 200);
    assert.equal((await httpRequest(first.port, '/api/v1/b/x')).status, 200);
    assert.equal((await httpRequest(first.port, '/api/v1/b/y')).status, 200);
    assert.equal((await httpRequest(second.port, '/nope')).status, 404);
    assert.equal((await httpRequest(first.port, '/api/v1/a', { method: 'DELETE' })).status, 405);

    assert.equal(metrics.count('/api/v1/a', 200), 1);
    assert.equal(metrics.count('/api/v1/a', 304), 1);
    assert.equal(metrics.count('/api/v1/c', 200), 3);
    assert.equal(metrics.count('/api/v1/b/:id'), 2, 'one row for the template, whatever the id');
    assert.equal(metrics.count(null, 404), 1);
    assert.equal(metrics.count(null, 405), 1, 'a refused method is answered before matching');

    const exposition = parsePrometheus(await registry.metrics());
    const requests = (route: string, code: string) => exposition.value('odds_http_requests_total', { route, status: code });
    assert.equal(requests('/api/v1/a', '304'), 1);
    assert.equal(requests('/api/v1/c', '200'), 3);
    assert.equal(requests('/api/v1/b/:id', '200'), 2);
    assert.equal(requests('unmatched', '404'), 1);
    assert.equal(exposition.value('odds_http_not_modified_ratio'), 1 / 9);
  });

  it('times every request with the access log on, each duration in the histogram of its route', async () => {
    const before = logged.length;
    for (let i = 0; i < 5; i++) assert.equal((await httpRequest(second.port, '/api/v1/c')).status, 200);
    const mine = logged.slice(before);
    assert.equal(mine.length, 5);
    for (const entry of mine) {
      assert.equal(entry.route, '/api/v1/c');
      assert.equal(entry.status, 200);
      assert.ok(Number.isFinite(entry.seconds) && entry.seconds >= 0, `a duration: ${entry.seconds}`);
    }
    const exposition = parsePrometheus(await registry.metrics());
    const labels = { route: '/api/v1/c' };
    assert.equal(exposition.value('odds_http_request_duration_seconds_count', labels), 8, 'the 3 earlier requests and these 5');
    assert.equal(exposition.value('odds_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }), 8);
    const loggedSum = logged.filter((entry) => entry.route === '/api/v1/c').reduce((sum, entry) => sum + entry.seconds, 0);
    assert.ok(Math.abs(exposition.value('odds_http_request_duration_seconds_sum', labels)! - loggedSum) < 1e-9, 'the sum is the logged durations');
  });
});
