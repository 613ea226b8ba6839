// The write path in process: what the ingest listener (HTTP, WebSocket) and an
// in-process feed call. submit(batch) runs, in this order:
//
//   1. validate the whole batch against the board plus the batches still in flight;
//      any bad change: reject IngestError('invalid_batch', errors) (nothing logged)
//   2. choose the apply time (the clock, never before the last one handed out) and
//      encode the normalized batch as one log record (record.ts)
//   3. append it to the log and wait until it is durable; a failed append rejects
//      IngestError('log_unavailable') and nothing of the batch is applied
//   4. apply it: the engine at the logged time, then the cold records in one SQLite
//      transaction; resolve {seq, applied}
//
// Log then apply: a reader never sees a change that a crash could take back, and an
// acknowledgement always follows the fsync. Appends resolve in log order and each
// continuation applies its own batch, so batches apply in exactly the log's order;
// while one waits for its fsync the next can be validated (against its effects,
// kept as a PendingEffects layer) and join the same group commit.
//
// A msgpack body of nothing but price ticks, the bulk of a feed, takes the same steps
// on typed arrays read straight from its bytes (tickBatch.ts, validateTicks.ts,
// encodeTickRecord, engine.applyTicks): the same checks, log bytes and board, with no
// object, string or boxed number per change. Anything that path does not take as it
// stands goes the general way, so every refusal is worded by validate.ts.

import type { Clock } from '../engine/clock.ts';
import { TICK_HAS_SUSPENDED, TICK_SUSPENDED, type OddsEngine } from '../engine/engine.ts';
import { LogUnavailableError, type BatchLog } from '../persistence/log/batchLog.ts';
import type { ColdRecordChange } from '../persistence/coldWrites.ts';
import { BoardView, PendingEffects, type ColdLookup } from './boardView.ts';
import type { ChangeError } from './changes.ts';
import { decodeBatch, MAX_LISTED_BAD_CHANGES, type BatchFormat } from './decode.ts';
import { coldChanges, encodeRecord, encodeTickRecord, engineShare, type BatchRecord } from './record.ts';
import { readTickBatch, tickId, type TickBatch } from './tickBatch.ts';
import { SpareBuffers } from './spareBuffers.ts';
import { TickSlots } from './tickSlots.ts';
import { validateBatch } from './validate.ts';
import { validateTicks } from './validateTicks.ts';

export interface IngestResult {
  /** The board seq after the batch (what /status, the snapshot and the delta feed are at). */
  seq: number;
  /** Changes applied: every change of the batch. */
  applied: number;
  /** The batch's log record index. */
  index: number;
}

export type IngestErrorCode = 'invalid_batch' | 'log_unavailable' | 'ingest_failed';

/** How a batch came in: a POST, a WebSocket message, or a caller in the process (a feed, the simulator). */
export type IngestVia = 'http' | 'ws' | 'process';
export const INGEST_VIAS: readonly IngestVia[] = ['http', 'ws', 'process'];
/** ok: acknowledged; invalid: refused for its changes (nothing logged); error: the write path could not take it. */
export type IngestOutcome = 'ok' | 'invalid' | 'error';
export const INGEST_OUTCOMES: readonly IngestOutcome[] = ['ok', 'invalid', 'error'];

/**
 * Told of every batch once it is answered: the way in, the outcome, the seconds from
 * receiving it to answering, its changes, and the refusal (an IngestError, or what
 * else was thrown) when not ok. Called once per batch, never per change; metrics and
 * the structured log of the composition root hang here, so this module needs neither.
 */
/** What the write path counts its applied changes by: the change's op, with a price change that suspends a row apart. */
export const APPLIED_KINDS = ['odds', 'price', 'suspend', 'remove', 'event', 'status', 'team', 'player', 'season', 'boxscore', 'source'] as const;
/** Index of each logged op (record.ts) in APPLIED_KINDS: the log's names differ from the feed's for odds rows and prices. */
const KIND_INDEX: Readonly<Record<string, number>> = Object.fromEntries([
  ...APPLIED_KINDS.map((kind, i) => [kind, i] as const),
  ['upsert', APPLIED_KINDS.indexOf('odds')],
  ['priceById', APPLIED_KINDS.indexOf('price')],
]);
const SUSPEND_INDEX = APPLIED_KINDS.indexOf('suspend');
const PRICE_INDEX = APPLIED_KINDS.indexOf('price');
/** The fields bits of a tick that suspends its row (counted as a suspend, not a price). */
const SUSPENDS = TICK_HAS_SUSPENDED | TICK_SUSPENDED;
/** What a batch of ticks leaves pending for the batches validated after it: nothing. */
const NO_EFFECTS = new PendingEffects();

