// /api/v1/snapshot's body: the whole board as one gzip member
// built from compressed pieces, never rebuilt from scratch on a poll.
//
//   const snapshot = new BoardSnapshot(engine);      // subscribes to the engine
//   const body = snapshot.latest(includeHistory);      // newest complete version, at once (null: none yet)
//   const first = await snapshot.whenCurrent(h);       // a variant's first build, in steps
//   snapshot.current(h);                               // up to date now, whatever it costs (start-up, tests)
//   ... write body.chunks (http/largeBody.ts writeBody); snapshot.close() at shutdown.
//
// Versions. A poll is answered with the newest COMPLETE version of its variant: its
// chunks, ETag, count, updated and syncToken all belong to one board state. When the
// board has moved since, the next version is built in the background (the engine's
// listener only marks what changed). While much is waiting, the changed pieces are
// rendered on the main thread in steps of a few ms, for at most MAX_CATCH_UP_MS; then
// the version's moment is fixed (its asOf becomes syncToken and the head is set) and
// what changed up to that moment is rendered in one go, so every piece shows the
// board at that moment. That last render holds the event loop, so the moment is
// fixed only once what is waiting fits its bound (about FINAL_RENDER_MS, judged from
// what backlog items cost lately, or a small share of the newest version's age, so
// a board moving faster than the steps render still gets a version now and then);
// until then the steps go on, growing up to MAX_STEP_MS while they fall behind.
// Put-offs are bounded two ways. The cost per item is the median of what recent
// steps measured, so a garbage-collection pause (tens of ms) landing inside one
// timed step does not make every later final look too long; and once a version has
// been put off for MAX_PUT_OFF_MS the final render may take as long as a catch-up
// step does (MAX_STEP_MS: reads already wait that long between steps), so at the
// rates the steps keep up with, a version is at most about MAX_CATCH_UP_MS +
// MAX_PUT_OFF_MS + one refresh old. (A final render cannot itself be cut into
// slices: the board keeps moving between slices, and the body must show one moment.)
// The write path comes first: while it holds a logged batch waiting for its fsync
// (urgent), a step lasts at most URGENT_STEP_MS and the final render waits until the
// batch applied (URGENT_PUT_OFF_MS at most per version), so a batch's apply and the
// stream events it makes (a steam move) wait for at most one short step; while it is
// taking batches, steps last at most WRITING_STEP_MS, so an arriving batch waits little.
// Pieces are compressed on worker threads (with their CRC-32, at a lower OS
// priority than the event loop: compressionWorkers.ts) while the event loop serves
// reads and ingest; once they are all back the member is assembled and published.
// Changes after the moment go to the next version. The moment is fixed late: only once
// at most MOMENT_PENDING_BYTES of the variant's pieces are still with the threads
// (COMPRESSION_HOLD_MS at most), since what is out at the moment is compressed after it
// while the board moves on; and steps render only while at most RENDER_AHEAD_BYTES are
// out. So after a long first build (or a burst) the threads finish it, the steps catch
// up on what changed meanwhile, and the version comes out about as old as its last
// stretch of compression. A version that still comes out older than maxAgeMs is not
// handed to requests waiting for one (fresh(), a first build): they take the next,
// after at most MAX_PASSED_OVER such versions. With a freshness bound (maxAgeMs)
// every kept variant refreshes whenever the board moves, polled or not; without one,
// only while it is polled (within watchMs). Either way a change then starts a refresh
// by itself, so a poll finds a version at most about one refresh old. A backlog of a few rows (INLINE_BACKLOG) is cheaper to
// finish than to wait for: the poll brings the version up to date inline.
//
// A version is identified by the board sequence it reflects (engine.seq): batches applied
// in the same clock millisecond (or on a frozen clock) share an asOf but not a seq.
//
// Sync contract: syncToken is the engine's asOf() at the version's moment, as
// epoch-millisecond digits. Every later change carries updated >= that (the engine's
// clock never runs backwards), so /odds/updated?since=<syncToken> returns all of
// them, tombstones included; rows changed in that same millisecond come again, which
// an upsert by id absorbs. updated is asOf as ISO-8601; count is the number of rows.
//
// ETag: strong, from the member's CRC-32 and length of the uncompressed body plus
// the variant: it changes iff the body bytes change (up to a CRC-32 collision between
// two bodies of the same length, ~2^-32 per change), and the two variants never share
// one. The bytes themselves are a function of the board (rowCuts.ts): the same board
// gives the same body whether built fresh or kept up to date.
//
// Variants: the one without history is built first (the route does it at start-up)
// and kept for good. The with-history one (large board: 1.57 GB raw against 575 MB)
// is built on its first request and dropped after historyIdleMs (5 min) without one,
// so a process nobody asks for history pays neither its memory nor its refreshes.

import { setImmediate as nextTurn, setTimeout as pause } from 'node:timers/promises';
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine.ts';
import type { Clock } from '../clock.ts';
import { EVENT_HEAD } from './dirtyTracker.ts';
import { snapshotHead } from './snapshotJson.ts';
import { SnapshotVariant, type VariantStats } from './snapshotVariant.ts';

