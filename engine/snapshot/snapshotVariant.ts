// One variant of the snapshot body (with or without priceHistory) kept as compressed
// pieces in a PieceSet, re-rendered where the board changed and nowhere else.
//
// The body is the board's rows in body order, cut into pieces where rowCuts.ts says
// (a cut depends on the rows of the piece it ends, and an event in play starts and
// ends on one), so the layout is a function of the board: a
// fresh build and a body kept up to date through any changes hold the same pieces
// and the same bytes. A change dirties the piece of each changed row (found by the
// row's key, pieceKeys.ts) or, for an event that moved or changed its head, every
// piece over the event's old and new place. A run of neighbouring dirty pieces is
// walked again from the cut before it, cutting by the rule, until the walk reaches a
// cut that is also an old piece boundary: the run's pieces are replaced by what the
// walk made, which is what a fresh build would make there. The walk renders only the
// rows that changed; the others are copied from the bytes kept when their piece was
// made (renderedRows.ts), so a dirty piece costs its changed rows, not all of its rows.
//
// Work runs in passes over what the tracker lists; a pass (like the first build) can
// stop at a deadline and resume. Pieces are compressed on worker threads
// (PieceSet.setDeferred) unless the caller wants them now.

import type { OddsEngine } from '../engine.ts';
import { SLOT_FREE } from '../oddsStore.ts';
import { DirtyTracker } from './dirtyTracker.ts';
import type { GzipMember } from './gzipMember.ts';
import { COMMA, PieceRenderer, type VariantStats } from './pieceRenderer.ts';
import { END_KEY, eventKey, eventKeyEnd, isLiveEvent, rowKey, splitRowKey } from './pieceKeys.ts';
import { CoolingRows } from './coolingRows.ts';
import { HOT_WEIGHT, heatMoment, RowCuts } from './rowCuts.ts';
import { KeptPieceRows, ROW_FIRST, ROW_LAST } from './keptPieceRows.ts';
import { sharedPiece } from './compressionWorkers.ts';
import { pieceBuffers } from './pieceBuffers.ts';

export type { VariantStats };

export interface VariantOptions {
  withHistory: boolean;
  /** Raw bytes a piece of cold rows averages (sets the cut rule's span). */
  pieceBytes: number;
  /** zlib level of the pieces (deflatePiece.ts explains level 1). */
  level?: number;
  /** Raw bytes of rendered pieces kept to copy unchanged rows from (renderedRows.ts). */
  renderedBytes?: number;
  /** Monotonic milliseconds refresh() deadlines are in (BoardSnapshot's timer). */
  timer: () => number;
}

/**
 * Default budget of kept rendered bytes per variant: the large board's whole body in
 * either variant (575 MB raw plain, 1.58 GB with history). Below the body the pieces
 * made longest ago are dropped and, since changes land all over a live board, most
 * dirty pieces then render every row again: measured on the large board at 1,000
 * updates/s with 256 MiB, ~55,000 rows rendered per second for ~1,000 changed, and
 * 2.2x (plain) to 3.3x (history) the main thread's time per second.
 */
export const DEFAULT_RENDERED_BYTES = 2 * 1024 * 1024 * 1024;

/** What a piece was rendered with, to tell whether its edges still hold. */
interface PieceInfo {
  /** Its first row was its event's first (it carries the event's opening). */
  opens: boolean;
  /** Its last row was its event's last (it carries the event's closing). */
  closes: boolean;
  /** Events it holds rows of. */
  events: number;
  /** It ended by its own rows' weight (RowCuts.cutsAfter), not only at an event in play. */
  ownCut: boolean;
}

interface Made extends PieceInfo {
  key: string;
  raw: Buffer;
}

interface RefreshPass {
  /** Dirty piece keys in body order; `dirty` holds those not yet walked. */
  keys: string[];
  dirty: Set<string>;
  next: number;
}

/** Most neighbouring dirty pieces one walk takes on (a walk cannot stop at a deadline). */
const MAX_RUN_PIECES = 8;

/** No pieces yet: the whole body is walked. */
const WHOLE = '';

/** Rows in body order over the variant's event order, from a position. */
class RowWalker {
  private i = 0;
  private j = 0;

  constructor(
    private readonly engine: OddsEngine,
    private readonly keys: readonly string[],
    private readonly evs: readonly number[],
  ) {}

