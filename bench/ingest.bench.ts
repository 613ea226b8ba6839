// The write path on the large board (BOARD overrides): the real app with a DATA_DIR in a
// temp dir and its ingest listener on loopback, fed by a child process (its own event
// loop and core; bench/ingestClient.ts):
// - acknowledged price updates/s in process (msgpack bodies straight to the write path,
//   4 in flight: what the write path does without the listener);
// - ns per change of each CPU stage of a 1,000-tick batch (stageCosts): the tick path's
//   read, validation, record, frame and apply with every engine listener, and the
//   general path's decode, validation and record for comparison;
// - acknowledged price updates/s: HTTP msgpack batches of 1,000 ticks with 4 in flight,
//   and one WebSocket with 4 batches in flight; with fsync (the default) and, after a
//   restart, with WAL_FSYNC=0;
// - ack latency of one-change batches sent one at a time, with fsync: p50 / p99;
// - fdatasync alone on this disk (a 64 KiB write then fdatasync, 200 times): what one
//   group commit costs at least;
// - the first checkpoint (after loading the board) and one after ingesting: how long
//   applies waited while the board was copied, the longest single step of that copy,
//   the longest event-loop stall during the whole checkpoint (monitorEventLoopDelay;
//   the pack runs in a worker thread), the whole write (copy + pack + write + fsync +
//   rename) and size;
// - restart from that checkpoint plus 1,000,000 logged updates: the restore alone
//   (DurableBoard.open: read the checkpoint, decode, replay the log) and the whole start
//   until the service listens, against generating and loading the board;
// - after each start, how long the snapshot's first version then takes: the bench waits
//   for it before timing the write path. Its refreshes while ticks arrive (the
//   SNAPSHOT_MAX_AGE_MS bound; 0 turns them off) stay in the figures.
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { pack } from 'msgpackr';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../engine/clock.ts';
import type { BoardSize } from '../engine/model.ts';
import { NO_PRICE } from '../engine/oddsStore.ts';
import { startApp, type App } from '../service/app.ts';
import type { ClientResult, ClientTask } from './ingestClient.ts';
import { BoardView } from '../ingest/boardView.ts';
import { decodeBatch } from '../ingest/decode.ts';
import { encodeRecord, encodeTickRecord } from '../ingest/record.ts';
import { SpareBuffers } from '../ingest/spareBuffers.ts';
import { readTickBatch } from '../ingest/tickBatch.ts';
import { TickSlots } from '../ingest/tickSlots.ts';
import { validateBatch } from '../ingest/validate.ts';
import { validateTicks } from '../ingest/validateTicks.ts';
import { encodeFrameHeader } from '../persistence/log/segments.ts';

type Measurements = Record<string, number | string>;

const NOW = Date.parse('2026-11-21T12:00:00Z');
const BATCH = 1000;
const IN_FLIGHT = 4;
const LOGGED_UPDATES = 1_000_000;

/** `cpus`: a taskset CPU list the client runs on (the alerts bench keeps load off the engine's core). */
export function runClient(task: ClientTask, cpus?: string): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, '--import', 'tsx', fileURLToPath(new URL('./ingestClient.ts', import.meta.url))];
    if (cpus !== undefined) command.unshift('taskset', '-c', cpus);
    const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ClientResult) : reject(new Error(`the ingest client exited ${code}`))));
    child.stdin.end(JSON.stringify(task));
  });
}

/** Ids of live rows priced in American odds (what the ticks move), spread over the board. */
export function tickIds(app: App, count: number): string[] {
  const s = app.engine.store;
  const ids: string[] = [];
  const stride = Math.max(1, Math.floor(s.size / (count * 2)));
  for (let slot = 0; slot < s.size && ids.length < count; slot += stride) {
    if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE) ids.push(app.engine.idOf(slot));
  }
  return ids;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;

/** fdatasync latency alone: what the disk costs each group commit, whatever the write path does. */
/** Milliseconds until the snapshot's first version (without history) is published. */
async function snapshotBuiltMs(app: App): Promise<number> {
  const t0 = performance.now();
  await app.snapshot.whenCurrent(false);
  return performance.now() - t0;
}

async function fdatasyncMs(dir: string): Promise<number[]> {
  const file = await open(join(dir, 'fsync-probe'), 'w');
  const block = Buffer.alloc(64 * 1024, 7);
  const times: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      await file.write(block, 0, block.length, i * block.length);
      const t0 = performance.now();
      await file.datasync();
      times.push(performance.now() - t0);
    }
  } finally {
    await file.close();
  }
  return times.sort((a, b) => a - b);
}

async function throughput(app: App, kind: 'http' | 'ws', ids: string[], batches: number): Promise<{ perSecond: number; result: ClientResult }> {
  const durable = app.durable!;
  const port = (await durable.listen()).port;
  const result = await runClient({ kind, port, token: durable.token.token, ids, batchSize: BATCH, inFlight: IN_FLIGHT, batches });
  if (result.errors.length > 0) throw new Error(`${kind}: ${result.errors.join('; ')}`);
  return { perSecond: Math.round(result.updates / (result.ms / 1000)), result };
}

