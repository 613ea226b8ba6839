// /api/v1/snapshot's body (issue 5, decisions E1/E2/F2): the whole board as one gzip
// member built from per-event compressed pieces, never rebuilt from scratch on a poll.
//
//   const snapshot = new BoardSnapshot(engine);         // subscribes to the engine
//   const body = snapshot.current(includeHistory);       // { chunks, etag, syncToken, ... }
//   if (snapshot.isBehind(h)) body = await snapshot.whenCurrent(h);   // long work in steps
//   ... write body.chunks (http/largeBody.ts writeBody); snapshot.close() at shutdown.
//
// The engine's change listener marks the changed row's slot (and its event) dirty in
// each kept variant: a few array writes per change. current() renders only the dirty
// pieces (snapshotVariant.ts), sets the head, and returns the cached member; with
// nothing dirty it returns the same object without touching any piece, so a poll of an
// unchanged board costs a flag check. There is no timer: a body reflects every change
// applied before the request, so staleness is the request's own refresh (what changed
// since the previous request). whenCurrent() does the same work in steps of a few ms,
// for a first build or a backlog long enough that a request should not hold the loop.
//
// Sync contract (F2): syncToken is engine.asOf() when the body was brought up to date,
// as epoch-millisecond digits (ISO-8601 is accepted by since too; digits avoid any
// rounding). Every change after the build carries updated >= asOf (the engine's clock
// never runs backwards), so /odds/updated?since=<syncToken> returns all of them,
// tombstones included; rows changed in that same millisecond come again, which an
// upsert by id absorbs. updated is asOf as ISO-8601; count is the number of rows.
//
// ETag (E2): strong, from the member's CRC-32 and length of the uncompressed body plus
// the variant: it changes iff the body bytes change (up to a CRC-32 collision between
// two bodies of the same length, ~2^-32 per change), and the two variants never share one.
//
// Variants: the one without history is built first (its first request; the route does
// it at start-up) and
// kept current for good. The with-history one (large board: 1.57 GB raw / 327 MB gzip
// against 575 MB / 45.5 MB, 19 s to build against 5 s, 1.6-2.4x the refresh cost per
// changed event) is built on its first request and dropped after historyIdleMs (5 min)
// without one, so a process nobody asks for history pays neither its memory nor its
// refreshes; while kept, it is refreshed only when requested, like the other.

import type { ChangeKind, ChangeListener, OddsEngine } from '../engine.ts';
import type { Clock } from '../clock.ts';
import { EVENT_HEAD } from './dirtyTracker.ts';
import { snapshotHead } from './snapshotJson.ts';
import { SnapshotVariant, type VariantStats } from './snapshotVariant.ts';

export interface BoardSnapshotOptions {
  /** Raw bytes per piece (slices are cut here; groups close here). Default 32 KiB (medium board, vs 64 KiB: 8% more gzip bytes, about half the refresh cost per changed event). */
  pieceBytes?: number;
  /** A piece re-rendered past this is re-cut. Default 4 * pieceBytes. */
  maxPieceBytes?: number;
  level?: number;
  /** Drop the with-history variant after this long without a request. Default 5 min; Infinity keeps it. */
  historyIdleMs?: number;
  /** Time source for historyIdleMs (default: the engine's clock). */
  clock?: Clock;
}

export interface SnapshotBody {
  /** The gzip member: write these in order. Shared and immutable. */
  readonly chunks: readonly Buffer[];
  readonly byteLength: number;
  /** Uncompressed body length. */
  readonly rawLength: number;
  readonly etag: string;
  readonly syncToken: string;
  readonly count: number;
  readonly withHistory: boolean;
}

export interface SnapshotStats {
  variant: 'plain' | 'history';
  pieces: number;
  groups: number;
  byteLength: number;
  rawLength: number;
  refreshes: number;
  refreshMs: number;
  rendered: VariantStats;
}

/** Above this many waiting rows and events, isBehind() says a request should not wait synchronously. */
const ASYNC_BACKLOG = 2000;

class VariantState {
  body: SnapshotBody | null = null;
  /** The member the body was made from: unchanged member, unchanged body. */
  member: unknown = null;
  /** engine.asOf() the body was made at. */
  asOf = -1;
  lastRequest = 0;
  /** A whenCurrent() in progress. */
  pending: Promise<SnapshotBody> | null = null;
  refreshes = 0;
  refreshMs = 0;
  constructor(public variant: SnapshotVariant) {}
}

