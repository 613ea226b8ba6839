// Webhook fan-out (BOARD, default small): the real app with a DATA_DIR, 1,000 webhook
// subscriptions on local endpoints (a child process, bench/webhookReceivers.ts, 8
// ports), each watching the same 100 odds rows (line_move, batching window
// ALERTS_BENCH_WINDOW_MS). A feed of 100 changes a second goes through the write path,
// in ALERTS_BENCH_ROUNDS interleaved rounds of two phases of at least
// ALERTS_BENCH_SECONDS each (default 3 rounds of 5 s): on unwatched rows (the same write
// load, no alert events), then on the watched rows (100 alert events/s, 100,000
// deliveries/s asked of the senders; the outbox stores each event once). Before each
// phase without events the fan-out's backlog is let drain, so that phase has none.
//
// The feed is driven by the clock (each wake-up sends the changes due by then), not by
// counting timer callbacks: a setInterval callback that runs late starts the next
// interval late, and on a loaded machine ten callbacks a second came to 8.5.
//
// Measured in each phase: the ingest acknowledgement latency of ALERTS_BENCH_ACKS
// (default 1,000) one-change batches sent one at a time (an ingest client in its own
// process, on rows nobody watches); the main thread's event-loop delay (p99, max); the
// CPU time and the run-queue wait (runnable, waiting for a core) of the main thread,
// the delivery thread and the receivers' process, and the CPU of the process's other
// threads (thread pool, GC helpers), per second, from Linux's schedstat
// (alerts/threadUsage.ts); the alerts' own time on the main thread (the producer's
// ticks); alert events written, deliveries queued and received, and the outbox's WAL
// fdatasyncs per second. Then how long the backlog takes to drain once the feed stops.
//
// Run under --cpu-prof, the phases' start and end (monotonic microseconds, the clock of
// the profile's timestamps) are written to stderr, to cut the profile to a phase.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Alerts } from '../alerts/alerts.ts';
import type { ThreadStats } from '../alerts/threadProtocol.ts';
import { mainThreadUsage, processUsage, type ThreadUsage } from '../alerts/threadUsage.ts';
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
/** One-change batches timed per phase (ALERTS_BENCH_ACKS, default 1,000: a p99 of 300 is the third-worst sample). */
const ACKS = Number(process.env.ALERTS_BENCH_ACKS ?? 1000);
const PROFILING = process.execArgv.some((arg) => arg.startsWith('--cpu-prof'));
/**
 * ALERTS_BENCH_PIN=1: the engine's main thread alone on CPU 0; the delivery thread, the
 * receivers' process (every thread) and the ack-timing client on CPU 1; the process's other
 * threads (libuv's pool, which runs the log's fdatasyncs; V8's helpers) stay free. It tells
 * whether the ack p99 rises under the fan-out because the fan-out's work shares the main
 * thread's core, or for another reason. ALERTS_BENCH_PIN_ALL=1 with it puts every thread
 * of the engine's process but the delivery thread on CPU 0.
 */
const PIN = process.env.ALERTS_BENCH_PIN === '1';
const LOAD_CPUS = PIN ? '1' : undefined;

/** Sets the CPU affinity of one thread (a thread id) or of every thread of a process (`allThreads`). */
function pinTo(cpus: string, id: number, allThreads = false): void {
  execFileSync('taskset', [...(allThreads ? ['-a'] : []), '-p', '-c', cpus, String(id)], { stdio: 'ignore' });
}

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Receivers {
  ports: number[];
  /** The receivers' process (its CPU is read from /proc). */
  pid: number;
  stats(): Promise<{ events: number; requests: number }>;
  stop(): void;
}

/** The bench's webhook endpoints: a child process (webhookReceivers.ts) listening on PORTS loopback ports. */
export async function startReceivers(): Promise<Receivers> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./webhookReceivers.ts', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  // a receivers' process that ends (spawned on a starved machine, crashed) fails the bench, not hangs it
  let ended: Error | null = null;
  const endedWaiters = new Set<(error: Error) => void>();
  child.once('exit', (code, signal) => {
    ended = new Error(`the webhook receivers' process ended (code ${code}, signal ${signal})`);
    for (const reject of endedWaiters) reject(ended);
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      if (ended !== null) return reject(ended);
      endedWaiters.add(reject);
      lines.once('line', (line) => {
        endedWaiters.delete(reject);
        resolve(line);
      });
    });
  child.stdin!.write(`${JSON.stringify({ ports: PORTS })}\n`);
  const { ports } = JSON.parse(await next()) as { ports: number[] };
  return {
    ports,
    pid: child.pid!,
    async stats() {
      child.stdin!.write('stats\n');
      return JSON.parse(await next()) as { events: number; requests: number };
    },
    stop: () => child.stdin!.end(),
  };
}