export type BatchObserver = (via: IngestVia, outcome: IngestOutcome, seconds: number, changes: number, error: unknown) => void;

export class IngestError extends Error {
  constructor(
    readonly code: IngestErrorCode,
    detail: string,
    /** The errors of at most the first MAX_LISTED_BAD_CHANGES bad changes. */
    readonly errors: ChangeError[] = [],
    options?: { cause?: unknown },
    /** Bad changes beyond those listed in errors. */
    readonly errorsOmitted = 0,
  ) {
    super(detail, options);
    this.name = 'IngestError';
  }
}

/** Where cold records go and where the validator looks them up (Persistence provides both). */
export interface ColdStore {
  readonly coldWrites: ColdLookup;
  applyColdChanges(changes: readonly ColdRecordChange[], now: number): void;
}

/** What the write path needs of a log: it only appends (restores replay the log themselves). */
export type AppendLog = Pick<BatchLog, 'append'>;

export interface IngestOptions {
  engine: OddsEngine;
  log: AppendLog;
  cold: ColdStore;
  clock: Clock;
  /** The log index the engine's state already includes (a restore's last replayed record; 0 for a fresh log). */
  appliedIndex?: number;
  /** Called after every applied batch (the checkpointer watches the log size here). */
  afterApply?: () => void;
  /** Problems that do not fail a batch (a cold write failing after the batch was durable). */
  warn?: (line: string) => void;
}

interface InFlight {
  effects: PendingEffects;
}

/** Slots validation resolved for a batch, and the board they were resolved on. */
interface SlotHints {
  slots: number[];
  /** The write path's epoch at validation (see Ingest.epoch). */
  epoch: number;
}

export class Ingest {
  private readonly engine: OddsEngine;
  private readonly log: AppendLog;
  private readonly cold: ColdStore;
  private readonly clock: Clock;
  private readonly warn: (line: string) => void;
  /** Validated batches waiting for the log, oldest first. */
  private inFlight: InFlight[] = [];
  private lastTime = 0;
  private applied: number;
  private failure: Error | null = null;
  private coldFailures = 0;
  /** Told once, when an internal error stops the write path until a restart (every batch then 503 ingest_failed); null: nobody. */
  onStopped: ((stopped: { since: number; error: string; appliedIndex: number }) => void) | null = null;
  /**
   * The board seq as this write path last left it, and a counter that moves whenever
   * the board was found changed by anyone else: slots resolved at validation are
   * reused at apply only if the epoch has not moved in between (the pending batches'
   * own effects are known to validation; another writer's are not).
   */
  private ownSeq: number;
  private epoch = 0;
  private readonly tickSlots = new TickSlots();
  /** Blocks the tick path's arrays and log records are written in, reused batch after batch. */
  private readonly spares = new SpareBuffers();
  /** While set, durable batches wait for it before they apply (holdApplies). */
  private gate: Promise<void> | null = null;
  /** Set by the composition root (metrics, logs); null: nobody is told. */
  onBatch: BatchObserver | null = null;
  /** Changes applied through this write path, by APPLIED_KINDS index (read at scrape time; replayed records are not counted). */
  readonly appliedByKind = new Float64Array(APPLIED_KINDS.length);
  /** Batches that went from their bytes to the log as typed arrays (submitBody's tick path), refused or not later. */
  ticksReadFromBytes = 0;

