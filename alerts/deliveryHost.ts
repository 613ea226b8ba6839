// The delivery side of the webhook alerts, run in its own thread (deliveryThread.ts
// starts it; alerts.ts on the main thread talks to it): the subscriptions and the outbox
// (alertsStore.ts over alerts.db), one delivery worker per subscription
// (deliveryWorker.ts), the HTTP senders, signing, backoff, dead letters, and the
// operations the admin API asks for. Nothing here touches the engine: the main thread's
// producer hands over each tick's events, already serialized, and the engine clock's
// time comes with every operation that records one.
//
// Each batch of events: matched to the enabled subscriptions (any of a subscription's
// filters); those that match any are written to the outbox, each once, in one
// transaction, offered to every enabled subscription's queue (deliveryQueue.ts) in
// order, and the matched subscriptions' workers are woken. The outbox holds events,
// not deliveries: a thousand endpoints taking the same event cost one row, and a
// subscription's pending events follow from its filters and cursor. The workers'
// progress is written by a flush that follows their changes within FLUSH_MS (one
// commit for every acknowledgement of that moment), so a thousand endpoints
// acknowledging cost a few commits a second, not a thousand.
import { randomBytes } from 'node:crypto';
import { isoMillis } from '../engine/timeFormat.ts';
import type { AlertEvent, LineMoveAlert } from './alertEvent.ts';
import { openAlertsDatabase } from './alertsDatabase.ts';
import type { AlertsConfig } from './alertsConfig.ts';
import { AlertsStore, type DeadLetter, type Subscription } from './alertsStore.ts';
import { DeliveryQueue } from './deliveryQueue.ts';
import { DeliveryWorker, InFlightLimit, StepRunner } from './deliveryWorker.ts';
import { anyMatches, watchedOddsIds } from './filters.ts';
import { newSecret } from './signing.ts';
import type { SubscriptionInput } from './subscriptionInput.ts';
import { WebhookSender } from './webhookSender.ts';

const FLUSH_MS = 1000;
export const DEFAULT_MAX_BATCH_EVENTS = 100;

export type Log = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, line: string) => void;

/** A subscription as the admin API shows it: never its secret, with its delivery state. */
export interface SubscriptionView {
  id: string;
  url: string;
  filters: Subscription['filters'];
  batchWindowMs: number;
  maxBatchEvents: number;
  description: string | null;
  enabled: boolean;
  /** The secret's last 4 characters. */
  secretHint: string;
  createdAt: string;
  updatedAt: string;
  delivery: {
    state: string;
    pending: number;
    deadLetters: number;
    deliveredEvents: number;
    attempts: number;
    failingSince: string | null;
    nextAttemptAt: string | null;
    lastStatus: number | null;
    lastError: string | null;
    lastDeliveredAt: string | null;
  };
}

const NONE: readonly number[] = [];
const iso = (ms: number | null): string | null => (ms === null ? null : isoMillis(ms));

/** A subscription's filters and whether it is enabled: what the main thread's producer follows. */
export interface Followed {
  id: string;
  filters: Subscription['filters'];
  enabled: boolean;
}

/** Counters for the bench and metrics. */
export interface DeliveryStats {
  /** Events written to the outbox since the start. */
  eventsWritten: number;
  /** Deliveries queued from them (an event times the subscriptions it matched). */
  deliveriesQueued: number;
  /** Events that came from the producer and matched no subscription (not written). */
  eventsUnmatched: number;
  /** Webhook requests answered 2xx. */
  deliveredRequests: number;
  /** Webhook requests that failed (a non-2xx status, a timeout, a network error). */
  failedRequests: number;
  /** Events moved to the dead letters. */
  deadLetteredEvents: number;
}

/** What /metrics shows of the alerts (alertsMetrics.ts). */
export interface DeliveryMetrics extends DeliveryStats {
  /** Subscriptions by delivery state (idle, window, sending, backoff, disabled). */
  subscriptions: Record<string, number>;
  /** Events waiting in the enabled subscriptions' queues (a queue past its memory cap counts as the cap). */
  pendingEvents: number;
  /** Events delivered, over every subscription's life. */
  deliveredEvents: number;
  /** Seconds the oldest event at the head of an enabled subscription's queue has waited (0: none waiting). */
  oldestPendingSeconds: number;
}