/** `count` 1,000-tick msgpack bodies over `ids` (what the in-process and stage measurements send). */
function tickBodies(ids: string[], count: number): Buffer[] {
  const bodies: Buffer[] = [];
  for (let k = 0; k < count; k++) {
    const changes = [];
    for (let i = 0; i < BATCH; i++) changes.push({ op: 'price', id: ids[(k * BATCH + i) % ids.length], priceAmerican: -105 - ((k * 7 + i) % 60) });
    bodies.push(pack(changes));
  }
  return bodies;
}

/**
 * ns per change of each stage of the write path's CPU work on a 1,000-tick msgpack
 * batch, the median of `rounds` batches, run one after another in this process: the
 * tick path (read the body into typed arrays, validate, encode the log record, frame
 * header and CRC, apply to the engine with every listener of the app) and, for
 * comparison, the general path's decode into objects, validation and record encoding.
 * The applies go straight to the engine (not logged): call it before a checkpoint, which
 * then holds them, so a restart still finds the board the log describes.
 */
function stageCosts(app: App, ids: string[], rounds: number): Record<string, number> {
  const bodies = tickBodies(ids, 16);
  const engine = app.engine;
  const spares = new SpareBuffers();
  const slots = new TickSlots();
  const cold = app.persistence.coldWrites;
  const times: Record<string, number[]> = {};
  const stages = ['tick path: read body', 'tick path: validate', 'tick path: encode record', 'tick path: frame header + CRC', 'tick path: apply (engine + listeners)', 'general path: decode', 'general path: validate', 'general path: encode record'];
  for (const stage of stages) times[stage] = [];
  const time = Date.now();
  for (let r = 0; r < rounds; r++) {
    const body = bodies[r % bodies.length]!;
    let t0 = performance.now();
    const ticks = readTickBatch(body, spares);
    let t1 = performance.now();
    times[stages[0]!]!.push(t1 - t0);
    if (ticks === null || !validateTicks(ticks, engine, slots)) throw new Error('a bench body was not read as ticks');
    t0 = performance.now();
    times[stages[1]!]!.push(t0 - t1);
    const record = encodeTickRecord(time, ticks, spares);
    t1 = performance.now();
    times[stages[2]!]!.push(t1 - t0);
    encodeFrameHeader(r + 1, record);
    t0 = performance.now();
    times[stages[3]!]!.push(t0 - t1);
    engine.applyTicks(ticks, time);
    t1 = performance.now();
    times[stages[4]!]!.push(t1 - t0);
    spares.give(ticks.memory);
    spares.give(record.buffer as ArrayBuffer);

    t0 = performance.now();
    const decoded = decodeBatch(body, 'msgpack');
    t1 = performance.now();
    times[stages[5]!]!.push(t1 - t0);
    const validated = validateBatch(decoded.changes, (own) => new BoardView(engine, cold, [own], slots));
    t0 = performance.now();
    times[stages[6]!]!.push(t0 - t1);
    encodeRecord({ time, changes: validated.changes });
    t1 = performance.now();
    times[stages[7]!]!.push(t1 - t0);
  }
  const out: Record<string, number> = {};
  for (const stage of stages) out[`${stage} (ns/change, median of ${rounds} batches)`] = Math.round((percentile(times[stage]!.sort((a, b) => a - b), 50) * 1e6) / BATCH);
  return out;
}

/**
 * The write path without HTTP: msgpack bodies handed to Ingest.submitBody, 4 in flight,
 * in this process. Against the HTTP figure it tells the listener's share from the write
 * path's (decode, validate, log and fsync, apply and the engine's listeners).
 */
async function submitInProcess(app: App, ids: string[], batches: number): Promise<number> {
  const bodies = tickBodies(ids, 16);
  const ingest = app.durable!.durable.ingest;
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < batches) {
      const k = next++;
      await ingest.submitBody(bodies[k % bodies.length]!, 'msgpack');
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return Math.round((batches * BATCH) / ((performance.now() - started) / 1000));
}

