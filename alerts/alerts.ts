// The webhook alerts of one process, main-thread side. The producer (alertProducer.ts)
// listens to the engine and, on its tick (ALERTS_TICK_MS), turns what changed into
// alert events; each tick's events are serialized once and handed to the delivery
// thread (deliveryThread.ts, a worker_threads Worker running deliveryHost.ts) in one
// message with transferred buffers. Everything else happens there: matching events to
// subscriptions, the outbox in alerts.db, the per-endpoint queues, HTTP, signatures,
// backoff, dead letters. So a thousand endpoints, slow, failing or fast, cost the main
// thread (ingest acknowledgements, reads, the push stream) one postMessage per tick.
//
// The admin API's operations are calls to the thread, answered asynchronously. The
// main thread keeps only what the producer needs: each subscription's filters and
// whether it is enabled, learnt from the thread at start and from every change's answer.
//
// If the thread dies (a bug, out of memory), it is logged and started again after
// RESTART_MS, up to RESTART_MAX_MS apart: alerts.db is opened again and the deliveries
// pending there resume; events produced meanwhile are held (up to HELD_CAP) and handed
// over once it is ready, and admin calls are answered 503 until then.
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../engine/clock.ts';
import type { OddsEngine } from '../engine/engine.ts';
import type { EngineSignals } from '../engine/signals/engineSignals.ts';
import { isoMillis } from '../engine/timeFormat.ts';
import type { AlertEvent } from './alertEvent.ts';
import { AlertProducer } from './alertProducer.ts';
import type { AlertsConfig } from './alertsConfig.ts';
import type { DeliveryMetrics, Followed, Log, SubscriptionView } from './deliveryHost.ts';
import type { AlertFilter } from './filters.ts';
import type { SubscriptionInput } from './subscriptionInput.ts';
import { tickBuffer } from './tickEvents.ts';
import type { CallName, FromThread, HostCalls, ThreadData, ThreadStats, ToThread } from './threadProtocol.ts';

export type { Log, SubscriptionView } from './deliveryHost.ts';
export { DEFAULT_MAX_BATCH_EVENTS } from './deliveryHost.ts';

const PRUNE_EVERY_MS = 10 * 60 * 1000;
const RESTART_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** Events held for the thread while it (re)starts; beyond this they are dropped, and said so. */
export const HELD_CAP = 100_000;

/** The delivery thread cannot answer now (starting again after a failure, or shutting down). */
export class AlertsUnavailable extends Error {}

type Reply<K extends CallName> = Awaited<ReturnType<HostCalls[K]>>;

export class Alerts {
  readonly producer: AlertProducer;
  private thread: Worker | null = null;
  private ready = false;
  private closing = false;
  /** Each subscription's filters and state as the producer follows them. */
  private readonly followed = new Map<string, { filters: AlertFilter[]; enabled: boolean }>();
  private readonly calls = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextCall = 1;
  private held: { bodies: string[]; createdAt: number[] } = { bodies: [], createdAt: [] };
  private droppedWhileDown = 0;
  private restartDelay = RESTART_MS;
  private tickTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  /** Times the delivery thread was started again after it died. */
  restarts = 0;
  /**
   * What the alerts cost the main thread: producer ticks, the events they found, and
   * the time the ticks took (collecting, serializing, the one message to the
   * thread), in total and the longest (bench/alerts.bench.ts reports them per phase).
   */
  readonly producerTime = { ticks: 0, events: 0, ms: 0, maxMs: 0 };

  /** The delivery thread while one runs (tests end it to check the restart: test/alerts/thread-crash.test.ts). */
  get deliveryThread(): Worker | null {
    return this.thread;
  }

  constructor(
    engine: OddsEngine,
    signals: EngineSignals,
    private readonly clock: Clock,
    readonly config: AlertsConfig,
    private readonly log: Log,
  ) {
    this.producer = new AlertProducer(engine, signals, clock);
  }