export interface BoardSnapshotOptions {
  /**
   * Raw bytes a piece of cold rows averages (runs of hot rows get pieces HOT_WEIGHT times
   * smaller, rowCuts.ts). Default 128 KiB without history, HISTORY_PIECE_BYTES with;
   * given, it sets both variants' (unless historyPieceBytes is given too).
   */
  pieceBytes?: number;
  /** The with-history variant's piece size, when it should differ from pieceBytes. */
  historyPieceBytes?: number;
  level?: number;
  /** Drop the with-history variant after this long without a request. Default 5 min; Infinity keeps it. */
  historyIdleMs?: number;
  /** A variant polled (latest()) within this long refreshes by itself when the board moves. Default 30 s. */
  watchMs?: number;
  /** Longest the event loop is held by one step of a background refresh. Default 10 ms. */
  stepMs?: number;
  /** Time source for historyIdleMs and watchMs (default: the engine's clock). */
  clock?: Clock;
  /** Raw bytes of rendered pieces each variant keeps to copy unchanged rows from (keptPieceRows.ts). Default 2 GiB. */
  renderedBytes?: number;
  /** A background refresh steps at most this long before it tries to fix the version's moment. Default 250 ms. */
  catchUpMs?: number;
  /** Longest (estimated) the final render at a version's moment may hold the event loop. Default 20 ms. */
  finalRenderMs?: number;
  /** ...or this share of the newest version's age, when that is more. Default 0.05. */
  finalRenderShare?: number;
  /** After a version's moment was put off this long, its final render may hold the event loop as long as a step (MAX_STEP_MS). Default 500 ms. */
  maxPutOffMs?: number;
  /** Monotonic milliseconds the steps are timed and bounded with (default performance.now; tests drive their own). */
  timer?: () => number;
  /**
   * Freshness bound (timer milliseconds): every kept variant (the one without history,
   * and the one with history while kept) refreshes whenever the board moves, polled or
   * not, and a poll (whenFresh) of a variant whose newest
   * version misses changes older than this, or whose syncToken the delta feed no longer
   * answers completely, waits for the next version instead of being answered with it.
   * Default Infinity: only polled variants refresh, and a poll takes the newest version
   * whatever its age (what a bench of the refresh alone wants).
   */
  maxAgeMs?: number;
  /**
   * A version's moment is fixed only once at most this many raw bytes of the variant's
   * pieces are still out for compression (or after compressionHoldMs of holding it):
   * what is out when the moment is fixed is compressed before the version is out, and
   * the board moves meanwhile. Default 4 MiB.
   */
  momentPendingBytes?: number;
  /** Longest a version's moment is held for the compression threads (timer ms). Default 2 s. */
  compressionHoldMs?: number;
  /** Catch-up steps render only while at most this many raw bytes of the variant's pieces are out for compression. Default 32 MiB. */
  renderAheadBytes?: number;
}

export interface SnapshotBody {
  /** The gzip member: write these in order. Shared and immutable. */
  readonly chunks: readonly Buffer[];
  readonly byteLength: number;
  /** Uncompressed body length. */
  readonly rawLength: number;
  readonly etag: string;
  readonly syncToken: string;
  /** The board sequence (engine.seq) this version reflects: the X-Board-Seq it is served with. */
  readonly seq: number;
  readonly count: number;
  readonly withHistory: boolean;
}

export interface SnapshotStats {
  variant: 'plain' | 'history';
  pieces: number;
  groups: number;
  byteLength: number;
  rawLength: number;
  /** Versions published. */
  refreshes: number;
  /** Main-thread ms spent rendering (compression on the worker threads not included). */
  refreshMs: number;
  /** Times a version's moment was put off because its final render would have held the event loop past its bound. */
  finalsDeferred: number;
  /** Versions whose moment was held until the compression threads caught up (momentPendingBytes). */
  momentsHeld: number;
  /** Raw bytes of the variant's pieces still out for compression when the newest version's moment was fixed. */
  pendingAtMoment: number;
  rendered: VariantStats;
}

/**
 * The with-history variant's default piece size: a quarter of the plain one's. A
 * refresh re-makes (copies, and compresses on the worker threads) every piece a change
 * landed in, and on a live board changes land all over it, so a refresh costs about the
 * dirty pieces' bytes. History rows are ~2.8x the plain ones and the variant's body
 * ~2.8x as long, so with 128 KiB pieces each of its refreshes re-made most of 154 MB
 * (medium board, 1,000 updates/s; the loaded shared machine): 4.7 s from first render
 * to publication at the median, staleness p50 1.5 s / p99 3.4 s polled every 100 ms.
 * With 32 KiB pieces a refresh re-made about a third of the bytes and took 0.24 s at
 * the median. The plain variant keeps 128 KiB (its time to first byte was tuned there).
 */
const HISTORY_PIECE_BYTES = 32 * 1024;

/** Above this many waiting rows and events, isBehind() says a request should not wait synchronously. */
const ASYNC_BACKLOG = 2000;
/** At most this many rows, events and pieces in flight: a poll finishes the version inline (a piece each, about a millisecond). */
const INLINE_BACKLOG = 4;
/**
 * A background refresh renders in steps until at most this many rows and events are
 * left, then fixes the version's moment and renders the rest in one go (a piece or so
 * each: a few ms).
 */
const FINAL_BACKLOG = 16;
/** Stepping runs at most this long before the version's moment is fixed (if the final render fits its bound). */
const MAX_CATCH_UP_MS = 250;
/** The final render (what is left at the version's moment, rendered in one go) is held to about this many ms... */
const FINAL_RENDER_MS = 20;
/**
 * ...or to this share of the published version's age, if larger, so a board moving
 * faster than the steps render still gets a version now and then (after 10 s without
 * one, a final render of 500 ms), instead of never.
 */
