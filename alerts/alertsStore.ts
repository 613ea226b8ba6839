// The durable side of the alerts, over alerts.db (alertsDatabase.ts): subscriptions,
// the outbox of events, each subscription's deliveries in order, dead letters and
// replays. The producer appends a tick's events and their deliveries in one
// transaction (append); the delivery workers change their subscriptions' progress in
// memory and flush() writes every changed one, with the dead letters they made, in one
// more. After each commit the WAL is fdatasync'd on the thread pool (sync). An
// acknowledgement lost to a crash before its flush means a redelivery (at least once),
// never a lost event: an event is in the outbox once append returned (a kill -9 keeps
// it; a power loss too once the sync that follows has completed).
import { closeSync, fdatasync, openSync } from 'node:fs';
import type { AlertsDb } from './alertsDatabase.ts';
import type { AlertEvent } from './alertEvent.ts';
import { parseFilters, type AlertFilter } from './filters.ts';

export interface Subscription {
  id: string;
  url: string;
  secret: string;
  filters: AlertFilter[];
  batchWindowMs: number;
  maxBatchEvents: number;
  description: string | null;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
  // delivery progress (deliveries with pos <= cursor are done)
  cursor: number;
  attempts: number;
  failingSince: number | null;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  lastDeliveredAt: number | null;
  deliveredEvents: number;
}

/** One delivery waiting (or done, for replays): its position in the subscription's order and the event as sent. */
export interface OutboxEntry {
  pos: number;
  eventSeq: number;
  eventId: string;
  createdAt: number;
  body: string;
}

export interface DeadLetter {
  pos: number;
  eventId: string;
  type: string;
  createdAt: number;
  failedAt: number;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  event: unknown;
}

interface SubscriptionRow {
  id: string;
  url: string;
  secret: string;
  filters: string;
  batch_window_ms: number;
  max_batch_events: number;
  description: string | null;
  enabled: number;
  created_at: number;
  updated_at: number;
  cursor: number;
  attempts: number;
  failing_since: number | null;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  last_delivered_at: number | null;
  delivered_events: number;
}

function fromRow(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    url: row.url,
    secret: row.secret,
    filters: parseFilters(JSON.parse(row.filters)),
    batchWindowMs: row.batch_window_ms,
    maxBatchEvents: row.max_batch_events,
    description: row.description,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    cursor: row.cursor,
    attempts: row.attempts,
    failingSince: row.failing_since,
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    lastDeliveredAt: row.last_delivered_at,
    deliveredEvents: row.delivered_events,
  };
}

interface PendingDeadLetter {
  subscriptionId: string;
  entries: readonly OutboxEntry[];
  failedAt: number;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
}

export class AlertsStore {
  private readonly dirty = new Map<string, Subscription>();
  private deadLetters: PendingDeadLetter[] = [];
  private readonly statements;
  /** The WAL, fdatasync'd after commits; -1 before the first commit made it. */
  private walFd = -1;
  private syncing = false;
  private syncAgain = false;
  private closed = false;
  /** WAL fdatasyncs completed (tests and metrics). */
  syncs = 0;
  /** Called with the error of a failed fdatasync (not retried: the file's state is unknown). */
  onSyncError: (error: Error) => void = () => {};

  constructor(readonly db: AlertsDb) {
    this.statements = {
      insertEvent: db.prepare('INSERT INTO alert_events (id, type, created_at, body) VALUES (?, ?, ?, ?)'),
      insertDelivery: db.prepare('INSERT INTO deliveries (subscription_id, event_seq, replay) VALUES (?, ?, ?)'),
      next: db.prepare(
        'SELECT d.pos AS pos, e.seq AS eventSeq, e.id AS eventId, e.created_at AS createdAt, e.body AS body FROM deliveries d JOIN alert_events e ON e.seq = d.event_seq WHERE d.subscription_id = ? AND d.pos > ? ORDER BY d.pos LIMIT ?',
      ),
      pending: db.prepare('SELECT count(*) AS n FROM deliveries WHERE subscription_id = ? AND pos > ?'),
      lastPos: db.prepare('SELECT max(pos) AS pos FROM deliveries WHERE subscription_id = ?'),
      progress: db.prepare(
        'UPDATE subscriptions SET cursor = ?, attempts = ?, failing_since = ?, next_attempt_at = ?, last_status = ?, last_error = ?, last_delivered_at = ?, delivered_events = ? WHERE id = ?',
      ),
      deadLetter: db.prepare('INSERT OR IGNORE INTO dead_letters (subscription_id, pos, event_seq, failed_at, attempts, last_status, last_error) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      deadLetters: db.prepare(
        'SELECT l.pos AS pos, e.id AS eventId, e.type AS type, e.created_at AS createdAt, l.failed_at AS failedAt, l.attempts AS attempts, l.last_status AS lastStatus, l.last_error AS lastError, e.body AS body FROM dead_letters l JOIN alert_events e ON e.seq = l.event_seq WHERE l.subscription_id = ? AND l.pos > ? ORDER BY l.pos LIMIT ?',
      ),
      deadLetterCount: db.prepare('SELECT count(*) AS n FROM dead_letters WHERE subscription_id = ?'),
      replay: db.prepare(
        'SELECT d.event_seq AS seq FROM deliveries d JOIN alert_events e ON e.seq = d.event_seq WHERE d.subscription_id = ? AND d.pos <= ? AND e.created_at >= ? AND e.created_at <= ? GROUP BY d.event_seq ORDER BY d.event_seq',
      ),
    };
  }