  /** Starts the delivery thread (opening alerts.db; rejects if it cannot), then the producer's tick. */
  async start(): Promise<void> {
    // libuv's thread pool (async fs, fdatasync, zlib) is made by the first thread that
    // queues work on it, and its threads take that thread's nice value: used once from
    // here first, so the delivery thread's lowered priority (ALERTS_THREAD_NICE) never
    // passes to the pool that the write path's fdatasyncs run on
    await stat(dirname(resolve(this.config.dbPath))).catch(() => undefined);
    await this.spawn();
    this.tickTimer = setInterval(() => this.tick(), this.config.tickMs);
    this.pruneTimer = setInterval(() => this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  private spawn(): Promise<void> {
    const data: ThreadData = { config: this.config };
    const thread = new Worker(new URL('./deliveryThreadBoot.mjs', import.meta.url), { workerData: data, name: 'alerts-delivery' });
    this.thread = thread;
    return new Promise((resolve, reject) => {
      let started = false;
      thread.on('message', (message: FromThread) => {
        switch (message.kind) {
          case 'ready':
            started = true;
            this.onReady(message.followed);
            resolve();
            return;
          case 'failed':
            reject(new Error(`webhook alerts: ${message.error}`));
            return;
          case 'log':
            this.log(message.level, message.fields, message.line);
            return;
          case 'reply': {
            const call = this.calls.get(message.id);
            if (call === undefined) return;
            this.calls.delete(message.id);
            if (message.error !== undefined) call.reject(new Error(message.error));
            else call.resolve(message.value);
            return;
          }
          case 'closed':
            // the thread ends next; 'exit' follows
            return;
        }
      });
      thread.on('error', (error) => {
        if (!started) reject(error);
        else this.log('error', { event: 'alerts_thread_failed', detail: error.stack ?? String(error) }, 'the webhook delivery thread failed');
      });
      thread.on('exit', (code) => {
        if (this.thread === thread) this.thread = null;
        this.ready = false;
        for (const call of this.calls.values()) call.reject(new AlertsUnavailable('the webhook delivery thread stopped'));
        this.calls.clear();
        if (!started) return reject(new Error(`webhook alerts: the delivery thread ended (code ${code}) before it was ready`));
        if (this.closing) return;
        this.log('error', { event: 'alerts_thread_exited', code, restartInMs: this.restartDelay }, 'the webhook delivery thread ended; starting it again (deliveries resume from alerts.db)');
        this.scheduleRestart();
      });
    });
  }

  private scheduleRestart(): void {
    if (this.closing) return;
    const delay = this.restartDelay;
    this.restartDelay = Math.min(RESTART_MAX_MS, delay * 2);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.restarts++;
      this.spawn().then(
        () => (this.restartDelay = RESTART_MS),
        (error: unknown) => {
          this.log('error', { event: 'alerts_thread_restart_failed', detail: String(error) }, 'starting the webhook delivery thread again failed');
          this.thread?.terminate();
          this.scheduleRestart();
        },
      );
    }, delay);
  }

  /** The thread is up: the producer follows what it holds (again, after a restart); held events go over. */
  private onReady(followed: Followed[]): void {
    for (const f of this.followed.values()) if (f.enabled) this.producer.follow(f.filters, -1);
    this.followed.clear();
    for (const f of followed) this.follow(f);
    this.ready = true;
    if (this.droppedWhileDown > 0) {
      this.log('error', { event: 'alerts_events_dropped', events: this.droppedWhileDown }, `${this.droppedWhileDown} alert events were dropped while the webhook delivery thread was down (more than ${HELD_CAP} held)`);
      this.droppedWhileDown = 0;
    }
    if (this.held.bodies.length > 0) {
      const held = this.held;
      this.held = { bodies: [], createdAt: [] };
      this.post(held.bodies, held.createdAt);
    }
  }

  private follow(f: Followed): void {
    const before = this.followed.get(f.id);
    if (before?.enabled === true) this.producer.follow(before.filters, -1);
    this.followed.set(f.id, { filters: f.filters, enabled: f.enabled });
    if (f.enabled) this.producer.follow(f.filters, 1);
  }

  private unfollow(id: string): void {
    const before = this.followed.get(id);
    if (before?.enabled === true) this.producer.follow(before.filters, -1);
    this.followed.delete(id);
  }

  /** One producer tick: the events found go to the delivery thread in one message. Public for tests that drive it. */
  tick(): void {
    if (this.closing) return;
    const started = performance.now();
    const events = this.produce();
    const ms = performance.now() - started;
    const time = this.producerTime;
    time.ticks++;
    time.events += events;
    time.ms += ms;
    if (ms > time.maxMs) time.maxMs = ms;
  }