export class BoardSnapshot implements ChangeListener {
  private readonly options: Required<Omit<BoardSnapshotOptions, 'clock'>>;
  private readonly clock: Clock;
  private plain: VariantState;
  private history: VariantState | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly engine: OddsEngine,
    options: BoardSnapshotOptions = {},
  ) {
    const pieceBytes = options.pieceBytes ?? 32 * 1024;
    this.options = {
      pieceBytes,
      maxPieceBytes: options.maxPieceBytes ?? 4 * pieceBytes,
      level: options.level ?? 1,
      historyIdleMs: options.historyIdleMs ?? 5 * 60 * 1000,
    };
    this.clock = options.clock ?? engine.clock;
    this.plain = this.newState(false);
    this.unsubscribe = engine.subscribe(this);
  }

  // ---- ChangeListener (runs inside engine.apply) -------------------------------------

  rowChanged(slot: number, kind: ChangeKind): void {
    const removed = kind === 'remove';
    this.plain.variant.tracker.markSlot(slot, removed);
    if (this.history !== null) this.history.variant.tracker.markSlot(slot, removed);
  }

  eventChanged(eventId: string): void {
    const ev = this.engine.store.events.lookup(eventId);
    if (ev < 0) return;
    this.plain.variant.tracker.markEvent(ev, EVENT_HEAD);
    if (this.history !== null) this.history.variant.tracker.markEvent(ev, EVENT_HEAD);
  }

  // ---- reading ------------------------------------------------------------------------

  /** The body as of now: renders what changed since the last call, else returns the cached body. */
  current(withHistory = false): SnapshotBody {
    const state = withHistory ? this.historyState() : this.plain;
    state.lastRequest = this.clock.now();
    if (!withHistory) this.dropIdleHistory(state.lastRequest);
    const asOf = this.engine.asOf();
    if (state.body !== null && state.variant.current) {
      if (state.asOf === asOf) return state.body;
      // The board moved without telling listeners (a bulk load): start over.
      this.replace(state);
    }
    const started = performance.now();
    state.variant.refresh();
    state.asOf = asOf;
    state.variant.setHead(snapshotHead(asOf, this.engine.liveRows));
    const member = state.variant.member();
    if (state.body === null || member !== state.member) {
      state.member = member;
      state.body = {
        chunks: member.chunks,
        byteLength: member.byteLength,
        rawLength: member.rawLength,
        etag: etagOf(withHistory, member.crc, member.rawLength),
        syncToken: String(asOf),
        count: this.engine.liveRows,
        withHistory,
      };
    }
    state.refreshes++;
    state.refreshMs += performance.now() - started;
    return state.body;
  }

  /**
   * Whether current() would block for long: the variant is not built yet, or more than
   * `backlog` rows and events wait to be rendered (each costs up to one piece).
   */
  isBehind(withHistory: boolean, backlog = ASYNC_BACKLOG): boolean {
    const state = withHistory ? this.history : this.plain;
    if (state === null) return true;
    return !state.variant.isBuilt || state.variant.backlog > backlog;
  }

  /**
   * current(), but the rendering runs in steps of `stepMs` between which the event
   * loop serves other work (a first build of the large board takes seconds). Callers
   * waiting on the same variant share one promise.
   */
  whenCurrent(withHistory: boolean, stepMs = 20): Promise<SnapshotBody> {
    const state = withHistory ? this.historyState() : this.plain;
    state.lastRequest = this.clock.now();
    if (state.pending !== null) return state.pending;
    const pending = new Promise<SnapshotBody>((resolve, reject) => {
      const step = (): void => {
        try {
          if (!state.variant.refresh(performance.now() + stepMs)) {
            setImmediate(step);
            return;
          }
          state.pending = null;
          resolve(this.current(withHistory));
        } catch (error) {
          state.pending = null;
          reject(error);
        }
      };
      setImmediate(step);
    });
    state.pending = pending;
    return pending;
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
      const member = state.variant.member();
      out.push({
        variant: state.variant.withHistory ? 'history' : 'plain',
        pieces: state.variant.pieceCount,
        groups: state.variant.groupCount,
        byteLength: member.byteLength,
        rawLength: member.rawLength,
        refreshes: state.refreshes,
        refreshMs: state.refreshMs,
        rendered: { ...state.variant.stats },
      });
    }
    return out;
  }

  close(): void {
    this.unsubscribe();
    this.history = null;
  }

  private historyState(): VariantState {
    if (this.history === null) this.history = this.newState(true);
    return this.history;
  }

  private dropIdleHistory(now: number): void {
    const history = this.history;
    if (history !== null && history.pending === null && now - history.lastRequest > this.options.historyIdleMs) this.history = null;
  }

  private replace(state: VariantState): void {
    state.variant = this.newVariant(state.variant.withHistory);
    state.body = null;
  }

  private newState(withHistory: boolean): VariantState {
    return new VariantState(this.newVariant(withHistory));
  }

  private newVariant(withHistory: boolean): SnapshotVariant {
    const { pieceBytes, maxPieceBytes, level } = this.options;
    return new SnapshotVariant(this.engine, { withHistory, pieceBytes, maxPieceBytes, level });
  }
}

/** "snap-<n|h>-<crc32 hex>-<raw length hex>": strong, quoted. */
function etagOf(withHistory: boolean, crc: number, rawLength: number): string {
  return `"snap-${withHistory ? 'h' : 'n'}-${(crc >>> 0).toString(16).padStart(8, '0')}-${rawLength.toString(16)}"`;
}
