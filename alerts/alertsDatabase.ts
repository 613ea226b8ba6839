// The alerts' own SQLite file (DATA_DIR/alerts.db unless ALERTS_DB_PATH): webhook
// subscriptions, the outbox of alert events, each subscription's deliveries and its
// dead letters. A file apart from odds.db because its promise differs: odds.db holds
// cold data reloaded from fixtures and usage counts flushed in batches, while an alert
// event in the outbox must survive a crash and a power loss.
//
// How that is kept without holding the event loop: WAL mode, synchronous=NORMAL (a
// commit is written to the WAL, which a kill -9 cannot undo since the bytes are in the
// kernel; checkpoints fsync, so the file stays consistent on power loss), and after
// every commit an fdatasync of the WAL on the libuv thread pool (AlertsStore.sync), so
// a power loss loses at most the commits of the last few milliseconds (whose events
// are then delivered from the outbox never, or, for progress, again: at least once
// holds). synchronous=FULL would fsync inside each commit on the main thread; on this
// shared disk that held the loop up to hundreds of ms (bench/alerts.bench.ts), in front
// of ingest acknowledgements and reads.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { sqliteDriver } from '../persistence/sqliteDriver.ts';

export type AlertsDb = Database.Database;

/** Each entry runs once, in order, in its own transaction; user_version counts them. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE subscriptions (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    filters TEXT NOT NULL,              -- JSON array of filters (alerts/filters.ts)
    batch_window_ms INTEGER NOT NULL,
    max_batch_events INTEGER NOT NULL,
    description TEXT,
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    -- delivery state: every event with seq <= cursor is done for this subscription (delivered,
    -- dead-lettered, or not matching its filters); the events after it that match are pending
    cursor INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    failing_since INTEGER,              -- wall-clock ms of the head batch's first failure
    next_attempt_at INTEGER,
    last_status INTEGER,
    last_error TEXT,
    last_delivered_at INTEGER,
    delivered_events INTEGER NOT NULL DEFAULT 0
  );
  -- the outbox: each event once, in the order made; who receives it follows from the
  -- subscriptions' filters and cursors, so a tick writes one row per event, not one per delivery
  CREATE TABLE alert_events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,            -- the idempotency id receivers dedupe on
    type TEXT NOT NULL,
    created_at INTEGER NOT NULL,        -- engine clock, epoch ms
    body TEXT NOT NULL                  -- the event as sent: {"id","type","createdAt","data"}
  );
  CREATE INDEX alert_events_created ON alert_events (created_at);
  -- events queued again by a replay, delivered before the live events, in pos order
  CREATE TABLE replays (
    subscription_id TEXT NOT NULL,
    pos INTEGER NOT NULL,
    event_seq INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, pos)
  ) WITHOUT ROWID;
  CREATE TABLE dead_letters (
    pos INTEGER PRIMARY KEY,
    subscription_id TEXT NOT NULL,
    event_seq INTEGER NOT NULL,
    failed_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    last_status INTEGER,
    last_error TEXT
  );
  CREATE INDEX dead_letters_by_subscription ON dead_letters (subscription_id, pos);
  `,
];

/** Opens (creating the file and its folder) and migrates the alerts database. */
export function openAlertsDatabase(path: string): AlertsDb {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new (sqliteDriver().Database)(path);
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL, with the WAL fdatasync'd off the main thread after each commit (see above)
    db.pragma('synchronous = NORMAL');
    // checkpoints (which fsync on the main thread) every ~40 MiB of WAL rather than every 4 MiB
    db.pragma('wal_autocheckpoint = 10000');
    db.pragma('busy_timeout = 5000');
    const from = db.pragma('user_version', { simple: true }) as number;
    if (from > MIGRATIONS.length) throw new Error(`alerts database ${path} has schema version ${from}, newer than this build knows (${MIGRATIONS.length})`);
    for (let v = from; v < MIGRATIONS.length; v++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[v]!);
        db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