const FINAL_RENDER_SHARE = 0.05;
/** Longest step a refresh that fell behind its final render's bound takes (a read waits at most about this). */
const MAX_STEP_MS = 50;
/** What a backlog item (a listed row or event, a dirty piece) is taken to cost before any step was measured, in ms. */
const FIRST_ITEM_MS = 0.05;
/** Recent steps whose cost per item the estimate is the median of. */
const COST_SAMPLES = 31;
/** After a version's moment was put off this long, its final render may take MAX_STEP_MS. */
const MAX_PUT_OFF_MS = 500;
/**
 * Longest step while the write path has a batch logged and waiting to apply (urgent):
 * its apply, and the steam events and stream messages it makes, wait at most about this.
 */
const URGENT_STEP_MS = 1;
/**
 * Longest step while the write path is taking batches (one was seen waiting to apply
 * within WRITING_RECENT_MS), falling behind or not: a batch arriving then waits at most
 * about this before the loop reads it. (Without a write path, or while it is idle, the
 * steps are stepMs, growing to MAX_STEP_MS while the refresh falls behind.)
 */
const WRITING_STEP_MS = 2;
/** The write path counts as taking batches this long after one was last seen waiting to apply. */
const WRITING_RECENT_MS = 1000;
/**
 * Ingest this far above the rate the freshness bound is promised at (1,000 updates/s,
 * SNAPSHOT_MAX_AGE_MS) makes every version re-make most of the board: the refresh then
 * takes at most HEAVY_INGEST_SHARE of the event loop, resting between its steps, so it
 * cannot take the write path's cores. Measured on the large board (`npm run bench --
 * ingest`, quiet, 3 rounds, closing16.md): unthrottled, its refreshes cut the write path
 * from ~300k to 87-203k updates/s and raised the one-change ack p99 from ~10 to 60-82 ms.
 */
const HEAVY_INGEST_PER_S = 10_000;
const HEAVY_INGEST_SHARE = 0.25;
/** Longest rest between two steps under heavy ingest. */
const HEAVY_INGEST_REST_MAX_MS = 40;
/** The applied-change rate is sampled over at least this long. */
const INGEST_RATE_WINDOW_MS = 250;
/** Longest a version's final render is held back, in all, for batches waiting to apply. */
const URGENT_PUT_OFF_MS = 50;
/**
 * A version's moment is fixed only once at most this many raw bytes of the variant's
 * pieces are still out for compression. What is out at the moment is compressed before
 * the version is published, while the board moves on, so a moment fixed with the
 * threads far behind makes a version that is stale the moment it comes out: on the large
 * board at 1,000 updates/s (closing15.md, loaded machine) the first version with history,
 * its moment fixed right after its first build with most of the body still to compress,
 * came out 40 s stale. 4 MiB is about 10-40 ms of level-1 deflate on one thread.
 */
const MOMENT_PENDING_BYTES = 4 * 1024 * 1024;
/** Longest a version's moment is held for the compression threads (threads starved by other processes: the version then comes out stale). */
const COMPRESSION_HOLD_MS = 2000;
/** While the moment is held, or the threads are RENDER_AHEAD_BYTES behind, the refresh looks again after this long (the event loop is free meanwhile). */
const COMPRESSION_POLL_MS = 2;
/**
 * Steps render only while at most this many raw bytes of the variant's pieces are out for
 * compression (a few hundred ms of work for the threads): rendering further ahead only
 * lengthens their queue and the raw bytes it holds, and a piece rendered long before
 * the moment is likelier to change again and be re-made.
 */
const RENDER_AHEAD_BYTES = 32 * 1024 * 1024;
/**
 * A request waiting for a fresh version (fresh(), or a first build) lets at most
 * this many versions older than maxAgeMs pass before it takes one: versions come out
 * stale only while the machine cannot keep up, and then waiting longer would not help.
 */
const MAX_PASSED_OVER = 1;

interface Waiter {
  resolve: (body: SnapshotBody) => void;
  reject: (error: unknown) => void;
  /** Stale versions this waiter let pass (MAX_PASSED_OVER). */
  passedOver: number;
  /** seq of the last version it let pass (each version counts once). */
  passedSeq: number;
}

class VariantState {
  /** The newest complete version. */
  body: SnapshotBody | null = null;
  /** The member the body was made from: unchanged member, unchanged body. */
  member: unknown = null;
  /** engine.seq of the published version: what identifies it (two versions may share an asOf). */
  seq = -1;
  /** The published version's asOf (its syncToken, as a number). */
  syncTime = -Infinity;
  /**
   * timer() since when the board holds a change the published version does not show
   * (at most: the version's moment, when the board moved while it was compressed); -1
   * while the version is current. Its age is timer() minus this.
   */
  staleSince = -1;
  /** Callers of fresh() that wait: answered by the next version that is fresh (see answerFreshWaiters). */
  freshWaiters: Waiter[] = [];
  lastRequest = 0;
  /** Last latest() call (the variant is watched while recent). */
  lastPoll = -Infinity;
  /** A background refresh is running. */
  refreshing = false;
  /** whenCurrent() callers, answered by the next version published with nothing left to do. */
  waiters: Waiter[] = [];
  /** The promise those callers share. */
  waiting: Promise<SnapshotBody> | null = null;
  /**
   * Whether whenCurrent() callers have been answered with a version that was not current
   * (the first servable one: a board that never stops moving has no current version);
   * callers after that wait for a current one.
   */
  firstAnswered = false;
  /** Stale versions the whenCurrent() callers let pass (MAX_PASSED_OVER), and the seq of the last. */
  waitersPassedOver = 0;
  waitersPassedSeq = -1;
  /** Versions whose moment waited for the compression threads. */
  momentsHeld = 0;
  /** Raw bytes still out for compression at the newest version's moment. */
  pendingAtMoment = 0;
  refreshes = 0;
  refreshMs = 0;
  /** timer() when rendering of the next version began; -1 until it does. */
  versionStarted = -1;
  /** When the newest version was published, or the variant started (timer()): a version's age. */
  publishedAt: number;
  /**
   * Main-thread ms per backlog item measured by the last COST_SAMPLES steps (a ring).
   * The estimate is their median, not their mean: a step that a garbage-collection
   * pause (or the scheduler) stretched tenfold moves a median by one place, where it
   * moved a mean over the last few hundred items enough to put versions off for seconds.
   */
  private readonly costs = new Float64Array(COST_SAMPLES);
  private readonly sorted = new Float64Array(COST_SAMPLES);
  private costCount = 0;
  private costNext = 0;
  private estimate = FIRST_ITEM_MS;
  private estimateStale = false;
  /** Final renders held back because the backlog would have taken longer than their bound. */
  finalsDeferred = 0;
  constructor(
    public variant: SnapshotVariant,
    readonly timer: () => number,
  ) {
    this.publishedAt = timer();
  }

