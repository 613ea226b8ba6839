// Webhook fan-out (BOARD, default small): the real app with a DATA_DIR, 1,000 webhook
// subscriptions on local endpoints (a child process, bench/webhookReceivers.ts, 8
// ports), each watching the same 100 odds rows (line_move, batching window
// ALERTS_BENCH_WINDOW_MS). A feed of 100 changes a second goes through the write path,
// in ALERTS_BENCH_ROUNDS interleaved rounds of two phases of ALERTS_BENCH_SECONDS each
// (default 3 rounds of 5 s): on unwatched rows (the same write load, no alert events),
// then on the watched rows (100 alert events/s, 100,000 deliveries/s asked of the
// senders; the outbox stores each event once). Measured in each phase: the ingest
// acknowledgement latency of one-change batches (an ingest client in its own process,
// on rows nobody watches) and the main thread's event-loop delay (p99 and max); over the
// fan-out phases: deliveries queued and received per second, webhook requests per
// second; then how long the backlog takes to drain once the feed stops.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { startApp } from '../service/app.ts';
import { admin } from '../fixtures/harness/adminClient.ts';
import { runClient, tickIds } from './ingest.bench.ts';

type Measurements = Record<string, number | string>;
const NOW = Date.parse('2026-11-21T12:00:00Z');
const ENDPOINTS = Number(process.env.ALERTS_BENCH_ENDPOINTS ?? 1000);
const WATCHED = 100;
const EVENTS_PER_SECOND = 100;
const PORTS = 8;
/** Each subscription's batching window (ALERTS_BENCH_WINDOW_MS, default 1000; 0: a request per producer tick). */
const WINDOW_MS = Number(process.env.ALERTS_BENCH_WINDOW_MS ?? 1000);
/** Interleaved rounds of (feed without events, feed with the fan-out) (ALERTS_BENCH_ROUNDS, default 3). */
const ROUNDS = Number(process.env.ALERTS_BENCH_ROUNDS ?? 3);

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export interface Receivers {
  ports: number[];
  stats(): Promise<{ events: number; requests: number }>;
  stop(): void;
}

/** The bench's webhook endpoints: a child process (webhookReceivers.ts) listening on PORTS loopback ports. */
export async function startReceivers(): Promise<Receivers> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./webhookReceivers.ts', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
  child.stdin!.write(`${JSON.stringify({ ports: PORTS })}\n`);
  const { ports } = JSON.parse(await next()) as { ports: number[] };
  return {
    ports,
    async stats() {
      child.stdin!.write('stats\n');
      return JSON.parse(await next()) as { events: number; requests: number };
    },
    stop: () => child.stdin!.end(),
  };
}

async function ackLatency(port: number, token: string, ids: string[]): Promise<string> {
  const result = await runClient({ kind: 'latency', port, token, ids, batchSize: 1, inFlight: 1, batches: 300 });
  const sorted = result.latencies.sort((a, b) => a - b);
  return `${round(percentile(sorted, 50), 2)} / ${round(percentile(sorted, 99), 2)}`;
}

