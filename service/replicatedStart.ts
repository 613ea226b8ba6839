// The start of a node whose log is a NATS JetStream stream (LOG=nats), the sibling of
// durableStart.ts for the local log. ROLE picks what the node is:
//
//   writer   restores the board from its checkpoint (local, else the object store) plus
//            the stream after it, or loads the fixture board when the stream and the
//            object store are empty; takes ingest on INGEST_PORT and publishes each
//            batch to the stream before applying it; checkpoints to DATA_DIR and to the
//            object store every CHECKPOINT_INTERVAL_MS and on a clean stop.
//   replica  restores the same way, then follows the stream, applying each record at
//            its logged time; its ingest port answers every write 403 read_only; it
//            checkpoints to its own DATA_DIR (a restart resumes from there) and reports
//            its lag behind the stream to /readyz.
//
// Both count API key usage through the fleet's key-value buckets (fleetUsage.ts), so a
// key's limits hold across every node. Cold data (events, teams, players...) comes
// with the records like the odds; what the log does not carry is the start board's
// cold data (the fixture's events, teams, players, or BOARD=none's leagues), which a
// node with a new SQLite file generates from the writer's record of it in the object
// store (size, seed and NOW: natsCheckpoints.ts), whatever its own BOARD, SEED and clock.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { OddsEngine } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { Board, BoardSize } from '../engine/model.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import type { ProbeState } from '../http/routes/health.ts';
import type { RunningServer } from '../http/server.ts';
import type { Ingest } from '../ingest/ingest.ts';
import { DEFAULT_MAX_BATCH_BYTES, IngestGate, startIngestListener } from '../ingest/listener.ts';
import { FellBehindRetentionError, type Replica } from '../ingest/replica.ts';
import { startReadOnlyListener } from '../ingest/replicaListener.ts';
import { openReplicatedNode, type NatsSettings, type ReplicatedNode } from '../ingest/replicaStart.ts';
import { resolveIngestToken, type IngestToken } from '../ingest/token.ts';
import type { KeyChecker } from '../persistence/keyCheck.ts';
import { FleetKeyChecker } from '../persistence/nats/fleetKeyChecker.ts';
import { FleetUsage } from '../persistence/nats/fleetUsage.ts';
import { redactCredentials } from '../persistence/nats/natsUrl.ts';
import { DataDirLock } from '../persistence/log/dataDirLock.ts';
import { openPersistence, type Persistence } from '../persistence/persistence.ts';
import { readConfig, type Config } from './config.ts';
import type { WritePathFailure } from './writePathHealth.ts';
import { fixtureBoard, loadWithProgress, referenceBoard, type BoardStartOptions, type StartMode } from './boardStart.ts';

/** The JetStream settings of a configuration, or null when LOG is not 'nats'. */
export function natsSettingsFromConfig(config: Config): NatsSettings | null {
  if (config.log !== 'nats') return null;
  return {
    role: config.role,
    url: config.natsUrl,
    stream: config.natsStream,
    board: config.natsBoard,
    maxAgeMs: config.natsMaxAgeMs,
    maxBytes: config.natsMaxBytes,
    replicaId: config.replicaId,
  };
}

/** The JetStream settings read from `env` (through readConfig: a bad value throws ConfigError naming it), or null when LOG is not 'nats'. */
export function natsSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): NatsSettings | null {
  return natsSettingsFromConfig(readConfig(env));
}

export interface ReplicatedStartOptions extends BoardStartOptions {
  settings: NatsSettings;
  config: Config;
  dataDir: string;
  dbPath?: string;
}

export interface ReplicatedStart {
  role: 'writer' | 'replica';
  engine: OddsEngine;
  board: Board;
  persistence: Persistence;
  mode: StartMode;
  /** The writer's write path; null on a replica. */
  ingest: Ingest | null;
  /** The replica following the stream; null on the writer. */
  replica: Replica | null;
  /** Counts keys against the fleet's usage. */
  keyChecker: KeyChecker;
  /** The ingest listener's token (the writer's); null on a replica. */
  token: IngestToken | null;
  /** /readyz's view of the node: a replica is ready while it keeps up with the stream. */
  readiness(): ProbeState;
  /** The ingest listener's port once listen() ran, else null. */
  listenerPort(): number | null;
  /** Starts the ingest listener (the writer's, or the replica's read-only one). */
  listen(): Promise<RunningServer>;
  describe(): string;
  /**
   * Calls `listener` once if the replica falls behind the stream's retention (never on
   * the writer, nor after close()): the records it still needs are gone, so its board can
   * only be rebuilt from the object store, which service/main.ts does by restarting the
   * app in process. From then on /readyz answers 503 "re-bootstrapping from the object
   * store"; without a listener it says the replica stopped following and must be restarted.
   */
  onFellBehind(listener: (error: Error) => void): void;
  /** Calls `listener` once if the writer's log stops taking appends (a failed publish); never on a replica. */
  onWritePathStopped(listener: (failure: WritePathFailure) => void): void;
  /** Stops the listener, takes a last checkpoint, closes the node (the lock stays held: see `lock`). */
  close(): Promise<void>;
  /** The DATA_DIR lock, taken before anything in DATA_DIR was read; its holder (openServedBoard's caller) releases it after close() and after closing `persistence`, the last file in DATA_DIR. */
  lock: DataDirLock;
}

