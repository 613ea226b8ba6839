// The full-board snapshot on the large board (BOARD overrides; BENCH_SNAPSHOT_SHORT=1
// runs only the live-poll section, briefly; BENCH_SNAPSHOT_LIVE_SECONDS sets how long
// each live poll runs, 8 s short and 30 s in full; BENCH_SNAPSHOT_THREADS sets the number of
// compression threads; BENCH_SNAPSHOT_PIN=0 does not pin the server to core 0 and the
// poller to core 1 (pinned, the live polls' server runs in a process of its own,
// bench/snapshotLive.ts, with --single-threaded-gc as a service given one core has it,
// unless BENCH_SNAPSHOT_SINGLE_THREADED_GC=off); BENCH_SNAPSHOT_RATES=1000 and BENCH_SNAPSHOT_VARIANTS=history narrow the
// live polls; BENCH_SNAPSHOT_TRACE=1 prints each poll and each version published, in time
// order, on stderr; BENCH_SNAPSHOT_NODE_FLAGS='--trace-gc ...' adds node flags to the
// server's process; BENCH_SNAPSHOT_STEP_MS sets the refresh's step (the service's default,
// 10 ms, otherwise); BENCH_SNAPSHOT_PIECE_KIB sets the piece size of both variants in
// the live polls and the body sizes (BoardSnapshotOptions.pieceBytes; the service's
// defaults otherwise);
// BENCH_SNAPSHOT_CPU_PROFILE=<dir> writes a CPU profile of each live
// window's server there, BENCH_SNAPSHOT_HEAP_PROFILE=<dir> a sampled profile of what
// it allocates): the live polls (the simulator at 1,000
// and 10,000 updates/s, the real route polled over HTTP every 100 ms plain and every
// 1 s with history: time to first byte, staleness, refresh CPU per second, measured
// from the first version carrying the simulator's changes on, whose delay is printed), body
// size against one single-stream level-1 gzip of the same JSON, bytes of both
// variants, the first build, the cost of a refresh after N changed events while
// the simulator runs at 1,000 updates/s (and the same on the medium board, to show the
// cost follows N, not the board), staleness from a change to a poll that shows it,
// memory, and over HTTP (the real route, wrk pinned to core 1) 304 polls against a
// uWS hello world and full-body MB/s.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../engine/clock.ts';
import type { Change, OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { BoardSize } from '../engine/model.ts';
import { OddsEngine as Engine } from '../engine/engine.ts';
import { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import { compressionThreads, setCompressionThreads } from '../engine/snapshot/compressionWorkers.ts';
import { Simulator } from '../fixtures/simulator.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { snapshotRoutes } from '../http/routes/snapshot.ts';
import { createServer } from '../http/server.ts';
import { runWrk, startHelloWorld } from './http-baseline.bench.ts';
import { SINGLE_THREADED_GC_FLAG, wantsSingleThreadedGc, type SingleThreadedGcSetting } from '../service/singleThreadedGc.ts';
import { mulberry32 } from '../engine/random.ts';

type Out = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SIM_RATE = 1000;
const REPEATS = 15;
/** Longest the live polls wait for the first version carrying the simulator's changes before measuring. */
const WARM_MAX_MS = 20_000;
/**
 * The polls in the first this many ms after the first live version are start-up: after
 * the history variant's first build (20 s, 1.5 GB raw on the large board) versions take
 * 0.3-1.3 s for about a second and a half while the collector digests it. They are
 * reported on their own line; TTFB and staleness are the polls after them.
 */
const START_UP_MS = 3000;
const WRK_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number): number => round(bytes / 1048576, 1);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** JS heap plus memory outside it (external already counts ArrayBuffers). */
function heldBytes(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/**
 * Simulated time that can follow the wall clock for a while: the live polls need the
 * server's clock to be the poller's wall clock plus a known shift (the board is
 * generated at NOW), the other sections a clock that moves only with the simulator.
 */
export class FollowingClock extends ManualClock {
  private shift: number | null = null;
  private last = 0;

  /** From now on the clock is the wall clock plus shiftMs (and the simulator no longer advances it). */
  follow(): void {
    this.shift = super.now() - Date.now();
  }

  /** Stands still again, at the time it shows now. */
  freeze(): void {
    const now = this.now();
    this.shift = null;
    this.set(now);
  }

  get shiftMs(): number {
    return this.shift ?? 0;
  }

  override now(): number {
    if (this.shift === null) return super.now();
    this.last = Math.max(this.last, super.now(), Date.now() + this.shift);
    return this.last;
  }

  override advance(ms: number): void {
    if (this.shift === null) super.advance(ms);
  }
}

export function loadEngine(size: BoardSize): { engine: OddsEngine; clock: FollowingClock } {
  const clock = new FollowingClock(NOW);
  const engine = new Engine(clock);
  loadBoard(engine, generateBoard({ seed: 42, size, now: NOW }));
  return { engine, clock };
}

/** One priced live row in each of `n` distinct random events, moved by a cent. */
function changesInEvents(engine: OddsEngine, n: number, rand: () => number): Change[] {
  const lists = engine.indexes.byEvent.filter((list) => list !== undefined && list.length > 0);
  const chosen = new Set<number>();
  const batch: Change[] = [];
  const s = engine.store;
  while (batch.length < Math.min(n, lists.length)) {
    const at = Math.floor(rand() * lists.length);
    if (chosen.has(at)) continue;
    chosen.add(at);
    const list = lists[at]!;
    for (let tries = 0; tries < 20; tries++) {
      const slot = list.items[Math.floor(rand() * list.length)];
      const price = s.priceAmerican[slot];
      if (price === 0) continue;
      batch.push({ op: 'price', slot, priceAmerican: price > 0 ? price + 1 : price - 1, suspended: s.suspended[slot] === 1 });
      break;
    }
  }
  return batch;
}


/**
 * Refresh cost after N changed events. The simulator runs on its timer between
 * measurements; each measurement first absorbs its changes, then moves N events and
 * times the refresh of both variants.
 */
async function refreshCosts(engine: OddsEngine, snapshot: BoardSnapshot, sim: Simulator, label: string, counts: number[], out: Out): Promise<void> {
  const rand = mulberry32(7);
  for (const n of counts) {
    const plain: number[] = [];
    const history: number[] = [];
    let pieces = 0;
    let bytes = 0;
    for (let i = 0; i < REPEATS; i++) {
      await sleep(60);
      snapshot.current(false);
      snapshot.current(true);
      engine.apply(changesInEvents(engine, n, rand));
      const before = snapshot.stats();
      let t = performance.now();
      snapshot.current(false);
      plain.push(performance.now() - t);
      t = performance.now();
      snapshot.current(true);
      history.push(performance.now() - t);
      const after = snapshot.stats();
      for (let v = 0; v < after.length; v++) {
        pieces += after[v].rendered.piecesRendered - before[v].rendered.piecesRendered;
        bytes += after[v].rendered.bytesRendered - before[v].rendered.bytesRendered;
      }
    }
    out[`${label}refresh after ${n} changed events, plain, median ms`] = round(percentile(plain, 50));
    out[`${label}refresh after ${n} changed events, plain, p95 ms`] = round(percentile(plain, 95));
    out[`${label}refresh after ${n} changed events, history, median ms`] = round(percentile(history, 50));
    out[`${label}refresh after ${n} changed events, history, p95 ms`] = round(percentile(history, 95));
    out[`${label}refresh after ${n} changed events, pieces re-rendered (both)`] = round(pieces / REPEATS, 1);
    out[`${label}refresh after ${n} changed events, raw MB re-rendered (both)`] = mb(bytes / REPEATS);
  }
  void sim;
}

/** Change applied -> visible: a poller asks every pollMs while the simulator ticks every 50 ms. */
async function staleness(snapshot: BoardSnapshot, sim: Simulator, pollMs: number, seconds: number, out: Out): Promise<void> {
  const pending: number[] = [];
  const samples: number[] = [];
  const refresh: number[] = [];
  const ticker = setInterval(() => {
    sim.tick();
    pending.push(performance.now());
  }, 50);
  const poller = setInterval(() => {
    const asked = performance.now();
    snapshot.current(false);
    snapshot.current(true);
    const shown = performance.now();
    refresh.push(shown - asked);
    while (pending.length > 0 && pending[0]! <= asked) samples.push(shown - pending.shift()!);
  }, pollMs);
  await sleep(seconds * 1000);
  clearInterval(ticker);
  clearInterval(poller);
  out[`staleness, poll every ${pollMs} ms, p50 ms`] = round(percentile(samples, 50));
  out[`staleness, poll every ${pollMs} ms, p99 ms`] = round(percentile(samples, 99));
  out[`staleness, poll every ${pollMs} ms, refresh on the poll (both variants) p50 ms`] = round(percentile(refresh, 50));
  out[`staleness, poll every ${pollMs} ms, refresh on the poll (both variants) p99 ms`] = round(percentile(refresh, 99));
}

async function httpRuns(engine: OddsEngine, out: Out): Promise<void> {
  // As the composition root does: the variant without history is built before the server listens.
  const snapshot = new BoardSnapshot(engine, { clock: engine.clock });
  snapshot.current(false);
  const server = await createServer({ routes: snapshotRoutes({ snapshot }), port: 0, log: (line) => process.stderr.write(`${line}\n`) });
  const hello = await startHelloWorld();
  try {
    const url = `http://127.0.0.1:${server.port}/api/v1/snapshot`;
    // Raw node:http (fetch would gunzip a body of up to 1.5 GB just to drop it).
    const etagOf = (path: string): Promise<string> =>
      new Promise((resolve, reject) => {
        http
          .get(path, (res) => {
            res.resume();
            res.on('end', () => resolve(String(res.headers.etag ?? '')));
          })
          .on('error', reject);
      });
    const plainTag = await etagOf(url);
    const historyTag = await etagOf(`${url}?include_history=true`);
    // Hello world and each 304 poll alternate, twice, so load from elsewhere on the
    // machine hits both sides of the ratio alike.
    const helloUrl = `http://127.0.0.1:${hello.port}/`;
    const polls = [
      ['plain', url, plainTag],
      ['history', `${url}?include_history=true`, historyTag],
    ] as const;
    for (const [, path, etag] of polls) await runWrk(path, { seconds: 1, headers: { 'If-None-Match': etag } });
    let helloTotal = 0;
    const pollTotal = [0, 0];
    const pollP99 = [0, 0];
    for (let round = 0; round < 2; round++) {
      helloTotal += (await runWrk(helloUrl, { seconds: WRK_SECONDS })).requestsPerSec;
      for (let i = 0; i < polls.length; i++) {
        const r = await runWrk(polls[i][1], { seconds: WRK_SECONDS, headers: { 'If-None-Match': polls[i][2] } });
        pollTotal[i] += r.requestsPerSec;
        pollP99[i] = Math.max(pollP99[i], r.p99Ms);
      }
    }
    out['http: uws hello world req/s'] = Math.round(helloTotal / 2);
    for (let i = 0; i < polls.length; i++) {
      out[`http: 304 poll (${polls[i][0]}) req/s`] = Math.round(pollTotal[i] / 2);
      out[`http: 304 poll (${polls[i][0]}) p99 ms`] = pollP99[i];
      out[`http: 304 poll (${polls[i][0]}) / hello world`] = round(pollTotal[i] / helloTotal, 3);
    }
    for (const connections of [1, 8]) {
      const r = await runWrk(url, { seconds: WRK_SECONDS, connections });
      out[`http: full body (plain), ${connections} connection(s), MB/s`] = round(r.mbPerSec, 1);
      out[`http: full body (plain), ${connections} connection(s), req/s`] = round(r.requestsPerSec, 2);
    }
  } finally {
    hello.close();
    await server.close();
    snapshot.close();
  }
}

/** One gzip stream of the whole body at level 1: what the pieces are measured against. */
async function singleStreamBytes(body: { chunks: readonly Buffer[] }): Promise<number> {
  const { gunzipSync, gzip } = await import('node:zlib');
  const raw = gunzipSync(Buffer.concat(body.chunks as Buffer[]));
  return new Promise((resolve, reject) => gzip(raw, { level: 1 }, (error, out) => (error ? reject(error) : resolve(out.length))));
}

/** Whether the bench can pin the server and the poller to different cores. */
function canPin(): boolean {
  if (process.env.BENCH_SNAPSHOT_PIN === '0' || availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** CPU ms used so far by this process's main thread (the event loop), from /proc. */
export function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
const CLOCK_TICKS = 100;

interface PollerResult {
  ttfb: number[];
  staleness: number[];
  sentAt: number[];
  polls: number;
  bodies: number;
}

/** Runs bench/snapshotPoller.ts as its own process (on core 1 when pinned). */
function runPoller(url: string, pollMs: number, seconds: number, shift: number, pinned: boolean): Promise<PollerResult> {
  const script = fileURLToPath(new URL('./snapshotPoller.ts', import.meta.url));
  const args = ['--import', 'tsx', script, url, String(pollMs), String(seconds), String(shift)];
  const [command, argv] = pinned ? ['taskset', ['-c', '1', process.execPath, ...args]] : [process.execPath, args];
  return new Promise((resolve, reject) => {
    execFile(command, argv, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`poller failed: ${error.message} ${stderr}`));
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop()!) as PollerResult);
      } catch (failure) {
        reject(failure);
      }
    });
  });
}

