// The webhook alerts of one process: the subscriptions and the outbox (alertsStore.ts
// over alerts.db), the producer listening to the engine (alertProducer.ts), one
// delivery worker per subscription (deliveryWorker.ts) and the operations the admin
// API calls (adminRoutes.ts). service/app.ts builds it after the signal books and
// subscribes the producer among the engine's listeners.
//
// Each tick: the producer's events are matched to the enabled subscriptions (any of a
// subscription's filters), written to the outbox with one delivery per match in one
// fsync'd transaction, and the matched subscriptions' workers are woken. The workers'
// progress is written by a flush that follows their changes within FLUSH_MS (one fsync
// for every acknowledgement of that moment), so a thousand endpoints acknowledging
// cost a few commits a second, not a thousand.
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
import { DeliveryWorker, InFlightLimit } from './deliveryWorker.ts';
import { anyMatches } from './filters.ts';
import { newSecret } from './signing.ts';
import type { SubscriptionInput } from './subscriptionInput.ts';
import { WebhookSender } from './webhookSender.ts';

const FLUSH_MS = 20;
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
  private readonly workers = new Map<string, DeliveryWorker>();
  private tickTimer: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Events written to the outbox since the start, and deliveries numbered (counters for tests and metrics). */
  eventsWritten = 0;
  deliveriesWritten = 0;

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
      this.addWorker(s);
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
    const enabled = [...this.workers.values()].filter((w) => w.subscription.enabled).map((w) => w.subscription);
    const batch: { event: AlertEvent; body: string; subscriptions: string[] }[] = [];
    for (const event of events) {
      const subscriptions = enabled.filter((s) => anyMatches(s.filters, event)).map((s) => s.id);
      if (subscriptions.length === 0) continue;
      batch.push({ event, body: JSON.stringify({ id: event.id, type: event.type, createdAt: isoMillis(event.createdAt), data: event.data }), subscriptions });
    }
    if (batch.length === 0) return;
    let last: Map<string, number>;
    try {
      last = this.store.append(batch);
    } catch (error) {
      // not retried (an fsync error leaves the file's state unknown): these events are lost and said so
      this.log('error', { event: 'alerts_outbox_write_failed', events: batch.length, detail: String(error) }, 'writing alert events to the outbox failed; they were not queued');
      return;
    }
    this.eventsWritten += batch.length;
    for (const b of batch) this.deliveriesWritten += b.subscriptions.length;
    for (const id of last.keys()) this.workers.get(id)?.wake();
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
      this.store.prune(this.clock.now() - this.config.retentionMs);
    } catch (error) {
      this.log('warn', { event: 'alerts_prune_failed', detail: String(error) }, 'pruning delivered alert events failed');
    }
  }

  private addWorker(s: Subscription): DeliveryWorker {
    const worker = new DeliveryWorker(s, {
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
      cursor: 0,
      attempts: 0,
      failingSince: null,
      nextAttemptAt: null,
      lastStatus: null,
      lastError: null,
      lastDeliveredAt: null,
      deliveredEvents: 0,
    };
    this.store.insertSubscription(s);
    const worker = this.addWorker(s);
    if (s.enabled) this.producer.follow(s.filters, 1);
    return { subscription: this.view(worker), secret: s.secret };
  }

  update(id: string, input: SubscriptionInput): SubscriptionView | null {
    const worker = this.workers.get(id);
    if (worker === undefined) return null;
    const s = worker.subscription;
    const next: Subscription = { ...s, ...definedOf(input), updatedAt: this.clock.now() };
    this.store.updateSubscription(next);
    if (s.enabled) this.producer.follow(s.filters, -1);
    Object.assign(s, definedOf(input), { updatedAt: next.updatedAt });
    if (s.enabled) this.producer.follow(s.filters, 1);
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

  /** Queues again the subscription's events created in [from, to] (engine clock ms). */
  replay(id: string, from: number, to: number): number | null {
    const worker = this.workers.get(id);
    if (worker === undefined) return null;
    const { count } = this.store.replay(id, worker.subscription.cursor, from, to);
    if (count > 0) worker.wake();
    return count;
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
        pending: this.store.pendingCount(s.id, s.cursor),
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
