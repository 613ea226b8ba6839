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
// the server's event-loop delay p99 and garbage-collection pauses on both sides; how
// many subscribers the hub found pushing back; and where the batches at the median and
// the slowest 1 % spent their time (before the hub: the engine and every rowChanged; in
// the hub: fan-out and the send loop, per frame; after it: the other listeners; GC
// pauses inside the batch, and how often the scheduler took the cpu away during it).
// Then, unless BENCH_STREAM_REFERENCE=0, the reference floor and a second run of ours,
// interleaved (ours, reference, ours): a bare uWebSockets.js app, same binary, same
// process and cpu, same client, sending prebuilt frames of our mean size to as many
// sockets per batch as our first run did, timed the same way; it prints its p50/p99 and
// the ratio of ours (mean of both runs) to it: what this machine's loopback leaves us.
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
import type { SubscribeRequest } from '../engine/stream/streamSink.ts';
import { parseClientMessage } from '../http/routes/streamParams.ts';
import { startApp, type App } from '../service/app.ts';
import { loadUws } from '../http/transport/loadUws.ts';
import type { us_listen_socket, WebSocket } from 'uws-btc-vision';
import { BenchSocket, frameClk, frameStartsWith, monotonicMs, type FrameSeen } from './streamBenchClient.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 5);
const BATCH = Number(process.env.BENCH_STREAM_BATCH ?? 10);
const INTERVAL_MS = Number(process.env.BENCH_STREAM_INTERVAL_MS ?? 10);
const SUBSCRIBERS = (process.env.BENCH_STREAM_SUBSCRIBERS ?? '1,100,1000').split(',').map(Number);
const IDLE = Number(process.env.BENCH_STREAM_IDLE ?? 10_000);
const HUB_SUBSCRIBERS = Number(process.env.BENCH_STREAM_HUB_SUBSCRIBERS ?? 1000);
/** BENCH_STREAM_REFERENCE=0 skips the bare-uWS reference and the second run of ours. */
const REFERENCE = process.env.BENCH_STREAM_REFERENCE !== '0';

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

/**
 * Where one apply's time goes, per batch (performance.now, the clock the garbage
 * collector's entries use): engine.apply's start; the hub's changesApplied start and end
 * (before it: the engine's own work and every listener's rowChanged; in it: the fan-out
 * and the send loop; after it: the other listeners' changesApplied); frames the hub
 * handed to sockets.
 */
class BatchTimes {
  applyStart: number[] = [];
  hubStart: number[] = [];
  hubEnd: number[] = [];
  applyEnd: number[] = [];
  frames: number[] = [];
  /** Involuntary context switches of the process during the batch: the scheduler gave the cpu to another task. */
  preempted: number[] = [];
}

/**
 * Wraps the hub's changesApplied on this instance (the bench's own instrument; the
 * engine calls listeners through the object, so the wrapper is what it calls) to time it.
 */
function timeHub(app: App): { times: BatchTimes; hubStart: () => number; hubEnd: () => number; restore: () => void } {
  const hub = app.stream as unknown as { changesApplied: () => void };
  const original = hub.changesApplied;
  let start = NaN;
  let end = NaN;
  hub.changesApplied = function (this: unknown) {
    start = performance.now();
    original.call(this);
    end = performance.now();
  };
  return { times: new BatchTimes(), hubStart: () => start, hubEnd: () => end, restore: () => void delete (hub as { changesApplied?: unknown }).changesApplied };
}

