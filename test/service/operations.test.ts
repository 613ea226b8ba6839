// Operating the process: /healthz and /readyz through start-up and shutdown (on the
// operations listener, which answers before the board is loaded, and on the public
// port), X-Request-Id on every response, and /metrics in the Prometheus text format
// with counters that move with real requests and real board changes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { startApp, type App } from '../../service/app.ts';
import { TIMING_EVERY } from '../../http/metrics.ts';
import { Operations } from '../../service/operations.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { eventually } from '../helpers/eventually.ts';
import { parsePrometheus } from '../helpers/prometheus.ts';
import { httpRequest } from '../helpers/server.ts';

const ODDS = '/api/v1/odds?league=nba';

describe('health, readiness and metrics of a started app', () => {
  let dir: string;
  let operations: Operations;
  let opsPort: number;
  let app: App;
  const logs: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'odds-ops-'));
    operations = new Operations();
    opsPort = await operations.listen('127.0.0.1', 0);
  });
  after(async () => {
    await app?.close();
    await operations.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /healthz at once and /readyz 503 naming what is missing until the board is loaded', async () => {
    operations.readiness.expect('board', 'loading the board');
    const health = await httpRequest(opsPort, '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body.toString()), { status: 'ok' });
    const ready = await httpRequest(opsPort, '/readyz');
    assert.equal(ready.status, 503);
    const body = JSON.parse(ready.body.toString());
    assert.equal(body.code, 'not_ready');
    assert.match(body.detail, /board: loading the board/);
  });

  it('is ready on both listeners once startApp returns', async () => {
    app = await startApp({ clock: new ManualClock(NOW), board: testBoard(), dbPath: join(dir, 'odds.db'), env: {}, operations, log: (line) => logs.push(line) });
    for (const port of [opsPort, app.port]) {
      const ready = await httpRequest(port, '/readyz');
      assert.equal(ready.status, 200, `port ${port}`);
      assert.deepEqual(JSON.parse(ready.body.toString()), { status: 'ready', checks: { board: 'ok' } });
      assert.equal((await httpRequest(port, '/healthz')).status, 200);
    }
  });

  it('does not count probes as API usage (no key check, no rate-limit headers)', async () => {
    const probe = await httpRequest(app.port, '/healthz', { headers: { 'x-api-key': 'not-a-key' } });
    assert.equal(probe.status, 200, 'an unknown key is not even looked at');
    assert.equal(probe.headers['x-ratelimit-limit'], undefined);
    const api = await httpRequest(app.port, '/api/v1/status', { headers: { 'x-api-key': 'not-a-key' } });
    assert.equal(api.status, 401, 'the same key on an API route is checked');
  });

  it('puts an X-Request-Id on every response, echoing a usable one the client sent', async () => {
    const ids = new Set<string>();
    for (const [path, method] of [['/api/v1/status', 'GET'], ['/nope', 'GET'], ['/api/v1/status', 'OPTIONS'], ['/api/v1/status', 'POST'], ['/api/v1/snapshot', 'HEAD'], ['/healthz', 'GET']] as const) {
      const reply = await httpRequest(app.port, path, { method });
      const id = reply.headers['x-request-id'];
      assert.equal(typeof id, 'string', `${method} ${path}`);
      ids.add(id as string);
    }
    assert.equal(ids.size, 6, 'each request its own id');
    const echoed = await httpRequest(app.port, '/api/v1/status', { headers: { 'x-request-id': 'client-abc-123' } });
    assert.equal(echoed.headers['x-request-id'], 'client-abc-123');
    const refused = await httpRequest(app.port, '/api/v1/status', { headers: { 'x-request-id': 'x'.repeat(500) } });
    assert.notEqual(refused.headers['x-request-id'], 'x'.repeat(500));
  });

  it('serves /metrics as Prometheus text whose counters move with requests and board changes', async () => {
    const scrape = async () => {
      const reply = await httpRequest(opsPort, '/metrics');
      assert.equal(reply.status, 200);
      assert.match(String(reply.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      return parsePrometheus(reply.body.toString());
    };
    const before = await scrape();
    for (const name of ['odds_http_requests_total', 'odds_board_updates_total', 'odds_snapshot_refreshes_total']) assert.equal(before.types.get(name), 'counter', name);
    assert.equal(before.types.get('odds_http_request_duration_seconds'), 'histogram');
    for (const name of ['odds_live_rows', 'odds_http_not_modified_ratio', 'nodejs_eventloop_lag_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) assert.ok(before.types.has(name), name);
    assert.equal(before.value('odds_live_rows'), app.engine.liveRows);

    const count = (e: typeof before, status: string) => e.value('odds_http_requests_total', { route: '/api/v1/odds', status }) ?? 0;
    const first = await httpRequest(app.port, ODDS);
    assert.equal(first.status, 200);
    const again = await httpRequest(app.port, ODDS, { headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(again.status, 304);
    const updatesBefore = before.value('odds_board_updates_total', { kind: 'price' }) ?? 0;
    app.simulator.step(50);

    const afterwards = await scrape();
    assert.equal(count(afterwards, '200') - count(before, '200'), 1);
    assert.equal(count(afterwards, '304') - count(before, '304'), 1);
    assert.equal(afterwards.value('odds_http_requests_total', { route: '/metrics', status: '200' }), undefined, 'the operations listener records no HTTP metrics of its own');
    assert.ok((afterwards.value('odds_board_updates_total', { kind: 'price' }) ?? 0) > updatesBefore, 'price updates counted');
    assert.ok((afterwards.value('odds_http_not_modified_ratio') ?? 0) > 0);

    // one request in TIMING_EVERY is timed: of that many requests in a row to one route, exactly one
    const timed = (e: typeof before) => e.value('odds_http_request_duration_seconds_count', { route: '/api/v1/odds' }) ?? 0;
    for (let i = 0; i < 2 * TIMING_EVERY; i++) await httpRequest(app.port, ODDS, { headers: { 'if-none-match': String(first.headers.etag) } });
    const timedAfter = await scrape();
    assert.equal(timed(timedAfter) - timed(afterwards), 2);
    assert.equal(timedAfter.value('odds_http_request_duration_seconds_bucket', { route: '/api/v1/odds', le: '+Inf' }), timed(timedAfter));
    assert.ok((timedAfter.value('odds_http_request_duration_seconds_sum', { route: '/api/v1/odds' }) ?? 0) > 0);
  });

  it('answers /readyz 503 once shutdown starts, while the operations listener still serves', async () => {
    await app.close();
    const ready = await httpRequest(opsPort, '/readyz');
    assert.equal(ready.status, 503);
    assert.match(JSON.parse(ready.body.toString()).detail, /shutdown: the process is shutting down/);
    assert.equal((await httpRequest(opsPort, '/healthz')).status, 200);
    assert.deepEqual(logs, []);
  });
});

describe('npm start: operations listener and JSON log lines', () => {
  it('logs start, the operations port, ready and shutdown as JSON; /readyz is 200 once ready; no secret is logged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odds-main-ops-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts'], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0', BOARD: 'small', NOW: '2026-11-21T12:00:00Z', SIM_RATE: '100', DB_PATH: join(dir, 'odds.db'), DATA_DIR: join(dir, 'data'), INGEST_PORT: '0', CURSOR_SECRET: 'very-secret-value-1', INGEST_TOKEN: 'very-secret-token-2' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const events = () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>);
    try {
      assert.ok(await eventually(() => events().some((e) => e.event === 'ready'), 60_000, 50), `no ready line: ${stdout}${stderr}`);
      const opsPort = events().find((e) => e.event === 'operations_listening')!.port as number;
      const port = events().find((e) => e.event === 'ready')!.port as number;
      assert.equal((await httpRequest(opsPort, '/readyz')).status, 200);
      assert.equal((await httpRequest(port, '/readyz')).status, 200);
      const metrics = parsePrometheus((await httpRequest(opsPort, '/metrics')).body.toString());
      assert.ok((metrics.value('odds_live_rows') ?? 0) > 1000);
      child.kill('SIGTERM');
      assert.equal(await exited, 0, stdout + stderr);
      const names = events().map((e) => e.event);
      for (const name of ['start', 'operations_listening', 'ready', 'shutdown', 'stopped']) assert.ok(names.includes(name), `${name} in ${names.join()}`);
      for (const e of events()) assert.equal(typeof e.time, 'string');
      assert.doesNotMatch(stdout + stderr, /very-secret/);
      assert.match(stderr, /generating the small board: done/);
      assert.match(stderr, /loading odds rows: done, [\d,]+ rows/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