  /** Positions the walker on the first row after `key` (a row key), or on the body's first row. */
  seekAfter(key: string | null): void {
    this.i = 0;
    this.j = 0;
    if (key === null) return;
    const [event, book, id] = splitRowKey(key);
    const i = lowerBound(this.keys, event);
    this.i = i;
    if (i < this.keys.length && this.keys[i] === event) {
      const list = this.engine.indexes.byEvent[this.evs[i]];
      this.j = list === undefined ? 0 : list.after(book, id, this.engine.indexes.order);
    }
  }

  /** The slot at the position (empty events skipped), or -1 past the last row. */
  peek(): number {
    const byEvent = this.engine.indexes.byEvent;
    while (this.i < this.evs.length) {
      const list = byEvent[this.evs[this.i]];
      if (list !== undefined && this.j < list.length) return list.items[this.j];
      this.i++;
      this.j = 0;
    }
    return -1;
  }

  advance(): void {
    this.j++;
  }

  /** The event of the row at the position (after peek()). */
  get ev(): number {
    return this.evs[this.i];
  }

  get isFirst(): boolean {
    return this.j === 0;
  }

  get isLast(): boolean {
    return this.j === this.engine.indexes.byEvent[this.evs[this.i]]!.length - 1;
  }
}

export class SnapshotVariant {
  readonly tracker: DirtyTracker;
  private readonly renderer: PieceRenderer;
  private readonly cuts: RowCuts;
  private readonly cooling = new CoolingRows();
  /** The rendered bytes of the pieces made, row by row: a refresh copies the rows that did not change. */
  private readonly rendered: KeptPieceRows;
  /** Events in body order by the key they were placed with (events whose rows all left stay, empty). */
  private readonly eventKeys: string[] = [];
  private readonly eventIds: number[] = [];
  /** Per event: the key it is placed with in eventKeys. */
  private readonly placedKey: (string | undefined)[] = [];
  private readonly info = new Map<string, PieceInfo>();
  private multiEventPieces = 0;
  /** The first build while it runs: where it stopped (the last row of its last piece; null: not started). */
  private build: { after: string | null } | null = null;
  private pass: RefreshPass | null = null;
  private built = false;
  /** Compress on worker threads (false: on this thread, as a synchronous caller needs). */
  private deferred = false;
  private readonly now: () => number;

  constructor(
    private readonly engine: OddsEngine,
    private readonly options: VariantOptions,
  ) {
    this.tracker = new DirtyTracker(engine.store);
    this.renderer = new PieceRenderer(engine, options.withHistory, options.level);
    this.cuts = new RowCuts(engine, options.pieceBytes);
    this.rendered = new KeptPieceRows(options.renderedBytes ?? DEFAULT_RENDERED_BYTES);
    this.now = options.timer;
  }

  /** Raw bytes of rendered pieces kept to copy unchanged rows from. */
  get renderedBytes(): number {
    return this.rendered.bytes;
  }

  get stats(): VariantStats {
    return this.renderer.stats;
  }

  private get pieces() {
    return this.renderer.pieces;
  }

  get withHistory(): boolean {
    return this.options.withHistory;
  }

  /** True when every piece reflects the board (nothing left to render; compression may still run). */
  get current(): boolean {
    return this.built && this.pass === null && this.tracker.empty;
  }

  get isBuilt(): boolean {
    return this.built;
  }

  get pieceCount(): number {
    return this.pieces.size;
  }

  /** Pieces holding rows of more than one event. */
  get groupCount(): number {
    return this.multiEventPieces;
  }

  /** Pieces whose compression has not finished. */
  get pendingCompressions(): number {
    return this.pieces.pendingCount;
  }

  /** Raw bytes of the pieces whose compression has not finished. */
  get pendingCompressionBytes(): number {
    return this.pieces.pendingBytes;
  }

  /** A slot now holds a new (or revived) row: its identity is read again. */
  rowInserted(slot: number): void {
    this.cuts.forget(slot);
  }

  /** The row in the slot changed (as the change is applied; an insert comes after rowInserted): its rendered bytes and its heat are stale. */
  rowChanged(slot: number): void {
    this.rendered.forget(slot);
    this.cuts.changed(slot);
  }

  /** The variant is dropped: its kept rows give their buffers back (pieceBuffers.ts); rendering after this starts from no kept rows. */
  dispose(): void {
    this.rendered.clear();
  }

  setHead(text: string): void {
    this.pieces.setHead(text);
  }

