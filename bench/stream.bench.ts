// The push stream (`npm run bench -- stream`).
//
// What it measures: change-to-client latency, from the moment engine.apply starts on a
// batch to the moment a subscriber's process has read the whole WebSocket frame that
// carries it. Both ends read process.hrtime, which on Linux is CLOCK_MONOTONIC, one
// clock for every process of the machine, so no clock offset enters the numbers. The
// clients run in a child process pinned to cpu 1 (taskset, when present), the server to
// cpu 0; the client is a raw-socket WebSocket reader (bench/streamBenchClient.ts) that
// only looks at each frame's first bytes, so the client library is not what is timed.
//
// The feed: a live market moves a few prices at a time, all the time, not one large
// batch a second; the simulator here applies BENCH_STREAM_BATCH changes (default 10)
// every BENCH_STREAM_INTERVAL_MS (default 10), 1,000 updates/s, each batch one
// engine.apply, so each delta carries the rows of one small batch (a few KB). The batch
// generation is outside the timed span. BENCH_STREAM_BATCH=1000
// BENCH_STREAM_INTERVAL_MS=1000 gives the other shape, one large batch a second, whose
// latency then includes rendering and writing a large frame.
//
// In order: the server's memory with BENCH_STREAM_IDLE (default 10,000) idle
// subscribers, on the fresh process; the hub's share alone, in process with sinks that
// take everything, at BENCH_STREAM_HUB_SUBSCRIBERS (default 1,000; 0 skips it); then,
// for each subscriber count (BENCH_STREAM_SUBSCRIBERS, default 1,100,1000; subscribers
// past 1 each follow one league, round robin), end to end p50/p99/max; the server's
// part alone (apply start to the last frame handed to the kernel, per batch: apply,
// every listener, filter, serialize, send); deltas measured; messages/s and bytes/s
// delivered; CPU on both sides (a client near 100 % limits the numbers itself; the
// server's CPU per frame counts everything the process does, background work included);
// the server's event-loop delay p99 and garbage-collection pauses on both sides; and how
// many subscribers the hub found pushing back.
// BOARD (default small) picks the board; BENCH_STREAM_SECONDS (default 5) each run's length.
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import type { SubscribeRequest } from '../engine/stream/streamHub.ts';
import { parseClientMessage } from '../http/routes/streamParams.ts';
import { startApp, type App } from '../service/app.ts';
import { BenchSocket, frameClk, frameStartsWith, monotonicMs, type FrameSeen } from './streamBenchClient.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 5);
const BATCH = Number(process.env.BENCH_STREAM_BATCH ?? 10);
const INTERVAL_MS = Number(process.env.BENCH_STREAM_INTERVAL_MS ?? 10);
const SUBSCRIBERS = (process.env.BENCH_STREAM_SUBSCRIBERS ?? '1,100,1000').split(',').map(Number);
const IDLE = Number(process.env.BENCH_STREAM_IDLE ?? 10_000);
const HUB_SUBSCRIBERS = Number(process.env.BENCH_STREAM_HUB_SUBSCRIBERS ?? 1000);

interface ChildReport {
  /** Each delta frame's receive time minus its batch's apply start (ms), sorted; frames of batches not listed are left out. */
  latencies: number[];
  messages: number;
  bytes: number;
  /** CPU milliseconds the client process used since the last report. */
  cpuMs: number;
  /** Garbage-collection pauses of the client process since the last report: count and total ms. */
  gcCount: number;
  gcMs: number;
}

/** Counts garbage-collection pauses (count and milliseconds) from now on. */
function watchGc(): { read: () => { count: number; ms: number }; reset: () => void; stop: () => void } {
  let count = 0;
  let ms = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      count++;
      ms += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    read: () => ({ count, ms }),
    reset: () => {
      count = 0;
      ms = 0;
    },
    stop: () => observer.disconnect(),
  };
}

type ChildCommand =
  | { op: 'connect'; port: number; count: number; filters: Record<string, unknown>[] }
  /** applied: clk -> when the apply that issued it started (monotonicMs). */
  | { op: 'report'; applied: Record<string, number> }
  | { op: 'exit' };

/**
 * Delta receive times by clk, in typed arrays: the client keeps hundreds of thousands of
 * them, and arrays of boxed numbers would put its garbage collector into the numbers.
 */
class Receipts {
  private readonly clkIds = new Map<string, number>();
  private readonly clks: string[] = [];
  private ids = new Int32Array(1 << 16);
  private times = new Float64Array(1 << 16);
  private count = 0;

