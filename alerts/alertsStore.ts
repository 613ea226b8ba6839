// The durable side of the alerts, over alerts.db (alertsDatabase.ts): subscriptions,
// the outbox of events, replays and dead letters. The producer appends a tick's events
// in one transaction (append), each event once: which subscriptions receive it follows
// from their filters and cursors (deliveryQueue.ts keeps that in memory and rebuilds it
// from here after a restart). The delivery workers change their subscriptions' progress
// in memory and flush() writes every changed one, with the dead letters they made and
// the replays they finished, in one more transaction. After each commit the WAL is fdatasync'd on the thread pool (sync). An
// acknowledgement lost to a crash before its flush means a redelivery (at least once),
// never a lost event: an event is in the outbox once append returned (a kill -9 keeps
// it; a power loss too once the sync that follows has completed).
import { closeSync, fdatasync, openSync } from 'node:fs';
import type { AlertsDb } from './alertsDatabase.ts';
import type { AlertEvent, StoredEvent } from './alertEvent.ts';
import { parseFilters, type AlertFilter } from './filters.ts';
import { OutboxReadBack } from './outboxReadBack.ts';

/** How many of the newest events are kept in memory for the workers' reads. */
const RECENT_EVENTS = 20_000;

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
  // delivery progress (every event with seq <= cursor is done for it)
  cursor: number;
  attempts: number;
  failingSince: number | null;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  lastDeliveredAt: number | null;
  deliveredEvents: number;
}


/** A replay queued: its position in the subscription's replay lane and the event. */
export interface ReplayEntry {
  pos: number;
  seq: number;
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
  seqs: readonly number[];
  failedAt: number;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
}

export class AlertsStore {
  private readonly dirty = new Map<string, Subscription>();
  private deadLetters: PendingDeadLetter[] = [];
  private replaysDone: { subscriptionId: string; pos: number }[] = [];
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
  /** The outbox's newest seq (0: none yet). */
  private newest: number;
  /** Events beyond the memory of recent ones, read once for every endpoint behind (outboxReadBack.ts). */
  readonly readBack: OutboxReadBack;