  /** Main-thread ms a backlog item costs: the median of the recent steps' costs per item. */
  get itemMs(): number {
    if (this.estimateStale) {
      this.estimateStale = false;
      const n = this.costCount;
      const sorted = this.sorted.subarray(0, n);
      sorted.set(this.costs.subarray(0, n));
      sorted.sort();
      this.estimate = n % 2 === 1 ? sorted[n >> 1] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
    return this.estimate;
  }

  /** Runs one refresh step of the variant, timing it and learning what a backlog item costs; the first for a version starts its clock. */
  step(deadline: number, deferred: boolean): void {
    const before = this.variant.backlog;
    const started = this.timer();
    if (this.versionStarted < 0) this.versionStarted = started;
    this.variant.refresh(deadline, deferred);
    const ms = this.timer() - started;
    this.refreshMs += ms;
    const done = before - this.variant.backlog;
    if (done <= 0) return; // a step that turned events into pieces can grow the backlog
    this.costs[this.costNext] = ms / done;
    this.costNext = (this.costNext + 1) % COST_SAMPLES;
    if (this.costCount < COST_SAMPLES) this.costCount++;
    this.estimateStale = true;
  }

  /** Whether what is waiting can be rendered in one go within `ms`, or `share` of the newest version's age. */
  finalFits(now: number, ms: number, share: number): boolean {
    const bound = Math.max(ms, share * (now - this.publishedAt));
    return this.variant.backlog * this.itemMs <= bound;
  }
}

/**
 * Told of each version published: its variant and the seconds from the first rendering
 * for it (on the main thread) to its publication, compression on the worker threads and
 * the reads served between steps included; the time a poll may find the previous one.
 */
export type RefreshHook = (withHistory: boolean, seconds: number) => void;

export class BoardSnapshot implements ChangeListener {
  /** Set by whoever reports on refreshes (the service's metrics); null: nobody. */
  onRefresh: RefreshHook | null = null;
  /**
   * Whether work more urgent than a refresh is due on the event loop: the write path
   * has a batch logged (or being logged) and not yet applied (set by the composition
   * root; null: never). While it is, background steps last at most URGENT_STEP_MS and
   * a version's final render waits (URGENT_PUT_OFF_MS at most).
   */
  urgent: (() => boolean) | null = null;
  /** timer() when urgent() was last found true. */
  private lastUrgentAt = -Infinity;
  /** The applied-change rate's last sample: engine.seq and timer() then, and whether it was above HEAVY_INGEST_PER_S. */
  private rateSeq = 0;
  private rateAt = -Infinity;
  private heavyIngest = false;
  private readonly options: Required<Omit<BoardSnapshotOptions, 'clock' | 'renderedBytes'>> & { renderedBytes?: number };
  /**
   * Whether every kept variant refreshes unpolled (a finite maxAgeMs): the plain one for
   * good, the with-history one while it is kept (historyIdleMs after its last request).
   */
  private readonly alwaysWatched: boolean;
  private readonly timer: () => number;

  private readonly clock: Clock;
  private plain: VariantState;
  private history: VariantState | null = null;
  private readonly unsubscribe: () => void;
  private closed = false;
  /** A refresh start is queued for the next turn of the event loop. */
  private kickQueued = false;

  constructor(
    private readonly engine: OddsEngine,
    options: BoardSnapshotOptions = {},
  ) {
    this.options = {
      pieceBytes: options.pieceBytes ?? 128 * 1024,
      historyPieceBytes: options.historyPieceBytes ?? options.pieceBytes ?? HISTORY_PIECE_BYTES,
      level: options.level ?? 1,
      historyIdleMs: options.historyIdleMs ?? 5 * 60 * 1000,
      watchMs: options.watchMs ?? 30_000,
      stepMs: options.stepMs ?? 10,
      renderedBytes: options.renderedBytes,
      catchUpMs: options.catchUpMs ?? MAX_CATCH_UP_MS,
      finalRenderMs: options.finalRenderMs ?? FINAL_RENDER_MS,
      finalRenderShare: options.finalRenderShare ?? FINAL_RENDER_SHARE,
      maxPutOffMs: options.maxPutOffMs ?? MAX_PUT_OFF_MS,
      timer: options.timer ?? defaultTimer,
      maxAgeMs: options.maxAgeMs ?? Infinity,
      momentPendingBytes: options.momentPendingBytes ?? MOMENT_PENDING_BYTES,
      compressionHoldMs: options.compressionHoldMs ?? COMPRESSION_HOLD_MS,
      renderAheadBytes: options.renderAheadBytes ?? RENDER_AHEAD_BYTES,
    };
    this.alwaysWatched = Number.isFinite(this.options.maxAgeMs);
    this.timer = this.options.timer;
    this.clock = options.clock ?? engine.clock;
    this.plain = this.newState(false);
    this.unsubscribe = engine.subscribe(this);
  }