  add(clk: string, at: number): void {
    let id = this.clkIds.get(clk);
    if (id === undefined) {
      id = this.clks.length;
      this.clkIds.set(clk, id);
      this.clks.push(clk);
    }
    if (this.count === this.ids.length) {
      const ids = new Int32Array(this.count * 2);
      ids.set(this.ids);
      this.ids = ids;
      const times = new Float64Array(this.count * 2);
      times.set(this.times);
      this.times = times;
    }
    this.ids[this.count] = id;
    this.times[this.count++] = at;
  }

  latencies(applied: Record<string, number>): number[] {
    const startOf = this.clks.map((clk) => applied[clk] ?? NaN);
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const start = startOf[this.ids[i]!]!;
      if (!Number.isNaN(start)) out.push(this.times[i]! - start);
    }
    return out.sort((a, b) => a - b);
  }
}

// ---- the client process -------------------------------------------------------------

async function clientProcess(): Promise<void> {
  const sockets: BenchSocket[] = [];
  let received = new Receipts();
  let messages = 0;
  let bytes = 0;
  let cpu = process.cpuUsage();
  const gc = watchGc();
  const DELTA = Buffer.from('{"op":"delta"');
  const IMAGE = Buffer.from('{"op":"image"');
  process.on('message', async (command: ChildCommand) => {
    if (command.op === 'connect') {
      for (let start = 0; start < command.count; start += 200) {
        const opened: Promise<void>[] = [];
        for (let i = start; i < Math.min(command.count, start + 200); i++) {
          opened.push(
            new Promise((resolve, reject) => {
              let imaged = false;
              const onFrame = (frame: FrameSeen) => {
                messages++;
                bytes += frame.length;
                if (frameStartsWith(frame, DELTA)) {
                  const clk = frameClk(frame);
                  if (clk !== null) received.add(clk, frame.at);
                } else if (!imaged && frameStartsWith(frame, IMAGE) && frame.head.toString('latin1', 0, frame.headLength).includes('"segment":"end"')) {
                  imaged = true;
                  resolve();
                }
              };
              BenchSocket.open(command.port, '/api/v1/stream', onFrame).then(
                (socket) => {
                  sockets.push(socket);
                  socket.sendText(JSON.stringify({ op: 'subscribe', id: 's', filter: command.filters[i % command.filters.length], heartbeatMs: 30_000 }));
                },
                reject,
              );
            }),
          );
        }
        await Promise.all(opened);
      }
      received = new Receipts();
      messages = 0;
      bytes = 0;
      // the garbage of connecting is collected now, not during the measured run
      (globalThis as { gc?: () => void }).gc?.();
      cpu = process.cpuUsage();
      gc.reset();
      process.send!({ op: 'connected' });
    } else if (command.op === 'report') {
      const used = process.cpuUsage(cpu);
      const pauses = gc.read();
      const latencies = received.latencies(command.applied);
      process.send!({ op: 'report', report: { latencies, messages, bytes, cpuMs: (used.user + used.system) / 1000, gcCount: pauses.count, gcMs: pauses.ms } satisfies ChildReport });
      received = new Receipts();
      messages = 0;
      bytes = 0;
      cpu = process.cpuUsage();
      gc.reset();
    } else {
      for (const socket of sockets) socket.destroy();
      process.exit(0);
    }
  });
}

// ---- the server side -----------------------------------------------------------------