/** How often a replica reads the stream's end for its lag, and checkpoints what it applied. */
const LAG_PROBE_MS = 1000;

export async function openReplicatedStart(options: ReplicatedStartOptions): Promise<ReplicatedStart> {
  const { settings, config, clock, dataDir } = options;
  mkdirSync(dataDir, { recursive: true });
  // one process per DATA_DIR, before anything in it is read (its SQLite file, its
  // checkpoints, the ingest token): two writers would each write the cold data and keys
  // and replace each other's checkpoints; a second start stops here, naming the first
  const lock = DataDirLock.acquire(dataDir);
  const dbPath = options.dbPath ?? join(dataDir, 'odds.db');
  const newDb = dbPath === ':memory:' || !existsSync(dbPath);
  let persistence: Persistence;
  try {
    persistence = openPersistence({ path: dbPath, env: options.env });
  } catch (error) {
    lock.release();
    throw error;
  }
  let node: ReplicatedNode | null = null;
  let fleet: FleetUsage | null = null;
  try {
    node = await openReplicatedNode(settings, { dataDir, clock, cold: persistence, fsync: config.walFsync, warn: options.log, restored: options.restored });
    const engine = node.role === 'writer' ? node.writer.engine : node.replica.engine;
    const start = options.board;
    let mode: StartMode = 'restored';
    let board: Board;
    if (node.role === 'writer' && node.writer.fresh) {
      board = fixtureBoard(start, clock.now(), options.progress);
      mode = start === 'none' ? 'empty' : 'fixture';
      loadWithProgress(engine, board, options.progress);
      persistence.loadCold(board, { eventsWithOdds: new Set(engine.eventIdsWithLiveRows()) });
      await node.checkpoints.putStartBoard({ size: board.options.size, seed: board.options.seed, now: board.options.now });
      await node.writer.checkpointNow();
    } else {
      board = referenceBoard(clock.now());
      if (newDb) {
        // the start board's cold data is not in the stream: load the board the writer
        // recorded in the object store (its settings and NOW, not this node's)
        const recorded = await node.checkpoints.startBoard();
        const initial =
          recorded === null ? fixtureBoard(start, clock.now(), options.progress) : recorded.size === 'none' ? referenceBoard(recorded.now, recorded.seed) : generateBoard({ size: recorded.size as BoardSize, seed: recorded.seed, now: recorded.now });
        const scratch = new OddsEngine(clock);
        loadBoard(scratch, initial);
        persistence.loadCold(initial, { eventsWithOdds: new Set(scratch.eventIdsWithLiveRows()) });
      }
    }
    fleet = await FleetUsage.open(node.nc, { replicaId: settings.replicaId, stream: settings.stream });
    return running(options, node, fleet, persistence, engine, board, mode, lock);
  } catch (error) {
    await fleet?.close().catch(() => {});
    await node?.close().catch(() => {});
    persistence.close();
    lock.release();
    throw error;
  }
}

