// The durable start of the service: a board kept in DATA_DIR (checkpoint + write-ahead
// log, ingest/durableBoard.ts), the ingest listener in front of its write path, and
// the words the ready line says about both. servedBoard.ts calls openDurableStart when it
// is given a data dir (and LOG=file); without one the service runs from the fixture board
// with no log (what most tests do).
//
// Start modes:
//   restored  DATA_DIR holds a checkpoint or log records: the board is the newest valid
//             checkpoint plus the log after it; no fixture board is generated, and the
//             cold data (events, teams, players, seasons, box scores) is the SQLite file
//             of the earlier run (DB_PATH, default DATA_DIR/odds.db), which the log's
//             replay brings up to date.
//   fixture   an empty DATA_DIR and BOARD=small|medium|large: the fixture board, loaded
//             and checkpointed at once (so the next start restores it).
//   empty     an empty DATA_DIR and BOARD=none: no events, no rows; the reference data
//             (leagues, sources) only, for a feed to fill.
//
// The ingest listener opens before the board is restored or loaded: the operations
// routes mounted on it (/healthz, /readyz, /metrics) answer during a long load, while
// its batch routes answer 503 not_ready until listen() opens the gate to the board's
// write path.
//
// Closing shuts the gate (batches: 503 not_ready, probes still answered), lets the
// batches in flight apply, takes a checkpoint (SIGTERM, SIGINT), so the next start
// replays nothing, and only then closes the listener.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { OddsEngine } from '../engine/engine.ts';
import type { Board } from '../engine/model.ts';
import type { RunningServer } from '../http/server.ts';
import { DurableBoard, type CheckpointReport } from '../ingest/durableBoard.ts';
import { DEFAULT_MAX_BATCH_BYTES, IngestGate, startIngestListener } from '../ingest/listener.ts';
import { resolveIngestToken, type IngestToken } from '../ingest/token.ts';
import type { DataDirLock } from '../persistence/log/dataDirLock.ts';
import type { Storage } from '../persistence/log/storage.ts';
import type { Persistence } from '../persistence/persistence.ts';
import type { KeyChecker } from '../persistence/keyCheck.ts';
import { fixtureBoard, loadWithProgress, referenceBoard, stepProgress, type BoardStartOptions, type StartMode } from './boardStart.ts';
import { removeIngestAddress, writeIngestAddress } from '../ingest/ingestAddress.ts';
import type { TickArchive } from '../persistence/archive/tickArchive.ts';
import { attachTickArchive, type ArchiveSettings } from '../ingest/archiveRows.ts';

export interface DurableStartOptions extends BoardStartOptions {
  dataDir: string;
  /** The tick archive (docs/archive.md); absent: none. */
  archive?: ArchiveSettings;
  persistence: Persistence;
  /**
   * The DATA_DIR lock, taken before anything in DATA_DIR was read (openServedBoard takes
   * it). Never released here, not even when the start fails: its holder releases it last,
   * once every file in DATA_DIR is closed (the SQLite file outlives this start's close).
   */
  lock: DataDirLock;
  /** Called once the ingest listener listens, before the board is restored or loaded; the start waits for it. */
  listening?: (port: number) => void | Promise<void>;
  /** Where the log, the checkpoints and the tick archive write (default node:fs): the tests' fault seam (persistence/log/storageFaults.ts). */
  storage?: Storage;
}