  // ---- ChangeListener (runs inside engine.apply) -------------------------------------

  rowChanged(slot: number, kind: ChangeKind): void {
    const removed = kind === 'remove';
    const plain = this.plain.variant;
    if (kind === 'insert') plain.rowInserted(slot);
    plain.rowChanged(slot);
    plain.tracker.markSlot(slot, removed);
    if (this.history !== null) {
      const history = this.history.variant;
      if (kind === 'insert') history.rowInserted(slot);
      history.rowChanged(slot);
      history.tracker.markSlot(slot, removed);
    }
  }

  eventChanged(eventId: string): void {
    const ev = this.engine.store.events.lookup(eventId);
    if (ev < 0) return;
    this.plain.variant.tracker.markEvent(ev, EVENT_HEAD);
    if (this.history !== null) this.history.variant.tracker.markEvent(ev, EVENT_HEAD);
    this.changesApplied();
  }

  /** After an apply: watched variants start their next version (on the next turn, outside apply). */
  changesApplied(): void {
    if (this.closed) return;
    // the first change a published version misses starts its age
    if (this.plain.staleSince < 0 && this.plain.body !== null) this.plain.staleSince = this.timer();
    const history = this.history;
    if (history !== null && history.staleSince < 0 && history.body !== null) history.staleSince = this.timer();
    if (this.kickQueued) return;
    this.kickQueued = true;
    setImmediate(() => {
      this.kickQueued = false;
      if (this.closed) return;
      const now = this.clock.now();
      for (const state of [this.plain, this.history]) {
        if (state !== null && state.body !== null && this.watched(state, now)) this.startRefresh(state);
      }
    });
  }

  // ---- reading ------------------------------------------------------------------------

  /**
   * The newest complete version, at once; null when the variant has none yet (then
   * whenCurrent() gives its first). A moved board starts the next version in the
   * background, or finishes it here when only a few rows are left to do.
   */
  latest(withHistory = false): SnapshotBody | null {
    const state = withHistory ? this.historyState() : this.plain;
    const now = this.clock.now();
    state.lastRequest = now;
    state.lastPoll = now;
    if (!withHistory) this.dropIdleHistory(now);
    if (state.body === null) return null;
    const variant = state.variant;
    if (variant.current && state.seq === this.engine.seq && variant.pendingCompressions === 0) return state.body;
    if (variant.backlog + variant.pendingCompressions <= INLINE_BACKLOG) return this.current(withHistory);
    this.startRefresh(state);
    return state.body;
  }

  /**
   * The newest version if it is fresh (it misses no change older than maxAgeMs, and the
   * delta feed answers its syncToken completely); otherwise the next version, built in
   * the background (the caller waits: its answer then shows the board as of at most
   * one refresh ago). Null: the variant has no version yet (see whenCurrent).
   */
  fresh(withHistory = false): SnapshotBody | Promise<SnapshotBody> | null {
    const body = this.latest(withHistory);
    if (body === null) return null;
    const state = withHistory ? this.history! : this.plain;
    if (!this.isStale(state)) return body;
    return new Promise<SnapshotBody>((resolve, reject) => {
      state.freshWaiters.push({ resolve, reject, passedOver: 0, passedSeq: state.seq });
      this.startRefresh(state);
    });
  }

  /**
   * Milliseconds (timer) since the oldest change the variant's newest version does not
   * show; 0 when it shows the board as it is (or has no version).
   */
  ageMs(withHistory = false): number {
    const state = withHistory ? this.history : this.plain;
    if (state === null || state.body === null || state.staleSince < 0 || state.seq === this.engine.seq) return 0;
    return this.timer() - state.staleSince;
  }

  /** The body as of now: renders (and compresses, on this thread) what changed since the last version. */
  current(withHistory = false): SnapshotBody {
    const state = withHistory ? this.historyState() : this.plain;
    state.lastRequest = this.clock.now();
    if (!withHistory) this.dropIdleHistory(state.lastRequest);
    const asOf = this.engine.asOf();
    const seq = this.engine.seq;
    if (state.body !== null && state.variant.current && state.variant.pendingCompressions === 0) {
      if (state.seq === seq) return state.body;
      // The board moved without telling listeners (a bulk load): start over.
      this.replace(state);
    }
    const momentAt = this.timer();
    state.step(Infinity, false);
    return this.publish(state, seq, asOf, this.engine.liveRows, momentAt)!;
  }

  /** Whether the variant is being refreshed in the background now. */
  isRefreshing(withHistory: boolean): boolean {
    const state = withHistory ? this.history : this.plain;
    return state !== null && state.refreshing;
  }

  /**
   * Whether current() would block for long: the variant is not built yet, or more than
   * `backlog` rows and events wait to be rendered.
   */
  isBehind(withHistory: boolean, backlog = ASYNC_BACKLOG): boolean {
    const state = withHistory ? this.history : this.plain;
    if (state === null) return true;
    return !state.variant.isBuilt || state.variant.backlog > backlog;
  }