  /** The tick's work; returns how many events it found. */
  private produce(): number {
    let events: AlertEvent[];
    try {
      events = this.producer.collect();
    } catch (error) {
      this.log('error', { event: 'alerts_producer_failed', detail: String(error) }, 'the alert producer failed this tick');
      return 0;
    }
    if (events.length === 0) return 0;
    const bodies: string[] = [];
    const createdAt: number[] = [];
    for (const event of events) {
      bodies.push(JSON.stringify({ id: event.id, type: event.type, createdAt: isoMillis(event.createdAt), data: event.data }));
      createdAt.push(event.createdAt);
    }
    if (this.ready) {
      this.post(bodies, createdAt);
      return events.length;
    }
    const room = HELD_CAP - this.held.bodies.length;
    if (room < bodies.length) this.droppedWhileDown += bodies.length - Math.max(room, 0);
    for (let i = 0; i < Math.min(room, bodies.length); i++) {
      this.held.bodies.push(bodies[i]!);
      this.held.createdAt.push(createdAt[i]!);
    }
    return events.length;
  }

  private post(bodies: string[], createdAt: number[]): void {
    const bytes = tickBuffer(bodies);
    const times = Float64Array.from(createdAt);
    const message: ToThread = { kind: 'events', bodies: bytes, createdAt: times };
    this.thread!.postMessage(message, [bytes.buffer, times.buffer]);
  }

  private prune(): void {
    if (!this.ready) return;
    const message: ToThread = { kind: 'prune', cutoff: this.clock.now() - this.config.retentionMs };
    this.thread!.postMessage(message);
  }

  private call<K extends CallName>(name: K, ...args: Parameters<HostCalls[K]>): Promise<Reply<K>> {
    if (!this.ready || this.thread === null) {
      return Promise.reject(new AlertsUnavailable(this.closing ? 'the process is shutting down' : 'the webhook delivery thread is starting again after a failure'));
    }
    const id = this.nextCall++;
    const message: ToThread = { kind: 'call', id, name, args };
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.thread!.postMessage(message);
    });
  }

  // -- admin operations (answered by the delivery thread) ---------------------------

  list(): Promise<SubscriptionView[]> {
    return this.call('list');
  }

  get(id: string): Promise<SubscriptionView | null> {
    return this.call('get', id);
  }

  /** Creates a subscription; its secret is returned here and never again. */
  async create(input: SubscriptionInput): Promise<{ subscription: SubscriptionView; secret: string }> {
    const created = await this.call('create', input, this.clock.now());
    this.follow(created.subscription);
    return created;
  }

  async update(id: string, input: SubscriptionInput): Promise<SubscriptionView | null> {
    const view = await this.call('update', id, input, this.clock.now());
    if (view !== null) this.follow(view);
    return view;
  }

  async remove(id: string): Promise<boolean> {
    const removed = await this.call('remove', id);
    if (removed) this.unfollow(id);
    return removed;
  }

  /** Queues again the subscription's delivered events created in [from, to] (engine clock ms); null: no such subscription. */
  replay(id: string, from: number, to: number): Promise<number | null> {
    return this.call('replay', id, from, to);
  }

  retryNow(id: string): Promise<SubscriptionView | null> {
    return this.call('retryNow', id);
  }

  deadLetters(id: string, after: number, limit: number) {
    return this.call('deadLetters', id, after, limit);
  }

  /** What /metrics shows, from the delivery thread. */
  metrics(): Promise<DeliveryMetrics> {
    return this.call('metrics');
  }

  /** The delivery thread's counters, its WAL fdatasyncs and its CPU time. */
  stats(): Promise<ThreadStats> {
    return this.call('stats');
  }

  /** Stops the tick; the thread stops its workers (requests in flight finish, bounded by the timeout), writes the progress and closes alerts.db. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.tickTimer !== null) clearInterval(this.tickTimer);
    if (this.pruneTimer !== null) clearInterval(this.pruneTimer);
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    const thread = this.thread;
    if (thread === null) return;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    if (this.ready) {
      const message: ToThread = { kind: 'close' };
      thread.postMessage(message);
      this.ready = false;
    } else await thread.terminate();
    await exited;
  }
}
