// The pieces of one event too big or too live to share a piece: slices, each a run
// of the event's rows cut after the row where the rendered bytes first reach
// pieceBytes. A slice keeps its upper boundary (book, id); a row belongs to the first
// slice whose boundary is >= its key, so a changed, added or removed row finds its
// slice by binary search, even when the boundary row itself is gone. The first slice
// carries the event's opening, the last its closing brackets (and the last-slice key,
// see pieceKeys.ts). A refresh re-renders the slices holding changed rows: a price move
// costs one piece, however big its event. An emptied slice is dropped (a neighbour
// takes over the opening or closing); one grown past maxPieceBytes is cut again.

import type { OddsEngine } from '../engine.ts';
import { SLOT_FREE } from '../oddsStore.ts';
import { EVENT_HEAD, EVENT_RESLICE } from './dirtyTracker.ts';
import { COMMA, type PieceRenderer } from './pieceRenderer.ts';
import { lastSliceKey, sliceKey } from './pieceKeys.ts';
import { EVENT_CLOSE, writeEventOpen } from './snapshotJson.ts';

export interface Slice {
  key: string;
  /** Inclusive upper boundary; unused on the event's last slice. */
  endBook: string;
  endId: string;
}

/** Whole small quiet events sharing one piece (snapshotVariant.ts). */
export interface Group {
  key: string;
  members: EventPlan[];
}

/** Where an event's JSON lives: its own slices, or a group. */
export interface EventPlan {
  ev: number;
  key: string;
  slices: Slice[] | null;
  group: Group | null;
}

export class EventSlices {
  constructor(
    private readonly engine: OddsEngine,
    private readonly renderer: PieceRenderer,
    private readonly pieceBytes: number,
    private readonly maxPieceBytes: number,
  ) {}

  /** A plan for the event as its own slices (rendered and cut now). */
  standalone(ev: number, key: string): EventPlan {
    const plan: EventPlan = { ev, key, slices: null, group: null };
    plan.slices = this.cutRows(plan, 0, this.renderer.rowCount(ev), true, true, { key: lastSliceKey(key), endBook: '', endId: '' });
    return plan;
  }

  /** Re-renders what changed: the slices of the listed slots, the first one for EVENT_HEAD. */
  refresh(plan: EventPlan, flags: number, slots: readonly number[]): void {
    if ((flags & EVENT_RESLICE) !== 0) return this.recut(plan);
    const dirty = new Set<number>();
    if ((flags & EVENT_HEAD) !== 0) dirty.add(0);
    const store = this.engine.store;
    for (const slot of slots) {
      if (store.state[slot] === SLOT_FREE || store.event[slot] !== plan.ev) return this.recut(plan);
      dirty.add(this.sliceOf(plan.slices!, slot));
    }
    // Highest first: removing or splitting a slice never shifts one still to render.
    const indexes = [...dirty].sort((a, b) => b - a);
    for (const index of indexes) this.renderSlice(plan, index);
  }

  /** Removes the event's pieces. */
  remove(plan: EventPlan): void {
    for (const slice of plan.slices!) this.renderer.pieces.remove(slice.key);
  }

  /** Index of the first slice whose boundary is at or after the slot's (book, id). */
  private sliceOf(slices: Slice[], slot: number): number {
    const order = this.engine.indexes.order;
    let lo = 0;
    let hi = slices.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (order.compareKeyToSlot(slices[mid].endBook, slices[mid].endId, slot) >= 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /**
   * Re-renders one slice in place. An empty slice goes (its neighbour takes over the
   * event's opening or closing when it held one); one grown past maxPieceBytes is cut
   * again at pieceBytes, adding slices before it.
   */
  private renderSlice(plan: EventPlan, index: number): void {
    const slices = plan.slices!;
    const last = slices.length - 1;
    const list = this.engine.indexes.byEvent[plan.ev]!;
    const order = this.engine.indexes.order;
    const start = index === 0 ? 0 : list.after(slices[index - 1].endBook, slices[index - 1].endId, order);
    const end = index === last ? list.length : list.after(slices[index].endBook, slices[index].endId, order);
    if (end <= start) return this.dropSlice(plan, index);
    const sink = this.renderer.sink;
    sink.reset();
    if (index === 0) writeEventOpen(sink, this.engine, plan.ev);
    this.renderer.writeRows(sink, list.items, start, end);
    if (index === last) sink.ascii(EVENT_CLOSE);
    if (sink.length <= this.maxPieceBytes) {
      this.renderer.setPiece(slices[index].key, sink);
      return;
    }
    this.renderer.stats.slicesSplit++;
    slices.splice(index, 1, ...this.cutRows(plan, start, end, index === 0, index === last, slices[index]));
  }

  /** Removes an empty slice (the event still has rows elsewhere). */
  private dropSlice(plan: EventPlan, index: number): void {
    const slices = plan.slices!;
    const last = slices.length - 1;
    this.renderer.stats.slicesDropped++;
    this.renderer.pieces.remove(slices[index].key);
    slices.splice(index, 1);
    if (index === 0) {
      this.renderSlice(plan, 0); // the new first slice takes the event's opening
    } else if (index === last) {
      // The new last slice takes the closing and the last-slice key (so later cuts sort right).
      const previous = slices[index - 1];
      this.renderer.pieces.remove(previous.key);
      previous.key = lastSliceKey(plan.key);
      this.renderSlice(plan, index - 1);
    }
  }

  /** Renders the whole event again and cuts it afresh. */
  recut(plan: EventPlan): void {
    this.renderer.stats.eventsRecut++;
    const old = plan.slices;
    const list = this.engine.indexes.byEvent[plan.ev]!;
    plan.slices = this.cutRows(plan, 0, list.length, true, true, { key: lastSliceKey(plan.key), endBook: '', endId: '' });
    if (old !== null) {
      const kept = new Set(plan.slices.map((slice) => slice.key));
      for (const slice of old) if (!kept.has(slice.key)) this.renderer.pieces.remove(slice.key);
    }
  }

  /**
   * Renders rows [start, end) of the event (with its opening / closing when asked),
   * cutting after the row where a piece reaches pieceBytes; the rest goes to `tail`,
   * which keeps its key and boundary. Returns the slices made, tail last.
   */
  private cutRows(plan: EventPlan, start: number, end: number, open: boolean, close: boolean, tail: Slice): Slice[] {
    const store = this.engine.store;
    const items = this.engine.indexes.byEvent[plan.ev]!.items;
    const slices: Slice[] = [];
    const sink = this.renderer.sink;
    sink.reset();
    if (open) writeEventOpen(sink, this.engine, plan.ev);
    let first = true;
    for (let i = start; i < end; i++) {
      if (!first) sink.byte(COMMA);
      const slot = items[i];
      this.renderer.writeRow(sink, slot);
      first = false;
      if (sink.length >= this.pieceBytes && i < end - 1) {
        const book = store.books.get(store.book[slot]);
        const id = this.engine.idOf(slot);
        const slice: Slice = { key: sliceKey(plan.key, book, id), endBook: book, endId: id };
        this.renderer.setPiece(slice.key, sink);
        slices.push(slice);
        sink.reset();
        first = true;
      }
    }
    if (close) sink.ascii(EVENT_CLOSE);
    this.renderer.setPiece(tail.key, sink);
    slices.push(tail);
    return slices;
  }
}