/**
 * Live polls over HTTP: the simulator at `rate` updates/s on its timer, a client in
 * another process (bench/snapshotPoller.ts; on core 1 when `pinned`, this process
 * then being on core 0) polling every `pollMs` with If-None-Match. Each variant's
 * window has a server of its own (a BoardSnapshot and a listener, as the composition
 * root builds them) whose only poller is that window's: a server keeps refreshing a
 * variant for watchMs (30 s) after its last poll, so one shared server would refresh
 * the plain variant through most of the history window. Time to first
 * byte: request sent to response headers. Staleness: the server's clock (which
 * follows the wall clock here) at the response minus the answered version's
 * syncToken. Refresh CPU per second: the snapshot's main-thread render time plus the
 * CPU of every thread but the main one (compression and CRC on the worker threads,
 * and V8's helper threads); process CPU is everything, the simulator and the HTTP server included.
 * Event-loop delay: how late timers ran (what a request arriving then waits). The
 * polls of the first START_UP_MS are start-up, reported apart (CPU and the counts
 * include them).
 */
export async function livePolls(engine: OddsEngine, clock: FollowingClock, rate: number, seconds: number, pinned: boolean, out: Out): Promise<void> {
  clock.follow();
  const trace = process.env.BENCH_SNAPSHOT_TRACE === '1';
  const variants = (process.env.BENCH_SNAPSHOT_VARIANTS ?? 'plain,history').split(',');
  const sim = new Simulator(engine, clock, { ratePerSecond: rate, seed: 31 });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  try {
    for (const [label, query, pollMs] of [
      ['plain', '', 100],
      ['history', '?include_history=true', 1000],
    ] as const) {
      if (!variants.includes(label)) continue;
      // As the composition root does: the variant without history is built before the server listens.
      const stepMs = process.env.BENCH_SNAPSHOT_STEP_MS;
      const pieceKib = process.env.BENCH_SNAPSHOT_PIECE_KIB;
      const snapshot = new BoardSnapshot(engine, {
        clock,
        ...(stepMs === undefined ? {} : { stepMs: Number(stepMs) }),
        ...(pieceKib === undefined ? {} : { pieceBytes: Number(pieceKib) * 1024 }),
      });
      snapshot.current(false);
      const published: [number, string][] = [];
      if (trace) snapshot.onRefresh = (withHistory, refreshSeconds) => published.push([Date.now(), `published ${withHistory ? 'history' : 'plain'} after ${round(refreshSeconds * 1000)} ms`]);
      const server = await createServer({ routes: snapshotRoutes({ snapshot }), port: 0, log: () => {} });
      const url = `http://127.0.0.1:${server.port}/api/v1/snapshot${query}`;
      try {
        // Warm the variant (the history one is built on its first request).
        await new Promise<void>((resolve, reject) => http.get(url, (res) => res.resume().on('end', resolve)).on('error', reject));
        sim.start();
        // Until the first version with the simulator's changes is out, a poll gets the
        // version built before they started (its syncToken is the board's time before the
        // build, seconds back): start-up, not the steady state the window measures. Its
        // delay is printed on its own line.
        const warmStarted = performance.now();
        const seqAtStart = engine.seq;
        while (performance.now() - warmStarted < WARM_MAX_MS && (snapshot.latest(label === 'history')?.seq ?? -1) <= seqAtStart) await sleep(pollMs / 4);
        const firstLiveMs = performance.now() - warmStarted;
        const statsBefore = snapshot.stats().find((s) => s.variant === label)!;
        const cpu = process.cpuUsage();
        const mainBefore = mainThreadCpuMs();
        const wall = performance.now();
        delay.reset();
        delay.enable();
        const profile = await startProfile(`${label}-${rate}`);
        const collections = watchFullCollections();
        const all = await runPoller(url, pollMs, seconds + START_UP_MS / 1000, clock.shiftMs, pinned);
        const fullCollections = collections.stop();
        delay.disable();
        await profile();
        const elapsed = (performance.now() - wall) / 1000;
        const used = process.cpuUsage(cpu);
        const processMs = (used.user + used.system) / 1000;
        const offMainMs = processMs - (mainThreadCpuMs() - mainBefore);
        sim.stop();
        const statsAfter = snapshot.stats().find((s) => s.variant === label)!;
        const key = `live ${rate}/s, ${label} every ${pollMs} ms`;
        if (trace) printTrace(key, all, published);
        const startUp = all.sentAt.findIndex((at) => at - all.sentAt[0] >= START_UP_MS);
        const polled = { ttfb: all.ttfb.slice(startUp), staleness: all.staleness.slice(startUp) };
        out[`${key}: start-up (first ${START_UP_MS / 1000} s of polls): TTFB max / staleness max ms`] = `${round(Math.max(...all.ttfb.slice(0, startUp)))} / ${round(Math.max(...all.staleness.slice(0, startUp)))}`;
        out[`${key}: TTFB p50 / p99 ms`] = `${round(percentile(polled.ttfb, 50))} / ${round(percentile(polled.ttfb, 99))}`;
        out[`${key}: staleness p50 / p99 ms`] = `${round(percentile(polled.staleness, 50))} / ${round(percentile(polled.staleness, 99))}`;
        out[`${key}: refresh ms per s: main-thread render (wall) / other threads CPU`] = `${round((statsAfter.refreshMs - statsBefore.refreshMs) / elapsed, 1)} / ${round(offMainMs / elapsed, 1)}`;
        out[`${key}: process CPU ms per s (all threads)`] = round(processMs / elapsed, 1);
        out[`${key}: event-loop delay p99 / max ms`] = `${round(delay.percentile(99) / 1e6)} / ${round(delay.max / 1e6)}`;
        // The window's polls only (those of the start-up left out), as TTFB and staleness are.
        const measuredFrom = wall + (all.sentAt[startUp] - all.sentAt[0]);
        const pauses = fullCollections.filter((entry) => entry.startTime >= measuredFrom).map((entry) => entry.duration);
        out[`${key}: full collections per s; their pause p50 / p90 / max ms`] = `${round(pauses.length / ((performance.now() - measuredFrom) / 1000), 2)}; ${round(percentile(pauses, 50))} / ${round(percentile(pauses, 90))} / ${round(Math.max(0, ...pauses))}`;
        out[`${key}: polls / new versions / versions published (start-up included)`] = `${all.polls} / ${all.bodies} / ${statsAfter.refreshes - statsBefore.refreshes}`;
        out[`${key}: first live version after the simulator started ms; version moments put off (final render over its bound)`] = `${round(firstLiveMs)}; ${statsAfter.finalsDeferred - statsBefore.finalsDeferred}`;
        const versions = Math.max(1, statsAfter.refreshes - statsBefore.refreshes);
        out[`${key}: per version published: main-thread render ms / other threads CPU ms / raw MB re-made`] = `${round((statsAfter.refreshMs - statsBefore.refreshMs) / versions, 1)} / ${round(offMainMs / versions, 1)} / ${round((statsAfter.rendered.bytesRendered - statsBefore.rendered.bytesRendered) / 1048576 / versions, 1)}`;
        out[`${key}: pieces re-made per s, raw MB/s, rows rendered per s (the rest copied)`] = `${round((statsAfter.rendered.piecesRendered - statsBefore.rendered.piecesRendered) / elapsed, 1)}, ${round((statsAfter.rendered.bytesRendered - statsBefore.rendered.bytesRendered) / 1048576 / elapsed, 1)}, ${round((statsAfter.rendered.rowsRendered - statsBefore.rendered.rowsRendered) / elapsed, 1)}`;
      } finally {
        sim.stop();
        await server.close();
        snapshot.close();
        (globalThis as { gc?: () => void }).gc?.(); // the next window's server starts without this one's variants
      }
    }
  } finally {
    sim.stop();
    delay.disable();
    clock.freeze();
  }
}

