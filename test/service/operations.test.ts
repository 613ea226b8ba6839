// Operating the process: /healthz and /readyz on the ingest port (open from before the
// board is loaded) and on the public port, through start-up and shutdown; X-Request-Id
// on every response; /metrics on the ingest port in the Prometheus text format, with
// counters that move with real ingest (HTTP and WebSocket), real stream subscribers and
// real reads; the ingest token never in /metrics or the log lines; and `npm start` as a
// child process: its JSON log lines, the ingest port's probes and metrics, SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Socket } from 'node:net';
import { ManualClock } from '../../engine/clock.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { TIMING_EVERY } from '../../http/metrics.ts';
import { startApp, type App } from '../../service/app.ts';
import { createLogger } from '../../service/logger.ts';
import { Operations } from '../../service/operations.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { parsePrometheus, type Exposition } from '../helpers/prometheus.ts';
import { httpRequest, type HttpReply } from '../helpers/server.ts';
import { msgpack, ndjson, openIngestSocket, postBatch } from '../ingest/ingest-client.ts';
import { StreamTestClient } from '../stream/streamClient.ts';

const ODDS = '/api/v1/odds?league=nba';
const TOKEN = 'very-secret-token-2';
const json = (reply: HttpReply) => JSON.parse(reply.body.toString()) as Record<string, any>;

