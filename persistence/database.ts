// Opens the SQLite file that holds the cold data, API keys and usage counts.
// WAL lets the keys CLI (another process) write while the server reads; synchronous
// NORMAL is durable across process crashes in WAL mode and only risks the last
// commits on power loss, which is fine for cold data that is reloaded from fixtures
// and usage counts that are flushed in batches anyway.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { MIGRATIONS } from './schema.ts';
import { sqliteDriver } from './sqliteDriver.ts';

export type Db = Database.Database;

export const DEFAULT_DB_PATH = './data/odds.db';

/** DB_PATH, else odds.db in DATA_DIR (default ./data): the file `npm start` keeps beside the board it describes. */
export function dbPathFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DB_PATH && env.DB_PATH.trim().length > 0) return env.DB_PATH.trim();
  const dataDir = env.DATA_DIR && env.DATA_DIR.trim().length > 0 ? env.DATA_DIR.trim() : './data';
  return dataDir === './data' ? DEFAULT_DB_PATH : join(dataDir, 'odds.db');
}

/** Opens (creating the file and its folder if needed) and migrates the database. */
export function openDatabase(path: string = dbPathFromEnv()): Db {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new (sqliteDriver().Database)(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // Another process (the keys CLI) may hold the write lock for a moment.
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Runs every migration newer than the file's user_version, each in its own transaction. */
export function migrate(db: Db): number {
  const from = schemaVersion(db);
  if (from > MIGRATIONS.length) {
    throw new Error(`database schema version ${from} is newer than this build knows (${MIGRATIONS.length})`);
  }
  for (let v = from; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
  return MIGRATIONS.length;
}