export interface DurableStart {
  durable: DurableBoard;
  engine: OddsEngine;
  /** The fixture board loaded, or (restored, empty) the reference-only board: leagues and sources, nothing else. */
  board: Board;
  mode: StartMode;
  /** The checkpoint taken right after loading the fixture board (fixture mode). */
  firstCheckpoint: CheckpointReport | null;
  /** The tick archive, when ARCHIVE_DIR is set. */
  archive: TickArchive | null;
  token: IngestToken;
  /** The ingest listener (open since before the board was loaded; batches refused until listen()). */
  listener: RunningServer;
  /** Opens the ingest listener's batch routes to the write path (after the public server listens, so a feed never writes to a board nobody serves). */
  listen(): Promise<RunningServer>;
  /** What the ready line says: the start mode, the restore, WAL_FSYNC=0, the ingest listener and its token file. */
  describe(): string;
  /** Stops the listener, takes a last checkpoint, closes the log. */
  close(): Promise<void>;
  /** Stops the listener and closes the log without a last checkpoint (what a crash leaves: the bench restarts from it). */
  abandon(): Promise<void>;
}
function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a non-negative integer, got ${text}`);
  return Number(text);
}
export async function openDurableStart(options: DurableStartOptions): Promise<DurableStart> {
  const { env, clock, persistence, dataDir, timeline } = options;
  mkdirSync(dataDir, { recursive: true });
  const lock = options.lock;
  let durable: DurableBoard;
  let listener: RunningServer;
  let token: IngestToken;
  const host = options.ingestHost ?? env.INGEST_HOST ?? '127.0.0.1';
  const gate = new IngestGate();
  // a failure from here on leaves the lock to its holder (see DurableStartOptions.lock)
  token = resolveIngestToken(dataDir, env);
  const port = options.ingestPort ?? intFrom(env, 'INGEST_PORT', 8081);
  const maxBatchBytes = intFrom(env, 'INGEST_MAX_BATCH_BYTES', DEFAULT_MAX_BATCH_BYTES);
  listener = await startIngestListener({ gate, operationsRoutes: options.operationsRoutes, adminRoutes: options.adminRoutes, token: token.token, host, port, maxBatchBytes, transport: options.transport, log: options.log });
  timeline?.mark('ingest listener');
  try {
    await options.listening?.(listener.port);
    timeline?.skip();
    // a refused restore (RestoreRefusedError) names the file, offset and what repair would drop
    durable = DurableBoard.open({ dataDir, clock, cold: persistence, env, warn: options.log, progress: stepProgress(options.progress), lock, storage: options.storage, restored: options.restored });
    if (timeline !== undefined) {
      const restore = durable.restore;
      if (restore.checkpoint !== null) timeline.add('checkpoint', restore.checkpointMs);
      timeline.add('replay', restore.ms - restore.checkpointMs);
      timeline.skip();
    }
  } catch (error) {
    await listener.close();
    throw error;
  }
  const engine = durable.engine;
  let mode: StartMode = 'restored';
  let board: Board;
  let firstCheckpoint: CheckpointReport | null = null;
  try {
    if (durable.fresh) {
      const start = options.board;
      board = fixtureBoard(start, clock.now(), options.progress);
      timeline?.mark('generate');
      mode = start === 'none' ? 'empty' : 'fixture';
      loadWithProgress(engine, board, options.progress);
      timeline?.mark('load');
      persistence.loadCold(board, { eventsWithOdds: new Set(engine.eventIdsWithLiveRows()) });
      timeline?.mark('cold data');
      firstCheckpoint = await durable.checkpointNow();
      timeline?.mark('first checkpoint');
    } else {
      board = referenceBoard(clock.now());
    }
  } catch (error) {
    try {
      await durable.close();
    } finally {
      await listener.close();
    }
    throw error;
  }

  // the tick archive follows the log from here: every durable record is handed to it,
  // and the log keeps what it lacks; its first flush reads what the log holds after it
  let archive: TickArchive | null = null;
  if (options.archive !== undefined) {
    try {
      archive = await attachTickArchive(durable, options.archive, { now: () => clock.now(), warn: options.log, fsync: env.WAL_FSYNC !== '0', storage: options.storage });
      timeline?.mark('tick archive');
    } catch (error) {
      try {
        await durable.close();
      } finally {
        await listener.close();
      }
      throw error;
    }
  }

  let accepting = false;
  let closed = false;

  const describe = (): string => {
    const parts: string[] = [`board seq ${engine.seq}`];
    const r = durable.restore;
    if (mode === 'restored') {
      const from = r.checkpoint === null ? 'no checkpoint' : `${r.checkpoint.path.slice(r.checkpoint.path.lastIndexOf('/') + 1)}`;
      parts.push(`restored from ${dataDir}: ${from} + ${r.replayedRecords} log record(s) (${r.replayedChanges} changes) in ${(r.ms / 1000).toFixed(1)}s`);
      if (r.skippedCheckpoints.length > 0) parts.push(`passed over damaged checkpoint(s), set aside as *.damaged: ${r.skippedCheckpoints.join('; ')}`);
      if (r.coveredDamage.length > 0) parts.push(`stepped over damage in log records a checkpoint covers: ${r.coveredDamage.join(', ')}`);
    } else if (mode === 'fixture') {
      parts.push(`fixture board loaded into ${dataDir} and checkpointed${firstCheckpoint === null ? '' : ` (${(firstCheckpoint.bytes / 1048576).toFixed(1)} MiB in ${(firstCheckpoint.ms / 1000).toFixed(1)}s)`}`);
    } else {
      parts.push(`empty board (BOARD=none) in ${dataDir}`);
    }
    if (r.tornTail !== null) parts.push(`torn tail cut: ${r.tornTail.droppedBytes} bytes of ${r.tornTail.file} from offset ${r.tornTail.offset} (${r.tornTail.detail}; a write a crash cut off, never acknowledged)`);
    if (archive !== null) parts.push(`tick archive in ${options.archive!.dir} (every ${options.archive!.intervalMs} ms, ${options.archive!.retentionDays} days kept; docs/archive.md)`);
    if (env.WAL_FSYNC === '0') parts.push('WAL_FSYNC=0: the log is not fsync\'d, acknowledged batches survive a process crash but not a power cut');
    if (accepting) {
      const tokenWhere = token.source === 'env' ? 'token from INGEST_TOKEN' : `token ${token.source === 'generated' ? 'generated into' : 'in'} ${token.file}`;
      parts.push(`ingest on http://${host}:${listener.port}/ingest/v1/batches and ws://${host}:${listener.port}/ingest/v1/ws (${tokenWhere})`);
    }
    return parts.join('; ');
  };

  return {
    durable,
    engine,
    board,
    mode,
    firstCheckpoint,
    archive,
    token,
    listener,
    async listen() {
      if (!closed) {
        // `npm run feed` with this DATA_DIR finds this listener here; written first, so a
        // listen that cannot write it (a directory in the way, a full disk) takes no
        // batches and leaves no file for close() to remove
        writeIngestAddress(dataDir, host, listener.port);
        gate.open(durable.ingest);
        accepting = true;
      }
      return listener;
    },
    describe,
    async abandon() {
      if (closed) return;
      closed = true;
      gate.shut('the process is stopping');
      if (accepting) removeIngestAddress(dataDir);
      try {
        await listener.close();
      } finally {
        try {
          await archive?.abandon();
        } finally {
          await durable.close();
        }
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      // probes keep answering (readiness: 503) while the last checkpoint is written
      gate.shut('the process is shutting down');
      if (accepting) removeIngestAddress(dataDir);
      try {
        // let batches already in the log apply before the last checkpoint
        while (durable.ingest.inFlightCount > 0) await new Promise((resolve) => setImmediate(resolve));
        await durable.checkpointNow();
      } finally {
        try {
          // what is pending goes to the archive; a failure leaves it in the log for the next start
          try {
            await archive?.close();
          } finally {
            await durable.close();
          }
        } finally {
          await listener.close();
        }
      }
    },
  };
}