function running(options: ReplicatedStartOptions, node: ReplicatedNode, fleet: FleetUsage, persistence: Persistence, engine: OddsEngine, board: Board, mode: StartMode, lock: DataDirLock): ReplicatedStart {
  const { config, settings, dataDir, env } = options;
  const host = options.ingestHost ?? config.ingestHost;
  const port = options.ingestPort ?? config.ingestPort;
  const token = node.role === 'writer' ? resolveIngestToken(dataDir, env) : null;
  const warn = options.log;
  let listener: RunningServer | null = null;
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, run: () => void) => {
    if (ms <= 0) return;
    const timer = setInterval(run, ms);
    timer.unref();
    timers.push(timer);
  };

  if (node.role === 'writer') {
    const writer = node.writer;
    every(config.checkpointIntervalMs, () => void writer.checkpointNow().catch((error: unknown) => warn(`checkpoint failed: ${String(error)}`)));
  } else {
    const replica = node.replica;
    let checkpointed = replica.appliedIndex;
    every(LAG_PROBE_MS, () => void replica.measureLag().catch(() => {}));
    every(config.checkpointIntervalMs, () => {
      if (replica.appliedIndex === checkpointed || replica.stale !== null) return;
      replica.checkpointInBackground().then(
        (written) => (checkpointed = written.logIndex),
        (error: unknown) => warn(`checkpoint failed: ${String(error)}`),
      );
    });
  }

  let fellBehindListener: ((error: Error) => void) | null = null;
  let rebootstrapping = false;
  const fellBehind = (error: Error) => {
    if (closed || rebootstrapping || fellBehindListener === null || !(error instanceof FellBehindRetentionError)) return;
    rebootstrapping = true;
    fellBehindListener(error);
  };
  if (node.role === 'replica') node.replica.onStale = fellBehind;

  const readiness = (): ProbeState => {
    if (rebootstrapping) return { ready: false, reason: "fell behind the stream's retention: re-bootstrapping from the object store", info: { role: 'replica', applied: node.role === 'replica' ? node.replica.appliedIndex : 0, lag: node.role === 'replica' ? node.replica.lagRecords : 0 } };
    // a failed publish stops only the write path: the "writePath" check (writePathHealth.ts) says so
    if (node.role === 'writer') return { ready: true, reason: '', info: { role: 'writer', applied: node.writer.ingest.appliedIndex } };
    return node.replica.readiness(config.replicaMaxLag);
  };

  const describe = (): string => {
    const parts = [`board seq ${engine.seq}`, `${node.role} on ${redactCredentials(settings.url)} stream ${settings.stream}`];
    const restore = node.role === 'writer' ? node.writer.restore : node.replica.restore;
    if (mode === 'restored') parts.push(`restored: checkpoint ${restore.source === 'none' ? 'none' : `${restore.checkpointIndex} (${restore.source})`} + ${restore.replayedRecords} record(s) from the stream in ${(restore.ms / 1000).toFixed(1)}s`);
    else if (mode === 'fixture') parts.push('fixture board loaded and checkpointed to disk and the object store');
    else parts.push('empty board (BOARD=none)');
    if (listener !== null) {
      if (token === null) parts.push(`ingest on http://${host}:${listener.port}/ingest/v1/batches refuses writes (403 read_only: a replica)`);
      else parts.push(`ingest on http://${host}:${listener.port}/ingest/v1/batches and ws://${host}:${listener.port}/ingest/v1/ws (${token.source === 'env' ? 'token from INGEST_TOKEN' : `token in ${token.file}`})`);
    }
    return parts.join('; ');
  };

  return {
    role: node.role,
    engine,
    board,
    persistence,
    mode,
    ingest: node.role === 'writer' ? node.writer.ingest : null,
    replica: node.role === 'replica' ? node.replica : null,
    keyChecker: new FleetKeyChecker(persistence.apiKeys, persistence.usage, fleet),
    token,
    lock,
    readiness,
    listenerPort: () => listener?.port ?? null,
    async listen() {
      if (listener !== null) return listener;
      if (node.role === 'writer') {
        const maxBatchBytes = intOr(env.INGEST_MAX_BATCH_BYTES, DEFAULT_MAX_BATCH_BYTES);
        // a replicated node opens its ingest port once restored (it has no batches to refuse before)
        const gate = new IngestGate();
        gate.open(node.writer.ingest);
        listener = await startIngestListener({ gate, operationsRoutes: options.operationsRoutes, adminRoutes: options.adminRoutes, token: token!.token, host, port, maxBatchBytes, transport: options.transport, log: warn });
      } else {
        listener = await startReadOnlyListener({ host, port, transport: options.transport, log: warn, operationsRoutes: options.operationsRoutes });
      }
      return listener;
    },
    describe,
    onFellBehind(listener) {
      fellBehindListener = listener;
      // it may have fallen behind before anyone listened
      if (node.role === 'replica' && node.replica.stale !== null) fellBehind(node.replica.stale);
    },
    onWritePathStopped(listener) {
      if (node.role !== 'writer') return;
      const log = node.writer.log;
      const tell = (stopped: { since: number; error: string; durableIndex: number }) => listener({ since: stopped.since, error: stopped.error, what: `publishing to JetStream stream ${settings.stream} failed`, durableIndex: stopped.durableIndex });
      log.onStopped = tell;
      if (log.stopped !== null) tell(log.stopped);
      node.writer.ingest.onStopped = (stopped) =>
        listener({ since: stopped.since, error: stopped.error, what: 'applying a logged batch to the board failed (an internal error; batches are answered 503 ingest_failed)', durableIndex: stopped.appliedIndex });
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearInterval(timer);
      try {
        if (listener !== null) await listener.close();
        if (node.role === 'writer') {
          const ingest = node.writer.ingest;
          // let batches already published apply before the last checkpoint
          while (ingest.inFlightCount > 0) await new Promise((resolve) => setImmediate(resolve));
          if (!node.writer.log.broken) await node.writer.checkpointNow().catch((error: unknown) => warn(`last checkpoint failed: ${String(error)}`));
        } else if (node.replica.stale === null) {
          await node.replica.checkpointInBackground().catch((error: unknown) => warn(`last checkpoint failed: ${String(error)}`));
        }
        await fleet.close();
      } finally {
        await node.close();
      }
    },
  };
}

function intOr(text: string | undefined, fallback: number): number {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : fallback;
}