  /**
   * The next version with nothing left to render, built in the background: steps of
   * `stepMs` on the event loop between which other work is served, compression on the
   * worker threads. Callers waiting on the same variant share one promise.
   */
  whenCurrent(withHistory: boolean, stepMs = this.options.stepMs): Promise<SnapshotBody> {
    const state = withHistory ? this.historyState() : this.plain;
    state.lastRequest = this.clock.now();
    if (state.waiting !== null) return state.waiting;
    state.waiting = new Promise<SnapshotBody>((resolve, reject) => state.waiters.push({ resolve, reject, passedOver: 0, passedSeq: -1 }));
    this.startRefresh(state, stepMs);
    return state.waiting;
  }

  /** The ETag current() would give, refreshing first if needed. */
  etag(withHistory = false): string {
    return this.current(withHistory).etag;
  }

  /** Whether the with-history variant is being kept (requested within historyIdleMs). */
  get keepsHistory(): boolean {
    return this.history !== null;
  }

  stats(): SnapshotStats[] {
    const out: SnapshotStats[] = [];
    for (const state of [this.plain, this.history]) {
      if (state === null) continue;
      const body = state.body;
      out.push({
        variant: state.variant.withHistory ? 'history' : 'plain',
        pieces: state.variant.pieceCount,
        groups: state.variant.groupCount,
        byteLength: body === null ? 0 : body.byteLength,
        rawLength: body === null ? 0 : body.rawLength,
        refreshes: state.refreshes,
        refreshMs: state.refreshMs,
        finalsDeferred: state.finalsDeferred,
        momentsHeld: state.momentsHeld,
        pendingAtMoment: state.pendingAtMoment,
        rendered: { ...state.variant.stats },
      });
    }
    return out;
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.plain.variant.dispose();
    this.history?.variant.dispose();
    this.history = null;
  }

  // ---- versions -----------------------------------------------------------------------

  /**
   * Runs background refreshes of the variant until it is current (and, while it is
   * watched, for as long as the board keeps moving). One at a time per variant.
   */
  private startRefresh(state: VariantState, stepMs = this.options.stepMs): void {
    if (state.refreshing || this.closed) return;
    state.refreshing = true;
    this.refreshLoop(state, stepMs).then(
      () => {
        state.refreshing = false;
        // A request that came after the loop chose to end (in the turn of the answer it
        // ended with: that answer's caller runs first and may ask again at once) found it
        // still running and started nothing: it is served by a new one.
        if (this.closed || !this.isKept(state)) return;
        if (state.waiters.length > 0 || state.freshWaiters.length > 0) this.startRefresh(state, stepMs);
      },
      (error: unknown) => {
        state.refreshing = false;
        const waiters = [...state.waiters, ...state.freshWaiters];
        state.waiters = [];
        state.freshWaiters = [];
        state.waiting = null;
        for (const waiter of waiters) waiter.reject(error);
      },
    );
  }