function pin(pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function startClient(): { send: (command: ChildCommand) => void; next: (op: string) => Promise<any>; pinned: boolean } {
  const child = fork(fileURLToPath(import.meta.url), ['--stream-client'], { execArgv: ['--expose-gc', '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pinned = pin(child.pid!, 1);
  return {
    send: (command) => child.send(command),
    next: (op) =>
      new Promise((resolve) => {
        const on = (message: any) => {
          if (message.op !== op) return;
          child.off('message', on);
          resolve(message);
        };
        child.on('message', on);
      }),
    pinned,
  };
}

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

async function latencyRun(app: App, clock: ManualClock, subscribers: number, filters: Record<string, unknown>[]): Promise<Record<string, number>> {
  const client = startClient();
  client.send({ op: 'connect', port: app.port, count: subscribers, filters });
  await client.next('connected');
  const applied = new Map<string, number>();
  const serverSpans: number[] = [];
  let backedUpMax = 0;
  const statsBefore = app.stream.stats();
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const gc = watchGc();
  const cpuBefore = process.cpuUsage();
  const started = monotonicMs();
  const deadline = started + SECONDS * 1000;
  let next = started;
  while (monotonicMs() < deadline) {
    next += INTERVAL_MS;
    clock.advance(INTERVAL_MS);
    const batch = app.simulator.nextBatch(BATCH);
    const at = monotonicMs();
    app.engine.apply(batch);
    serverSpans.push(monotonicMs() - at);
    applied.set(app.stream.currentClk(), at);
    if (serverSpans.length % 10 === 0) backedUpMax = Math.max(backedUpMax, app.stream.stats().backedUpClients);
    const wait = next - monotonicMs();
    await sleep(wait > 0 ? wait : 0);
  }
  await sleep(500);
  const elapsed = (monotonicMs() - started) / 1000;
  const serverCpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  const serverGc = gc.read();
  gc.stop();
  const statsAfter = app.stream.stats();
  client.send({ op: 'report', applied: Object.fromEntries(applied) });
  const { report } = (await client.next('report')) as { report: ChildReport };
  client.send({ op: 'exit' });
  const latencies = report.latencies;
  serverSpans.sort((a, b) => a - b);
  const n = `${subscribers} subscribers:`;
  return {
    [`${n} latency p50 ms`]: percentile(latencies, 50),
    [`${n} latency p99 ms`]: percentile(latencies, 99),
    [`${n} latency max ms`]: percentile(latencies, 100),
    [`${n} server apply-to-sent p50 ms`]: percentile(serverSpans, 50),
    [`${n} server apply-to-sent p99 ms`]: percentile(serverSpans, 99),
    [`${n} deltas measured`]: latencies.length,
    [`${n} messages/s`]: Math.round(report.messages / elapsed),
    [`${n} bytes/s`]: Math.round(report.bytes / elapsed),
    [`${n} server cpu %`]: Math.round((serverCpu.user + serverCpu.system) / 10 / (elapsed * 1000)),
    [`${n} client cpu %`]: Math.round(report.cpuMs / 10 / elapsed),
    // CPU time, unlike the wall-clock spans, hardly moves when other processes share the machine
    [`${n} server cpu µs per frame delivered`]: report.messages === 0 ? NaN : round(((serverCpu.user + serverCpu.system) / report.messages)),
    // The split: system time is the kernel's (one sendto per frame per socket; on loopback it
    // also runs the receiving side's TCP work), user time is JavaScript, uWS and V8. The
    // kernel's share times the frames of one batch is the floor of a batch's send span,
    // whatever the JavaScript does: the last subscriber's frame cannot leave earlier.
    [`${n} server kernel (system) µs per frame`]: report.messages === 0 ? NaN : round(serverCpu.system / report.messages),
    [`${n} server user µs per frame`]: report.messages === 0 ? NaN : round(serverCpu.user / report.messages),
    [`${n} frames per batch`]: Math.round(report.messages / serverSpans.length),
    [`${n} kernel floor ms per batch (system µs/frame x frames)`]: round(serverCpu.system / serverSpans.length / 1000),
    [`${n} server event-loop delay p99 ms`]: round(loopDelay.percentile(99) / 1e6),
    [`${n} server gc pauses (count)`]: serverGc.count,
    [`${n} server gc pauses (total ms)`]: round(serverGc.ms),
    [`${n} client gc pauses (count)`]: report.gcCount,
    [`${n} client gc pauses (total ms)`]: round(report.gcMs),
    [`${n} subscribers pushing back (max)`]: backedUpMax,
    [`${n} slow consumers dropped`]: statsAfter.slowConsumerDrops - statsBefore.slowConsumerDrops,
    [`${n} client pinned to cpu 1`]: client.pinned ? 1 : 0,
  };
}

/**
 * The hub's own share, without sockets: BENCH_STREAM_HUB_SUBSCRIBERS subscriptions (one
 * league each, round robin: few groups, many subscribers each; or one event each: as
 * many groups as subscriptions, most of them untouched by a batch) whose sinks take
 * every message, and the time of each apply
 * (engine, every listener, index, render, one message per distinct envelope, the hand-off
 * to each sink). What the real runs add on top is the kernel's write per socket and the
 * client.
 */
async function hubInProcess(app: App, clock: ManualClock, count: number, by: 'league' | 'event'): Promise<Record<string, number>> {
  let delivered = 0;
  let imaged = 0;
  const clients = [];
  const values = by === 'league' ? app.engine.knownLeagues() : app.engine.eventIdsWithLiveRows();
  for (let i = 0; i < count; i++) {
    const client = app.stream.connect({
      send: (message) => {
        delivered++;
        if (message.op === 'image' && message.resumeClk !== null) imaged++;
        return 'sent';
      },
      bufferedAmount: () => 0,
      close: () => {},
    });
    const filter = by === 'league' ? { league: [values[i % values.length]!] } : { eventId: [values[i % values.length]!] };
    client.subscribe(parseSubscribe({ op: 'subscribe', id: 's', filter, heartbeatMs: 30_000 }));
    clients.push(client);
  }
  // An image of more than one segment goes out one segment per turn of the event loop:
  // every subscription has its whole image before the timed applies.
  while (imaged < count) await sleep(1);
  const spans: number[] = [];
  delivered = 0;
  const cpu = process.cpuUsage();
  for (let i = 0; i < 500; i++) {
    clock.advance(INTERVAL_MS);
    const batch = app.simulator.nextBatch(BATCH);
    const at = monotonicMs();
    app.engine.apply(batch);
    spans.push(monotonicMs() - at);
  }
  const used = process.cpuUsage(cpu);
  for (const client of clients) client.disconnected();
  spans.sort((a, b) => a - b);
  const n = `hub in process, ${count} subscriptions by ${by}:`;
  return {
    [`${n} apply p50 ms`]: percentile(spans, 50),
    [`${n} apply p99 ms`]: percentile(spans, 99),
    [`${n} messages per apply`]: Math.round(delivered / 500),
    [`${n} cpu µs per message`]: delivered === 0 ? NaN : round((used.user + used.system) / delivered),
  };
}

function parseSubscribe(message: Record<string, unknown>): SubscribeRequest {
  const parsed = parseClientMessage(JSON.stringify(message));
  if (parsed.op !== 'subscribe') throw new Error('not a subscribe');
  return parsed.request;
}

/** Full collections until the heap stops shrinking, so a difference of two readings is what stayed alive. */
async function settle(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await sleep(100);
  }
  return process.memoryUsage();
}

/**
 * Server memory for `count` idle subscribers (measured first, before the latency runs
 * leave garbage behind). The heap delta is the hub's and the routes' objects; the rss
 * delta adds uWS's native per-socket memory (and moves with what V8 keeps or returns).
 */
async function idleMemory(app: App, count: number): Promise<Record<string, number>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const before = await settle();
  const client = startClient();
  client.send({ op: 'connect', port: app.port, count, filters: [{ eventId: ['no-such-event'] }] });
  await client.next('connected');
  const afterUsage = await settle();
  const subscriptions = app.stream.stats().subscriptions;
  client.send({ op: 'exit' });
  await sleep(500);
  return {
    [`${count} idle subscribers: subscriptions open`]: subscriptions,
    [`${count} idle subscribers: server rss delta MB`]: Math.round((afterUsage.rss - before.rss) / 1e5) / 10,
    [`${count} idle subscribers: server heap delta MB`]: Math.round((afterUsage.heapUsed - before.heapUsed) / 1e5) / 10,
    [`${count} idle subscribers: server external delta MB`]: Math.round((afterUsage.external - before.external) / 1e5) / 10,
    [`${count} idle subscribers: bytes per subscriber (rss)`]: Math.round((afterUsage.rss - before.rss) / count),
    [`${count} idle subscribers: bytes per subscriber (heap)`]: Math.round((afterUsage.heapUsed - before.heapUsed) / count),
    [`${count} idle subscribers: gc exposed (--expose-gc)`]: gc === undefined ? 0 : 1,
  };
}

export async function benchStream(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'small') as BoardSize;
  const clock = new ManualClock(NOW);
  const board = generateBoard({ size, seed: 42, now: NOW });
  const dir = mkdtempSync(join(tmpdir(), 'bench-stream-'));
  // The simulator's timer stays off: the run applies its batches itself, so each apply's start time is known.
  const app = await startApp({ clock, board, dbPath: join(dir, 'odds.db'), port: 0, env: {}, log: () => {}, simulatorRate: 0 });
  const serverPinned = pin(process.pid, 0);
  try {
    const leagues = app.engine.knownLeagues();
    const out: Record<string, number | string> = {
      board: size,
      'feed: changes per apply': BATCH,
      'feed: ms between applies': INTERVAL_MS,
      'server pinned to cpu 0': serverPinned ? 1 : 0,
      transport: app.server.transport,
    };
    if (IDLE > 0) Object.assign(out, await idleMemory(app, IDLE));
    if (HUB_SUBSCRIBERS > 0) {
      Object.assign(out, await hubInProcess(app, clock, HUB_SUBSCRIBERS, 'league'));
      Object.assign(out, await hubInProcess(app, clock, HUB_SUBSCRIBERS, 'event'));
    }
    for (const count of SUBSCRIBERS) {
      const filters = count === 1 ? [{}] : leagues.map((league) => ({ league: [league] }));
      Object.assign(out, await latencyRun(app, clock, count, filters));
    }
    return out;
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--stream-client')) await clientProcess();
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await benchStream();
  for (const [key, value] of Object.entries(result)) process.stdout.write(`${key.padEnd(56)} ${value}\n`);
}
