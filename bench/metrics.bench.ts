// What recording metrics costs, "on" against "off" measured interleaved so the
// machine's drift falls on both alike. The target: "on" within 3% of "off".
// - The hot read path: the app's routes served by three listeners in one process, one
//   with the metrics observer (http/metrics.ts) and two without ("off" and "off2"),
//   with wrk on an odds page and on the 304 path of an event read. All write
//   X-Request-Id; only the recording differs. "off2 / off" is the control: two
//   identical listeners must come out at 1.00 within the bench's noise, so a gap
//   between "on" and "off" larger than that noise is the recording's and not the
//   set-up's (which listener was made first, which port, which was warmed last).
//   Every round measures the three in a rotated order (off on off2, on off2 off, off2
//   off on), so each listener is measured as often in each position, and each run is
//   preceded by its own warm-up on the same listener.
// - The write path: acknowledged price updates/s over the ingest listener (HTTP msgpack
//   batches of 1,000 ticks, 4 in flight, from a child process: bench/ingestClient.ts),
//   with the write path's hooks (per batch: counted by way in and outcome, ack latency
//   observed; per fsync: timed) attached and detached between runs. WAL_FSYNC=0 here so
//   the disk's fsync variance does not drown a per-batch cost; the per-change count of
//   applied kinds is a typed-array increment that stays on in both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { Registry } from 'prom-client';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { HttpMetrics } from '../http/metrics.ts';
import { createServer, type RunningServer } from '../http/server.ts';
import { startApp, type App } from '../service/app.ts';
import { startProgress } from '../service/progress.ts';
import { runWrk, type WrkResult } from './http-baseline.bench.ts';
import { runClient, tickIds } from './ingest.bench.ts';
import { eventWithRows } from './scenarios/odds.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
/** Rounds of the read-path rotation, each measuring off, on and off2 once. */
const ROUNDS = 3;
/** Ingest runs alternate off/on: off, then this many (on, off) pairs. */
const INGEST_ROUNDS = 2;
/** Batches of 1,000 ticks per ingest run (BENCH_INGEST_BATCHES). */
const INGEST_BATCHES = Number(process.env.BENCH_INGEST_BATCHES ?? 200);

function etagOf(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.headers.etag ?? '')));
      })
      .on('error', reject);
  });
}

