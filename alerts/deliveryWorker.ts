// One subscription's delivery loop. Strictly in order: one request in flight per
// endpoint, and the next batch is taken from its queue (deliveryQueue.ts: replays
// first, then the live events in outbox order) only once the previous one was
// delivered or dead-lettered. A batch holds at most maxBatchEvents; the worker waits the
// batching window before a batch that is not full, so events arriving close together go
// in one request. A failure is retried
// after retryDelay (exponential, jittered), the same events again (more may join
// behind them); a batch still failing retryForMs after its first failure goes to the
// dead letters and the worker moves on. Progress lives in the Subscription object and
// reaches the disk at the store's next flush (group commit): a crash before it
// redelivers, it never skips.
//
// Timers here run on the wall clock (Date.now), not the engine clock: a frozen engine
// clock (NOW in tests and benches) must not freeze retries.
import type { StoredEvent } from './alertEvent.ts';
import type { AlertsStore, Subscription } from './alertsStore.ts';
import { retryDelay, type RetryPolicy } from './backoff.ts';
import type { Batch, DeliveryQueue } from './deliveryQueue.ts';
import type { SendResult, WebhookSender } from './webhookSender.ts';

/** Requests in flight across all endpoints, at most `max`; the others queue in arrival order. */
export class InFlightLimit {
  private used = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly max: number) {}

  acquire(): Promise<void> {
    if (this.used < this.max) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.used--;
  }
}

/**
 * Runs the workers' steps in turns of at most SLICE_MS, yielding to I/O (setImmediate)
 * between turns: a thousand endpoints woken by one tick do not hold the event loop for
 * the whole fan-out, so ingest acknowledgements and reads are answered in between.
 */
export class StepRunner {
  static readonly SLICE_MS = 4;
  private readonly steps: (() => void)[] = [];
  private head = 0;
  private scheduled = false;

  run(step: () => void): void {
    this.steps.push(step);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.turn);
  }

  private turn = (): void => {
    const until = performance.now() + StepRunner.SLICE_MS;
    while (this.head < this.steps.length && performance.now() < until) this.steps[this.head++]!();
    if (this.head < this.steps.length) {
      setImmediate(this.turn);
      return;
    }
    this.steps.length = 0;
    this.head = 0;
    this.scheduled = false;
  };
}

const COMMA = Buffer.from(',');
const encoder = new TextEncoder();
const CLOSE = Buffer.from(']}');

/**
 * {"subscriptionId","deliveryId","events":[...]} as the pieces sent one after another,
 * without copying the events: each event's bytes are made once and shared by every
 * endpoint that sends it, and events that lie side by side in their tick's buffer
 * (alertsStore.ts: a tick's events joined by commas) go as one piece, so a batch of a
 * thousand events of ten ticks is a dozen pieces.
 */
export function deliveryBody(subscriptionId: string, deliveryId: string, entries: readonly StoredEvent[]): Buffer[] {
  const pieces: Buffer[] = [Buffer.from(`{"subscriptionId":${JSON.stringify(subscriptionId)},"deliveryId":${JSON.stringify(deliveryId)},"events":[`)];
  let run: Buffer | null = null;
  let runEnd = 0;
  for (let i = 0; i < entries.length; i++) {
    // an event read back from SQLite gets bytes of its own (never beside another's)
    const bytes = (entries[i]!.bytes ??= Buffer.from(encoder.encode(entries[i]!.body).buffer));
    // the next event right after a comma that follows the run, in the same buffer: the run grows over it
    if (run !== null && bytes.buffer === run.buffer && bytes.byteOffset === runEnd + 1 && run.buffer.byteLength > runEnd && new Uint8Array(run.buffer)[runEnd] === 0x2c) {
      runEnd = bytes.byteOffset + bytes.length;
      continue;
    }
    if (run !== null) {
      pieces.push(Buffer.from(run.buffer, run.byteOffset, runEnd - run.byteOffset), COMMA);
    }
    run = bytes;
    runEnd = bytes.byteOffset + bytes.length;
  }
  if (run !== null) pieces.push(Buffer.from(run.buffer, run.byteOffset, runEnd - run.byteOffset));
  pieces.push(CLOSE);
  return pieces;
}

export interface WorkerContext {
  runner: StepRunner;
  store: AlertsStore;
  sender: WebhookSender;
  retry: RetryPolicy;
  timeoutMs: number;
  limit: InFlightLimit;
  /** Counted here: requests answered 2xx, requests failed, events dead-lettered. */
  counters: { deliveredRequests: number; failedRequests: number; deadLetteredEvents: number };
  /** The store has progress to flush. */
  changed(): void;
  log(fields: Record<string, unknown>, line: string): void;
}

type State = 'idle' | 'window' | 'sending' | 'backoff' | 'stopped';

