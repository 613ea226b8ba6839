// The full-board snapshot on the large board (BOARD overrides; BENCH_SNAPSHOT_SHORT=1
// runs only the live-poll section, briefly): the live polls (the simulator at 1,000
// and 10,000 updates/s, the real route polled over HTTP every 100 ms plain and every
// 1 s with history: time to first byte, staleness, refresh CPU per second), body
// size against one single-stream level-1 gzip of the same JSON, bytes of both
// variants, the first build, the cost of a refresh after N changed events while
// the simulator runs at 1,000 updates/s (and the same on the medium board, to show the
// cost follows N, not the board), staleness from a change to a poll that shows it,
// memory, and over HTTP (the real route, wrk pinned to core 1) 304 polls against a
// uWS hello world and full-body MB/s.
import http from 'node:http';
import { createGunzip } from 'node:zlib';
import { ManualClock } from '../engine/clock.ts';
import type { Change, OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { BoardSize } from '../engine/model.ts';
import { OddsEngine as Engine } from '../engine/engine.ts';
import { BoardSnapshot } from '../engine/snapshot/boardSnapshot.ts';
import { Simulator } from '../engine/simulator.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { snapshotRoutes } from '../http/routes/snapshot.ts';
import { createServer } from '../http/server.ts';
import { runWrk, startHelloWorld } from './http-baseline.bench.ts';
import { mulberry32 } from '../engine/random.ts';

type Out = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SIM_RATE = 1000;
const REPEATS = 15;
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

function loadEngine(size: BoardSize): { engine: OddsEngine; clock: ManualClock } {
  const clock = new ManualClock(NOW);
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

/** The head of a gzip snapshot body: its syncToken, read from the first bytes. */
function syncTokenOf(res: http.IncomingMessage): Promise<number> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    let text = '';
    let done = false;
    gunzip.on('data', (chunk: Buffer) => {
      if (done) return;
      text += chunk.toString('latin1');
      const match = /"syncToken":"(\d+)"/.exec(text);
      if (match !== null) {
        done = true;
        resolve(Number(match[1]));
      }
    });
    gunzip.on('error', (error) => (done ? undefined : reject(error)));
    res.pipe(gunzip);
    res.on('end', () => (done ? undefined : reject(new Error('no syncToken'))));
  });
}

/**
 * Live polls over HTTP: the simulator at `rate` updates/s on its timer, a client
 * polling `path` every `pollMs` with If-None-Match (a 304 costs no body). Time to
 * first byte: request sent to response headers. Staleness: engine time at the
 * response minus the answered version's syncToken (the engine's clock follows the
 * simulator's ticks). CPU: the whole process (render on the main thread, zlib on the
 * threadpool, the simulator and the server) per second of wall time.
 */
async function livePolls(engine: OddsEngine, clock: ManualClock, rate: number, seconds: number, out: Out): Promise<void> {
  // As the composition root does: the variant without history is built before the server listens.
  const snapshot = new BoardSnapshot(engine, { clock });
  snapshot.current(false);
  const server = await createServer({ routes: snapshotRoutes({ snapshot }), port: 0, log: () => {} });
  const base = `http://127.0.0.1:${server.port}/api/v1/snapshot`;
  const sim = new Simulator(engine, clock, { ratePerSecond: rate, seed: 31 });
  try {
    for (const [label, query, pollMs] of [
      ['plain', '', 100],
      ['history', '?include_history=true', 1000],
    ] as const) {
      // Warm the variant (the history one is built on its first request).
      await new Promise<void>((resolve, reject) => http.get(base + query, (res) => res.resume().on('end', resolve)).on('error', reject));
      const ttfb: number[] = [];
      const stale: number[] = [];
      let etag = '';
      let tokenOfEtag = 0;
      let bodies = 0;
      sim.start();
      const cpu = process.cpuUsage();
      const wall = performance.now();
      const deadline = wall + seconds * 1000;
      while (performance.now() < deadline) {
        const sent = performance.now();
        await new Promise<void>((resolve, reject) => {
          const req = http.get(base + query, { headers: etag === '' ? {} : { 'If-None-Match': etag } }, (res) => {
            ttfb.push(performance.now() - sent);
            const now = clock.now();
            if (res.statusCode === 304) {
              stale.push(now - tokenOfEtag);
              res.resume().on('end', resolve);
              return;
            }
            bodies++;
            etag = String(res.headers.etag);
            syncTokenOf(res).then((token) => {
              tokenOfEtag = token;
              stale.push(now - token);
              resolve();
            }, reject);
          });
          req.on('error', reject);
        });
        const wait = pollMs - (performance.now() - sent);
        if (wait > 0) await sleep(wait);
      }
      const used = process.cpuUsage(cpu);
      const elapsed = (performance.now() - wall) / 1000;
      sim.stop();
      const key = `live ${rate}/s, ${label} polled every ${pollMs} ms`;
      out[`${key}: TTFB p50 ms`] = round(percentile(ttfb, 50));
      out[`${key}: TTFB p99 ms`] = round(percentile(ttfb, 99));
      out[`${key}: staleness p50 ms`] = round(percentile(stale, 50));
      out[`${key}: staleness p99 ms`] = round(percentile(stale, 99));
      out[`${key}: process CPU ms per s (all threads)`] = round((used.user + used.system) / 1000 / elapsed, 1);
      out[`${key}: polls / new versions`] = `${ttfb.length} / ${bodies}`;
    }
  } finally {
    sim.stop();
    await server.close();
    snapshot.close();
  }
}

/** Body size of both variants against a single-stream level-1 gzip of the same JSON. */
async function bodySizes(engine: OddsEngine, out: Out): Promise<void> {
  const snapshot = new BoardSnapshot(engine);
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
  const { engine, clock } = loadEngine(size);
  out['live rows'] = engine.liveRows;
  out['events with rows'] = engine.eventIdsWithLiveRows().length;
  out['libuv threadpool size (UV_THREADPOOL_SIZE)'] = process.env.UV_THREADPOOL_SIZE ?? '4 (default)';
  const short = process.env.BENCH_SNAPSHOT_SHORT === '1';
  await bodySizes(engine, out);
  for (const rate of [1000, 10_000]) await livePolls(engine, clock, rate, short ? 4 : 30, out);
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