export class DeliveryHost {
  private readonly store: AlertsStore;
  private readonly sender = new WebhookSender();
  private readonly limit: InFlightLimit;
  private readonly runner = new StepRunner();
  private readonly workers = new Map<string, DeliveryWorker>();
  private flushTimer: NodeJS.Timeout | null = null;
  private closed = false;
  readonly stats: DeliveryStats = { eventsWritten: 0, deliveriesQueued: 0, eventsUnmatched: 0, deliveredRequests: 0, failedRequests: 0, deadLetteredEvents: 0 };
  private readonly startedAt = Date.now();

  constructor(
    readonly config: AlertsConfig,
    private readonly log: Log,
  ) {
    this.store = new AlertsStore(openAlertsDatabase(config.dbPath));
    this.store.onSyncError = (error) =>
      this.log('error', { event: 'alerts_fsync_failed', detail: error.message }, 'fdatasync of the alerts outbox failed (not retried): the last events and delivery progress may not survive a power loss; restart the process after checking the disk');
    this.limit = new InFlightLimit(config.maxInFlight);
    for (const s of this.store.loadSubscriptions()) this.addWorker(s, false);
  }

  /** fdatasyncs of the WAL completed since the start. */
  get walSyncs(): number {
    return this.store.syncs;
  }

  /** What the producer is to follow: every subscription's filters. */
  followed(): Followed[] {
    return [...this.workers.values()].map(({ subscription: s }) => ({ id: s.id, filters: s.filters, enabled: s.enabled }));
  }

  /** Starts every worker (deliveries left pending by the last run go first). */
  start(): void {
    for (const worker of this.workers.values()) worker.wake();
  }

  /**
   * One producer tick's events, in the order made, each with its body as sent (the
   * JSON {"id","type","createdAt","data"}): match, write the outbox, wake the matched
   * workers.
   */
  accept(events: readonly { event: AlertEvent; body: string; bytes?: Buffer }[]): void {
    if (this.closed || events.length === 0) return;
    const { enabled, byOddsId } = this.matching();
    // matched[i * enabled.length + j]: event i goes to subscription j
    const matched = new Uint8Array(events.length * enabled.length);
    const batch: { event: AlertEvent; body: string; bytes?: Buffer }[] = [];
    const kept: number[] = [];
    for (let i = 0; i < events.length; i++) {
      const { event, body, bytes } = events[i]!;
      let any = false;
      if (event.type === 'line.moved') {
        // only line_move filters take line moves, each those of its ids (filters.ts)
        for (const j of byOddsId.get((event.data as LineMoveAlert).oddsId) ?? NONE) {
          matched[i * enabled.length + j] = 1;
          any = true;
        }
      } else {
        for (let j = 0; j < enabled.length; j++) {
          if (anyMatches(enabled[j]!.subscription.filters, event)) {
            matched[i * enabled.length + j] = 1;
            any = true;
          }
        }
      }
      if (!any) {
        this.stats.eventsUnmatched++;
        continue;
      }
      kept.push(i);
      batch.push({ event, body, bytes });
    }
    if (batch.length === 0) return;
    let seqs: number[];
    try {
      seqs = this.store.append(batch);
    } catch (error) {
      // not retried (the file's state is unknown after a failed write): these events are lost and said so
      this.log('error', { event: 'alerts_outbox_write_failed', events: batch.length, detail: String(error) }, 'writing alert events to the outbox failed; they were not queued');
      return;
    }
    this.stats.eventsWritten += batch.length;
    for (let j = 0; j < enabled.length; j++) {
      const worker = enabled[j]!;
      let woken = false;
      for (let k = 0; k < kept.length; k++) {
        const hit = matched[kept[k]! * enabled.length + j] === 1;
        worker.queue.offer(seqs[k]!, hit);
        if (hit) {
          this.stats.deliveriesQueued++;
          woken = true;
        }
      }
      if (woken) worker.wake();
    }
  }

