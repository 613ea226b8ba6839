// What a client sees of freshness and what it costs the service per connection (issue 28).
//
// Snapshot staleness (BOARD, default large; the simulator at BENCH_CLIENTS_RATE, default
// 1,000 updates/s; SNAPSHOT_MAX_AGE_MS 2,000 as the service runs it): each poll is the
// route's call (BoardSnapshot.fresh: the newest version, or the next one when the newest
// misses a change older than the bound) and its staleness is the age of the oldest
// change the answered version does not show, at the moment it is answered; the wait is
// how long the poll waited for a fresh version (0 when answered at once). The simulator
// starts with the board, before either variant is built, so the first poll of each is
// the first poll after a start (it waits for its variant's first build, made while the
// board moves). Then three patterns: polled every 100 ms (BENCH_CLIENTS_POLL_SECONDS,
// default 20 s), every 15 s (BENCH_CLIENTS_SLOW_POLLS polls, default 4), and once after
// an idle spell with no poll (BENCH_CLIENTS_IDLE_SECONDS, default 600), for the variant
// without history and the one with history (both refreshed whatever the polls, the one
// with history kept for the whole run). For each window, what the refreshes cost: per
// variant the versions published, main-thread render ms and pieces re-made per version;
// the main thread's CPU per second (the simulator's ticks included) and the other
// threads' (compression and V8's helper threads, both variants together) per second and
// per version. BENCH_CLIENTS_PIECE_KIB and BENCH_CLIENTS_HISTORY_PIECE_KIB set the piece
// sizes (BoardSnapshotOptions.pieceBytes, historyPieceBytes; the service's defaults
// otherwise). BENCH_CLIENTS_STALENESS_ONLY=1 leaves out the memory part,
// BENCH_CLIENTS_MEMORY_ONLY=1 the staleness part.
//
// Memory per push-stream connection: the service as a child process (small board, no
// ticks, connectionMemoryChild.ts) measuring its own heap after full collections
// (v8.getHeapStatistics, process.memoryUsage().external) before and after
// BENCH_CLIENTS_CONNECTIONS (default 1,000) idle WebSocket connections, then after 10
// subscriptions on each of 100 of them (BENCH_CLIENTS_SUBSCRIPTIONS, default 100: one
// event's market each, so the images are small); resident memory beside it. TRANSPORT selects the transport as for the service.
import { spawn } from 'node:child_process';
import { WebSocket } from 'ws';
import type { Clock } from '../engine/clock.ts';
import { OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { BoardSize } from '../engine/model.ts';
import { Simulator } from '../fixtures/simulator.ts';
import { BoardSnapshot, type BoardSnapshotOptions, type SnapshotBody, type SnapshotStats } from '../engine/snapshot/boardSnapshot.ts';
import { mainThreadCpuMs } from './snapshot.bench.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import type { HeapMeasure } from './connectionMemoryChild.ts';

type Out = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const MAX_AGE_MS = 2000;
const env = (name: string, fallback: number): number => (process.env[name] === undefined ? fallback : Number(process.env[name]));
const round = (value: number, digits = 1): number => Number(value.toFixed(digits));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

interface Poll {
  staleness: number;
  wait: number;
}

/** One poll as the route makes it. */
async function poll(snapshot: BoardSnapshot, withHistory: boolean): Promise<Poll> {
  const started = performance.now();
  let answer: SnapshotBody | Promise<SnapshotBody> | null = snapshot.fresh(withHistory);
  if (answer === null) answer = snapshot.whenCurrent(withHistory);
  if (answer instanceof Promise) await answer;
  return { staleness: snapshot.ageMs(withHistory), wait: performance.now() - started };
}

function report(out: Out, key: string, polls: Poll[]): void {
  const staleness = polls.map((p) => p.staleness);
  const waits = polls.map((p) => p.wait);
  out[`${key}: staleness p50 / p99 / max ms`] = `${round(percentile(staleness, 50))} / ${round(percentile(staleness, 99))} / ${round(Math.max(...staleness))}`;
  out[`${key}: wait p50 / p99 / max ms (${polls.length} polls)`] = `${round(percentile(waits, 50))} / ${round(percentile(waits, 99))} / ${round(Math.max(...waits))}`;
}

/** A point to measure the refreshes' cost from (costOf). */
interface CostMark {
  at: number;
  mainMs: number;
  processMs: number;
  stats: SnapshotStats[];
}

function costMark(snapshot: BoardSnapshot): CostMark {
  const cpu = process.cpuUsage();
  return { at: performance.now(), mainMs: mainThreadCpuMs(), processMs: (cpu.user + cpu.system) / 1000, stats: snapshot.stats() };
}

/** What the refreshes cost between two marks (see the header). */
function reportCost(out: Out, key: string, before: CostMark, after: CostMark): void {
  const seconds = (after.at - before.at) / 1000;
  const mainMs = after.mainMs - before.mainMs;
  const otherMs = after.processMs - before.processMs - mainMs;
  let versions = 0;
  const parts: string[] = [];
  for (const variant of ['plain', 'history'] as const) {
    const a = after.stats.find((s) => s.variant === variant);
    const b = before.stats.find((s) => s.variant === variant);
    if (a === undefined || b === undefined) continue;
    const n = a.refreshes - b.refreshes;
    const each = Math.max(1, n);
    versions += n;
    // momentsHeld: absent in builds before the moment waited for the compression threads
    const held = (a.momentsHeld ?? 0) - (b.momentsHeld ?? 0);
    parts.push(
      `${variant} ${n} versions (${round(n / seconds, 2)}/s), each ${round((a.refreshMs - b.refreshMs) / each)} ms main-thread render, ${round((a.rendered.piecesRendered - b.rendered.piecesRendered) / each)} pieces / ${round((a.rendered.bytesRendered - b.rendered.bytesRendered) / 1048576 / each)} MB raw re-made; moments held for compression ${held}`,
    );
  }
  out[`${key}: refreshes`] = parts.join('; ');
  out[`${key}: CPU ms per s, main thread (simulator included) / other threads (compression, V8 helpers); other threads ms per version`] = `${round(mainMs / seconds)} / ${round(otherMs / seconds)}; ${round(otherMs / Math.max(1, versions))}`;
}

async function staleness(out: Out): Promise<void> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const rate = env('BENCH_CLIENTS_RATE', 1000);
  // the board's clock follows the wall clock from NOW (as a running service's does): rows cool and the 30 s watch lapses in real time
  const started = Date.now();
  const clock: Clock = { now: () => NOW + (Date.now() - started) };
  const engine = new OddsEngine(clock);
  loadBoard(engine, generateBoard({ size, seed: 42, now: NOW }));
  const options: BoardSnapshotOptions = { clock, maxAgeMs: MAX_AGE_MS, historyIdleMs: Infinity };
  if (process.env.BENCH_CLIENTS_PIECE_KIB !== undefined) options.pieceBytes = env('BENCH_CLIENTS_PIECE_KIB', 128) * 1024;
  if (process.env.BENCH_CLIENTS_HISTORY_PIECE_KIB !== undefined) options.historyPieceBytes = env('BENCH_CLIENTS_HISTORY_PIECE_KIB', 32) * 1024;
  const snapshot = new BoardSnapshot(engine, options);
  const sim = new Simulator(engine, clock, { ratePerSecond: rate, seed: 28 });
  const label = `${size} board, ${rate} updates/s`;
  out[`${label}: piece bytes plain / with history`] = `${options.pieceBytes ?? 'default'} / ${options.historyPieceBytes ?? 'default'}`;
  sim.start();
  try {
    // The first poll after a start: each variant's first build, made while the board moves.
    for (const withHistory of [false, true]) {
      const before = costMark(snapshot);
      const key = `${label}, ${withHistory ? 'with history' : 'plain'}, first poll (its first build under the ticks)`;
      report(out, key, [await poll(snapshot, withHistory)]);
      reportCost(out, key, before, costMark(snapshot));
    }
    for (const withHistory of [false, true]) {
      const variant = withHistory ? 'with history' : 'plain';
      const fast: Poll[] = [];
      let before = costMark(snapshot);
      const until = performance.now() + env('BENCH_CLIENTS_POLL_SECONDS', 20) * 1000;
      while (performance.now() < until) {
        fast.push(await poll(snapshot, withHistory));
        await sleep(100);
      }
      report(out, `${label}, ${variant}, polled every 100 ms`, fast);
      reportCost(out, `${label}, ${variant}, polled every 100 ms`, before, costMark(snapshot));
      const slow: Poll[] = [];
      before = costMark(snapshot);
      for (let i = 0; i < env('BENCH_CLIENTS_SLOW_POLLS', 4); i++) {
        await sleep(15_000);
        slow.push(await poll(snapshot, withHistory));
      }
      report(out, `${label}, ${variant}, polled every 15 s`, slow);
      reportCost(out, `${label}, ${variant}, polled every 15 s`, before, costMark(snapshot));
    }
    const idleSeconds = env('BENCH_CLIENTS_IDLE_SECONDS', 600);
    const before = costMark(snapshot);
    await sleep(idleSeconds * 1000);
    reportCost(out, `${label}, ${idleSeconds} s without a poll`, before, costMark(snapshot));
    for (const withHistory of [false, true]) report(out, `${label}, ${withHistory ? 'with history' : 'plain'}, once after ${idleSeconds} s without a poll`, [await poll(snapshot, withHistory)]);
  } finally {
    sim.stop();
    snapshot.close();
  }
}