  constructor(private readonly options: IngestOptions) {
    this.engine = options.engine;
    this.log = options.log;
    this.cold = options.cold;
    this.clock = options.clock;
    this.applied = options.appliedIndex ?? 0;
    this.ownSeq = this.engine.seq;
    this.warn = options.warn ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** Index of the last log record applied to the engine. */
  get appliedIndex(): number {
    return this.applied;
  }

  /**
   * Cold writes that failed after their batch was durable. While any did, checkpoints
   * must not drop the log: only its replay can still bring those records to SQLite.
   */
  get coldWritesFailed(): number {
    return this.coldFailures;
  }

  /** Batches validated and waiting for the log. */
  get inFlightCount(): number {
    return this.inFlight.length;
  }

  /**
   * A body as it arrives (NDJSON or msgpack), through the ingest listener (via http or
   * ws). A msgpack body of nothing but price ticks, on a board no pending batch moves
   * rows of, goes from its bytes to the log and the columns through typed arrays
   * (tickBatch.ts); any other body, or ticks that are not all valid, is decoded into
   * objects and checked by the general validator, which names every bad change.
   */
  submitBody(body: Uint8Array, format: BatchFormat, via: IngestVia = 'http'): Promise<IngestResult> {
    const started = performance.now();
    if (format === 'msgpack' && this.failure === null) {
      const ticks = readTickBatch(body, this.spares);
      if (ticks !== null) {
        const written = this.writeTicks(ticks);
        if (written !== null) return this.observed(via, started, ticks.count, written);
        this.spares.give(ticks.memory);
      }
    }
    let decoded: ReturnType<typeof decodeBatch>;
    try {
      decoded = decodeBatch(body, format);
    } catch (error) {
      return this.observed(via, started, 0, Promise.reject(error));
    }
    if (decoded.errors.length > 0 && decoded.changes.length === 0) {
      return this.observed(via, started, 0, Promise.reject(new IngestError('invalid_batch', decoded.errors[0].detail, decoded.errors)));
    }
    return this.observed(via, started, decoded.changes.length, this.write(decoded.changes, decoded.errors, decoded.badChanges));
  }

  /** One batch of changes (plain objects, as decoded from JSON or msgpack); via: who calls (default a caller in the process). */
  submit(changes: readonly unknown[], decodeErrors: readonly ChangeError[] = [], via: IngestVia = 'process'): Promise<IngestResult> {
    return this.observed(via, performance.now(), changes.length, this.write(changes, decodeErrors, decodeErrors.length));
  }

  private observed(via: IngestVia, started: number, changes: number, result: Promise<IngestResult>): Promise<IngestResult> {
    if (this.onBatch === null) return result;
    return result.then(
      (ok) => {
        this.tell(via, 'ok', started, changes, null);
        return ok;
      },
      (error: unknown) => {
        this.tell(via, error instanceof IngestError && error.code === 'invalid_batch' ? 'invalid' : 'error', started, changes, error);
        throw error;
      },
    );
  }

  /** A failing observer must not change a batch's answer (an acknowledged batch is durable and applied). */
  private tell(via: IngestVia, outcome: IngestOutcome, started: number, changes: number, error: unknown): void {
    try {
      this.onBatch?.(via, outcome, (performance.now() - started) / 1000, changes, error);
    } catch (failure) {
      this.warn(`ingest: the batch observer failed: ${failure instanceof Error ? failure.message : String(failure)}`);
    }
  }

  private async write(changes: readonly unknown[], decodeErrors: readonly ChangeError[], undecoded: number): Promise<IngestResult> {
    if (this.failure !== null) throw new IngestError('ingest_failed', `the write path stopped after an internal error: ${this.failure.message}`);
    const epoch = this.currentEpoch();
    const layers = this.inFlight.map((f) => f.effects).reverse();
    const validated = validateBatch(changes, (own) => new BoardView(this.engine, this.cold.coldWrites, [own, ...layers], this.tickSlots));
    const bad = undecoded + validated.badChanges;
    if (bad > 0 || decodeErrors.length > 0) {
      // each list holds the first bad changes of its kind: together, the first ones overall
      const merged = [...decodeErrors, ...validated.errors].sort((a, b) => a.index - b.index);
      const listed: ChangeError[] = [];
      let distinct = 0;
      let last = -1;
      for (const error of merged) {
        if (error.index !== last) {
          last = error.index;
          if (++distinct > MAX_LISTED_BAD_CHANGES) break;
        }
        listed.push(error);
      }
      const total = Math.max(bad, distinct);
      const omitted = Math.max(0, total - MAX_LISTED_BAD_CHANGES);
      throw new IngestError(
        'invalid_batch',
        `${total} of ${changes.length} changes are invalid; nothing was applied` + (omitted > 0 ? `; the first ${MAX_LISTED_BAD_CHANGES} are listed, ${omitted} more are not` : ''),
        listed,
        undefined,
        omitted,
      );
    }
    const time = this.nextTime();
    const record: BatchRecord = { time, changes: validated.changes };
    // encoded before the batch joins the in-flight ones: a batch that cannot become a
    // record is refused whole and leaves nothing behind for later batches to validate against
    let payload: Uint8Array;
    try {
      payload = encodeRecord(record);
    } catch (error) {
      throw new IngestError('invalid_batch', `the batch cannot be written as a log record (${(error as Error).message}); nothing was applied`, [], { cause: error });
    }
    this.inFlight.push({ effects: validated.effects });
    return this.logAndApply(payload, (index) => {
      this.applyRecord(index, record, { slots: validated.slots, epoch });
      return record.changes.length;
    });
  }

  /**
   * A batch of ticks read from its bytes, validated, logged and applied without an
   * object per change; null (nothing done) when the general path must take the body:
   * a pending batch moves rows (the typed check reads the engine alone), or a tick is
   * not valid (the general validator words the errors).
   */
  private writeTicks(ticks: TickBatch): Promise<IngestResult> | null {
    const epoch = this.currentEpoch();
    for (let i = 0; i < this.inFlight.length; i++) if (!this.inFlight[i].effects.leavesRowsAlone) return null;
    if (!validateTicks(ticks, this.engine, this.tickSlots)) return null;
    this.ticksReadFromBytes++;
    const time = this.nextTime();
    this.inFlight.push({ effects: NO_EFFECTS });
    const payload = encodeTickRecord(time, ticks, this.spares);
    const written = this.logAndApply(
      payload,
      (index) => {
        this.applyTicks(index, time, ticks, epoch);
        return ticks.count;
      },
      () => this.spares.give(payload.buffer as ArrayBuffer), // durable: the log holds no view of it any more
    );
    // applied or refused, nothing reads the batch's arrays any more
    void written.then(
      () => this.spares.give(ticks.memory),
      () => this.spares.give(ticks.memory),
    );
    return written;
  }

  /** The apply time of the next batch: the clock, never before the board's last change or the last time handed out. */
  private nextTime(): number {
    const time = Math.max(this.clock.now(), this.engine.asOf(), this.lastTime);
    this.lastTime = time;
    return time;
  }

  /**
   * Appends a validated batch (already in flight) and, once it is durable and no
   * checkpoint holds applies, applies it with `apply` (which answers how many changes
   * it applied). The part of the write path after validation, for both ways in.
   */
  private async logAndApply(payload: Uint8Array, apply: (index: number) => number, durable?: () => void): Promise<IngestResult> {
    let index: number;
    try {
      index = await this.log.append(payload);
      durable?.();
    } catch (error) {
      // the log refuses everything queued behind a failed append, so every in-flight
      // batch ends here too; none of them was applied
      this.inFlight = [];
      const detail = error instanceof LogUnavailableError ? error.message : String(error);
      throw new IngestError('log_unavailable', detail, [], { cause: error });
    }
    // held (a checkpoint copying the board): wait, still in flight, so batches validated
    // meanwhile see this one's effects; waiters resume in log order
    while (this.gate !== null) await this.gate;
    this.inFlight.shift();
    const applied = apply(index);
    this.options.afterApply?.();
    return { seq: this.engine.seq, applied, index };
  }

  /**
   * Holds every apply until the returned release is called: batches are still validated
   * and logged (and their fsyncs shared), then apply in log order on release. What a
   * checkpoint uses to copy the board in steps between which reads are served.
   */
  holdApplies(): () => void {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    this.gate = gate;
    return () => {
      if (this.gate === gate) this.gate = null;
      open();
    };
  }

  private currentEpoch(): number {
    if (this.engine.seq !== this.ownSeq) {
      // someone else wrote to the engine: rows may have moved
      this.epoch++;
      this.ownSeq = this.engine.seq;
      this.tickSlots.clear();
    }
    return this.epoch;
  }

  /** The write path stops for good (until a restart): the first failure is kept and told once. */
  private stop(error: Error): void {
    if (this.failure !== null) return;
    this.failure = error;
    try {
      this.onStopped?.({ since: Date.now(), error: error.message, appliedIndex: this.applied });
    } catch {
      // an observer's failure is not the write path's
    }
  }

  /** applyRecord for a logged batch of ticks held as typed arrays (writeTicks). */
  private applyTicks(index: number, time: number, ticks: TickBatch, epoch: number): void {
    if (index !== this.applied + 1) {
      const outOfOrder = new Error(`record ${index} applied after ${this.applied}`);
      this.stop(outOfOrder);
      throw new IngestError('ingest_failed', outOfOrder.message);
    }
    if (epoch !== this.currentEpoch()) {
      // another writer changed the board since validation: rows may have moved, so each
      // id is looked up again (as applyRecord does without slot hints)
      for (let i = 0; i < ticks.count; i++) ticks.slot[i] = this.engine.slotOf(tickId(ticks, i));
    }
    try {
      this.engine.applyTicks(ticks, time);
      this.ownSeq = this.engine.seq;
    } catch (error) {
      this.stop(error as Error);
      throw new IngestError('ingest_failed', `applying record ${index} failed: ${(error as Error).message}`, [], { cause: error });
    }
    this.applied = index;
    const fields = ticks.fields;
    let suspends = 0;
    for (let i = 0; i < ticks.count; i++) if ((fields[i] & SUSPENDS) === SUSPENDS) suspends++;
    this.appliedByKind[SUSPEND_INDEX] += suspends;
    this.appliedByKind[PRICE_INDEX] += ticks.count - suspends;
  }

  /** Applies a durable record (also what a restore calls for each replayed record). */
  applyRecord(index: number, record: BatchRecord, hints?: SlotHints): void {
    if (index !== this.applied + 1) {
      const outOfOrder = new Error(`record ${index} applied after ${this.applied}`);
      this.stop(outOfOrder);
      throw new IngestError('ingest_failed', outOfOrder.message);
    }
    const slots = hints !== undefined && hints.epoch === this.currentEpoch() ? hints.slots : undefined;
    const share = engineShare(record.changes, slots);
    if (!onlyTicks(record)) this.tickSlots.clear(); // rows may move to other slots
    try {
      this.engine.apply(share.changes, record.time, share.slots);
      this.ownSeq = this.engine.seq;
    } catch (error) {
      // validation admits only changes the engine applies; an exception here is a bug
      // that may have left the batch half applied, so the write path stops (a restart
      // replays the log into a clean state)
      this.stop(error as Error);
      throw new IngestError('ingest_failed', `applying record ${index} failed: ${(error as Error).message}`, [], { cause: error });
    }
    this.applied = index;
    const counts = this.appliedByKind;
    for (const change of record.changes) {
      const op = (change as { op: string; suspended?: boolean }).op;
      counts[op === 'priceById' && (change as { suspended?: boolean }).suspended === true ? SUSPEND_INDEX : KIND_INDEX[op]!]!++;
    }
    if (!applyCold(this.cold, record, index, this.warn)) this.coldFailures++;
  }
}

function onlyTicks(record: BatchRecord): boolean {
  const changes = record.changes;
  for (let i = 0; i < changes.length; i++) if (changes[i].op !== 'priceById') return false;
  return true;
}

/** Cold records of a durable batch; a failing write is reported, not fatal: the log replays it on restart. */
export function applyCold(cold: ColdStore, record: BatchRecord, index: number, warn: (line: string) => void): boolean {
  const changes = coldChanges(record.changes);
  if (changes.length === 0) return true;
  try {
    cold.applyColdChanges(changes, record.time);
    return true;
  } catch (error) {
    warn(`ingest: record ${index}: writing its cold records to SQLite failed (${(error as Error).message}); a restart replays them from the log`);
    return false;
  }
}