async function ackLatency(port: number, token: string, ids: string[]): Promise<string> {
  const result = await runClient({ kind: 'latency', port, token, ids, batchSize: 1, inFlight: 1, batches: ACKS }, LOAD_CPUS);
  const sorted = result.latencies.sort((a, b) => a - b);
  return `${round(percentile(sorted, 50), 2)} / ${round(percentile(sorted, 99), 2)}`;
}

/** What is counted at a phase's start and end. */
interface Sample {
  at: number;
  main: ThreadUsage | null;
  /** The whole process's CPU (every thread), ms. */
  processMs: number;
  thread: ThreadStats;
  receivers: ThreadUsage | null;
  received: { events: number; requests: number };
  producer: Alerts['producerTime'];
}

async function sample(alerts: Alerts, receivers: Receivers): Promise<Sample> {
  const [thread, received] = await Promise.all([alerts.stats(), receivers.stats()]);
  const cpu = process.cpuUsage();
  return { at: performance.now(), main: mainThreadUsage(), processMs: (cpu.user + cpu.system) / 1000, thread, receivers: processUsage(receivers.pid), received, producer: { ...alerts.producerTime } };
}

/** The differences between two samples, per second of the phase. */
function rates(a: Sample, b: Sample) {
  const s = (b.at - a.at) / 1000;
  const per = (x: number) => round(x / s, 1);
  const usage = (x: ThreadUsage | null, y: ThreadUsage | null) => (x === null || y === null ? 'n/a' : `${per(y.cpuMs - x.cpuMs)} / ${per(y.waitMs - x.waitMs)}`);
  const mainCpu = a.main === null || b.main === null ? 0 : b.main.cpuMs - a.main.cpuMs;
  const threadCpu = a.thread.thread === null || b.thread.thread === null ? 0 : b.thread.thread.cpuMs - a.thread.thread.cpuMs;
  const producerTicks = b.producer.ticks - a.producer.ticks;
  return {
    seconds: round(s, 2),
    main: usage(a.main, b.main),
    thread: usage(a.thread.thread, b.thread.thread),
    receivers: usage(a.receivers, b.receivers),
    others: a.main === null || a.thread.thread === null ? 'n/a' : `${per(b.processMs - a.processMs - mainCpu - threadCpu)}`,
    producer: `${per(b.producer.ms - a.producer.ms)} / ${producerTicks > 0 ? round((b.producer.ms - a.producer.ms) / producerTicks, 3) : 0} / ${round(b.producer.maxMs, 2)}`,
    received: per(b.received.events - a.received.events),
    requests: per(b.received.requests - a.received.requests),
    walSyncs: per(b.thread.walSyncs - a.thread.walSyncs),
  };
}

/** These settings as this process has them (ALERTS_DB_PATH on another disk, ALERTS_THREAD_NICE=0: the bench's variants). */
function passThrough(...names: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  return env;
}