  /** The member (compressing here whatever has not come back from the worker threads). */
  member(): GzipMember {
    return this.pieces.assemble();
  }

  /** Resolves once every piece rendered so far has its compressed bytes. */
  settle(): Promise<void> {
    return this.pieces.settle();
  }

  /**
   * Brings the pieces up to date. Work stops once past `deadline` (in options.timer's
   * milliseconds; at least one run per call) and continues on the next call; returns true when
   * current. `deferred`: new pieces are compressed on worker threads (settle()).
   */
  refresh(deadline = Infinity, deferred = false): boolean {
    this.deferred = deferred;
    if (!this.built && !this.continueBuild(deadline)) return false;
    for (;;) {
      if (this.pass === null) {
        if (this.tracker.empty) return true;
        this.pass = this.startPass();
      }
      const pass = this.pass;
      while (pass.next < pass.keys.length) {
        const key = pass.keys[pass.next++];
        if (pass.dirty.has(key)) this.walkFrom(key, pass);
        if (this.now() > deadline && pass.next < pass.keys.length) return false;
      }
      this.pass = null;
      if (this.now() > deadline) return this.tracker.empty;
    }
  }

  /** Work waiting for the next refresh: listed rows and events (a pass in progress counts its rest). */
  get backlog(): number {
    return this.tracker.slots + this.tracker.events + (this.pass === null ? 0 : this.pass.keys.length - this.pass.next);
  }

  // ---- the first build: every row in body order ---------------------------------------

  private continueBuild(deadline: number): boolean {
    if (this.build === null) this.build = this.startBuild();
    const build = this.build;
    // Rows may have come and gone since the last step: resume by key, not by position.
    const walker = this.walker();
    walker.seekAfter(build.after);
    const done = this.renderFrom(
      walker,
      (key) => {
        build.after = key;
        return this.now() > deadline;
      },
      (made) => this.place(made),
    );
    if (!done) return false;
    this.build = null;
    this.built = true;
    return true;
  }