  private async refreshLoop(state: VariantState, stepMs: number): Promise<void> {
    await nextTurn(); // never inside the poll (or the apply) that asked for it
    for (;;) {
      if (this.closed || !this.isKept(state)) return;
      const variant = state.variant;
      // Catch up in steps while much is waiting (pieces show the board as each step
      // finds it), for at most MAX_CATCH_UP_MS, so a board moving faster than the
      // steps render still gets a version after that long. The rest is rendered in
      // one go at the version's moment, holding the event loop: only once that fits
      // its bound (FINAL_RENDER_MS, or a share of the version's age) is the moment
      // fixed; until then the steps go on, with reads and ingest served in between.
      const { catchUpMs, finalRenderMs, finalRenderShare, maxPutOffMs, momentPendingBytes, compressionHoldMs, renderAheadBytes } = this.options;
      const timer = this.timer;
      let catchUpEnd = timer() + catchUpMs;
      let step = stepMs;
      // When a write-path batch first held off this version's final render (-1: none has).
      let yieldedSince = -1;
      // When this version's moment was first held for the compression threads (-1: not yet).
      let heldSince = -1;
      let wasBuilt = variant.isBuilt;
      for (;;) {
        const urgent = this.urgent !== null && this.urgent();
        if (urgent) this.lastUrgentAt = timer();
        const pendingBytes = variant.pendingCompressionBytes;
        if (pendingBytes > renderAheadBytes && heldSince < 0) {
          // The threads are far behind (a first build renders faster than they compress):
          // let them catch up before rendering more.
          await pause(COMPRESSION_POLL_MS);
          if (this.closed || !this.isKept(state) || state.variant !== variant) return;
          continue;
        }
        let final = false;
        if (variant.isBuilt && !wasBuilt) {
          // The first build just ended: catching up on what changed during it starts now.
          // Its length is no version's age (a share of it would let the final render
          // hold the event loop for seconds after a long build).
          wasBuilt = true;
          catchUpEnd = timer() + catchUpMs;
          if (state.body === null) state.publishedAt = timer();
        }
        if (variant.isBuilt) {
          if (variant.backlog <= FINAL_BACKLOG) final = true;
          else {
            const now = timer();
            if (now >= catchUpEnd) {
              // Put off long enough: the final render may hold the loop as long as a step does.
              const bound = now - catchUpEnd >= maxPutOffMs ? Math.max(finalRenderMs, MAX_STEP_MS) : finalRenderMs;
              if (state.finalFits(now, bound, finalRenderShare)) final = true;
              else {
                state.finalsDeferred++;
                // Falling behind: longer steps (up to MAX_STEP_MS), so the other work of each
                // turn takes a smaller share of the loop from the refresh.
                step = Math.max(step, Math.min(MAX_STEP_MS, 2 * step));
              }
            }
          }
        }
        if (final && pendingBytes > momentPendingBytes) {
          // The moment is fixed late: not while the compression threads are still on much
          // of this variant's earlier pieces, which would be compressed after the moment
          // while the board moves on (the version stale as it comes out). Nothing is
          // rendered meanwhile (it would only add to their queue); what changes during the
          // hold is rendered at the moment, or by steps again if it grew past the bound.
          const now = timer();
          if (heldSince < 0) {
            heldSince = now;
            state.momentsHeld++;
          }
          if (now - heldSince < compressionHoldMs) {
            await pause(COMPRESSION_POLL_MS);
            if (this.closed || !this.isKept(state) || state.variant !== variant) return;
            continue;
          }
        }
        if (final) {
          // The final render holds the loop in one go: not while a logged batch waits to
          // apply (its fsync is on a thread; its apply, and the stream events it makes,
          // run as soon as the loop is free), for at most URGENT_PUT_OFF_MS per version.
          if (!urgent) break;
          const now = timer();
          if (yieldedSince < 0) yieldedSince = now;
          if (now - yieldedSince >= URGENT_PUT_OFF_MS) break;
          if (variant.backlog === 0) {
            await pause(URGENT_STEP_MS); // nothing to slice: let the loop idle until the batch applies
            if (this.closed || !this.isKept(state) || state.variant !== variant) return;
            continue;
          }
        }
        // A logged batch waiting for its apply waits at most one short step, and so does
        // a batch arriving while the write path is busy.
        const cap = urgent ? URGENT_STEP_MS : timer() - this.lastUrgentAt < WRITING_RECENT_MS ? WRITING_STEP_MS : Infinity;
        const stepStart = timer();
        state.step(stepStart + Math.min(step, cap), true);
        if (this.ingestIsHeavy(stepStart)) await pause(Math.min(HEAVY_INGEST_REST_MAX_MS, (timer() - stepStart) * (1 / HEAVY_INGEST_SHARE - 1)));
        else await nextTurn();
        if (this.closed || !this.isKept(state) || state.variant !== variant) return;
      }
      // The version's moment: what changed up to now is rendered in one go, so every
      // piece shows the board at this moment; changes after it go to the next version.
      const asOf = this.engine.asOf();
      const seq = this.engine.seq;
      const count = this.engine.liveRows;
      const momentAt = timer();
      state.pendingAtMoment = variant.pendingCompressionBytes;
      state.step(Infinity, true);
      if (state.body !== null && state.seq === seq && variant.pendingCompressions === 0) {
        state.versionStarted = -1; // nothing new to time: that version is out
        this.answerWaiters(state);
        this.answerFreshWaiters(state);
        return; // a synchronous caller got there first
      }
      variant.setHead(snapshotHead(asOf, count));
      await variant.settle(); // compression on the worker threads
      if (state.variant !== variant) return;
      // Assembling the member (a CRC-32 combine over every piece) is another stretch on
      // the loop: it too waits for a batch about to apply, within the same bound.
      if (yieldedSince < 0 && this.urgent !== null && this.urgent()) yieldedSince = timer();
      while (this.urgent !== null && this.urgent() && timer() - yieldedSince < URGENT_PUT_OFF_MS) {
        await pause(URGENT_STEP_MS);
        if (this.closed || !this.isKept(state) || state.variant !== variant) return;
      }
      // A synchronous current() may have published this moment or a later one meanwhile.
      if (state.seq < seq) this.publish(state, seq, asOf, count, momentAt);
      if (variant.current) this.answerWaiters(state);
      this.answerFreshWaiters(state);
      const watched = this.watched(state, this.clock.now());
      // Requests still waiting (the version came out stale) are answered by the next one.
      if (state.freshWaiters.length === 0 && (variant.current || (!watched && state.waiters.length === 0))) return;
      await nextTurn();
    }
  }

  /** Makes the variant's pieces the newest version (compressing here whatever is still out). */
  private publish(state: VariantState, seq: number, asOf: number, count: number, momentAt: number): SnapshotBody {
    const variant = state.variant;
    variant.setHead(snapshotHead(asOf, count));
    const member = variant.member();
    const withHistory = variant.withHistory;
    if (state.body === null || member !== state.member) {
      state.member = member;
      state.body = {
        chunks: member.chunks,
        byteLength: member.byteLength,
        rawLength: member.rawLength,
        etag: etagOf(withHistory, member.crc, member.rawLength),
        syncToken: String(asOf),
        seq,
        count,
        withHistory,
      };
    } else if (state.body.seq !== seq) {
      // same bytes, a later board sequence (changes that left every row as it was): keep
      // the chunks and the ETag, say the sequence the body now reflects
      state.body = { ...state.body, seq };
    }
    state.seq = seq;
    state.syncTime = asOf;
    // changes applied after the moment (while the pieces were compressed) are at most this old
    state.staleSince = this.engine.seq > seq ? momentAt : -1;
    state.refreshes++;
    if (state.versionStarted >= 0) {
      const seconds = (this.timer() - state.versionStarted) / 1000;
      state.versionStarted = -1;
      if (this.onRefresh !== null) this.onRefresh(withHistory, seconds);
    }
    state.publishedAt = this.timer();
    // Waiters get the newest board. The first version that is not stale (see servable)
    // goes to them even when the board moved meanwhile, so a request waiting on a
    // variant's first build is answered under a board that never stops moving; a stale
    // one (its moment fixed long before it came out) they let pass, MAX_PASSED_OVER at most.
    if (variant.current) this.answerWaiters(state);
    else if (!state.firstAnswered && state.waiters.length > 0) {
      if (this.servable(state) || state.waitersPassedOver >= MAX_PASSED_OVER) {
        state.firstAnswered = true;
        this.answerWaiters(state);
      } else if (state.waitersPassedSeq !== seq) {
        state.waitersPassedSeq = seq;
        state.waitersPassedOver++;
      }
    }
    if (state.waiters.length === 0) state.firstAnswered = true; // later callers wait for a current version
    this.answerFreshWaiters(state);
    return state.body;
  }