/** GC pauses as [start, end] in performance.now time, collected while it runs. */
function recordGc(): { spans: number[][]; stop: () => void } {
  const spans: number[][] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) spans.push([entry.startTime, entry.startTime + entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  return { spans, stop: () => observer.disconnect() };
}

/**
 * The breakdown of the batches at the median and the slowest 1 % of apply-to-sent: mean
 * time before the hub, in it, after it, frames, hub µs per frame, and GC overlapping the
 * batch, so a slow batch shows whether it had more frames, slower frames, a collection,
 * or other work around the send.
 */
function breakdown(prefix: string, times: BatchTimes, gcSpans: number[][]): Record<string, number> {
  const n = times.applyStart.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => times.applyEnd[a]! - times.applyStart[a]! - (times.applyEnd[b]! - times.applyStart[b]!));
  const slowest = order.slice(Math.floor(n * 0.99));
  const middle = order.slice(Math.floor(n * 0.45), Math.ceil(n * 0.55));
  const gcIn = (i: number) => {
    let ms = 0;
    for (const [from, to] of gcSpans) ms += Math.max(0, Math.min(to!, times.applyEnd[i]!) - Math.max(from!, times.applyStart[i]!));
    return ms;
  };
  const describe = (label: string, batches: number[]) => {
    const mean = (f: (i: number) => number) => round(batches.reduce((sum, i) => sum + f(i), 0) / Math.max(1, batches.length));
    const frames = mean((i) => times.frames[i]!);
    const hub = mean((i) => times.hubEnd[i]! - times.hubStart[i]!);
    return {
      [`${prefix} ${label} batches: before hub (apply, rowChanged) ms`]: mean((i) => times.hubStart[i]! - times.applyStart[i]!),
      [`${prefix} ${label} batches: hub (fan-out + sends) ms`]: hub,
      [`${prefix} ${label} batches: after hub (other listeners) ms`]: mean((i) => times.applyEnd[i]! - times.hubEnd[i]!),
      [`${prefix} ${label} batches: frames`]: frames,
      [`${prefix} ${label} batches: hub µs per frame`]: frames === 0 ? NaN : round((hub * 1000) / frames),
      [`${prefix} ${label} batches: gc inside ms`]: mean(gcIn),
      [`${prefix} ${label} batches: with gc inside (count)`]: batches.filter((i) => gcIn(i) > 0).length,
      [`${prefix} ${label} batches: preempted (involuntary context switches per batch)`]: mean((i) => times.preempted[i]!),
    };
  };
  const perFrame = times.frames.map((frames, i) => (frames === 0 ? NaN : ((times.hubEnd[i]! - times.hubStart[i]!) * 1000) / frames)).filter((us) => !Number.isNaN(us)).sort((a, b) => a - b);
  const framesSorted = [...times.frames].sort((a, b) => a - b);
  return {
    ...describe('median 10 %', middle),
    ...describe('slowest 1 %', slowest),
    [`${prefix} frames per batch p50`]: percentile(framesSorted, 50),
    [`${prefix} frames per batch p99`]: percentile(framesSorted, 99),
    [`${prefix} hub µs per frame p50 (over batches)`]: percentile(perFrame, 50),
    [`${prefix} hub µs per frame p99 (over batches)`]: percentile(perFrame, 99),
  };
}

async function latencyRun(app: App, clock: ManualClock, subscribers: number, filters: Record<string, unknown>[], label = '', framesSeen: number[] = []): Promise<Record<string, number>> {
  const client = startClient();
  client.send({ op: 'connect', port: app.port, count: subscribers, filters });
  await client.next('connected');
  const applied = new Map<string, number>();
  const serverSpans: number[] = [];
  let backedUpMax = 0;
  const statsBefore = app.stream.stats();
  const timing = timeHub(app);
  const times = timing.times;
  const gcSpans = recordGc();
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
    const framesBefore = app.stream.sentMessages[0]! + app.stream.sentMessages[1]!;
    const switchesBefore = process.resourceUsage().involuntaryContextSwitches;
    const at = monotonicMs();
    const startedAt = performance.now();
    app.engine.apply(batch);
    const endedAt = performance.now();
    serverSpans.push(monotonicMs() - at);
    times.applyStart.push(startedAt);
    times.hubStart.push(timing.hubStart());
    times.hubEnd.push(timing.hubEnd());
    times.applyEnd.push(endedAt);
    times.frames.push(app.stream.sentMessages[0]! + app.stream.sentMessages[1]! - framesBefore);
    times.preempted.push(process.resourceUsage().involuntaryContextSwitches - switchesBefore);
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
  timing.restore();
  gcSpans.stop();
  framesSeen.push(...times.frames);
  const statsAfter = app.stream.stats();
  client.send({ op: 'report', applied: Object.fromEntries(applied) });
  const { report } = (await client.next('report')) as { report: ChildReport };
  client.send({ op: 'exit' });
  const latencies = report.latencies;
  serverSpans.sort((a, b) => a - b);
  const n = `${subscribers} subscribers${label}:`;
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
    ...breakdown(n, times, gcSpans.spans),
  };
}

/**
 * The reference floor: a bare uWebSockets.js app (the binary the service picked) in this
 * same process (so pinned to the same cpu), with `subscribers` WebSocket connections
 * from the same bench client, sending every INTERVAL_MS one prebuilt frame of
 * `frameBytes` to as many sockets as our run sent frames in the batch of the same
 * number (the counts replayed in order, so their spread is the same; a window that
 * moves round the sockets batch by batch, as the leagues a batch touches move), timed
 * the same way:
 * from the batch's start to the client's read. No engine, no hub, no rendering: what is
 * left is uWS's send and the kernel's loopback, the part of the latency no work of ours
 * can remove.
 */