export async function benchIngest(): Promise<Measurements> {
  const size = (process.env.BOARD ?? 'large') as BoardSize;
  const dir = mkdtempSync(join(tmpdir(), 'ingest-bench-'));
  const dataDir = join(dir, 'data');
  const snapshotBound = process.env.SNAPSHOT_MAX_AGE_MS; // 0 turns the snapshot's background refreshes off
  const env = { CHECKPOINT_INTERVAL_MS: '0', CHECKPOINT_LOG_BYTES: String(2 ** 40), ...(snapshotBound ? { SNAPSHOT_MAX_AGE_MS: snapshotBound } : {}) };
  const out: Measurements = { board: `${size}, seed 42`, 'SNAPSHOT_MAX_AGE_MS': snapshotBound ?? '(default)' };
  try {
    // a first start: generate and load the board, then its first checkpoint
    let started = performance.now();
    let app = await startApp({ clock: new ManualClock(NOW), board: { size, seed: 42, now: NOW }, dataDir, ingestPort: 0, port: 0, env, log: () => {} });
    out['first start: generate + load + checkpoint + listen (s)'] = round((performance.now() - started) / 1000);
    // The snapshot's first version is built in the background after the start (service/app.ts):
    // measured apart, and waited for, so the write path below is timed as a started service
    // runs it rather than beside a whole-board build competing for the same cores.
    out["first start: then the snapshot's first version (s)"] = round((await snapshotBuiltMs(app)) / 1000);
    const first = app.durable!.firstCheckpoint!;
    out['checkpoint after loading: applies held while copying (ms)'] = Math.round(first.appliesHeldMs);
    out['checkpoint after loading: longest copy step (ms, the event loop is held)'] = round(first.longestStepMs);
    out['checkpoint after loading: copy + pack in a worker (ms)'] = Math.round(first.encodeMs);
    out['checkpoint after loading: copy + pack + write + fsync + rename (ms)'] = Math.round(first.ms);
    out['checkpoint after loading: size (MiB)'] = round(first.bytes / 1048576);
    const fsyncs = await fdatasyncMs(dir);
    out['fdatasync alone after a 64 KiB write, p50 / p99 (ms)'] = `${round(percentile(fsyncs, 50), 2)} / ${round(percentile(fsyncs, 99), 2)}`;
    out['live rows'] = app.engine.liveRows;
    const ids = tickIds(app, 20_000);

    const inProcess = await submitInProcess(app, ids, 200);
    out['fsync on: in process (no HTTP: decode, validate, log, apply), 1,000 ticks x 4 in flight (updates/s)'] = inProcess;
    const http = await throughput(app, 'http', ids, 200);
    out['fsync on: HTTP msgpack, 1,000 ticks x 4 in flight (updates/s)'] = http.perSecond;
    out['fsync on: log groups (fsyncs) / batches'] = `${app.durable!.durable.log.groupsWritten} / ${app.durable!.durable.log.lastIndex}`;
    const ws = await throughput(app, 'ws', ids, 200);
    out['fsync on: WebSocket msgpack, 1,000 ticks x 4 in flight (updates/s)'] = ws.perSecond;
    const latency = await runClient({ kind: 'latency', port: (await app.durable!.listen()).port, token: app.durable!.token.token, ids, batchSize: 1, inFlight: 1, batches: 500 });
    const sorted = latency.latencies.sort((a, b) => a - b);
    out['fsync on: one-change batch ack latency p50 (ms)'] = round(percentile(sorted, 50), 2);
    out['fsync on: one-change batch ack latency p99 (ms)'] = round(percentile(sorted, 99), 2);

    Object.assign(out, stageCosts(app, ids, 200)); // before the checkpoint, which then holds its applies

    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const checkpoint = (await app.durable!.durable.checkpointNow())!;
    delay.disable();
    out['checkpoint after ingesting: applies held while copying (ms)'] = Math.round(checkpoint.appliesHeldMs);
    out['checkpoint after ingesting: longest copy step (ms)'] = round(checkpoint.longestStepMs);
    out['checkpoint after ingesting: longest event-loop stall during it (ms)'] = round(delay.max / 1e6);
    out['checkpoint after ingesting: copy + pack in a worker (ms)'] = Math.round(checkpoint.encodeMs);
    out['checkpoint after ingesting: copy + pack + write + fsync + rename (ms)'] = Math.round(checkpoint.ms);
    out['checkpoint after ingesting: size (MiB)'] = round(checkpoint.bytes / 1048576);

    const logged = await throughput(app, 'http', ids, LOGGED_UPDATES / BATCH);
    out['fsync on: HTTP, 1,000,000 updates logged after the checkpoint (updates/s)'] = logged.perSecond;
    out['log bytes after the checkpoint (MiB)'] = round(app.durable!.durable.log.bytesSinceCheckpoint / 1048576);
    const seq = app.engine.seq;
    await app.durable!.abandon(); // no last checkpoint: the restart replays the million
    await app.close();

    // restart from the checkpoint plus the logged million, with fsync off from here on
    started = performance.now();
    app = await startApp({ clock: new ManualClock(NOW), board: { size, seed: 42, now: NOW }, dataDir, ingestPort: 0, port: 0, env: { ...env, WAL_FSYNC: '0' }, log: () => {} });
    out['restart: restore (checkpoint read + decode + replay of 1,000,000 updates) (s)'] = round(app.durable!.durable.restore.ms / 1000, 2);
    out['restart: replayed records'] = app.durable!.durable.restore.replayedRecords;
    out['restart: until the service listens (s)'] = round((performance.now() - started) / 1000);
    out["restart: then the snapshot's first version (s)"] = round((await snapshotBuiltMs(app)) / 1000);
    if (app.engine.seq !== seq) throw new Error(`restored seq ${app.engine.seq}, expected ${seq}`);

    const httpOff = await throughput(app, 'http', ids, 400);
    out['fsync off: HTTP msgpack, 1,000 ticks x 4 in flight (updates/s)'] = httpOff.perSecond;
    const wsOff = await throughput(app, 'ws', ids, 400);
    out['fsync off: WebSocket msgpack, 1,000 ticks x 4 in flight (updates/s)'] = wsOff.perSecond;
    await app.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