/**
 * The server's full (mark-compact) collections from now until stop(): each entry's
 * duration is the pause it held the event loop for (with --single-threaded-gc its
 * marking runs before, in steps on the event loop, and is not counted here).
 */
function watchFullCollections(): { stop(): PerformanceEntry[] } {
  const seen: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) seen.push(entry);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      observer.disconnect();
      return seen;
    },
  };
}

/**
 * With BENCH_SNAPSHOT_CPU_PROFILE=<dir>: a CPU profile of the server's main thread over
 * one live window, written to <dir>/snapshot-<variant>-<rate>.cpuprofile when the
 * returned function is called (open it in Chrome's DevTools); with
 * BENCH_SNAPSHOT_HEAP_PROFILE=<dir>, a sampled allocation profile of the same window
 * (<dir>/snapshot-<variant>-<rate>.heapprofile); without either, nothing.
 */
async function startProfile(name: string): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_SNAPSHOT_CPU_PROFILE;
  const heapDir = process.env.BENCH_SNAPSHOT_HEAP_PROFILE;
  if (dir === undefined && heapDir === undefined) return async () => {};
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  if (dir !== undefined) {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 500 });
    await session.post('Profiler.start');
  }
  if (heapDir !== undefined) {
    // Every allocation sampled, also those collected since: what the window allocates, not what it keeps.
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 64 * 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  }
  return async () => {
    if (dir !== undefined) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${dir}/snapshot-${name}.cpuprofile`, JSON.stringify(profile));
    }
    if (heapDir !== undefined) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(`${heapDir}/snapshot-${name}.heapprofile`, JSON.stringify(profile));
    }
    session.disconnect();
  };
}

/** Each poll (sent at, ms from the first; TTFB; staleness) and each version published, in time order, on stderr. */
function printTrace(key: string, polled: PollerResult, published: [number, string][]): void {
  const origin = polled.sentAt[0] ?? 0;
  const lines: [number, string][] = polled.sentAt.map((at, i) => [at - origin, `poll ttfb ${round(polled.ttfb[i])} staleness ${polled.staleness[i]}`]);
  for (const [at, text] of published) lines.push([at - origin, text]);
  lines.sort((a, b) => a[0] - b[0]);
  process.stderr.write(`trace ${key}\n${lines.map(([at, text]) => `  ${at} ${text}`).join('\n')}\n`);
}

/**
 * The live polls with the server in a process of its own on core 0 (the poller on
 * core 1), started as a service given one core starts (service/singleThreadedGc.ts):
 * with --single-threaded-gc unless BENCH_SNAPSHOT_SINGLE_THREADED_GC=off, and with the
 * compression threads a one-core process gets by default (one) unless
 * BENCH_SNAPSHOT_THREADS says otherwise. The board is generated there again (same seed).
 */
function livePollsInChild(size: BoardSize, rates: number[], seconds: number): Promise<Out> {
  const setting = (process.env.BENCH_SNAPSHOT_SINGLE_THREADED_GC ?? 'auto') as SingleThreadedGcSetting;
  const flags = wantsSingleThreadedGc(setting, 1) ? [SINGLE_THREADED_GC_FLAG] : [];
  // Extra node or V8 flags for the server alone (a --trace-gc probe, a heap setting tried).
  const extra = (process.env.BENCH_SNAPSHOT_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  flags.push(...extra);
  const script = fileURLToPath(new URL('./snapshotLive.ts', import.meta.url));
  const args = ['-c', '0', process.execPath, ...flags, '--expose-gc', '--max-old-space-size=12288', '--import', 'tsx', script, size, rates.join(','), String(seconds)];
  return new Promise((resolve, reject) => {
    const child = execFile('taskset', args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error !== null) return reject(new Error(`the live-poll server failed: ${error.message}`));
      try {
        // The last JSON line: a --trace-gc flag writes its lines to stdout too.
        resolve(JSON.parse(stdout.trim().split('\n').filter((line) => line.startsWith('{')).pop()!) as Out);
      } catch (failure) {
        reject(failure);
      }
    });
    child.stderr?.pipe(process.stderr);
    // Lines other than the answer (a --trace-gc probe's) are passed on to stderr.
    if (extra.length > 0) child.stdout?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  });
}

/** Body size of both variants against a single-stream level-1 gzip of the same JSON. */
async function bodySizes(engine: OddsEngine, out: Out): Promise<void> {
  const pieceKib = process.env.BENCH_SNAPSHOT_PIECE_KIB;
  const snapshot = new BoardSnapshot(engine, pieceKib === undefined ? {} : { pieceBytes: Number(pieceKib) * 1024 });
  for (const withHistory of [false, true]) {
    const body = snapshot.current(withHistory);
    const single = await singleStreamBytes(body);
    const label = withHistory ? 'history' : 'plain';
    out[`${label}: gzip MB (pieces) / single-stream level-1 MB`] = `${mb(body.byteLength)} / ${mb(single)}`;
    out[`${label}: pieces cost in bytes, % over single stream`] = round((100 * (body.byteLength - single)) / single, 1);
    out[`${label}: pieces / multi-event pieces`] = `${snapshot.stats()[withHistory ? 1 : 0].pieces} / ${snapshot.stats()[withHistory ? 1 : 0].groups}`;
  }
  snapshot.close();
}

export async function benchSnapshot(): Promise<Out> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const out: Out = { board: size };
  const short = process.env.BENCH_SNAPSHOT_SHORT === '1';
  const liveSeconds = Number(process.env.BENCH_SNAPSHOT_LIVE_SECONDS ?? (short ? 8 : 30));
  const rates = (process.env.BENCH_SNAPSHOT_RATES ?? '1000,10000').split(',').map(Number);
  // The live polls' own process first, while this one holds no board: the two boards
  // together (with both variants built) came near this machine's 23 GB.
  const live = canPin() ? await livePollsInChild(size, rates, liveSeconds) : null;
  const { engine, clock } = loadEngine(size);
  out['live rows'] = engine.liveRows;
  out['events with rows'] = engine.eventIdsWithLiveRows().length;
  if (process.env.BENCH_SNAPSHOT_THREADS !== undefined) setCompressionThreads(Number(process.env.BENCH_SNAPSHOT_THREADS));
  out['snapshot compression threads (BENCH_SNAPSHOT_THREADS)'] = compressionThreads();
  await bodySizes(engine, out);
  if (live !== null) Object.assign(out, live);
  else for (const rate of rates) await livePolls(engine, clock, rate, liveSeconds, false, out);
  if (short) return out;

  let held = heldBytes();
  let fragments = engine.fragments.bytes();
  const snapshot = new BoardSnapshot(engine);
  let t = performance.now();
  const plain = snapshot.current(false);
  out['first build, plain s'] = round((performance.now() - t) / 1000);
  out['plain: gzip MB'] = mb(plain.byteLength);
  out['plain: raw MB'] = mb(plain.rawLength);
  out['plain: pieces'] = snapshot.stats()[0].pieces;
  out['plain: memory held MB (engine row-fragment cache growth apart)'] = mb(heldBytes() - held - (engine.fragments.bytes() - fragments));
  out['engine row-fragment cache growth during the plain build MB'] = mb(engine.fragments.bytes() - fragments);
  held = heldBytes();
  fragments = engine.fragments.bytes();
  t = performance.now();
  const history = snapshot.current(true);
  out['first build, history s'] = round((performance.now() - t) / 1000);
  out['history: gzip MB'] = mb(history.byteLength);
  out['history: raw MB'] = mb(history.rawLength);
  out['history: pieces'] = snapshot.stats()[1].pieces;
  out['history: memory held MB (engine row-fragment cache growth apart)'] = mb(heldBytes() - held - (engine.fragments.bytes() - fragments));
  const rebuilt = new BoardSnapshot(engine);
  t = performance.now();
  rebuilt.current(false);
  out['plain rebuilt from scratch (row fragments cached) s'] = round((performance.now() - t) / 1000);
  rebuilt.close();

  const sim = new Simulator(engine, clock, { ratePerSecond: SIM_RATE, seed: 11 });
  sim.start();
  try {
    await refreshCosts(engine, snapshot, sim, '', [1, 100, 1000], out);
  } finally {
    sim.stop();
  }
  await staleness(snapshot, sim, 100, 8, out);
  snapshot.close();

  if (size === 'large') {
    // The same N on a board 10x smaller: the refresh should cost about the same.
    const medium = loadEngine('medium');
    const small = new BoardSnapshot(medium.engine);
    small.current(false);
    small.current(true);
    const mediumSim = new Simulator(medium.engine, medium.clock, { ratePerSecond: SIM_RATE, seed: 11 });
    mediumSim.start();
    try {
      await refreshCosts(medium.engine, small, mediumSim, 'medium board: ', [100], out);
    } finally {
      mediumSim.stop();
      small.close();
    }
  }
  await httpRuns(engine, out);
  return out;
}
