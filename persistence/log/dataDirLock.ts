// One writer per DATA_DIR. Two processes appending to one log and replacing each
// other's checkpoints would each acknowledge batches the other then overwrites, so a
// start takes an exclusive lock on DATA_DIR/lock.db before it reads anything there,
// and holds it until it stops.
//
// The lock is SQLite's own file lock (an fcntl write lock, through better-sqlite3,
// which the service already loads): the database is put in EXCLUSIVE locking mode and
// written once, after which SQLite never releases the lock while the connection is
// open. The kernel releases it when the process ends in any way (kill -9 included), so
// a crash never leaves a stale lock behind, unlike a pid file created with O_EXCL.
// The holder writes its pid to DATA_DIR/lock.pid (a plain file, readable while the
// database is locked) so that a refused start can name it.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { sqliteDriver } from '../sqliteDriver.ts';

export class DataDirLockedError extends Error {
  readonly code = 'data_dir_locked';
  constructor(
    readonly dataDir: string,
    readonly holderPid: number | null,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by ${holderPid === null ? 'another process (its pid is not recorded)' : `process ${holderPid}`}: ` +
        'only one process may write a board; stop that one first, or give this one another DATA_DIR',
    );
    this.name = 'DataDirLockedError';
  }
}

export class DataDirLock {
  private db: BetterSqlite3.Database | null;

  private constructor(
    readonly dataDir: string,
    db: BetterSqlite3.Database,
  ) {
    this.db = db;
  }

  /** Takes the lock, or throws DataDirLockedError naming the process that holds it. Never waits. */
  static acquire(dataDir: string): DataDirLock {
    const { Database } = sqliteDriver();
    const path = join(dataDir, 'lock.db');
    const db = new Database(path, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // the first write takes the exclusive lock; in EXCLUSIVE mode it is never given back
      db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)');
      db.exec('BEGIN IMMEDIATE');
      db.prepare('DELETE FROM holder').run();
      db.prepare('INSERT INTO holder (pid, since) VALUES (?, ?)').run(process.pid, new Date().toISOString());
      db.exec('COMMIT');
    } catch (error) {
      db.close();
      const code = (error as { code?: string }).code ?? '';
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) throw new DataDirLockedError(dataDir, readHolderPid(dataDir));
      throw error;
    }
    writeFileSync(join(dataDir, 'lock.pid'), `${process.pid}\n`);
    return new DataDirLock(dataDir, db);
  }

  get held(): boolean {
    return this.db !== null;
  }

  /** Gives the lock back (closing the database). Idempotent. */
  release(): void {
    const db = this.db;
    this.db = null;
    db?.close();
  }
}

function readHolderPid(dataDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, 'lock.pid'), 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