  private startBuild(): { after: string | null } {
    this.tracker.drain(noop, noop); // the build reads the board as it is now
    this.cuts.moment = heatMoment(this.engine.asOf());
    const placed: { key: string; ev: number }[] = [];
    this.engine.indexes.byEvent.forEach((list, ev) => {
      if (list !== undefined && list.length > 0) placed.push({ key: eventKey(this.engine, ev), ev });
    });
    placed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const { key, ev } of placed) {
      this.eventKeys.push(key);
      this.eventIds.push(ev);
      this.placedKey[ev] = key;
    }
    return { after: null };
  }

  // ---- refreshing what changed ------------------------------------------------------

  /** Takes what the tracker holds: places moved and new events, and lists the dirty pieces. */
  private startPass(): RefreshPass {
    this.coolDown();
    const keys = this.pieces.keys();
    const dirty = new Set<string>();
    const markPoint = (key: string): void => {
      dirty.add(keys.length === 0 ? WHOLE : keys[Math.min(lowerBound(keys, key), keys.length - 1)]);
    };
    const markRange = (event: string): void => {
      if (keys.length === 0) return void dirty.add(WHOLE);
      const last = Math.min(lowerBound(keys, eventKeyEnd(event)), keys.length - 1);
      for (let i = lowerBound(keys, event); i <= last; i++) dirty.add(keys[i]);
    };
    const wholeEvents = new Set<number>();
    const slots: number[] = [];
    const store = this.engine.store;
    this.tracker.drain(
      (slot, ev) => {
        if (store.state[slot] === SLOT_FREE || store.event[slot] !== ev) wholeEvents.add(ev);
        if (store.state[slot] === SLOT_FREE) return;
        if (this.placedKey[store.event[slot]] === undefined) wholeEvents.add(store.event[slot]);
        slots.push(slot);
      },
      (ev) => void wholeEvents.add(ev),
    );
    const byEvent = this.engine.indexes.byEvent;
    for (const ev of wholeEvents) {
      // Its head (in its first row's bytes) may have changed, or a slot of it was recycled.
      const rows = byEvent[ev];
      if (rows !== undefined) for (let i = 0; i < rows.length; i++) this.rendered.forget(rows.items[i]);
      const old = this.placedKey[ev];
      if (old === undefined && this.renderer.rowCount(ev) === 0) continue;
      const now = eventKey(this.engine, ev);
      if (old !== now) {
        if (old !== undefined) {
          markRange(old);
          const at = lowerBound(this.eventKeys, old);
          this.eventKeys.splice(at, 1);
          this.eventIds.splice(at, 1);
        }
        const at = lowerBound(this.eventKeys, now);
        this.eventKeys.splice(at, 0, now);
        this.eventIds.splice(at, 0, ev);
        this.placedKey[ev] = now;
      }
      markRange(now);
      this.stats.eventsRecut++;
    }
    for (const slot of slots) {
      const ev = store.event[slot];
      if (!wholeEvents.has(ev)) markPoint(this.rowKeyOf(slot));
    }
    const list = [...dirty].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { keys: list, dirty, next: 0 };
  }

  /**
   * Moves the heat moment to the board's as-of time: rows that turned cold by then
   * are listed as changed, so this pass re-renders them (and grows their pieces back).
   */
  private coolDown(): void {
    const moment = heatMoment(this.engine.asOf());
    if (moment <= this.cuts.moment) return;
    this.cuts.moment = moment;
    this.cooling.takeDue(moment, (slot) => {
      if (this.engine.isLive(slot)) this.tracker.markSlot(slot, false);
    });
  }

  /** Walks the run of dirty pieces starting at `key` again and replaces them. */
  private walkFrom(key: string, pass: RefreshPass): void {
    const keys = this.pieces.keys();
    let a = 0;
    let b = -1;
    if (key !== WHOLE && keys.length > 0) {
      a = exactIndex(keys, key);
      if (a < 0) return;
      b = a;
      // A run is walked in one go, so it is capped: under heavy ticks most pieces are
      // dirty and an uncapped run was the whole board, past any step's deadline. The
      // dirty pieces after the cap are walked by the next calls (they stay listed).
      while (b + 1 < keys.length && b - a < MAX_RUN_PIECES && pass.dirty.has(keys[b + 1])) b++;
      // The cut before the run holds if the rule still cuts there and the piece
      // before still ends as it was rendered (closing its event or not).
      while (a > 0 && !this.cutHoldsAfter(keys[a - 1])) a--;
    }
    const walker = this.walker();
    walker.seekAfter(a > 0 ? keys[a - 1] : null);
    const n = keys.length;
    let oldEnd = a;
    const made: Made[] = [];
    this.renderFrom(
      walker,
      (cutKey) => {
        if (cutKey === END_KEY) {
          oldEnd = n - 1;
          return false;
        }
        while (oldEnd < n - 1 && keys[oldEnd] < cutKey) oldEnd++;
        // Stop on an old boundary past the run whose next piece still opens as rendered.
        return oldEnd >= b && keys[oldEnd] === cutKey && this.info.get(keys[oldEnd + 1])!.opens === walker.isFirst;
      },
      (piece) => made.push(piece),
    );
    if (walker.peek() < 0) oldEnd = n - 1;
    const old = n === 0 ? [] : keys.slice(a, oldEnd + 1);
    const kept = new Set(made.map((piece) => piece.key));
    let oldGroups = 0;
    for (const gone of old) {
      pass.dirty.delete(gone);
      if ((this.info.get(gone)?.events ?? 0) > 1) oldGroups++;
      if (!kept.has(gone)) {
        this.pieces.remove(gone);
        this.rendered.drop(gone);
        this.forgetInfo(gone);
      }
    }
    pass.dirty.delete(WHOLE);
    for (const piece of made) this.place(piece);
    const stats = this.stats;
    if (made.length > old.length) {
      stats.slicesSplit += made.length - old.length;
      stats.groupsDissolved += oldGroups;
    } else if (made.length < old.length) {
      stats.slicesDropped += old.length - made.length;
    }
  }

  /**
   * Whether the body is still cut right after the row `key` names, with that piece
   * ending as rendered. A cut depends only on the rows of the piece it ends, which are
   * unchanged (a changed row lists its piece); what can have changed is whether the
   * row is still its event's last (a neighbour added or gone), which changes its bytes.
   */
  private cutHoldsAfter(key: string): boolean {
    const [event, book, id] = splitRowKey(key);
    const at = lowerBound(this.eventKeys, event);
    if (at >= this.eventKeys.length || this.eventKeys[at] !== event) return false;
    const list = this.engine.indexes.byEvent[this.eventIds[at]];
    if (list === undefined) return false;
    const index = list.after(book, id, this.engine.indexes.order) - 1;
    if (index < 0 || this.engine.indexes.order.compareKeyToSlot(book, id, list.items[index]) !== 0) return false;
    const info = this.info.get(key)!;
    const closes = index === list.length - 1;
    if (info.closes !== closes) return false;
    if (info.ownCut) return true;
    // It ended only because an event in play starts or ends there: is that still so?
    if (!closes) return false;
    const walker = this.walker();
    walker.seekAfter(key);
    return walker.peek() >= 0 && (isLiveEvent(this.engine, this.eventIds[at]) || isLiveEvent(this.engine, walker.ev));
  }

  /**
   * Renders rows from the walker's position into pieces, cut by the rule; each piece
   * goes to `emit`, named after its last row (END_KEY at the body's end). After each
   * cut `stop(key)` may end the walk. Returns true when the walk reached the body's end.
   */
  private renderFrom(walker: RowWalker, stop: (cutKey: string) => boolean, emit: (made: Made) => void): boolean {
    const sink = this.renderer.sink;
    sink.reset();
    const kept = this.rendered;
    kept.begin();
    const cuts = this.cuts;
    let rows = 0;
    let opens = false;
    let events = 0;
    let weight = 0;
    let slot = walker.peek();
    while (slot >= 0) {
      const ev = walker.ev;
      const first = walker.isFirst;
      const last = walker.isLast;
      if (rows === 0) {
        opens = first;
        events = 1;
      } else if (first) events++;
      const flags = (first ? ROW_FIRST : 0) | (last ? ROW_LAST : 0);
      // Unchanged rows are copied from the bytes kept when their piece was made.
      let bytes = kept.copy(sink, slot, flags, rows === 0 ? -1 : COMMA);
      let start: number;
      if (bytes >= 0) {
        start = kept.position(sink) - bytes;
      } else {
        kept.flushRun(sink);
        if (rows > 0) sink.byte(COMMA);
        start = sink.length;
        this.renderer.writeRow(sink, slot, ev, first, last);
        bytes = sink.length - start;
        this.renderer.stats.rowsRendered++;
      }
      kept.row(slot, start, start + bytes, flags);
      let rowWeight = bytes;
      if (cuts.isHot(slot)) {
        rowWeight *= HOT_WEIGHT;
        this.cooling.add(slot, cuts.coolsAt(slot));
      }
      weight += rowWeight;
      rows++;
      walker.advance();
      const next = walker.peek();
      const ownCut = cuts.cutsAfter(slot, rowWeight, weight);
      // Events in play start and end on a cut: their rows move most, and a game going
      // live (or ending) re-splits only its own range.
      if (next < 0 || ownCut || (last && (isLiveEvent(this.engine, ev) || isLiveEvent(this.engine, walker.ev)))) {
        const key = next < 0 ? END_KEY : this.rowKeyOf(slot);
        kept.flushRun(sink);
        const raw = sharedPiece(sink.view(), kept.tableBytes(sink.length));
        // Held until placed (a walk places its pieces after it ends): keeping a later
        // piece may drop this one from the kept rows, which must not free its bytes yet.
        pieceBuffers.retain(raw);
        kept.keep(key, raw);
        emit({ key, raw, opens, closes: last, events, ownCut });
        sink.reset();
        kept.begin();
        rows = 0;
        weight = 0;
        if (stop(key) || next < 0) return next < 0;
      }
      slot = next;
    }
    return true;
  }

  private place(made: Made): void {
    this.renderer.setPiece(made.key, made.raw, this.deferred);
    pieceBuffers.release(made.raw); // the kept rows and the compression hold it now, if they still need it
    this.forgetInfo(made.key);
    this.info.set(made.key, { opens: made.opens, closes: made.closes, events: made.events, ownCut: made.ownCut });
    if (made.events > 1) this.multiEventPieces++;
  }

  private forgetInfo(key: string): void {
    const info = this.info.get(key);
    if (info === undefined) return;
    if (info.events > 1) this.multiEventPieces--;
    this.info.delete(key);
  }

  private rowKeyOf(slot: number): string {
    const s = this.engine.store;
    return rowKey(this.placedKey[s.event[slot]]!, s.books.get(s.book[slot]), this.engine.idOf(slot));
  }

  private walker(): RowWalker {
    return new RowWalker(this.engine, this.eventKeys, this.eventIds);
  }
}

/** First index whose key is at or after `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function exactIndex(keys: readonly string[], key: string): number {
  const at = lowerBound(keys, key);
  return at < keys.length && keys[at] === key ? at : -1;
}

function noop(): void {}
