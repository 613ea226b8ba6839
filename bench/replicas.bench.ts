// Read replicas over NATS JetStream (LOG=nats), on the large board (BOARD overrides),
// with a nats-server started here (JetStream in a temp dir; the Debian package
// nats-server). The writer and one replica are the real app (startApp with LOG=nats and
// ROLE=writer / ROLE=replica), both in this process:
// - replica lag, timed with performance.now() (microseconds) and printed to 3 decimals,
//   with price ticks submitted at 10,000 and 100,000 updates/s (batches of 100 and
//   1,000, 100 batches a second): from the submit to the writer's apply (its
//   acknowledgement, after JetStream stored the record), from the submit to the
//   replica's apply, and the replica's apply minus the writer's, p50 / p99. The last
//   one is often negative: the server delivers the record to the replica while its
//   acknowledgement is still on the way to the writer, which applies only then;
// - read throughput of the replica against a stand-alone server (no log, no NATS) on
//   the same board and routes, with wrk (bench/http-baseline.bench.ts' runWrk);
// - catch-up: the replica stopped, 1,000,000 updates ingested, then the replica
//   restarted from its own checkpoint: the checkpoint load (s) apart from the replay
//   rate (records/s and updates/s);
// - an estimate of what N replicas serve from these figures, and what limits it.
// Both nodes share this process's event loop, so the lag includes the writer's and
// the replica's work on one core (a replica on its own machine only adds the network).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import type { Ingest } from '../ingest/ingest.ts';
import { startApp, type App } from '../service/app.ts';
import { startNatsServer } from '../fixtures/harness/natsServer.ts';
import { runWrk } from './http-baseline.bench.ts';
import { tickIds } from './ingest.bench.ts';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

type Measurements = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CATCH_UP_UPDATES = Number(process.env.CATCH_UP_UPDATES ?? 1_000_000);
const ROUTES = ['/api/v1/status', '/api/v1/odds?limit=100', '/api/v1/odds?league=nba&limit=500', '/api/v1/snapshot'];

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
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

/** Submits `perSecond` updates a second for `seconds`, 100 batches a second; resolves with the submit and the writer's apply time per record index. */
async function paced(ingest: Ingest, ids: readonly string[], perSecond: number, seconds: number): Promise<Map<number, { submitted: number; applied: number }>> {
  const applied = new Map<number, { submitted: number; applied: number }>();
  const batchSize = Math.max(1, Math.round(perSecond / 100));
  const total = 100 * seconds;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * 10;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const submitted = performance.now();
    inFlight.push(ingest.submit(batchOf(ids, batchSize)).then((result) => void applied.set(result.index, { submitted, applied: performance.now() })));
  }
  await Promise.all(inFlight);
  return applied;
}

interface LagFigures {
  /** Submit to the writer's apply, ms. */
  writer: { p50: number; p99: number };
  /** Submit to the replica's apply, ms. */
  replica: { p50: number; p99: number };
  /** The replica's apply minus the writer's, ms (negative: the replica applied first). */
  difference: { p50: number; p99: number };
  achieved: number;
  /** Updates submitted. */
  updates: number;
}

function spread(values: number[]): { p50: number; p99: number } {
  values.sort((a, b) => a - b);
  return { p50: percentile(values, 50), p99: percentile(values, 99) };
}

async function replicaLag(writer: App, replica: App, ids: readonly string[], perSecond: number): Promise<LagFigures> {
  const follower = replica.replicated!.replica!;
  const seen = new Map<number, number>();
  follower.afterApply = (index) => void seen.set(index, performance.now());
  const started = performance.now();
  const applied = await paced(writer.replicated!.ingest!, ids, perSecond, SECONDS);
  const elapsed = (performance.now() - started) / 1000;
  const last = Math.max(...applied.keys());
  while (follower.appliedIndex < last) await new Promise((resolve) => setTimeout(resolve, 5));
  follower.afterApply = null;
  const toWriter: number[] = [];
  const toReplica: number[] = [];
  const difference: number[] = [];
  for (const [index, at] of applied) {
    const replicaAt = seen.get(index);
    if (replicaAt === undefined) continue;
    toWriter.push(at.applied - at.submitted);
    toReplica.push(replicaAt - at.submitted);
    difference.push(replicaAt - at.applied);
  }
  return { writer: spread(toWriter), replica: spread(toReplica), difference: spread(difference), achieved: Math.round((applied.size * Math.max(1, Math.round(perSecond / 100))) / elapsed), updates: applied.size * Math.max(1, Math.round(perSecond / 100)) };
}

