// Read replicas over NATS JetStream (LOG=nats), on the large board (BOARD overrides),
// with a nats-server started here (JetStream in a temp dir; the Debian package
// nats-server). The writer and one replica are the real app (startApp with LOG=nats and
// ROLE=writer / ROLE=replica), both in this process:
// - replica lag: the time from the writer applying a batch (its acknowledgement) to the
//   replica applying the same record, p50 / p99, with price ticks submitted at 10,000
//   and 100,000 updates/s (batches of 100 and 1,000, 100 batches a second);
// - read throughput of the replica against a stand-alone server (no log, no NATS) on
//   the same board and routes, with wrk (bench/http-baseline.bench.ts' runWrk);
// - catch-up: the replica stopped, 1,000,000 updates ingested, then the replica
//   restarted from its own checkpoint: the records it replays per second.
// Both nodes share this process's event loop, so the lag includes the writer's and
// the replica's work on one core (a replica on its own machine only adds the network).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { NO_PRICE } from '../engine/oddsStore.ts';
import type { Ingest } from '../ingest/ingest.ts';
import { startApp, type App } from '../service/app.ts';
import { startNatsServer } from '../test/helpers/natsServer.ts';
import { runWrk } from './http-baseline.bench.ts';

type Measurements = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CATCH_UP_UPDATES = Number(process.env.CATCH_UP_UPDATES ?? 1_000_000);
const ROUTES = ['/api/v1/status', '/api/v1/odds?limit=100', '/api/v1/odds?league=nba&limit=500', '/api/v1/snapshot'];

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function tickIds(app: App, count: number): string[] {
  const s = app.engine.store;
  const ids: string[] = [];
  const stride = Math.max(1, Math.floor(s.size / (count * 2)));
  for (let slot = 0; slot < s.size && ids.length < count; slot += stride) {
    if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE) ids.push(app.engine.idOf(slot));
  }
  return ids;
}

let tick = 0;
function batchOf(ids: readonly string[], size: number): unknown[] {
  const changes: unknown[] = [];
  for (let i = 0; i < size; i++) {
    tick++;
    changes.push({ op: 'price', id: ids[tick % ids.length], priceAmerican: tick % 2 === 0 ? -(100 + (tick % 300)) : 100 + (tick % 300), suspended: false });
  }
  return changes;
}

/** Submits `perSecond` updates a second for `seconds`, 100 batches a second; resolves with the writer's apply time per record index. */
async function paced(ingest: Ingest, ids: readonly string[], perSecond: number, seconds: number): Promise<Map<number, number>> {
  const applied = new Map<number, number>();
  const batchSize = Math.max(1, Math.round(perSecond / 100));
  const total = 100 * seconds;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * 10;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(ingest.submit(batchOf(ids, batchSize)).then((result) => void applied.set(result.index, performance.now())));
  }
  await Promise.all(inFlight);
  return applied;
}

async function replicaLag(writer: App, replica: App, ids: readonly string[], perSecond: number): Promise<{ p50: number; p99: number; achieved: number }> {
  const follower = replica.replicated!.replica!;
  const seen = new Map<number, number>();
  follower.afterApply = (index) => void seen.set(index, performance.now());
  const started = performance.now();
  const applied = await paced(writer.replicated!.ingest!, ids, perSecond, SECONDS);
  const elapsed = (performance.now() - started) / 1000;
  const last = Math.max(...applied.keys());
  while (follower.appliedIndex < last) await new Promise((resolve) => setTimeout(resolve, 5));
  follower.afterApply = null;
  const lags: number[] = [];
  for (const [index, at] of applied) {
    const replicaAt = seen.get(index);
    // a record the replica applied before the writer's acknowledgement ran counts as no lag
    if (replicaAt !== undefined) lags.push(Math.max(0, replicaAt - at));
  }
  lags.sort((a, b) => a - b);
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), achieved: Math.round((applied.size * Math.max(1, Math.round(perSecond / 100))) / elapsed) };
}

export async function benchReplicas(): Promise<Measurements> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const dir = mkdtempSync(join(tmpdir(), 'replicas-bench-'));
  const nats = await startNatsServer();
  const out: Measurements = { board: `${size}, seed 42` };
  const base = { CHECKPOINT_INTERVAL_MS: '0', WAL_FSYNC: '0', LOG: 'nats', NATS_URL: nats.url };
  const board = { size, seed: 42, now: NOW };
  const apps: App[] = [];
  const start = async (name: string, env: Record<string, string>) => {
    const app = await startApp({ clock: new ManualClock(NOW), board, dataDir: join(dir, name), ingestPort: 0, port: 0, env: { ...base, ...env }, log: () => {} });
    apps.push(app);
    return app;
  };
  try {
    const writer = await start('writer', { ROLE: 'writer', REPLICA_ID: 'writer' });
    let replica = await start('replica', { ROLE: 'replica', REPLICA_ID: 'replica' });
    const ids = tickIds(writer, 20_000);
    out['live rows'] = writer.engine.liveRows;

    for (const rate of [10_000, 100_000]) {
      const lag = await replicaLag(writer, replica, ids, rate);
      out[`${rate.toLocaleString('en-US')} updates/s asked (achieved)`] = lag.achieved;
      out[`${rate.toLocaleString('en-US')} updates/s: replica lag p50 (ms)`] = round(lag.p50, 2);
      out[`${rate.toLocaleString('en-US')} updates/s: replica lag p99 (ms)`] = round(lag.p99, 2);
    }

    // read throughput: the replica (following an idle stream) against a stand-alone server
    const alone = await startApp({ clock: new ManualClock(NOW), board, dbPath: join(dir, 'alone.db'), port: 0, env: {}, log: () => {} });
    apps.push(alone);
    for (const route of ROUTES) {
      const headers = { 'Accept-Encoding': 'gzip' };
      const onReplica = await runWrk(`http://127.0.0.1:${replica.port}${route}`, { seconds: SECONDS, headers });
      const onAlone = await runWrk(`http://127.0.0.1:${alone.port}${route}`, { seconds: SECONDS, headers });
      out[`${route}: replica / stand-alone (req/s)`] = `${Math.round(onReplica.requestsPerSec).toLocaleString('en-US')} / ${Math.round(onAlone.requestsPerSec).toLocaleString('en-US')}`;
    }
    await alone.close();

    // catch-up: stop the replica (its last checkpoint stays in its DATA_DIR), log a million updates, restart it
    await replica.close();
    const ingest = writer.replicated!.ingest!;
    const batches = Math.ceil(CATCH_UP_UPDATES / 1000);
    for (let i = 0; i < batches; i += 4) {
      const lane: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(batches, i + 4); j++) lane.push(ingest.submit(batchOf(ids, 1000)));
      await Promise.all(lane);
    }
    const started = performance.now();
    replica = await start('replica', { ROLE: 'replica', REPLICA_ID: 'replica' });
    const restore = replica.replicated!.replica!.restore;
    if (replica.engine.seq !== writer.engine.seq) throw new Error(`the replica restarted at seq ${replica.engine.seq}, the writer is at ${writer.engine.seq}`);
    out['catch-up: records replayed (1,000 updates each)'] = restore.replayedRecords;
    out['catch-up: restore from own checkpoint + replay (s)'] = round(restore.ms / 1000, 2);
    out['catch-up: updates/s'] = Math.round((restore.replayedRecords * 1000) / (restore.ms / 1000));
    out['catch-up: until the replica listens (s)'] = round((performance.now() - started) / 1000, 2);
  } finally {
    for (const app of apps.reverse()) await app.close().catch(() => {});
    await nats.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