  /**
   * The enabled subscriptions' workers, and for each odds id the positions among them of
   * those whose line_move filters watch it: kept until a subscription is made, changed
   * or deleted, so a tick's line moves are matched by one lookup each, not one check
   * per subscription.
   */
  private matchingCache: { enabled: DeliveryWorker[]; byOddsId: Map<string, number[]> } | null = null;

  private matching(): { enabled: DeliveryWorker[]; byOddsId: Map<string, number[]> } {
    if (this.matchingCache !== null) return this.matchingCache;
    const enabled = [...this.workers.values()].filter((w) => w.subscription.enabled);
    const byOddsId = new Map<string, number[]>();
    for (let j = 0; j < enabled.length; j++) {
      for (const id of watchedOddsIds(enabled[j]!.subscription.filters)) {
        const list = byOddsId.get(id);
        if (list === undefined) byOddsId.set(id, [j]);
        else list.push(j);
      }
    }
    return (this.matchingCache = { enabled, byOddsId });
  }

  private changed = (): void => {
    if (this.flushTimer !== null || this.closed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, FLUSH_MS);
  };

  private flush(): void {
    try {
      this.store.flush();
    } catch (error) {
      this.log('error', { event: 'alerts_progress_write_failed', detail: String(error) }, 'writing webhook delivery progress failed; deliveries since the last write will be sent again after a restart');
    }
  }

  /** Drops delivered events created before cutoff (engine clock ms) that nothing refers to. */
  prune(cutoff: number): void {
    if (this.closed) return;
    try {
      let through = Infinity;
      // a disabled subscription starts after the newest event when enabled again: it holds nothing back
      for (const w of this.workers.values()) if (w.subscription.enabled) through = Math.min(through, w.queue.doneThrough);
      this.store.prune(cutoff, through === Infinity ? this.store.lastSeq() : through);
    } catch (error) {
      this.log('warn', { event: 'alerts_prune_failed', detail: String(error) }, 'pruning delivered alert events failed');
    }
  }

  private addWorker(s: Subscription, fresh: boolean): DeliveryWorker {
    const worker = new DeliveryWorker(s, new DeliveryQueue(s, this.store, fresh), {
      runner: this.runner,
      store: this.store,
      sender: this.sender,
      retry: this.config.retry,
      timeoutMs: this.config.timeoutMs,
      limit: this.limit,
      counters: this.stats,
      changed: this.changed,
      log: (fields, line) => this.log('warn', fields, line),
    });
    this.workers.set(s.id, worker);
    this.matchingCache = null;
    return worker;
  }

  /**
   * The numbers /metrics shows. The oldest pending event's wait counts from when this
   * process wrote it to the outbox; one written before a restart, or read back from the
   * file, counts from the restart (a lower bound).
   */
  metrics(): DeliveryMetrics {
    const now = Date.now();
    const subscriptions: Record<string, number> = {};
    let pendingEvents = 0;
    let deliveredEvents = 0;
    let oldest = now;
    for (const w of this.workers.values()) {
      const s = w.subscription;
      const state = s.enabled ? w.status : 'disabled';
      subscriptions[state] = (subscriptions[state] ?? 0) + 1;
      deliveredEvents += s.deliveredEvents;
      if (!s.enabled) continue;
      const queued = w.queue.queued;
      if (queued === 0) continue;
      pendingEvents += queued;
      const head = w.queue.nextSeq();
      if (head !== null) oldest = Math.min(oldest, this.store.recentEvent(head)?.receivedAt ?? this.startedAt);
    }
    return { ...this.stats, subscriptions, pendingEvents, deliveredEvents, oldestPendingSeconds: (now - oldest) / 1000 };
  }

  // -- admin operations ---------------------------------------------------------------

  list(): SubscriptionView[] {
    return [...this.workers.values()].map((w) => this.view(w));
  }

  get(id: string): SubscriptionView | null {
    const worker = this.workers.get(id);
    return worker === undefined ? null : this.view(worker);
  }