  // -- subscriptions ----------------------------------------------------------

  loadSubscriptions(): Subscription[] {
    return (this.db.prepare('SELECT * FROM subscriptions ORDER BY created_at, id').all() as SubscriptionRow[]).map(fromRow);
  }

  insertSubscription(s: Subscription): void {
    // a new subscription starts after every delivery already numbered: it receives events from now on
    this.db
      .prepare(
        'INSERT INTO subscriptions (id, url, secret, filters, batch_window_ms, max_batch_events, description, enabled, created_at, updated_at, cursor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(s.id, s.url, s.secret, JSON.stringify(s.filters), s.batchWindowMs, s.maxBatchEvents, s.description, s.enabled ? 1 : 0, s.createdAt, s.updatedAt, s.cursor);
    this.sync();
  }

  updateSubscription(s: Subscription): void {
    this.db
      .prepare('UPDATE subscriptions SET url = ?, secret = ?, filters = ?, batch_window_ms = ?, max_batch_events = ?, description = ?, enabled = ?, updated_at = ? WHERE id = ?')
      .run(s.url, s.secret, JSON.stringify(s.filters), s.batchWindowMs, s.maxBatchEvents, s.description, s.enabled ? 1 : 0, s.updatedAt, s.id);
    this.sync();
  }

  /** Removes the subscription, its deliveries and dead letters (events other subscriptions still need stay). */
  deleteSubscription(id: string): void {
    this.dirty.delete(id);
    this.deadLetters = this.deadLetters.filter((d) => d.subscriptionId !== id);
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM deliveries WHERE subscription_id = ?').run(id);
      this.db.prepare('DELETE FROM dead_letters WHERE subscription_id = ?').run(id);
      this.db.prepare('DELETE FROM subscriptions WHERE id = ?').run(id);
    })();
    this.sync();
  }

  // -- the outbox -------------------------------------------------------------

  /**
   * Writes the events and one delivery per (event, subscription) in one fsync'd
   * transaction, in the order given; returns each subscription's last new position.
   */
  append(batch: readonly { event: AlertEvent; body: string; subscriptions: readonly string[] }[]): Map<string, number> {
    const last = new Map<string, number>();
    const { insertEvent, insertDelivery } = this.statements;
    this.db.transaction(() => {
      for (const { event, body, subscriptions } of batch) {
        const seq = Number(insertEvent.run(event.id, event.type, event.createdAt, body).lastInsertRowid);
        for (const id of subscriptions) last.set(id, Number(insertDelivery.run(id, seq, 0).lastInsertRowid));
      }
    }).immediate();
    this.sync();
    return last;
  }

  /** The next deliveries of a subscription after `after`, in order. */
  next(subscriptionId: string, after: number, limit: number): OutboxEntry[] {
    return this.statements.next.all(subscriptionId, after, limit) as OutboxEntry[];
  }

  pendingCount(subscriptionId: string, after: number): number {
    return (this.statements.pending.get(subscriptionId, after) as { n: number }).n;
  }

  /** The highest position numbered for the subscription so far (0: none). */
  lastPosition(subscriptionId: string): number {
    return (this.statements.lastPos.get(subscriptionId) as { pos: number | null }).pos ?? 0;
  }

  // -- progress (group-committed) -----------------------------------------------

  /** The subscription's progress changed in memory; the next flush writes it. */
  touched(s: Subscription): void {
    this.dirty.set(s.id, s);
  }

  /** The entries failed for good: written (and the cursor past them) at the next flush. */
  deadLettered(subscriptionId: string, entries: readonly OutboxEntry[], failedAt: number, attempts: number, lastStatus: number | null, lastError: string | null): void {
    this.deadLetters.push({ subscriptionId, entries, failedAt, attempts, lastStatus, lastError });
  }

  get hasUnflushed(): boolean {
    return this.dirty.size > 0 || this.deadLetters.length > 0;
  }

  /** Writes every progress change and dead letter since the last flush, in one fsync'd transaction. */
  flush(): void {
    if (!this.hasUnflushed) return;
    const subs = [...this.dirty.values()];
    const letters = this.deadLetters;
    this.dirty.clear();
    this.deadLetters = [];
    const { progress, deadLetter } = this.statements;
    this.db.transaction(() => {
      for (const l of letters) for (const e of l.entries) deadLetter.run(l.subscriptionId, e.pos, e.eventSeq, l.failedAt, l.attempts, l.lastStatus, l.lastError);
      for (const s of subs) progress.run(s.cursor, s.attempts, s.failingSince, s.nextAttemptAt, s.lastStatus, s.lastError, s.lastDeliveredAt, s.deliveredEvents, s.id);
    }).immediate();
    this.sync();
  }

  /**
   * fdatasync of the WAL on the thread pool, after a commit; commits made while one
   * runs are covered by one more. (fsync flushes the file's pages whichever descriptor
   * wrote them; SQLite keeps the WAL file while the connection is open, rewriting it
   * from the start after checkpoints, so one descriptor serves for the store's life.)
   */
  sync(): void {
    if (this.closed) return;
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    if (this.walFd < 0) {
      const file = this.db.name === ':memory:' || this.db.memory ? null : `${this.db.name}-wal`;
      if (file === null) return;
      this.walFd = openSync(file, 'r');
    }
    this.syncing = true;
    fdatasync(this.walFd, (error) => {
      this.syncing = false;
      // after close() the descriptor is gone and the close's checkpoint has synced the file
      if (this.closed) return;
      if (error !== null) return this.onSyncError(error);
      this.syncs++;
      if (this.syncAgain) {
        this.syncAgain = false;
        this.sync();
      }
    });
  }

  // -- dead letters and replay --------------------------------------------------

  deadLetterPage(subscriptionId: string, after: number, limit: number): DeadLetter[] {
    type Row = Omit<DeadLetter, 'event'> & { body: string };
    return (this.statements.deadLetters.all(subscriptionId, after, limit) as Row[]).map(({ body, ...rest }) => ({ ...rest, event: JSON.parse(body) }));
  }

  deadLetterCount(subscriptionId: string): number {
    return (this.statements.deadLetterCount.get(subscriptionId) as { n: number }).n;
  }

  /**
   * Queues again, after what is pending, every event of the subscription created in
   * [from, to] that was delivered or dead-lettered (pos <= cursor), once each, in the
   * order they were created; returns how many and the last new position.
   */
  replay(subscriptionId: string, cursor: number, from: number, to: number): { count: number; last: number } {
    let count = 0;
    let last = 0;
    this.db.transaction(() => {
      const seqs = this.statements.replay.all(subscriptionId, cursor, from, to) as { seq: number }[];
      for (const { seq } of seqs) {
        last = Number(this.statements.insertDelivery.run(subscriptionId, seq, 1).lastInsertRowid);
        count++;
      }
    }).immediate();
    this.sync();
    return { count, last };
  }

  /**
   * Drops what is done and older than cutoff (engine clock ms): deliveries at or before
   * their subscription's cursor that are not dead letters, and events nothing refers to.
   */
  prune(cutoff: number): number {
    let removed = 0;
    this.db.transaction(() => {
      this.db
        .prepare(
          `DELETE FROM deliveries WHERE pos IN (SELECT d.pos FROM deliveries d JOIN alert_events e ON e.seq = d.event_seq JOIN subscriptions s ON s.id = d.subscription_id
             WHERE e.created_at < ? AND d.pos <= s.cursor)`,
        )
        .run(cutoff);
      removed = this.db
        .prepare(
          `DELETE FROM alert_events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = alert_events.seq)
             AND NOT EXISTS (SELECT 1 FROM dead_letters l WHERE l.event_seq = alert_events.seq)`,
        )
        .run(cutoff).changes;
    }).immediate();
    return removed;
  }

  /** Writes what is pending, and closes (the close's checkpoint syncs the file). */
  close(): void {
    this.flush();
    this.closed = true;
    if (this.walFd >= 0) {
      closeSync(this.walFd);
      this.walFd = -1;
    }
    // closing the last connection checkpoints the WAL into the file (with fsync, synchronous=NORMAL) and removes it
    this.db.close();
  }
}