export class DeliveryWorker {
  private state: State = 'idle';
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    readonly subscription: Subscription,
    readonly queue: DeliveryQueue,
    private readonly context: WorkerContext,
  ) {}

  get status(): State {
    return this.state;
  }

  /** Called at start, after the producer queued events for this subscription, after a replay or a resume. */
  wake(): void {
    if (this.state === 'stopped') return;
    // sending or waiting: the next run takes what is queued by then anyway
    if (this.state !== 'idle') return;
    const s = this.subscription;
    if (!s.enabled) return;
    const wait = s.nextAttemptAt === null ? 0 : s.nextAttemptAt - Date.now();
    if (wait > 0) return this.later('backoff', wait);
    if (s.attempts === 0 && s.batchWindowMs > 0) return this.later('window', s.batchWindowMs);
    this.later('window', 0);
  }

  private later(state: State, ms: number): void {
    // stopped: the outcome of the last request is kept (flushed at close), nothing more is scheduled
    if (this.state === 'stopped') return;
    this.state = state;
    if (ms <= 0) return this.context.runner.run(this.step);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.context.runner.run(this.step);
    }, ms);
  }

  private readonly step = (): void => this.run();

  private run(): void {
    if (this.state === 'stopped') return;
    const s = this.subscription;
    if (!s.enabled) {
      this.state = 'idle';
      return;
    }
    let batch: Batch | null;
    let entries: StoredEvent[];
    try {
      batch = this.queue.next(s.maxBatchEvents);
      entries = batch === null ? [] : this.context.store.events(batch.seqs);
    } catch (error) {
      this.context.log({ event: 'alerts_outbox_read_failed', subscription: s.id, detail: String(error) }, 'reading the outbox failed; retrying in 1 s');
      return this.later('backoff', 1000);
    }
    if (batch === null) {
      this.state = 'idle';
      return;
    }
    if (entries.length === 0) {
      // pruned meanwhile (a replay of events past retention): nothing to send
      this.finish(batch);
      return this.later('window', 0);
    }
    this.state = 'sending';
    this.inFlight = this.send(batch, entries).finally(() => (this.inFlight = null));
  }

  /** The batch is done (delivered or dead-lettered): it leaves the queue; replays leave the outbox at the next flush. */
  private finish(batch: Batch): void {
    this.queue.done(batch);
    for (const r of batch.replays) this.context.store.replayDone(this.subscription.id, r.pos);
    this.context.store.touched(this.subscription);
    this.context.changed();
  }

  private async send(batch: Batch, entries: StoredEvent[]): Promise<void> {
    const { context } = this;
    const s = this.subscription;
    await context.limit.acquire();
    let result: SendResult;
    const first = entries[0]!.seq;
    const last = entries[entries.length - 1]!.seq;
    const deliveryId = `${s.id}:${batch.lane === 'replay' ? 'replay:' : ''}${first}-${last}`;
    try {
      const body = deliveryBody(s.id, deliveryId, entries);
      result = await context.sender.send({
        url: new URL(s.url),
        secret: s.secret,
        body,
        timeoutMs: context.timeoutMs,
        unixSeconds: Math.floor(Date.now() / 1000),
        headers: { 'Odds-Delivery-Id': deliveryId, 'Odds-Delivery-Attempt': String(s.attempts + 1) },
      });
    } catch (error) {
      result = { ok: false, status: null, error: `could not send: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      context.limit.release();
    }
    const now = Date.now();
    s.lastStatus = result.status;
    if (result.ok) {
      context.counters.deliveredRequests++;
      s.attempts = 0;
      s.failingSince = null;
      s.nextAttemptAt = null;
      s.lastError = null;
      s.lastDeliveredAt = now;
      s.deliveredEvents += entries.length;
      this.finish(batch);
      // a full batch waiting goes at once; otherwise the window gathers the next events
      // (an endpoint gets at most one request per window while events trickle in)
      return this.later('window', this.queue.queued >= s.maxBatchEvents ? 0 : s.batchWindowMs);
    }
    context.counters.failedRequests++;
    s.attempts++;
    s.failingSince ??= now;
    s.lastError = result.error;
    const retryFor = context.retry.retryForMs;
    if (now - s.failingSince >= retryFor) {
      context.store.deadLettered(s.id, entries.map((e) => e.seq), now, s.attempts, result.status, result.error);
      context.counters.deadLetteredEvents += entries.length;
      context.log({ event: 'alerts_dead_lettered', subscription: s.id, events: entries.length, attempts: s.attempts, lastError: result.error }, 'webhook batch failed for the whole retry period: dead-lettered');
      s.attempts = 0;
      s.failingSince = null;
      s.nextAttemptAt = null;
      this.finish(batch);
      return this.later('window', 0);
    }
    // the last try falls at the end of the retry period, not past it
    const delay = Math.max(0, Math.min(retryDelay(context.retry, s.attempts), s.failingSince + retryFor - now));
    s.nextAttemptAt = now + delay;
    context.store.touched(s);
    context.changed();
    this.later('backoff', delay);
  }

  /** A retry waiting is tried now (an operator's resume, an endpoint known to be back). */
  retryNow(): void {
    if (this.state !== 'backoff' || this.timer === null) return this.wake();
    clearTimeout(this.timer);
    this.timer = null;
    this.subscription.nextAttemptAt = null;
    this.later('window', 0);
  }

  /** Stops scheduling; waits for the request in flight (bounded by the timeout). */
  async stop(): Promise<void> {
    this.state = 'stopped';
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
  }
}