describe('health, readiness and metrics of a durable app', () => {
  let dir: string;
  let app: App;
  let ingestPort = 0;
  const logs: string[] = [];
  const lines: string[] = [];
  /** What the ingest port answered while the board was not loaded yet. */
  const duringStart: { healthz?: HttpReply; readyz?: HttpReply; batch?: { status: number; body: any }; metrics?: HttpReply } = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'odds-ops-'));
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
    app = await startApp({
      clock: new ManualClock(NOW),
      board: testBoard(),
      dataDir: join(dir, 'data'),
      dbPath: join(dir, 'odds.db'),
      ingestPort: 0,
      host: '127.0.0.1',
      port: 0,
      env: { INGEST_TOKEN: TOKEN, SHUTDOWN_GRACE_MS: '4000', CHECKPOINT_INTERVAL_MS: '0' },
      operations: new Operations(),
      logger,
      log: (line) => logs.push(line),
      ingestListening: async (port) => {
        ingestPort = port;
        duringStart.healthz = await httpRequest(port, '/healthz');
        duringStart.readyz = await httpRequest(port, '/readyz');
        duringStart.metrics = await httpRequest(port, '/metrics');
        duringStart.batch = await postBatch(port, TOKEN, ndjson([{ op: 'remove', id: 'anything' }]));
      },
    });
  });
  after(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async (): Promise<Exposition> => {
    const reply = await httpRequest(ingestPort, '/metrics');
    assert.equal(reply.status, 200);
    assert.match(String(reply.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parsePrometheus(reply.body.toString());
  };

  it('answers on the ingest port before the board is loaded: /healthz 200, /readyz 503 naming the board, batches 503 not_ready', () => {
    assert.notEqual(ingestPort, 0);
    assert.equal(duringStart.healthz?.status, 200);
    assert.deepEqual(json(duringStart.healthz!), { status: 'ok' });
    assert.equal(duringStart.readyz?.status, 503);
    assert.equal(json(duringStart.readyz!).code, 'not_ready');
    assert.match(json(duringStart.readyz!).detail, /board: loading the board/);
    assert.equal(duringStart.metrics?.status, 200, '/metrics answers during the load');
    assert.equal(duringStart.batch?.status, 503);
    assert.equal(duringStart.batch?.body.code, 'not_ready');
  });

  it('is ready on both ports once startApp returns; /metrics is on the ingest port only', async () => {
    assert.equal(app.durable?.listener.port, ingestPort);
    for (const port of [ingestPort, app.port]) {
      const ready = await httpRequest(port, '/readyz');
      assert.equal(ready.status, 200, `port ${port}`);
      assert.deepEqual(json(ready), { status: 'ready', checks: { board: 'ok', writePath: 'ok', flaggedBooks: 'ok' }, writePath: { state: 'ok' }, flaggedBooks: { count: 0, books: {}, worst: [] } });
      assert.equal((await httpRequest(port, '/healthz')).status, 200);
    }
    assert.equal((await httpRequest(app.port, '/metrics')).status, 404, 'the public port does not serve /metrics');
  });

  it('does not count probes as API usage: no key or token looked at, no rate-limit headers', async () => {
    const probe = await httpRequest(app.port, '/healthz', { headers: { 'x-api-key': 'not-a-key' } });
    assert.equal(probe.status, 200, 'an unknown key is not even looked at');
    assert.equal(probe.headers['x-ratelimit-limit'], undefined);
    const api = await httpRequest(app.port, '/api/v1/status', { headers: { 'x-api-key': 'not-a-key' } });
    assert.equal(api.status, 401, 'the same key on an API route is checked');
    assert.equal((await httpRequest(ingestPort, '/readyz', { headers: { authorization: 'Bearer wrong' } })).status, 200, 'probes on the ingest port need no token');
    assert.equal((await postBatch(ingestPort, 'wrong', ndjson([]))).status, 401, 'batches still do');
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

  it('serves /metrics whose counters move with real reads, real ingest over HTTP and WebSocket, and real stream subscribers', async () => {
    const before = await scrape();
    for (const name of ['odds_http_requests_total', 'odds_board_updates_total', 'odds_snapshot_refreshes_total', 'odds_ingest_batches_total', 'odds_ingest_changes_applied_total', 'odds_stream_messages_total', 'odds_stream_sent_bytes_total', 'odds_stream_conflated_deltas_total', 'odds_stream_slow_consumer_drops_total']) {
      assert.equal(before.types.get(name), 'counter', name);
    }
    for (const name of ['odds_http_request_duration_seconds', 'odds_ingest_ack_seconds', 'odds_log_fsync_seconds', 'odds_checkpoint_duration_seconds', 'odds_snapshot_refresh_duration_seconds']) assert.equal(before.types.get(name), 'histogram', name);
    for (const name of ['odds_live_rows', 'odds_http_not_modified_ratio', 'odds_stream_subscribers', 'odds_checkpoint_age_seconds', 'nodejs_eventloop_lag_seconds', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
      assert.ok(before.types.has(name), name);
    }
    assert.equal(before.value('odds_live_rows'), app.engine.liveRows);
    assert.equal(before.value('odds_checkpoint_duration_seconds_count'), 1, 'the first checkpoint of the fixture board');
    assert.ok((before.value('odds_checkpoint_age_seconds') ?? -1) >= 0);

    // reads: a 200 and a 304 on /odds
    const count = (e: Exposition, status: string) => e.value('odds_http_requests_total', { route: '/api/v1/odds', status }) ?? 0;
    const first = await httpRequest(app.port, `${ODDS}&limit=50`);
    assert.equal(first.status, 200);
    const again = await httpRequest(app.port, `${ODDS}&limit=50`, { headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(again.status, 304);
    const priced = (JSON.parse(first.body.toString()).data as { id: string; priceAmerican: number | null }[]).filter((row) => row.priceAmerican !== null);
    assert.ok(priced.length >= 4);

    // stream subscribers: one delta per batch, one conflating
    const client = await StreamTestClient.open(app.port);
    client.subscribe('live', { filter: { league: ['nba'] } });
    client.subscribe('slow', { filter: { league: ['nba'] }, conflateMs: 60_000 });
    await eventually(() => client.subs.get('live')!.images === 1 && client.subs.get('slow')!.images === 1, 20_000);
    const subscribed = await scrape();
    assert.equal(subscribed.value('odds_stream_subscribers'), 2);

    // ingest: one good and one bad batch over HTTP, the same over the WebSocket
    const ok = await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id: priced[0]!.id, priceAmerican: -155 }, { op: 'price', id: priced[1]!.id, suspended: true }]));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const bad = await postBatch(ingestPort, TOKEN, ndjson([{ op: 'price', id: 'no-such-row-xyz', priceAmerican: -110 }]));
    assert.equal(bad.status, 400);
    const socket = await openIngestSocket(ingestPort, TOKEN);
    try {
      assert.equal((await socket.send(msgpack([{ op: 'price', id: priced[2]!.id, priceAmerican: 120 }]))).ack, 0);
      assert.equal((await socket.send(msgpack([{ op: 'price', id: 'no-such-row-xyz', priceAmerican: 130 }]))).nack, 1);
    } finally {
      socket.close();
    }
    await eventually(() => client.subs.get('live')!.deltas >= 2, 10_000);
    await client.sync();

    const afterwards = await scrape();
    const batches = (e: Exposition, via: string, outcome: string) => e.value('odds_ingest_batches_total', { via, outcome }) ?? 0;
    for (const via of ['http', 'ws']) {
      assert.equal(batches(afterwards, via, 'ok') - batches(subscribed, via, 'ok'), 1, `${via} ok`);
      assert.equal(batches(afterwards, via, 'invalid') - batches(subscribed, via, 'invalid'), 1, `${via} invalid`);
      assert.equal(batches(afterwards, via, 'error'), 0, `${via} error`);
    }
    const applied = (e: Exposition, kind: string) => e.value('odds_ingest_changes_applied_total', { kind }) ?? 0;
    assert.equal(applied(afterwards, 'price') - applied(subscribed, 'price'), 2);
    assert.equal(applied(afterwards, 'suspend') - applied(subscribed, 'suspend'), 1);
    assert.equal((afterwards.value('odds_ingest_ack_seconds_count') ?? 0) - (subscribed.value('odds_ingest_ack_seconds_count') ?? 0), 2, 'acknowledged batches timed');
    assert.ok((afterwards.value('odds_ingest_ack_seconds_sum') ?? 0) > 0);
    assert.ok((afterwards.value('odds_log_fsync_seconds_count') ?? 0) >= (subscribed.value('odds_log_fsync_seconds_count') ?? 0) + 1, 'the batch log fsync timed');
    assert.ok((afterwards.value('odds_board_updates_total', { kind: 'price' }) ?? 0) > (before.value('odds_board_updates_total', { kind: 'price' }) ?? 0), 'engine row changes counted');
    const sent = (e: Exposition, name: string) => e.value(name, { format: 'json' }) ?? 0;
    assert.ok(sent(afterwards, 'odds_stream_messages_total') >= sent(before, 'odds_stream_messages_total') + 4, 'two images and the deltas');
    assert.ok(sent(afterwards, 'odds_stream_sent_bytes_total') > sent(before, 'odds_stream_sent_bytes_total'));
    assert.ok((afterwards.value('odds_stream_conflated_deltas_total', { reason: 'interval' }) ?? 0) >= 2, 'the conflating subscription held back both deltas');
    assert.equal(count(afterwards, '200') - count(before, '200'), 1);
    assert.equal(count(afterwards, '304') - count(before, '304'), 1);
    assert.equal(afterwards.value('odds_http_requests_total', { route: '/metrics', status: '200' }), undefined, 'scrapes are not API traffic');
    assert.ok((afterwards.value('odds_http_not_modified_ratio') ?? 0) > 0);

    // snapshot refreshes: the ingest above moved the board, so a poll of /snapshot publishes
    // a new version of it (inline or in the background), and that refresh is timed
    const refreshes = (e: Exposition) => e.value('odds_snapshot_refresh_duration_seconds_count', { variant: 'plain' }) ?? 0;
    const refreshedWithin = (e: Exposition, le: string) => e.value('odds_snapshot_refresh_duration_seconds_bucket', { variant: 'plain', le }) ?? 0;
    const snapshotReply = await httpRequest(app.port, '/api/v1/snapshot');
    assert.equal(snapshotReply.status, 200);
    let refreshed = afterwards;
    assert.ok(
      await eventually(async () => {
        refreshed = await scrape();
        return refreshes(refreshed) > refreshes(before);
      }, 20_000),
      'a refresh after the ingest is counted in the histogram',
    );
    assert.equal(refreshedWithin(refreshed, '+Inf'), refreshes(refreshed), 'every refresh falls in the +Inf bucket');
    assert.ok(refreshedWithin(refreshed, '+Inf') > refreshedWithin(before, '+Inf'), 'the +Inf bucket moved');
    assert.ok((refreshed.value('odds_snapshot_refresh_duration_seconds_sum', { variant: 'plain' }) ?? 0) > (before.value('odds_snapshot_refresh_duration_seconds_sum', { variant: 'plain' }) ?? 0), 'the sum grew');

    // the refused batches: one JSON line each, a summary without the payload
    const refused = lines.map((line) => JSON.parse(line)).filter((e) => e.event === 'ingest_invalid_batch');
    assert.equal(refused.length, 2);
    assert.deepEqual(refused.map((e) => e.via).sort(), ['http', 'ws']);
    for (const e of refused) {
      assert.equal(e.changes, 1);
      assert.equal(e.invalid, 1);
      assert.equal(e.first.index, 0);
    }
    assert.doesNotMatch(lines.join('\n'), /no-such-row-xyz/, 'the payload is not logged');

    client.close();
    assert.ok(await eventually(async () => (await scrape()).value('odds_stream_subscribers') === 0), 'subscribers gauge back to 0');

    // one request in TIMING_EVERY is timed: of that many requests in a row to one route, exactly one
    const timed = (e: Exposition) => e.value('odds_http_request_duration_seconds_count', { route: '/api/v1/odds' }) ?? 0;
    const timedBefore = await scrape();
    for (let i = 0; i < 2 * TIMING_EVERY; i++) await httpRequest(app.port, `${ODDS}&limit=50`, { headers: { 'if-none-match': String(first.headers.etag) } });
    const timedAfter = await scrape();
    assert.equal(timed(timedAfter) - timed(timedBefore), 2);
    assert.equal(timedAfter.value('odds_http_request_duration_seconds_bucket', { route: '/api/v1/odds', le: '+Inf' }), timed(timedAfter));
  });

  it('never puts the ingest token in /metrics or the log lines', async () => {
    const text = (await httpRequest(ingestPort, '/metrics')).body.toString();
    assert.doesNotMatch(text, new RegExp(TOKEN));
    assert.ok(lines.length > 0);
    assert.doesNotMatch(lines.join('\n') + logs.join('\n'), new RegExp(TOKEN));
  });

  it('answers /readyz 503 on both ports once shutdown starts (batches: 503 not_ready), then closes', async () => {
    const closing = app.close();
    const shutting = async (port: number) => {
      const reply = await httpRequest(port, '/readyz');
      return reply.status === 503 && /shutdown: the process is shutting down/.test(json(reply).detail);
    };
    assert.ok(await eventually(() => shutting(ingestPort), 20_000), 'ingest port: 503 shutting down');
    assert.ok(await eventually(() => shutting(app.port), 20_000), 'public port: 503 shutting down');
    assert.equal((await httpRequest(ingestPort, '/healthz')).status, 200, 'still alive while draining');
    assert.equal((await httpRequest(app.port, '/api/v1/status')).status, 200, 'the API still answers while draining');
    await closing;
    await assert.rejects(httpRequest(ingestPort, '/healthz'), 'the ingest port is closed');
    assert.deepEqual(logs, []);
  });
});

describe('slow consumers in /metrics and the log', () => {
  it('counts a pushed-back client\'s held-back deltas and its drop, and logs the drop as one JSON line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odds-ops-slow-'));
    const lines: string[] = [];
    const app = await startApp({
      clock: new ManualClock(NOW),
      board: testBoard(),
      dataDir: join(dir, 'data'),
      dbPath: join(dir, 'odds.db'),
      ingestPort: 0,
      port: 0,
      env: { INGEST_TOKEN: TOKEN, STREAM_BUFFER_BYTES: '65536', WAL_FSYNC: '0', CHECKPOINT_INTERVAL_MS: '0' },
      logger: createLogger('info', { write: (line: string) => void lines.push(line) }),
      log: () => {},
    });
    const slow = await StreamTestClient.open(app.port);
    try {
      const ingestPort = (await app.durable!.listen()).port;
      slow.subscribe('s', {});
      await eventually(() => slow.state('s').images === 1, 20_000);
      (slow.ws as unknown as { _socket: Socket })._socket.pause();
      const s = app.engine.store;
      const ids: string[] = [];
      for (let slot = 0; slot < s.size && ids.length < 400; slot++) if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE) ids.push(app.engine.idOf(slot));
      let round = 0;
      const dropped = await eventually(async () => {
        round++;
        // small deltas (20 rows): the socket pushes back well before the cap, so later
        // deltas are held back (conflated) until a catch-up passes the cap
        const batch = ids.slice((round * 20) % ids.length, ((round * 20) % ids.length) + 20);
        const reply = await postBatch(ingestPort, TOKEN, ndjson(batch.map((id, i) => ({ op: 'price', id, priceAmerican: -101 - ((round + i) % 80) }))));
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        return app.stream.stats().slowConsumerDrops > 0;
      }, 60_000, 5);
      assert.ok(dropped, 'the client that does not read was dropped');
      const metrics = parsePrometheus((await httpRequest(ingestPort, '/metrics')).body.toString());
      assert.equal(metrics.value('odds_stream_slow_consumer_drops_total'), 1);
      assert.ok((metrics.value('odds_stream_conflated_deltas_total', { reason: 'backpressure' }) ?? 0) > 0, 'deltas held back while the client pushed back');
      assert.equal(metrics.value('odds_stream_subscribers'), 0);
      const drops = lines.map((line) => JSON.parse(line)).filter((e) => e.event === 'stream_slow_consumer');
      assert.equal(drops.length, 1);
      assert.equal(drops[0].capBytes, 65536);
      assert.ok(drops[0].queuedBytes > 0);
      assert.doesNotMatch(lines.join('\n'), new RegExp(TOKEN));
    } finally {
      slow.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `npm start` as a child process: its JSON log lines (stdout) and progress (stderr). */
function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'service/main.ts'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const events = () =>
    out.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>);
  return { child, out, exited, events };
}

describe('npm start: the ingest port serves the probes and metrics; JSON log lines', () => {
  it('logs start, the ingest port before the load, ready and shutdown as JSON; progress on stderr; a restart restores and reports it; no secret logged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'odds-main-ops-'));
    const env = { PORT: '0', HOST: '127.0.0.1', INGEST_PORT: '0', DATA_DIR: join(dir, 'data'), BOARD: 'small', NOW: '2026-11-21T12:00:00Z', SIM_RATE: '100', CURSOR_SECRET: 'very-secret-value-1', INGEST_TOKEN: TOKEN };
    let main = startMain(env);
    const scrapeAt = async (port: number) => parsePrometheus((await httpRequest(port, '/metrics')).body.toString());
    try {
      const { out, events } = main;
      assert.ok(await eventually(() => events().some((e) => e.event === 'ready'), 60_000, 50), `no ready line: ${out.stdout}${out.stderr}`);
      const ingestPort = events().find((e) => e.event === 'ingest_listening')!.port as number;
      const ready = events().find((e) => e.event === 'ready')!;
      assert.equal(ready.ingestPort, ingestPort);
      assert.equal((await httpRequest(ingestPort, '/readyz')).status, 200);
      assert.equal((await httpRequest(ready.port as number, '/readyz')).status, 200);
      assert.ok(((await scrapeAt(ingestPort)).value('odds_live_rows') ?? 0) > 1000);
      // the simulator writes through the write path: its batches are counted as in-process ones
      assert.ok(await eventually(async () => ((await scrapeAt(ingestPort)).value('odds_ingest_batches_total', { via: 'process', outcome: 'ok' }) ?? 0) > 0, 20_000), 'simulated batches counted');
      main.child.kill('SIGTERM');
      assert.equal(await main.exited, 0, out.stdout + out.stderr);
      const names = events().map((e) => e.event);
      for (const name of ['start', 'ingest_listening', 'ready', 'shutdown', 'stopped']) assert.ok(names.includes(name), `${name} in ${names.join()}`);
      assert.ok(names.indexOf('ingest_listening') < names.indexOf('ready'));
      for (const e of events()) assert.equal(typeof e.time, 'string');
      assert.doesNotMatch(out.stdout + out.stderr, /very-secret/);
      assert.match(out.stderr, /generating the small board: done/);
      assert.match(out.stderr, /loading odds rows: done, [\d,]+ rows/);

      // the restart reads the checkpoint SIGTERM wrote: its progress, and the restore in /metrics
      main = startMain(env);
      assert.ok(await eventually(() => main.events().some((e) => e.event === 'ready'), 60_000, 50), `no ready line: ${main.out.stdout}${main.out.stderr}`);
      assert.equal(main.events().find((e) => e.event === 'ready')!.mode, 'restored');
      assert.match(main.out.stderr, /loading checkpoint checkpoint-\d{16}\.ckpt: done, [\d,]+ rows/);
      assert.doesNotMatch(main.out.stderr, /generating the small board/);
      const restored = await scrapeAt(main.events().find((e) => e.event === 'ingest_listening')!.port as number);
      assert.equal(restored.types.get('odds_restore_duration_seconds'), 'gauge');
      assert.equal(restored.value('odds_restore_replayed_records'), 0, 'SIGTERM checkpointed: nothing to replay');
      assert.ok((restored.value('odds_checkpoint_age_seconds') ?? -1) >= 0, 'the age of the checkpoint the restore read');
      main.child.kill('SIGTERM');
      assert.equal(await main.exited, 0, main.out.stdout + main.out.stderr);
      assert.doesNotMatch(main.out.stdout + main.out.stderr, /very-secret/);
    } finally {
      if (main.child.exitCode === null) main.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
