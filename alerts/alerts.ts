// The webhook alerts of one process: the subscriptions and the outbox (alertsStore.ts
// over alerts.db), the producer listening to the engine (alertProducer.ts), one
// delivery worker per subscription (deliveryWorker.ts) and the operations the admin
// API calls (adminRoutes.ts). service/app.ts builds it after the signal books and
// subscribes the producer among the engine's listeners.
//
// Each tick: the producer's events are matched to the enabled subscriptions (any of a
// subscription's filters); those that match any are written to the outbox, each once,
// in one transaction, offered to every enabled subscription's queue (deliveryQueue.ts)
// in order, and the matched subscriptions' workers are woken. The outbox holds events,
// not deliveries: a thousand endpoints taking the same event cost one row, and a
// subscription's pending events follow from its filters and cursor. The workers'
// progress is written by a flush that follows their changes within FLUSH_MS (one
// commit for every acknowledgement of that moment), so a thousand endpoints
// acknowledging cost a few commits a second, not a thousand.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../engine/clock.ts';
import type { OddsEngine } from '../engine/engine.ts';
import type { EngineSignals } from '../engine/signals/engineSignals.ts';
import { isoMillis } from '../engine/timeFormat.ts';
import type { AlertEvent } from './alertEvent.ts';
import { openAlertsDatabase } from './alertsDatabase.ts';
import type { AlertsConfig } from './alertsConfig.ts';
import { AlertsStore, type DeadLetter, type Subscription } from './alertsStore.ts';
import { AlertProducer } from './alertProducer.ts';
import { DeliveryQueue } from './deliveryQueue.ts';
import { DeliveryWorker, InFlightLimit, StepRunner } from './deliveryWorker.ts';
import { anyMatches } from './filters.ts';
import { newSecret } from './signing.ts';
import type { SubscriptionInput } from './subscriptionInput.ts';
import { WebhookSender } from './webhookSender.ts';

const FLUSH_MS = 1000;
const PRUNE_EVERY_MS = 10 * 60 * 1000;
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

const iso = (ms: number | null): string | null => (ms === null ? null : isoMillis(ms));

export class Alerts {
  readonly producer: AlertProducer;
  private readonly store: AlertsStore;
  private readonly sender = new WebhookSender();
  private readonly limit: InFlightLimit;
  private readonly runner = new StepRunner();
  private readonly workers = new Map<string, DeliveryWorker>();
  private tickTimer: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Events written to the outbox since the start, and deliveries queued from them (counters for the bench and metrics). */
  eventsWritten = 0;
  deliveriesQueued = 0;

  constructor(
    engine: OddsEngine,
    signals: EngineSignals,
    private readonly clock: Clock,
    readonly config: AlertsConfig,
    private readonly log: Log,
  ) {
    this.store = new AlertsStore(openAlertsDatabase(config.dbPath));
    this.store.onSyncError = (error) =>
      this.log('error', { event: 'alerts_fsync_failed', detail: error.message }, 'fdatasync of the alerts outbox failed (not retried): the last events and delivery progress may not survive a power loss; restart the process after checking the disk');
    this.limit = new InFlightLimit(config.maxInFlight);
    this.producer = new AlertProducer(engine, signals, clock);
    for (const s of this.store.loadSubscriptions()) {
      this.addWorker(s, false);
      if (s.enabled) this.producer.follow(s.filters, 1);
    }
  }

  /** Starts the tick and every worker (deliveries left pending by the last run go first). */
  start(): void {
    for (const worker of this.workers.values()) worker.wake();
    this.tickTimer = setInterval(() => this.tick(), this.config.tickMs);
    this.pruneTimer = setInterval(() => this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  /** One producer tick: match, write the outbox, wake the matched workers. Public for tests that drive it. */
  tick(): void {
    if (this.closed) return;
    let events: AlertEvent[];
    try {
      events = this.producer.collect();
    } catch (error) {
      this.log('error', { event: 'alerts_producer_failed', detail: String(error) }, 'the alert producer failed this tick');
      return;
    }
    if (events.length === 0) return;
    const enabled = [...this.workers.values()].filter((w) => w.subscription.enabled);
    // matched[i * enabled.length + j]: event i goes to subscription j
    const matched = new Uint8Array(events.length * enabled.length);
    const batch: { event: AlertEvent; body: string }[] = [];
    const kept: number[] = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      let any = false;
      for (let j = 0; j < enabled.length; j++) {
        if (anyMatches(enabled[j]!.subscription.filters, event)) {
          matched[i * enabled.length + j] = 1;
          any = true;
        }
      }
      if (!any) continue;
      kept.push(i);
      batch.push({ event, body: JSON.stringify({ id: event.id, type: event.type, createdAt: isoMillis(event.createdAt), data: event.data }) });
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
    this.eventsWritten += batch.length;
    for (let j = 0; j < enabled.length; j++) {
      const worker = enabled[j]!;
      let woken = false;
      for (let k = 0; k < kept.length; k++) {
        const hit = matched[kept[k]! * enabled.length + j] === 1;
        worker.queue.offer(seqs[k]!, hit);
        if (hit) {
          this.deliveriesQueued++;
          woken = true;
        }
      }
      if (woken) worker.wake();
    }
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

  private prune(): void {
    try {
      let through = Infinity;
      // a disabled subscription starts after the newest event when enabled again: it holds nothing back
      for (const w of this.workers.values()) if (w.subscription.enabled) through = Math.min(through, w.queue.doneThrough);
      this.store.prune(this.clock.now() - this.config.retentionMs, through === Infinity ? this.store.lastSeq() : through);
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
      changed: this.changed,
      log: (fields, line) => this.log('warn', fields, line),
    });
    this.workers.set(s.id, worker);
    return worker;
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
  create(input: SubscriptionInput): { subscription: SubscriptionView; secret: string } {
    const now = this.clock.now();
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
    if (s.enabled) this.producer.follow(s.filters, 1);
    return { subscription: this.view(worker), secret: s.secret };
  }

  update(id: string, input: SubscriptionInput): SubscriptionView | null {
    const worker = this.workers.get(id);
    if (worker === undefined) return null;
    const s = worker.subscription;
    const next: Subscription = { ...s, ...definedOf(input), updatedAt: this.clock.now() };
    this.store.updateSubscription(next);
    const wasEnabled = s.enabled;
    if (wasEnabled) this.producer.follow(s.filters, -1);
    Object.assign(s, definedOf(input), { updatedAt: next.updatedAt });
    if (s.enabled) this.producer.follow(s.filters, 1);
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
    if (worker.subscription.enabled) this.producer.follow(worker.subscription.filters, -1);
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

  /** Stops the tick and the workers (requests in flight finish, bounded by the timeout), writes the progress, closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.tickTimer !== null) clearInterval(this.tickTimer);
    if (this.pruneTimer !== null) clearInterval(this.pruneTimer);
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