interface MemoryChild {
  port: number;
  measure(): Promise<HeapMeasure>;
  close(): Promise<void>;
}

/** The service in a child process that measures its own heap (connectionMemoryChild.ts). */
function startMemoryChild(): Promise<MemoryChild> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/connectionMemoryChild.ts'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], env: process.env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`the memory child exited (${code}) before listening`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /port (\d+)/.exec(out);
      if (port === null) return;
      resolve({
        port: Number(port[1]),
        measure: () =>
          new Promise((answer) => {
            child.once('message', (message) => answer(message as HeapMeasure));
            child.send('measure');
          }),
        close: async () => {
          child.disconnect();
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        },
      });
    });
  });
}

function openSocket(port: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/stream`, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const kib = (bytes: number): number => round(bytes / 1024, 2);

/**
 * Memory per push-stream connection and per subscription, from the service's own heap:
 * V8's used heap after full collections (v8.getHeapStatistics) and the memory outside
 * it that JavaScript objects hold (process.memoryUsage().external), measured before and
 * after BENCH_CLIENTS_CONNECTIONS idle WebSocket connections, then after
 * BENCH_CLIENTS_SUBSCRIPTIONS subscriptions on each of 100 of them. Resident memory moves
 * by whole pages and allocator arenas, so per connection it read as noise; it is
 * reported alongside for comparison. Native memory of the transport (uWS's own
 * buffers) is in neither heap figure: the WebSocket connections are served by node:http
 * on both transports (the uWS front hands handshakes to it).
 */
async function connectionMemory(out: Out): Promise<void> {
  const child = await startMemoryChild();
  const sockets: WebSocket[] = [];
  try {
    const odds = (await (await fetch(`http://127.0.0.1:${child.port}/api/v1/odds?limit=1000`)).json()) as { data: { eventId: string }[] };
    const events = [...new Set(odds.data.map((row) => row.eventId))];
    const eventId = events[0]!;
    // one connection and one subscription first, so that what is made once per process is not counted per connection
    const warm = await openSocket(child.port);
    warm.send(JSON.stringify({ op: 'subscribe', id: 'warm', filter: { eventId: [eventId] } }));
    await sleep(1000);
    const base = await child.measure();
    const n = env('BENCH_CLIENTS_CONNECTIONS', 1000);
    for (let i = 0; i < n; i++) sockets.push(await openSocket(child.port));
    await sleep(1000);
    const connected = await child.measure();
    out[`transport`] = connected.transport;
    out[`memory per idle stream connection (${n}): heap / external / resident KiB`] = `${kib((connected.heapUsed - base.heapUsed) / n)} / ${kib((connected.external - base.external) / n)} / ${kib((connected.rss - base.rss) / n)}`;
    let images = 0;
    const subscribers = sockets.slice(0, 100);
    const perSocket = env('BENCH_CLIENTS_SUBSCRIPTIONS', 100);
    for (const ws of subscribers) ws.on('message', (data: Buffer) => (images += data.toString().includes('"segment":"end"') ? 1 : 0));
    // filters differ (events and markets taken in turn), as many clients' would: equal filters share one compiled matcher
    const markets = ['moneyline', 'spread', 'total'];
    for (const [i, ws] of subscribers.entries()) {
      for (let k = 0; k < perSocket; k++) {
        const filter = { eventId: [events[(i * perSocket + k) % events.length]!], market: [markets[k % markets.length]!] };
        ws.send(JSON.stringify({ op: 'subscribe', id: `s${i}-${k}`, filter }));
      }
    }
    const subscriptions = subscribers.length * perSocket;
    const deadline = Date.now() + 60_000;
    while (images < subscriptions && Date.now() < deadline) await sleep(50);
    await sleep(1000);
    const subscribed = await child.measure();
    out[`memory per subscription (${subscriptions} on one event's market each, ${images} images received): heap / external / resident KiB`] = `${kib((subscribed.heapUsed - connected.heapUsed) / subscriptions)} / ${kib((subscribed.external - connected.external) / subscriptions)} / ${kib((subscribed.rss - connected.rss) / subscriptions)}`;
    warm.terminate();
  } finally {
    for (const ws of sockets) ws.terminate();
    await child.close();
  }
}

export async function benchClients(): Promise<Out> {
  const out: Out = {};
  if (process.env.BENCH_CLIENTS_MEMORY_ONLY !== '1') await staleness(out);
  if (process.env.BENCH_CLIENTS_STALENESS_ONLY !== '1') await connectionMemory(out);
  return out;
}