export async function benchAlerts(): Promise<Measurements> {
  const size = (process.env.BOARD ?? 'small') as BoardSize;
  const seconds = Number(process.env.ALERTS_BENCH_SECONDS ?? 5);
  const dir = mkdtempSync(join(tmpdir(), 'alerts-bench-'));
  const out: Measurements = { board: `${size}, seed 42`, endpoints: ENDPOINTS, 'feed (watched row changes/s)': EVENTS_PER_SECOND, 'batching window (ms)': WINDOW_MS, 'acks timed per phase': ACKS };
  const app = await startApp({ clock: new ManualClock(NOW), board: { size, seed: 42, now: NOW }, dataDir: join(dir, 'data'), ingestPort: 0, port: 0, env: { ALERTS_TICK_MS: '100', ALERTS_MAX_IN_FLIGHT: '1024', ...passThrough('ALERTS_THREAD_NICE', 'ALERTS_DB_PATH') }, log: () => {} });
  const receivers = await startReceivers();
  try {
    const ingestPort = (await app.durable!.listen()).port;
    const token = app.durable!.token.token;
    const alerts = app.alerts!;
    const ids = tickIds(app, 2000);
    const watched = ids.slice(0, WATCHED);
    const unwatched = ids.slice(WATCHED);
    out['delivery thread nice value'] = (await alerts.stats()).nice ?? 'not lowered';
    if (PIN) {
      const deliveryTid = (await alerts.stats()).tid;
      if (deliveryTid === null) throw new Error('ALERTS_BENCH_PIN=1: the delivery thread did not report its thread id (Linux only)');
      pinTo('0', process.pid, process.env.ALERTS_BENCH_PIN_ALL === '1');
      pinTo('1', deliveryTid);
      pinTo('1', receivers.pid, true);
      out['pinned'] = 'main thread on CPU 0; delivery thread, receivers and the ack client on CPU 1; other threads free';
    }
    out['alerts.db'] = process.env.ALERTS_DB_PATH === undefined ? 'in DATA_DIR, beside the batch log' : process.env.ALERTS_DB_PATH;
    out['ingest ack p50 / p99 (ms), no subscriptions, no feed'] = await ackLatency(ingestPort, token, unwatched);

    let started = performance.now();
    for (let i = 0; i < ENDPOINTS; i++) {
      const port = receivers.ports[i % PORTS]!;
      const reply = await admin(ingestPort, token, 'POST', '/alerts/v1/subscriptions/create', { url: `http://127.0.0.1:${port}/hook/${i}`, filters: [{ type: 'line_move', oddsIds: watched }], maxBatchEvents: 1000, batchWindowMs: WINDOW_MS });
      if (reply.status !== 200) throw new Error(`creating subscription ${i}: ${JSON.stringify(reply.body)}`);
    }
    out['create 1,000 subscriptions over the admin API (s)'] = round((performance.now() - started) / 1000, 2);

    const ingest = app.durable!.durable.ingest;
    // the batch log's group-commit fdatasyncs as the log times them (the hook the service's metrics use,
    // kept): whether the outbox's own fdatasyncs on the same disk slow the acks' fsyncs
    const batchLog = app.durable!.durable.log;
    const metricsHook = batchLog.onFsync;
    let logFsyncs: number[] = [];
    batchLog.onFsync = (seconds, records) => {
      logFsyncs.push(seconds * 1000);
      metricsHook?.(seconds, records);
    };
    const stats0 = await alerts.stats();
    // the feed: EVENTS_PER_SECOND changes a second, sent every 100 ms as the changes due
    // by the clock (a batch of ~10: one-change batches at 100/s queue behind the log's
    // fsyncs on a slow disk); on the watched rows it makes 100 alert events/s, 100,000
    // deliveries/s; on unwatched rows the same write load makes none. Row k % rows moves
    // at change k, so each row moves once a second and no two moves of a row fall in one
    // producer tick (which would make one event).
    let k = 0;
    let submitted = 0;
    const feedErrors: string[] = [];
    const feedOn = (rows: string[]) => {
      const from = performance.now();
      const first = k;
      const timer = setInterval(() => {
        const due = first + Math.floor(((performance.now() - from) / 1000) * EVENTS_PER_SECOND);
        if (due <= k) return;
        const changes: string[] = [];
        for (; k < due; k++) {
          const price = -105 - ((k * 7) % 60) - (Math.floor(k / WATCHED) % 2);
          changes.push(JSON.stringify({ op: 'price', id: rows[k % rows.length]!, priceAmerican: price }));
        }
        void ingest.submitBody(Buffer.from(`${changes.join('\n')}\n`), 'ndjson').then(
          (result) => (submitted += result.applied),
          (error: unknown) => (feedErrors.push(String(error)), undefined),
        );
      }, 100);
      return () => {
        clearInterval(timer);
        return k - first;
      };
    };
    const quietRows = unwatched.slice(unwatched.length - WATCHED);
    const ackRows = unwatched.slice(0, unwatched.length - WATCHED);
    const monotonicUs = () => process.hrtime.bigint() / 1000n;
    /** One phase: the feed on `rows` while one-change batches time their acks (at least `seconds`); the event-loop delay and the samples meanwhile. */
    async function phase(name: string, rows: string[]) {
      const delay = monitorEventLoopDelay({ resolution: 1 });
      alerts.producerTime.maxMs = 0; // the longest tick of this phase
      const before = await sample(alerts, receivers);
      logFsyncs = [];
      const markStart = monotonicUs();
      delay.enable();
      const stopFeed = feedOn(rows);
      const until = sleep(seconds * 1000);
      const ack = await ackLatency(ingestPort, token, ackRows);
      await until;
      const changes = stopFeed();
      delay.disable();
      const markEnd = monotonicUs();
      const fsyncs = logFsyncs.sort((x, y) => x - y);
      const after = await sample(alerts, receivers);
      await sleep(150); // the last producer tick's events reach the thread
      const late = await alerts.stats();
      if (PROFILING) process.stderr.write(`alerts bench phase ${name} ${markStart} ${markEnd}\n`);
      const feedSeconds = Number(markEnd - markStart) / 1e6;
      return {
        ...rates(before, after),
        ack,
        loop: `${round(delay.percentile(99) / 1e6, 2)} / ${round(delay.max / 1e6, 1)}`,
        logFsync: fsyncs.length === 0 ? 'none' : `${round(percentile(fsyncs, 50), 2)} / ${round(percentile(fsyncs, 99), 2)} (${round(fsyncs.length / feedSeconds, 1)}/s)`,
        feedSeconds,
        changesPerSecond: round(changes / feedSeconds, 1),
        // the events the feed's changes made (the last tick's included), per second of feed
        written: round((late.eventsWritten - before.thread.eventsWritten) / feedSeconds, 1),
        queued: round((late.deliveriesQueued - before.thread.deliveriesQueued) / feedSeconds, 1),
      };
    }
    /** Waits until the endpoints received every delivery queued so far (bounded); returns the seconds it took. */
    async function drained(limitMs: number): Promise<number | string> {
      const from = performance.now();
      const target = (await alerts.stats()).deliveriesQueued - stats0.deliveriesQueued;
      let now = await receivers.stats();
      while (now.events < target && performance.now() - from < limitMs) {
        await sleep(100);
        now = await receivers.stats();
      }
      return now.events >= target ? round((performance.now() - from) / 1000, 2) : `not drained in ${limitMs / 1000} s (${target - now.events} left)`;
    }
    // interleaved: each round the same feed on unwatched rows (no events), then on the watched ones (the fan-out)
    let fanOutSeconds = 0;
    let receivedSeconds = 0;
    const totals = { written: 0, queued: 0, received: 0, requests: 0 };
    for (let r = 1; r <= ROUNDS; r++) {
      const drain = r === 1 ? 0 : await drained(60_000);
      const quiet = await phase(`${r}-without`, quietRows);
      const fan = await phase(`${r}-with`, watched);
      fanOutSeconds += fan.feedSeconds;
      totals.written += fan.written * fan.feedSeconds;
      totals.queued += fan.queued * fan.feedSeconds;
      totals.received += fan.received * fan.seconds;
      totals.requests += fan.requests * fan.seconds;
      receivedSeconds += fan.seconds;
      out[`round ${r}: phase seconds; feed changes/s, without | with`] = `${quiet.seconds}; ${quiet.changesPerSecond} | ${fan.seconds}; ${fan.changesPerSecond}`;
      out[`round ${r}: ingest ack p50 / p99 (ms), without | with`] = `${quiet.ack} | ${fan.ack}`;
      out[`round ${r}: event-loop delay p99 / max (ms), without | with`] = `${quiet.loop} | ${fan.loop}`;
      out[`round ${r}: main thread CPU / run-queue wait (ms per s), without | with`] = `${quiet.main} | ${fan.main}`;
      out[`round ${r}: delivery thread CPU / run-queue wait (ms per s), without | with`] = `${quiet.thread} | ${fan.thread}`;
      out[`round ${r}: receivers' process CPU / run-queue wait (ms per s), without | with`] = `${quiet.receivers} | ${fan.receivers}`;
      out[`round ${r}: the process's other threads, CPU (ms per s), without | with`] = `${quiet.others} | ${fan.others}`;
      out[`round ${r}: alert producer on the main thread (ms per s / ms per tick / longest tick), without | with`] = `${quiet.producer} | ${fan.producer}`;
      out[`round ${r}: alert events written, deliveries queued, received, requests (per s), with`] = `${fan.written}, ${fan.queued}, ${fan.received}, ${fan.requests}`;
      out[`round ${r}: batch log fdatasync p50 / p99 (ms, as the main thread times it: pool and loop waits included), without | with`] = `${quiet.logFsync} | ${fan.logFsync}`;
      out[`round ${r}: outbox WAL fdatasyncs per s, without | with`] = `${quiet.walSyncs} | ${fan.walSyncs}`;
      if (r > 1) out[`round ${r}: backlog drain before the phase without (s)`] = drain;
    }
    out['feed changes applied / batches refused'] = `${submitted} / ${feedErrors.length}${feedErrors.length > 0 ? ` (${feedErrors[0]!.slice(0, 120)})` : ''}`;
    out['alert events written /s (fan-out phases)'] = Math.round(totals.written / fanOutSeconds);
    out['deliveries queued /s (fan-out phases)'] = Math.round(totals.queued / fanOutSeconds);
    out['deliveries received by the endpoints /s (fan-out phases)'] = Math.round(totals.received / receivedSeconds);
    out['webhook requests /s (fan-out phases)'] = Math.round(totals.requests / receivedSeconds);
    // the backlog left when the feed stops, and how long it takes to deliver
    const target = (await alerts.stats()).deliveriesQueued - stats0.deliveriesQueued;
    const atStop = await receivers.stats();
    out['backlog at feed stop (deliveries)'] = target - atStop.events;
    out['drain after the feed stopped (s)'] = await drained(120_000);
    const end = await receivers.stats();
    out['deliveries received / queued (at least once)'] = `${end.events} / ${target}`;
  } finally {
    receivers.stop();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