  constructor(readonly db: AlertsDb) {
    this.statements = {
      insertEvent: db.prepare('INSERT INTO alert_events (id, type, created_at, body) VALUES (?, ?, ?, ?)'),
      eventsAfter: db.prepare('SELECT seq, id, type, created_at AS createdAt, body FROM alert_events WHERE seq > ? ORDER BY seq LIMIT ?'),
      eventsRange: db.prepare('SELECT seq, id, type, created_at AS createdAt, body FROM alert_events WHERE seq > ? AND seq <= ? ORDER BY seq'),
      eventsBetween: db.prepare('SELECT seq, id, type, created_at AS createdAt, body FROM alert_events WHERE seq <= ? AND created_at >= ? AND created_at <= ? ORDER BY seq'),
      maxSeq: db.prepare('SELECT max(seq) AS seq FROM alert_events'),
      progress: db.prepare(
        'UPDATE subscriptions SET cursor = ?, attempts = ?, failing_since = ?, next_attempt_at = ?, last_status = ?, last_error = ?, last_delivered_at = ?, delivered_events = ? WHERE id = ?',
      ),
      deadLetter: db.prepare('INSERT INTO dead_letters (subscription_id, event_seq, failed_at, attempts, last_status, last_error) VALUES (?, ?, ?, ?, ?, ?)'),
      deadLetters: db.prepare(
        'SELECT l.pos AS pos, e.id AS eventId, e.type AS type, e.created_at AS createdAt, l.failed_at AS failedAt, l.attempts AS attempts, l.last_status AS lastStatus, l.last_error AS lastError, e.body AS body FROM dead_letters l JOIN alert_events e ON e.seq = l.event_seq WHERE l.subscription_id = ? AND l.pos > ? ORDER BY l.pos LIMIT ?',
      ),
      deadLetterCount: db.prepare('SELECT count(*) AS n FROM dead_letters WHERE subscription_id = ?'),
      replays: db.prepare('SELECT pos, event_seq AS seq FROM replays WHERE subscription_id = ? ORDER BY pos'),
      insertReplay: db.prepare('INSERT INTO replays (subscription_id, pos, event_seq) VALUES (?, ?, ?)'),
      deleteReplay: db.prepare('DELETE FROM replays WHERE subscription_id = ? AND pos = ?'),
      maxReplayPos: db.prepare('SELECT max(pos) AS pos FROM replays'),
    };
    this.newest = (this.statements.maxSeq.get() as { seq: number | null }).seq ?? 0;
    this.readBack = new OutboxReadBack(
      (from, to) => this.statements.eventsRange.all(from, to) as StoredEvent[],
      () => this.newest,
    );
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

  /** Removes the subscription, its replays and dead letters (the events stay until pruned). */
  deleteSubscription(id: string): void {
    this.dirty.delete(id);
    this.deadLetters = this.deadLetters.filter((d) => d.subscriptionId !== id);
    this.replaysDone = this.replaysDone.filter((d) => d.subscriptionId !== id);
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM replays WHERE subscription_id = ?').run(id);
      this.db.prepare('DELETE FROM dead_letters WHERE subscription_id = ?').run(id);
      this.db.prepare('DELETE FROM subscriptions WHERE id = ?').run(id);
    })();
    this.sync();
  }

  // -- the outbox -------------------------------------------------------------

  /** Writes the events in one transaction, in the order given; returns their seqs. */
  append(batch: readonly { event: AlertEvent; body: string; bytes?: Buffer }[]): number[] {
    const seqs: number[] = [];
    const { insertEvent } = this.statements;
    this.db.transaction(() => {
      for (const { event, body } of batch) seqs.push(Number(insertEvent.run(event.id, event.type, event.createdAt, body).lastInsertRowid));
    }).immediate();
    this.sync();
    if (seqs.length > 0) this.newest = seqs[seqs.length - 1]!;
    const receivedAt = Date.now();
    for (let i = 0; i < batch.length; i++) {
      const { event, body, bytes } = batch[i]!;
      this.remember({ seq: seqs[i]!, id: event.id, type: event.type, createdAt: event.createdAt, body, bytes, receivedAt });
    }
    return seqs;
  }

  /**
   * The newest events, by seq: every endpoint of a fan-out reads the same few events
   * right after they were written, so they are served from here, not from SQLite.
   */
  private readonly recent = new Map<number, StoredEvent>();

  private remember(event: StoredEvent): void {
    this.recent.set(event.seq, event);
    if (this.recent.size > RECENT_EVENTS) this.recent.delete(this.recent.keys().next().value!);
  }

  /** The event of this seq if it is among the newest kept in memory. */
  recentEvent(seq: number): StoredEvent | undefined {
    return this.recent.get(seq);
  }

  /** Events after seq `after`, in order, at most `limit`. */
  eventsAfter(after: number, limit: number): StoredEvent[] {
    return this.statements.eventsAfter.all(after, limit) as StoredEvent[];
  }

  /** The events of these seqs (ascending), in seq order (pruned ones are absent): the recent ones from memory, the others read back. */
  events(seqs: readonly number[]): StoredEvent[] {
    return this.readBack.events(seqs, this.recentLookup);
  }

  private readonly recentLookup = (seq: number): StoredEvent | undefined => this.recent.get(seq);

  /** Events up to seq `through` created in [from, to], in order. */
  eventsBetween(through: number, from: number, to: number): StoredEvent[] {
    return this.statements.eventsBetween.all(through, from, to) as StoredEvent[];
  }

  /** The newest event's seq (0: none): a new subscription starts after it. */
  lastSeq(): number {
    return this.newest;
  }

  // -- replays ------------------------------------------------------------------

  replaysOf(subscriptionId: string): ReplayEntry[] {
    return this.statements.replays.all(subscriptionId) as ReplayEntry[];
  }

  /** Queues the seqs for the subscription after its other replays; returns their entries. */
  addReplays(subscriptionId: string, seqs: readonly number[]): ReplayEntry[] {
    const entries: ReplayEntry[] = [];
    this.db.transaction(() => {
      let pos = (this.statements.maxReplayPos.get() as { pos: number | null }).pos ?? 0;
      for (const seq of seqs) {
        this.statements.insertReplay.run(subscriptionId, ++pos, seq);
        entries.push({ pos, seq });
      }
    }).immediate();
    this.sync();
    return entries;
  }

  /** A replayed event was delivered or dead-lettered: its row goes at the next flush. */
  replayDone(subscriptionId: string, pos: number): void {
    this.replaysDone.push({ subscriptionId, pos });
  }

  // -- progress (group-committed) -----------------------------------------------

  /** The subscription's progress changed in memory; the next flush writes it. */
  touched(s: Subscription): void {
    this.dirty.set(s.id, s);
  }

  /** The events failed for good: written (and the cursor past them) at the next flush. */
  deadLettered(subscriptionId: string, seqs: readonly number[], failedAt: number, attempts: number, lastStatus: number | null, lastError: string | null): void {
    this.deadLetters.push({ subscriptionId, seqs, failedAt, attempts, lastStatus, lastError });
  }

  get hasUnflushed(): boolean {
    return this.dirty.size > 0 || this.deadLetters.length > 0 || this.replaysDone.length > 0;
  }

  /** Writes every progress change and dead letter since the last flush, in one fsync'd transaction. */
  flush(): void {
    if (!this.hasUnflushed) return;
    const subs = [...this.dirty.values()];
    const letters = this.deadLetters;
    const replays = this.replaysDone;
    this.dirty.clear();
    this.deadLetters = [];
    this.replaysDone = [];
    const { progress, deadLetter, deleteReplay } = this.statements;
    this.db.transaction(() => {
      for (const l of letters) for (const seq of l.seqs) deadLetter.run(l.subscriptionId, seq, l.failedAt, l.attempts, l.lastStatus, l.lastError);
      for (const r of replays) deleteReplay.run(r.subscriptionId, r.pos);
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
   * Drops events older than cutoff (engine clock ms) that every subscription is done
   * with (seq <= through) and no replay or dead letter refers to. The newest event
   * stays whatever its age: SQLite numbers a new row max(seq) + 1, so deleting the
   * newest would give its seq again to a later event, which the subscriptions' cursors
   * (already past it) would skip.
   */
  prune(cutoff: number, through: number): number {
    through = Math.min(through, this.newest - 1);
    let removed = 0;
    this.db.transaction(() => {
      removed = this.db
        .prepare(
          `DELETE FROM alert_events WHERE created_at < ? AND seq <= ?
             AND NOT EXISTS (SELECT 1 FROM replays r WHERE r.event_seq = alert_events.seq)
             AND NOT EXISTS (SELECT 1 FROM dead_letters l WHERE l.event_seq = alert_events.seq)`,
        )
        .run(cutoff, through).changes;
    }).immediate();
    for (const [seq, event] of this.recent) if (event.createdAt < cutoff && seq <= through) this.recent.delete(seq);
    if (removed > 0) this.readBack.clear();
    this.sync();
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