const ms = (figures: { p50: number; p99: number }) => `${figures.p50.toFixed(3)} / ${figures.p99.toFixed(3)}`;
const count = (n: number) => Math.round(n).toLocaleString('en-US');

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

    let achievedTop = 0;
    // what one replica receives from the NATS server per update (commit headers included): the stream's growth over the 100,000/s run
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    const streamBytes = async () => (await jsm.streams.info('ODDS')).state.bytes;
    let bytesPerUpdate = 0;
    for (const rate of [10_000, 100_000]) {
      const bytesBefore = await streamBytes();
      const lag = await replicaLag(writer, replica, ids, rate);
      bytesPerUpdate = ((await streamBytes()) - bytesBefore) / lag.updates;
      const asked = rate.toLocaleString('en-US');
      out[`${asked} updates/s asked (achieved)`] = lag.achieved;
      out[`${asked} updates/s: submit to writer apply p50 / p99 (ms)`] = ms(lag.writer);
      out[`${asked} updates/s: submit to replica apply p50 / p99 (ms)`] = ms(lag.replica);
      out[`${asked} updates/s: replica lag (replica apply - writer apply) p50 / p99 (ms)`] = ms(lag.difference);
      achievedTop = lag.achieved;
    }
    await nc.close();

    // read throughput: the replica (following an idle stream) against a stand-alone server
    const perReplica = new Map<string, number>();
    const alone = await startApp({ clock: new ManualClock(NOW), board, dbPath: join(dir, 'alone.db'), port: 0, env: {}, log: () => {} });
    apps.push(alone);
    for (const route of ROUTES) {
      const headers = { 'Accept-Encoding': 'gzip' };
      const onReplica = await runWrk(`http://127.0.0.1:${replica.port}${route}`, { seconds: SECONDS, headers });
      const onAlone = await runWrk(`http://127.0.0.1:${alone.port}${route}`, { seconds: SECONDS, headers });
      out[`${route}: replica / stand-alone (req/s)`] = `${count(onReplica.requestsPerSec)} / ${count(onAlone.requestsPerSec)}`;
      perReplica.set(route, onReplica.requestsPerSec);
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
    const replaySeconds = (restore.ms - restore.checkpointMs) / 1000;
    const replayUpdates = (restore.replayedRecords * 1000) / replaySeconds;
    out['catch-up: records replayed (1,000 updates each)'] = restore.replayedRecords;
    out['catch-up: checkpoint load, own disk (s)'] = round(restore.checkpointMs / 1000, 2);
    out['catch-up: replay (s)'] = round(replaySeconds, 2);
    out['catch-up: replay rate (records/s)'] = Math.round(restore.replayedRecords / replaySeconds);
    out['catch-up: replay rate (updates/s)'] = Math.round(replayUpdates);
    out['catch-up: restore total, checkpoint + replay (s)'] = round(restore.ms / 1000, 2);
    out['catch-up: until the replica listens (s)'] = round((performance.now() - started) / 1000, 2);

    // N replicas, estimated: nothing on the read path coordinates, so reads add up per
    // replica; what the fleet shares is the write side
    for (const [route, rate] of perReplica) out[`estimate: N replicas would serve ~N x ${count(rate)} req/s on ${route}`] = `4 replicas ~${count(4 * rate)} req/s`;
    const applyShare = 100_000 / replayUpdates;
    const fanOut = bytesPerUpdate * 100_000;
    out['estimate: what limits it'] =
      `(1) the writer: one stream, one writer, it published ${count(achievedTop)} updates/s here (asked 100,000), whatever N is; ` +
      `(2) the NATS server's fan-out: each replica receives ~${round(bytesPerUpdate, 1)} bytes per update, ${round(fanOut / 1e6, 1)} MB/s at 100,000 updates/s, so N replicas need N x that out of the server (a 10 Gbit/s NIC: ~${count(1.25e9 / fanOut)} replicas); ` +
      `(3) each replica's apply CPU: it applies up to ${count(replayUpdates)} updates/s on one core, so at 100,000 updates/s applying takes ~${round(100 * applyShare, 0)}% of its core and the reads above shrink to ~${round(100 * Math.max(0, 1 - applyShare), 0)}% of them`;
  } finally {
    for (const app of apps.reverse()) await app.close().catch(() => {});
    await nats.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