async function referenceRun(subscribers: number, framesPerBatch: readonly number[], frameBytes: number): Promise<Record<string, number>> {
  const loaded = loadUws();
  if (!loaded.ok) return {};
  const uws = loaded.uws;
  const sockets: WebSocket<unknown>[] = [];
  const app = uws.App();
  const image = Buffer.from('{"op":"image","id":"s","clk":"r0","segment":"end","rows":[]}');
  app.ws('/api/v1/stream', {
    maxPayloadLength: 16 * 1024,
    maxBackpressure: 1 << 30,
    idleTimeout: 120,
    open: (ws) => void sockets.push(ws),
    message: (ws) => void ws.send(image, false),
    close: (ws) => {
      const at = sockets.indexOf(ws);
      if (at >= 0) sockets.splice(at, 1);
    },
  });
  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => app.listen('127.0.0.1', 0, (socket) => (socket ? resolve(socket) : reject(new Error('reference: listen failed')))));
  const port = uws.us_socket_local_port(listenSocket);
  const client = startClient();
  client.send({ op: 'connect', port, count: subscribers, filters: [{}] });
  await client.next('connected');
  // One frame per batch, built before the batch starts: `{"op":"delta",...,"clk":"r<n>"` then padding to frameBytes.
  const frameFor = (batch: number): Buffer => {
    const head = `{"op":"delta","id":"s","clk":"r${batch}","prev":"r${batch - 1}","rows":[{"pad":"`;
    const pad = Math.max(0, frameBytes - head.length - 4);
    return Buffer.from(`${head}${'x'.repeat(pad)}"}]}`);
  };
  const applied = new Map<string, number>();
  const spans: number[] = [];
  let frames = 0;
  const cpuBefore = process.cpuUsage();
  const started = monotonicMs();
  const deadline = started + SECONDS * 1000;
  let next = started;
  let batch = 1;
  let from = 0;
  while (monotonicMs() < deadline) {
    next += INTERVAL_MS;
    const frame = frameFor(batch);
    const count = Math.min(framesPerBatch[(batch - 1) % framesPerBatch.length]!, sockets.length);
    const at = monotonicMs();
    for (let i = 0; i < count; i++) {
      sockets[(from + i) % sockets.length]!.send(frame, false);
      frames++;
    }
    spans.push(monotonicMs() - at);
    applied.set(`r${batch}`, at);
    from = (from + 1) % Math.max(1, sockets.length);
    batch++;
    const wait = next - monotonicMs();
    await sleep(wait > 0 ? wait : 0);
  }
  await sleep(500);
  const serverCpu = process.cpuUsage(cpuBefore);
  client.send({ op: 'report', applied: Object.fromEntries(applied) });
  const { report } = (await client.next('report')) as { report: ChildReport };
  client.send({ op: 'exit' });
  await sleep(200);
  uws.us_listen_socket_close(listenSocket);
  for (const ws of [...sockets]) ws.close();
  const perFrame = spans.map((span, i) => (span * 1000) / Math.max(1, Math.min(framesPerBatch[i % framesPerBatch.length]!, subscribers))).sort((a, b) => a - b);
  spans.sort((a, b) => a - b);
  const n = `${subscribers} subscribers reference (bare uWS):`;
  return {
    [`${n} frames per batch`]: Math.round(frames / spans.length),
    [`${n} frame bytes`]: frameBytes,
    [`${n} latency p50 ms`]: percentile(report.latencies, 50),
    [`${n} latency p99 ms`]: percentile(report.latencies, 99),
    [`${n} latency max ms`]: percentile(report.latencies, 100),
    [`${n} send loop p50 ms`]: percentile(spans, 50),
    [`${n} send loop p99 ms`]: percentile(spans, 99),
    [`${n} send µs per frame p50 (over batches)`]: percentile(perFrame, 50),
    [`${n} send µs per frame p99 (over batches)`]: percentile(perFrame, 99),
    [`${n} deltas measured`]: report.latencies.length,
    [`${n} server kernel (system) µs per frame`]: frames === 0 ? NaN : round(serverCpu.system / frames),
    [`${n} server user µs per frame`]: frames === 0 ? NaN : round(serverCpu.user / frames),
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
  return parsed.subscribe;
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
      const framesPerBatch: number[] = [];
      const first = await latencyRun(app, clock, count, filters, '', framesPerBatch);
      Object.assign(out, first);
      if (!REFERENCE) continue;
      // Interleaved (ours, reference, ours): the reference sends what our first run sent,
      // the same frames in each batch and the mean frame size.
      const frameBytes = Math.max(64, Math.round(first[`${count} subscribers: bytes/s`]! / first[`${count} subscribers: messages/s`]!));
      const reference = await referenceRun(count, framesPerBatch, frameBytes);
      Object.assign(out, reference);
      const second = await latencyRun(app, clock, count, filters, ' (second run)');
      for (const key of ['latency p50 ms', 'latency p99 ms', 'server apply-to-sent p50 ms', 'server apply-to-sent p99 ms', 'frames per batch', 'hub µs per frame p50 (over batches)', 'hub µs per frame p99 (over batches)']) out[`${count} subscribers (second run): ${key}`] = second[`${count} subscribers (second run): ${key}`]!;
      const referenceP99 = reference[`${count} subscribers reference (bare uWS): latency p99 ms`];
      if (referenceP99 !== undefined) {
        const oursP99 = (first[`${count} subscribers: latency p99 ms`]! + second[`${count} subscribers (second run): latency p99 ms`]!) / 2;
        out[`${count} subscribers: p99 ours (mean of both runs) / reference`] = round(oursP99 / referenceP99);
      }
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
