// The engine and its cold data as app.ts serves them, by the settings: a JetStream
// writer or replica (LOG=nats with a DATA_DIR, replicatedStart.ts), a durable board in
// DATA_DIR (durableStart.ts), or the fixture board with no log.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { OddsEngine } from '../engine/engine.ts';
import type { Board } from '../engine/model.ts';
import { DataDirLock } from '../persistence/log/dataDirLock.ts';
import type { Storage } from '../persistence/log/storage.ts';
import { openPersistence, type Persistence } from '../persistence/persistence.ts';
import type { KeyChecker } from '../persistence/keyCheck.ts';
import { fixtureBoard, loadWithProgress, type BoardStartOptions } from './boardStart.ts';
import type { Config } from './config.ts';
import { openDurableStart, type DurableStart } from './durableStart.ts';
import type { ReplicatedStart } from './replicatedStart.ts';

export interface ServedBoardOptions extends BoardStartOptions {
  /** A board restored elsewhere: served as it is, without loading `board` or its cold data. */
  engine?: OddsEngine;
  /** DATA_DIR; without one the board is loaded with no log. */
  dataDir?: string;
  dbPath?: string;
  listening?: (port: number) => void | Promise<void>;
  /** The settings read; with LOG=nats the board is a writer or a replica of a JetStream stream (replicatedStart.ts). */
  config?: Config;
  /** With a data dir and the file log: where the log and the checkpoints write (the tests' fault seam); default node:fs. */
  storage?: Storage;
}

export interface ServedBoard {
  engine: OddsEngine;
  board: Board;
  persistence: Persistence;
  /** Null without a data dir, and with LOG=nats. */
  durable: DurableStart | null;
  /** The writer or replica of a JetStream stream (LOG=nats with a data dir); null otherwise. */
  replicated: ReplicatedStart | null;
  /** Counts API keys (the fleet's counts on a replicated node); default persistence.keyChecker. */
  keyChecker: KeyChecker;
  /**
   * Gives back the DATA_DIR lock (nothing without a data dir). Called last, once every
   * file in DATA_DIR is closed: the log and the checkpoints (durable, replicated), the
   * SQLite files (persistence, the alert outbox); a second process may take the lock
   * the moment it is given back. Idempotent.
   */
  releaseDataDir(): void;
}

/**
 * The engine and its cold data, as app.ts serves them: durable in DATA_DIR when a data
 * dir is given (its SQLite file defaults to DATA_DIR/odds.db there), else the fixture
 * board (or `engine`) with the cold data in DB_PATH and no log.
 */
export async function openServedBoard(options: ServedBoardOptions): Promise<ServedBoard> {
  const { clock, env } = options;
  if (options.config?.log === 'nats' && options.dataDir !== undefined && options.engine === undefined) {
    // the NATS client and the replica's parts are loaded only with LOG=nats (a start without
    // them skips ~100 of its modules)
    const { natsSettingsFromConfig, openReplicatedStart } = await import('./replicatedStart.ts');
    const settings = natsSettingsFromConfig(options.config)!;
    const replicated = await openReplicatedStart({ ...options, settings, config: options.config, dataDir: options.dataDir });
    return { engine: replicated.engine, board: replicated.board, persistence: replicated.persistence, durable: null, replicated, keyChecker: replicated.keyChecker, releaseDataDir: () => replicated.lock.release() };
  }
  if (options.dataDir !== undefined && options.engine === undefined) {
    mkdirSync(options.dataDir, { recursive: true });
    // the lock comes first: the SQLite file in DATA_DIR is read by openPersistence
    const lock = DataDirLock.acquire(options.dataDir);
    let persistence: Persistence;
    try {
      persistence = openPersistence({ path: options.dbPath ?? (env.DB_PATH || join(options.dataDir, 'odds.db')), env });
      options.timeline?.mark('database');
    } catch (error) {
      lock.release();
      throw error;
    }
    try {
      const archive = options.config?.archiveDir == null ? undefined : { dir: options.config.archiveDir, retentionDays: options.config.archiveRetentionDays, intervalMs: options.config.archiveIntervalMs };
      const durable = await openDurableStart({ ...options, dataDir: options.dataDir, persistence, lock, archive });
      return { engine: durable.engine, board: durable.board, persistence, durable, replicated: null, keyChecker: persistence.keyChecker, releaseDataDir: () => lock.release() };
    } catch (error) {
      try {
        persistence.close();
      } finally {
        lock.release(); // last: the SQLite file is closed
      }
      throw error;
    }
  }
  const { timeline } = options;
  const board = fixtureBoard(options.board, clock.now(), options.progress);
  timeline?.mark('generate');
  const engine = options.engine ?? new OddsEngine(clock);
  if (options.engine === undefined) loadWithProgress(engine, board, options.progress);
  timeline?.mark('load');
  const persistence = openPersistence({ path: options.dbPath, env });
  if (options.engine === undefined) persistence.loadCold(board, { eventsWithOdds: new Set(engine.eventIdsWithLiveRows()) });
  timeline?.mark('cold data');
  return { engine, board, persistence, durable: null, replicated: null, keyChecker: persistence.keyChecker, releaseDataDir: () => {} };
}