  /**
   * Fresh waiters get the newest version once its syncToken is one the delta feed
   * answers and it misses no change older than maxAgeMs (servable); a version that
   * came out stale they let pass, MAX_PASSED_OVER at most, and take the next.
   */
  private answerFreshWaiters(state: VariantState): void {
    if (state.body === null || state.freshWaiters.length === 0 || state.syncTime < this.engine.deltaHorizon()) return;
    const servable = this.servable(state);
    const waiters = state.freshWaiters;
    state.freshWaiters = [];
    for (const waiter of waiters) {
      if (servable || (waiter.passedSeq !== state.seq && waiter.passedOver >= MAX_PASSED_OVER)) {
        waiter.resolve(state.body);
        continue;
      }
      if (waiter.passedSeq !== state.seq) {
        // a version it did not have yet: it lets this one pass (counted once per version)
        waiter.passedSeq = state.seq;
        waiter.passedOver++;
      }
      state.freshWaiters.push(waiter);
    }
  }

  /** Whether the newest version may answer a request waiting for a fresh one: it misses no change older than maxAgeMs (always, without a bound). */
  private servable(state: VariantState): boolean {
    if (!Number.isFinite(this.options.maxAgeMs) || state.body === null || state.staleSince < 0 || state.seq === this.engine.seq) return true;
    return this.timer() - state.staleSince <= this.options.maxAgeMs;
  }

  /**
   * Whether a poll should wait for the next version: the board moved past the newest
   * one more than maxAgeMs ago, or the delta feed would no longer answer its syncToken
   * completely (tombstones after it were recycled).
   */
  private isStale(state: VariantState): boolean {
    if (state.body === null || state.seq === this.engine.seq) return false;
    if (state.syncTime < this.engine.deltaHorizon()) return true;
    return state.staleSince >= 0 && this.timer() - state.staleSince > this.options.maxAgeMs;
  }

  /**
   * Whether the variant refreshes as the board moves: with a freshness bound, every
   * kept variant (the with-history one is kept only historyIdleMs after its last
   * request, so a process nobody asks for history stops paying for it then); without
   * one, a variant polled within watchMs. A variant left to fall behind while unpolled
   * made the first poll after an idle spell wait for the whole spell's changes: the
   * history variant's waited 4.1 s and answered a version 2.1 s old (medium board,
   * 1,000 updates/s).
   */
  private watched(state: VariantState, now: number): boolean {
    return (this.alwaysWatched && this.isKept(state)) || now - state.lastPoll <= this.options.watchMs;
  }

  private answerWaiters(state: VariantState): void {
    if (state.body === null || state.waiters.length === 0) return;
    const waiters = state.waiters;
    state.waiters = [];
    state.waiting = null;
    state.waitersPassedOver = 0;
    state.waitersPassedSeq = -1;
    for (const waiter of waiters) waiter.resolve(state.body);
  }

  /** Whether changes are being applied faster than HEAVY_INGEST_PER_S (sampled over INGEST_RATE_WINDOW_MS or more). */
  private ingestIsHeavy(now: number): boolean {
    if (now - this.rateAt >= INGEST_RATE_WINDOW_MS) {
      const seq = this.engine.seq;
      this.heavyIngest = Number.isFinite(this.rateAt) && ((seq - this.rateSeq) * 1000) / (now - this.rateAt) > HEAVY_INGEST_PER_S;
      this.rateSeq = seq;
      this.rateAt = now;
    }
    return this.heavyIngest;
  }

  private isKept(state: VariantState): boolean {
    return state === this.plain || state === this.history;
  }

  private historyState(): VariantState {
    if (this.history === null) this.history = this.newState(true);
    return this.history;
  }

  private dropIdleHistory(now: number): void {
    const history = this.history;
    if (history !== null && history.waiters.length === 0 && now - history.lastRequest > this.options.historyIdleMs) {
      this.history = null;
      history.variant.dispose();
    }
  }

  private replace(state: VariantState): void {
    state.variant.dispose();
    state.variant = this.newVariant(state.variant.withHistory);
    state.body = null;
  }

  private newState(withHistory: boolean): VariantState {
    return new VariantState(this.newVariant(withHistory), this.timer);
  }

  private newVariant(withHistory: boolean): SnapshotVariant {
    const { pieceBytes, historyPieceBytes, level, renderedBytes, timer } = this.options;
    return new SnapshotVariant(this.engine, { withHistory, pieceBytes: withHistory ? historyPieceBytes : pieceBytes, level, renderedBytes, timer });
  }
}

function defaultTimer(): number {
  return performance.now();
}

/** "snap-<n|h>-<crc32 hex>-<raw length hex>": strong, quoted. */
function etagOf(withHistory: boolean, crc: number, rawLength: number): string {
  return `"snap-${withHistory ? 'h' : 'n'}-${(crc >>> 0).toString(16).padStart(8, '0')}-${rawLength.toString(16)}"`;
}