  /** Creates a subscription; its secret is returned here and never again. */
  create(input: SubscriptionInput, now: number): { subscription: SubscriptionView; secret: string } {
    const s: Subscription = {
      id: `sub_${randomBytes(9).toString('base64url')}`,
      url: input.url!,
      secret: input.secret ?? newSecret(),
      filters: input.filters!,
      batchWindowMs: input.batchWindowMs ?? 0,
      maxBatchEvents: input.maxBatchEvents ?? DEFAULT_MAX_BATCH_EVENTS,
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      createdAt: now,
      updatedAt: now,
      // events from now on: the outbox's earlier ones are not this subscription's
      cursor: this.store.lastSeq(),
      attempts: 0,
      failingSince: null,
      nextAttemptAt: null,
      lastStatus: null,
      lastError: null,
      lastDeliveredAt: null,
      deliveredEvents: 0,
    };
    this.store.insertSubscription(s);
    const worker = this.addWorker(s, true);
    return { subscription: this.view(worker), secret: s.secret };
  }

  update(id: string, input: SubscriptionInput, now: number): SubscriptionView | null {
    const worker = this.workers.get(id);
    if (worker === undefined) return null;
    const s = worker.subscription;
    const next: Subscription = { ...s, ...definedOf(input), updatedAt: now };
    this.store.updateSubscription(next);
    const wasEnabled = s.enabled;
    Object.assign(s, definedOf(input), { updatedAt: next.updatedAt });
    this.matchingCache = null;
    // enabled again: it takes the events from now on (none were queued for it while disabled)
    if (s.enabled && !wasEnabled) {
      worker.queue.reset(this.store.lastSeq());
      this.store.touched(s);
      this.changed();
    }
    if (s.enabled) worker.wake();
    return this.view(worker);
  }

  async remove(id: string): Promise<boolean> {
    const worker = this.workers.get(id);
    if (worker === undefined) return false;
    this.workers.delete(id);
    this.matchingCache = null;
    await worker.stop();
    this.store.deleteSubscription(id);
    return true;
  }

  /**
   * Queues again, ahead of the live events, the subscription's events created in
   * [from, to] (engine clock ms) that it is done with (delivered or dead-lettered):
   * those up to its cursor that its filters take, in outbox order, with their ids.
   */
  replay(id: string, from: number, to: number): number | null {
    const worker = this.workers.get(id);
    if (worker === undefined) return null;
    const s = worker.subscription;
    const seqs = this.store
      .eventsBetween(s.cursor, from, to)
      .filter((row) => anyMatches(s.filters, JSON.parse(row.body) as AlertEvent))
      .map((row) => row.seq);
    if (seqs.length === 0) return 0;
    worker.queue.addReplays(this.store.addReplays(id, seqs));
    worker.wake();
    return seqs.length;
  }

  /** A subscription in backoff is tried at once. */
  retryNow(id: string): SubscriptionView | null {
    const worker = this.workers.get(id);
    if (worker === undefined) return null;
    worker.retryNow();
    return this.view(worker);
  }

  deadLetters(id: string, after: number, limit: number): DeadLetter[] | null {
    return this.workers.has(id) ? this.store.deadLetterPage(id, after, limit) : null;
  }

  private view(worker: DeliveryWorker): SubscriptionView {
    const s = worker.subscription;
    return {
      id: s.id,
      url: s.url,
      filters: s.filters,
      batchWindowMs: s.batchWindowMs,
      maxBatchEvents: s.maxBatchEvents,
      description: s.description,
      enabled: s.enabled,
      secretHint: s.secret.slice(-4),
      createdAt: isoMillis(s.createdAt),
      updatedAt: isoMillis(s.updatedAt),
      delivery: {
        state: s.enabled ? worker.status : 'disabled',
        pending: worker.queue.pending(),
        deadLetters: this.store.deadLetterCount(s.id),
        deliveredEvents: s.deliveredEvents,
        attempts: s.attempts,
        failingSince: iso(s.failingSince),
        nextAttemptAt: iso(s.nextAttemptAt),
        lastStatus: s.lastStatus,
        lastError: s.lastError,
        lastDeliveredAt: iso(s.lastDeliveredAt),
      },
    };
  }

  /** Stops the workers (requests in flight finish, bounded by the timeout), writes the progress, closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
    try {
      this.store.close();
    } finally {
      this.sender.close();
    }
  }
}

function definedOf(input: SubscriptionInput): Partial<Subscription> {
  const out: Partial<Subscription> = {};
  for (const [key, value] of Object.entries(input)) if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  return out;
}