export async function benchAlerts(): Promise<Measurements> {
  const size = (process.env.BOARD ?? 'small') as BoardSize;
  const seconds = Number(process.env.ALERTS_BENCH_SECONDS ?? 5);
  const dir = mkdtempSync(join(tmpdir(), 'alerts-bench-'));
  const out: Measurements = { board: `${size}, seed 42`, endpoints: ENDPOINTS, 'feed (watched row changes/s)': EVENTS_PER_SECOND, 'batching window (ms)': WINDOW_MS };
  const app = await startApp({ clock: new ManualClock(NOW), board: { size, seed: 42, now: NOW }, dataDir: join(dir, 'data'), ingestPort: 0, port: 0, env: { ALERTS_TICK_MS: '100', ALERTS_MAX_IN_FLIGHT: '1024' }, log: () => {} });
  const receivers = await startReceivers();
  try {
    const ingestPort = (await app.durable!.listen()).port;
    const token = app.durable!.token.token;
    const ids = tickIds(app, 2000);
    const watched = ids.slice(0, WATCHED);
    const unwatched = ids.slice(WATCHED);
    out['ingest ack p50 / p99 (ms), no subscriptions, no feed'] = await ackLatency(ingestPort, token, unwatched);

    let started = performance.now();
    for (let i = 0; i < ENDPOINTS; i++) {
      const port = receivers.ports[i % PORTS]!;
      const reply = await admin(ingestPort, token, 'POST', '/alerts/v1/subscriptions/create', { url: `http://127.0.0.1:${port}/hook/${i}`, filters: [{ type: 'line_move', oddsIds: watched }], maxBatchEvents: 1000, batchWindowMs: WINDOW_MS });
      if (reply.status !== 200) throw new Error(`creating subscription ${i}: ${JSON.stringify(reply.body)}`);
    }
    out['create 1,000 subscriptions over the admin API (s)'] = round((performance.now() - started) / 1000, 2);

    const ingest = app.durable!.durable.ingest;
    const stats0 = await app.alerts!.stats();
    // the feed: ten batches a second of ten rows each (one-change batches at 100/s queue
    // behind the log's fsyncs on a slow disk); on the watched rows it makes 100 alert
    // events/s, 100,000 deliveries/s; on unwatched rows the same write load makes none
    let k = 0;
    let submitted = 0;
    const feedErrors: string[] = [];
    const feedOn = (rows: string[]) =>
      setInterval(() => {
        const changes: string[] = [];
        for (let i = 0; i < EVENTS_PER_SECOND / 10; i++, k++) {
          const price = -105 - ((k * 7) % 60) - (Math.floor(k / WATCHED) % 2);
          changes.push(JSON.stringify({ op: 'price', id: rows[k % rows.length]!, priceAmerican: price }));
        }
        void ingest.submitBody(Buffer.from(`${changes.join('\n')}\n`), 'ndjson').then(
          (result) => (submitted += result.applied),
          (error: unknown) => (feedErrors.push(String(error)), undefined),
        );
      }, 100);
    const quietRows = unwatched.slice(unwatched.length - WATCHED);
    const ackRows = unwatched.slice(0, unwatched.length - WATCHED);
    /** One phase: the feed on `rows` for `seconds` while one-change batches time their acks; the main thread's event-loop delay meanwhile. */
    async function phase(rows: string[]): Promise<{ ack: string; loop: string }> {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const feed = feedOn(rows);
      const until = new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const ack = await ackLatency(ingestPort, token, ackRows);
      await until;
      clearInterval(feed);
      delay.disable();
      return { ack, loop: `${round(delay.percentile(99) / 1e6, 2)} / ${round(delay.max / 1e6, 1)}` };
    }
    // interleaved: each round the same feed on unwatched rows (no events), then on the watched ones (the fan-out)
    let fanOutSeconds = 0;
    for (let r = 1; r <= ROUNDS; r++) {
      const quiet = await phase(quietRows);
      const fanStart = performance.now();
      const fan = await phase(watched);
      fanOutSeconds += (performance.now() - fanStart) / 1000;
      out[`round ${r}: ingest ack p50 / p99 (ms), feed without events | with the fan-out`] = `${quiet.ack} | ${fan.ack}`;
      out[`round ${r}: event-loop delay p99 / max (ms), without | with`] = `${quiet.loop} | ${fan.loop}`;
    }
    const alerts = app.alerts!;
    const atStop = await receivers.stats();
    const stats = await alerts.stats();
    out['feed changes applied / batches refused'] = `${submitted} / ${feedErrors.length}${feedErrors.length > 0 ? ` (${feedErrors[0]!.slice(0, 120)})` : ''}`;
    out['alert events written /s (fan-out phases)'] = Math.round((stats.eventsWritten - stats0.eventsWritten) / fanOutSeconds);
    out['deliveries queued /s (fan-out phases)'] = Math.round((stats.deliveriesQueued - stats0.deliveriesQueued) / fanOutSeconds);
    out['deliveries received by the endpoints /s (fan-out phases)'] = Math.round(atStop.events / fanOutSeconds);
    out['webhook requests /s (fan-out phases)'] = Math.round(atStop.requests / fanOutSeconds);
    // the backlog left when the feed stops, and how long it takes to deliver
    await new Promise((resolve) => setTimeout(resolve, 300)); // the last tick's events
    const target = (await alerts.stats()).deliveriesQueued;
    const drainStart = performance.now();
    let now = await receivers.stats();
    while (now.events < target && performance.now() - drainStart < 120_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      now = await receivers.stats();
    }
    out['backlog at feed stop (deliveries)'] = target - atStop.events;
    out['drain after the feed stopped (s)'] = now.events >= target ? round((performance.now() - drainStart) / 1000, 2) : `not drained in 120 s (${target - now.events} left)`;
    out['deliveries received / queued (at least once)'] = `${now.events} / ${target}`;
  } finally {
    receivers.stop();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