export async function benchMetrics(): Promise<Record<string, number | string>> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const out: Record<string, number | string> = { board: size, 'seconds per run': SECONDS, rounds: ROUNDS, 'ingest rounds': INGEST_ROUNDS };
  const dir = mkdtempSync(join(tmpdir(), 'odds-bench-metrics-'));
  const app = await startApp({
    clock: new ManualClock(NOW),
    board: { size, seed: 42, now: NOW },
    dataDir: join(dir, 'data'),
    dbPath: join(dir, 'odds.db'),
    ingestPort: 0,
    env: { WAL_FSYNC: '0', CHECKPOINT_INTERVAL_MS: '0', CHECKPOINT_LOG_BYTES: String(2 ** 40), LOG_LEVEL: 'warn' },
    progress: true,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const servers: RunningServer[] = [];
  try {
    Object.assign(out, await readPathOnOff(app, servers));
    Object.assign(out, await ingestOnOff(app));
  } finally {
    for (const server of servers) await server.close();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

type Listener = 'off' | 'on' | 'off2';
const LISTENERS: readonly Listener[] = ['off', 'on', 'off2'];

/** Requests/s of the read path on three listeners of the app's routes: without the observer (off, off2) and with it (on). */
export async function readPathOnOff(app: App, servers: RunningServer[]): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const routes = app.server.router.routes.map((route) => route.def);
  const observer = new HttpMetrics(new Registry());
  const make = (observed: boolean) => createServer({ routes, openapi: false, clock: app.engine.clock, port: 0, ...(observed ? { observer } : {}) });
  const listeners: Record<Listener, RunningServer> = { off: await make(false), on: await make(true), off2: await make(false) };
  servers.push(listeners.off, listeners.on, listeners.off2);
  const event = eventWithRows(app, 300);
  const eventPath = `/api/v1/odds?event_id=${encodeURIComponent(event.id)}&limit=1000`;
  const cases = [
    { name: 'odds league=nba limit=100', path: '/api/v1/odds?league=nba&limit=100', headers: {} as Record<string, string> },
    { name: `odds event_id 304 (${event.rows} rows)`, path: eventPath, headers: { 'If-None-Match': await etagOf(listeners.off.port, eventPath) } },
  ];
  const bar = startProgress('metrics bench', cases.length * ROUNDS * LISTENERS.length, { unit: 'runs' });
  let runs = 0;
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  for (const c of cases) {
    const rates: Record<Listener, number[]> = { off: [], on: [], off2: [] };
    const cpu: Record<Listener, number[]> = { off: [], on: [], off2: [] };
    const recordedBefore = observer.count('/api/v1/odds');
    let answeredOn = 0;
    const measure = async (which: Listener): Promise<void> => {
      const url = `http://127.0.0.1:${listeners[which].port}${c.path}`;
      await runWrk(url, { seconds: 1, headers: c.headers });
      const before = process.cpuUsage();
      const result: WrkResult = await runWrk(url, { seconds: SECONDS, headers: c.headers });
      const used = process.cpuUsage(before);
      if (result.errors > 0) throw new Error(`${c.name}: ${result.errors} errors`);
      bar.update(++runs);
      rates[which].push(result.requestsPerSec);
      if (which === 'on') answeredOn += result.requests;
      cpu[which].push((used.user + used.system) / result.requests);
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < LISTENERS.length; i++) await measure(LISTENERS[(round + i) % LISTENERS.length]!);
    }
    // "on" must have recorded what it answered (its warm-ups too), or it measured nothing.
    const recorded = observer.count('/api/v1/odds') - recordedBefore;
    if (recorded < answeredOn) throw new Error(`${c.name}: the observer recorded ${recorded} requests of the ${answeredOn} answered`);
    const off = mean(rates.off);
    out[`${c.name}: metrics off req/s (mean of ${ROUNDS})`] = Math.round(off);
    out[`${c.name}: metrics on req/s (mean of ${ROUNDS})`] = Math.round(mean(rates.on));
    out[`${c.name}: control off2 req/s (mean of ${ROUNDS})`] = Math.round(mean(rates.off2));
    out[`${c.name}: on / off`] = Number((mean(rates.on) / off).toFixed(3));
    out[`${c.name}: off2 / off (control)`] = Number((mean(rates.off2) / off).toFixed(3));
    // The spread of the same ratios round by round: how far one round's noise goes.
    const byRound = (which: Listener) => rates[which].map((rate, round) => (rate / rates.off[round]!).toFixed(3)).join(' ');
    out[`${c.name}: on / off by round`] = byRound('on');
    out[`${c.name}: off2 / off by round`] = byRound('off2');
    // The server process's CPU time per answered request, a second view: time spent
    // waiting for a core is not in it (what other load does to caches and to how many
    // requests one wake-up of the event loop finds still is).
    out[`${c.name}: CPU µs per request off / on / off2`] = [mean(cpu.off), mean(cpu.on), mean(cpu.off2)].map((us) => us.toFixed(2)).join(' / ');
    out[`${c.name}: CPU per request on / off`] = Number((mean(cpu.on) / mean(cpu.off)).toFixed(3));
    out[`${c.name}: CPU per request off2 / off (control)`] = Number((mean(cpu.off2) / mean(cpu.off)).toFixed(3));
    bar.phase(`${c.name}: on / off ${(mean(rates.on) / off).toFixed(3)}, off2 / off ${(mean(rates.off2) / off).toFixed(3)}`);
  }
  bar.finish();
  return out;
}

/** Acknowledged ingest updates/s with the write path's metric hooks attached (on) and detached (off), interleaved. */
async function ingestOnOff(app: App): Promise<Record<string, number>> {
  const durable = app.durable!;
  const board = durable.durable;
  const port = (await durable.listen()).port;
  const hooks = { onBatch: board.ingest.onBatch, onFsync: board.log.onFsync };
  const ids = tickIds(app, 20_000);
  const set = (on: boolean) => {
    board.ingest.onBatch = on ? hooks.onBatch : null;
    board.log.onFsync = on ? hooks.onFsync : null;
  };
  const bar = startProgress('metrics bench: ingest', 2 * INGEST_ROUNDS + 1, { unit: 'runs' });
  let runs = 0;
  const measure = async (on: boolean): Promise<number> => {
    set(on);
    const result = await runClient({ kind: 'http', port, token: durable.token.token, ids, batchSize: 1000, inFlight: 4, batches: INGEST_BATCHES });
    if (result.errors.length > 0) throw new Error(`ingest: ${result.errors.join('; ')}`);
    bar.update(++runs);
    return result.updates / (result.ms / 1000);
  };
  try {
    await measure(false); // warm-up
    runs = 0;
    const offs = [await measure(false)];
    const ons: number[] = [];
    for (let round = 0; round < INGEST_ROUNDS; round++) {
      ons.push(await measure(true));
      offs.push(await measure(false));
    }
    bar.finish();
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const name = `ingest HTTP msgpack 1,000 ticks x 4 in flight, WAL_FSYNC=0`;
    return {
      [`${name}: metrics off updates/s (mean of ${offs.length})`]: Math.round(mean(offs)),
      [`${name}: metrics on updates/s (mean of ${ons.length})`]: Math.round(mean(ons)),
      [`${name}: on / off`]: Number((mean(ons) / mean(offs)).toFixed(3)),
    };
  } finally {
    set(true);
  }
}
