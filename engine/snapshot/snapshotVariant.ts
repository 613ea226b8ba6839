// One variant of the snapshot body (with or without priceHistory) kept as compressed
// pieces in a PieceSet, re-rendered where the board changed and nowhere else.
//
// Pieces (see pieceKeys.ts for their keys and the body order):
// - a slice: a run of one event's rows, cut after the row where the rendered bytes
//   first reach pieceBytes. Its upper boundary (book, id) is kept; a row belongs to
//   the first slice whose boundary is >= its key, so a changed, added or removed row
//   finds its slice by binary search, even when the boundary row itself is gone. The
//   first slice carries the event's opening, the last its closing brackets.
// - a group: several whole small quiet events (scheduled games, futures anchors),
//   formed only by the initial build, which walks the events in body order. Live
//   games are never grouped. A group whose member turns live, or that another event
//   would have to sit inside, is dissolved into single events.
// A refresh re-renders the slices holding changed rows (a price move costs one ~64 KB
// piece, however big its event); a slice that would end up empty or over
// maxPieceBytes re-cuts its whole event (rare: it takes dozens of added or pulled lines).

import type { OddsEngine } from '../engine.ts';
import { SLOT_FREE } from '../oddsStore.ts';
import { compareStrings } from '../rowOrder.ts';
import { ByteSink } from './byteSink.ts';
import { DirtyTracker, EVENT_HEAD, EVENT_RESLICE } from './dirtyTracker.ts';
import type { GzipMember } from './gzipMember.ts';
import { eventKey, groupKey, isLiveEvent, lastSliceKey, sliceKey } from './pieceKeys.ts';
import { PieceSet } from './pieceSet.ts';
import { EVENT_CLOSE, SNAPSHOT_TAIL, SnapshotRowWriter, writeEventOpen } from './snapshotJson.ts';

const COMMA = 0x2c;

export interface VariantOptions {
  withHistory: boolean;
  /** Raw bytes at which a slice is cut and a group is closed. */
  pieceBytes: number;
  /** A slice or group re-rendered past this is re-cut (slices) or dissolved (groups). */
  maxPieceBytes: number;
  /** zlib level of the pieces (deflatePiece.ts explains level 1). */
  level?: number;
}

interface Slice {
  key: string;
  /** Inclusive upper boundary; unused on the event's last slice. */
  endBook: string;
  endId: string;
}

interface EventPlan {
  ev: number;
  key: string;
  /** Standalone events: their slices in order. */
  slices: Slice[] | null;
  group: Group | null;
}

interface Group {
  key: string;
  members: EventPlan[];
}

interface EventWork {
  flags: number;
  slots: number[];
}

/** Cumulative counters: what refreshes have cost. */
export interface VariantStats {
  piecesRendered: number;
  bytesRendered: number;
  eventsRecut: number;
  slicesDropped: number;
  slicesSplit: number;
  groupsDissolved: number;
}

interface RefreshPass {
  work: Map<number, EventWork>;
  events: number[];
  next: number;
  replan: number[];
  toRender: Set<Group>;
  toDissolve: Set<Group>;
}

interface BuildState {
  order: number[];
  keys: Map<number, string>;
  next: number;
  group: Group | null;
}

export class SnapshotVariant {
  readonly tracker: DirtyTracker;
  readonly stats: VariantStats = { piecesRendered: 0, bytesRendered: 0, eventsRecut: 0, slicesDropped: 0, slicesSplit: 0, groupsDissolved: 0 };
  private readonly pieces: PieceSet;
  private readonly sink = new ByteSink();
  private readonly groupSink = new ByteSink();
  private readonly writer: SnapshotRowWriter;
  private readonly plans: (EventPlan | undefined)[] = [];
  private readonly groups = new Map<string, Group>();
  private build: BuildState | null = null;
  /** A refresh stopped at its deadline, resumed by the next call. */
  private pass: RefreshPass | null = null;
  private built = false;
  private rowsRendered = 0;

  constructor(
    private readonly engine: OddsEngine,
    private readonly options: VariantOptions,
  ) {
    this.tracker = new DirtyTracker(engine.store);
    this.pieces = new PieceSet({ level: options.level, compareKeys: compareStrings, tail: SNAPSHOT_TAIL });
    this.writer = new SnapshotRowWriter(engine, options.withHistory);
  }

  get withHistory(): boolean {
    return this.options.withHistory;
  }

  /** True when every piece reflects the board (nothing left to render). */
  get current(): boolean {
    return this.built && this.pass === null && this.tracker.empty;
  }

  get isBuilt(): boolean {
    return this.built;
  }

  get pieceCount(): number {
    return this.pieces.size;
  }

  get groupCount(): number {
    return this.groups.size;
  }

  setHead(text: string): void {
    this.pieces.setHead(text);
  }

  member(): GzipMember {
    return this.pieces.assemble();
  }

  /**
   * Brings the pieces up to date. Work stops once past `deadline` (performance.now()
   * ms; at least one event per call) and continues on the next call, so a long build
   * or backlog can run in steps between other work; returns true when current.
   */
  refresh(deadline = Infinity): boolean {
    if (!this.built && !this.continueBuild(deadline)) return false;
    for (;;) {
      if (this.pass === null) {
        if (this.tracker.empty) return true;
        this.pass = this.startPass();
      }
      const pass = this.pass;
      while (pass.next < pass.events.length) {
        const ev = pass.events[pass.next++];
        this.classify(ev, pass.work.get(ev)!, pass);
        if (performance.now() > deadline && pass.next < pass.events.length) return false;
      }
      for (const group of pass.toDissolve) this.dissolve(group, pass.replan);
      for (const group of pass.toRender) if (this.groups.get(group.key) === group) this.renderGroup(group, pass.replan);
      this.planNew(pass.replan);
      this.pass = null;
      if (performance.now() > deadline) return this.tracker.empty;
    }
  }

  /** Work waiting for the next refresh: listed rows and events (a pass in progress counts its rest). */
  get backlog(): number {
    return this.tracker.slots + this.tracker.events + (this.pass === null ? 0 : this.pass.events.length - this.pass.next);
  }

  /** Takes what the tracker holds as one pass of per-event work. */
  private startPass(): RefreshPass {
    const work = new Map<number, EventWork>();
    const workOf = (ev: number): EventWork => {
      let found = work.get(ev);
      if (found === undefined) work.set(ev, (found = { flags: 0, slots: [] }));
      return found;
    };
    this.tracker.drain(
      (slot, ev) => workOf(ev).slots.push(slot),
      (ev, flags) => {
        workOf(ev).flags |= flags;
      },
    );
    return { work, events: [...work.keys()], next: 0, replan: [], toRender: new Set(), toDissolve: new Set() };
  }

  // ---- the initial build: every event in body order ---------------------------------

  private continueBuild(deadline: number): boolean {
    if (this.build === null) this.build = this.startBuild();
    const build = this.build;
    while (build.next < build.order.length) {
      const ev = build.order[build.next++];
      if (this.rowCount(ev) > 0 && this.plans[ev] === undefined) this.planBuilt(build, ev, build.keys.get(ev)!);
      if (performance.now() > deadline && build.next < build.order.length) return false;
    }
    this.flushGroup(build);
    this.build = null;
    this.built = true;
    return true;
  }

  private startBuild(): BuildState {
    this.tracker.drain(noop, noop); // the build reads the board as it is now
    const keys = new Map<number, string>();
    this.engine.indexes.byEvent.forEach((list, ev) => {
      if (list !== undefined && list.length > 0) keys.set(ev, eventKey(this.engine, ev));
    });
    const order = [...keys.keys()].sort((a, b) => compareStrings(keys.get(a)!, keys.get(b)!));
    return { order, keys, next: 0, group: null };
  }

  private planBuilt(build: BuildState, ev: number, key: string): void {
    const estimate = this.rowCount(ev) * this.rowEstimate();
    if (isLiveEvent(this.engine, ev) || estimate >= this.options.pieceBytes) {
      this.flushGroup(build);
      this.plans[ev] = this.standalone(ev, key);
      return;
    }
    let group = build.group;
    if (group !== null && this.groupSink.length + estimate > this.options.maxPieceBytes) {
      this.flushGroup(build);
      group = null;
    }
    if (group === null) {
      group = build.group = { key: groupKey(key), members: [] };
      this.groupSink.reset();
    } else {
      this.groupSink.byte(COMMA);
    }
    this.writeWholeEvent(this.groupSink, ev);
    const plan: EventPlan = { ev, key, slices: null, group };
    group.members.push(plan);
    this.plans[ev] = plan;
    if (this.groupSink.length >= this.options.pieceBytes) this.flushGroup(build);
  }

  private flushGroup(build: BuildState): void {
    const group = build.group;
    if (group === null) return;
    this.setPiece(group.key, this.groupSink);
    this.groups.set(group.key, group);
    build.group = null;
  }

  // ---- refreshing what changed ------------------------------------------------------

  private classify(ev: number, item: EventWork, pass: RefreshPass): void {
    const { replan, toRender, toDissolve } = pass;
    const plan = this.plans[ev];
    const rows = this.rowCount(ev);
    if (plan === undefined) {
      if (rows > 0) replan.push(ev);
      return;
    }
    if (rows === 0) return this.drop(plan, toRender);
    const key = eventKey(this.engine, ev);
    if (key !== plan.key) {
      this.drop(plan, toRender);
      replan.push(ev);
      return;
    }
    if (plan.group !== null) {
      if (isLiveEvent(this.engine, ev)) toDissolve.add(plan.group);
      else toRender.add(plan.group);
      return;
    }
    this.refreshSlices(plan, item);
  }

  private refreshSlices(plan: EventPlan, item: EventWork): void {
    if ((item.flags & EVENT_RESLICE) !== 0) return this.recut(plan);
    const dirty = new Set<number>();
    if ((item.flags & EVENT_HEAD) !== 0) dirty.add(0);
    const store = this.engine.store;
    for (const slot of item.slots) {
      if (store.state[slot] === SLOT_FREE || store.event[slot] !== plan.ev) return this.recut(plan);
      dirty.add(this.sliceOf(plan.slices!, slot));
    }
    // Highest first: removing or splitting a slice never shifts one still to render.
    const indexes = [...dirty].sort((a, b) => b - a);
    for (const index of indexes) this.renderSlice(plan, index);
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
    const sink = this.sink;
    sink.reset();
    if (index === 0) writeEventOpen(sink, this.engine, plan.ev);
    this.writeRows(sink, list.items, start, end);
    if (index === last) sink.ascii(EVENT_CLOSE);
    if (sink.length <= this.options.maxPieceBytes) this.setPiece(slices[index].key, sink);
    else {
      this.stats.slicesSplit++;
      slices.splice(index, 1, ...this.cutRows(plan, start, end, index === 0, index === last, slices[index]));
    }
  }

  /** Removes an empty slice (the event still has rows elsewhere). */
  private dropSlice(plan: EventPlan, index: number): void {
    const slices = plan.slices!;
    const last = slices.length - 1;
    this.stats.slicesDropped++;
    this.pieces.remove(slices[index].key);
    slices.splice(index, 1);
    if (index === 0) {
      this.renderSlice(plan, 0); // the new first slice takes the event's opening
    } else if (index === last) {
      // The new last slice takes the closing and the last-slice key (so later cuts sort right).
      const previous = slices[index - 1];
      this.pieces.remove(previous.key);
      previous.key = lastSliceKey(plan.key);
      this.renderSlice(plan, index - 1);
    }
  }

  private recut(plan: EventPlan): void {
    this.stats.eventsRecut++;
    const old = plan.slices;
    const list = this.engine.indexes.byEvent[plan.ev]!;
    plan.slices = this.cutRows(plan, 0, list.length, true, true, { key: lastSliceKey(plan.key), endBook: '', endId: '' });
    if (old !== null) {
      const kept = new Set(plan.slices.map((slice) => slice.key));
      for (const slice of old) if (!kept.has(slice.key)) this.pieces.remove(slice.key);
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
    const sink = this.sink;
    sink.reset();
    if (open) writeEventOpen(sink, this.engine, plan.ev);
    let first = true;
    for (let i = start; i < end; i++) {
      if (!first) sink.byte(COMMA);
      const slot = items[i];
      this.writer.write(sink, slot);
      this.rowsRendered++;
      first = false;
      if (sink.length >= this.options.pieceBytes && i < end - 1) {
        const book = store.books.get(store.book[slot]);
        const id = this.engine.idOf(slot);
        const slice: Slice = { key: sliceKey(plan.key, book, id), endBook: book, endId: id };
        this.setPiece(slice.key, sink);
        slices.push(slice);
        sink.reset();
        first = true;
      }
    }
    if (close) sink.ascii(EVENT_CLOSE);
    this.setPiece(tail.key, sink);
    slices.push(tail);
    return slices;
  }

  /** A plan for the event as its own slices (rendered and cut now). */
  private standalone(ev: number, key: string): EventPlan {
    const plan: EventPlan = { ev, key, slices: null, group: null };
    plan.slices = this.cutRows(plan, 0, this.rowCount(ev), true, true, { key: lastSliceKey(key), endBook: '', endId: '' });
    return plan;
  }

  private renderGroup(group: Group, replan: number[]): void {
    const sink = this.sink;
    sink.reset();
    for (let i = 0; i < group.members.length; i++) {
      if (i > 0) sink.byte(COMMA);
      this.writeWholeEvent(sink, group.members[i].ev);
    }
    if (sink.length > this.options.maxPieceBytes) this.dissolve(group, replan);
    else this.setPiece(group.key, sink);
  }

  /** The event leaves the body: its slices go, or it leaves its group. */
  private drop(plan: EventPlan, toRender: Set<Group>): void {
    this.plans[plan.ev] = undefined;
    if (plan.slices !== null) {
      for (const slice of plan.slices) this.pieces.remove(slice.key);
      return;
    }
    const group = plan.group!;
    group.members.splice(group.members.indexOf(plan), 1);
    if (group.members.length > 0) {
      toRender.add(group);
      return;
    }
    this.pieces.remove(group.key);
    this.groups.delete(group.key);
  }

  /** Removes the group's piece; its members are planned again as single events. */
  private dissolve(group: Group, replan: number[]): void {
    if (this.groups.get(group.key) !== group) return;
    this.stats.groupsDissolved++;
    this.pieces.remove(group.key);
    this.groups.delete(group.key);
    for (const member of group.members) {
      this.plans[member.ev] = undefined;
      replan.push(member.ev);
    }
  }

  /** Plans events that have no pieces yet, each as its own slices. */
  private planNew(replan: number[]): void {
    for (let i = 0; i < replan.length; i++) {
      const ev = replan[i];
      if (this.plans[ev] !== undefined || this.rowCount(ev) === 0) continue;
      const key = eventKey(this.engine, ev);
      const spanning = this.groupAround(key);
      if (spanning !== null) this.dissolve(spanning, replan);
      this.plans[ev] = this.standalone(ev, key);
    }
  }

  /** The group whose members span the event key (its pieces would land inside it), or null. */
  private groupAround(key: string): Group | null {
    if (this.groups.size === 0) return null;
    const keys = this.pieces.keys();
    const probe = key + '\u0001';
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < probe) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return null;
    const group = this.groups.get(keys[lo - 1]);
    if (group === undefined) return null;
    const lastMember = group.members[group.members.length - 1];
    return lastMember.key > key ? group : null;
  }

  // ---- rendering --------------------------------------------------------------------

  private writeWholeEvent(sink: ByteSink, ev: number): void {
    const list = this.engine.indexes.byEvent[ev]!;
    writeEventOpen(sink, this.engine, ev);
    this.writeRows(sink, list.items, 0, list.length);
    sink.ascii(EVENT_CLOSE);
  }

  private writeRows(sink: ByteSink, items: Int32Array, start: number, end: number): void {
    for (let i = start; i < end; i++) {
      if (i > start) sink.byte(COMMA);
      this.writer.write(sink, items[i]);
    }
    this.rowsRendered += end - start;
  }

  private setPiece(key: string, sink: ByteSink): void {
    this.pieces.set(key, sink.view());
    this.stats.piecesRendered++;
    this.stats.bytesRendered += sink.length;
  }

  private rowCount(ev: number): number {
    const list = this.engine.indexes.byEvent[ev];
    return list === undefined ? 0 : list.length;
  }

  /** Average rendered row size so far (a first guess before anything is rendered). */
  private rowEstimate(): number {
    if (this.rowsRendered < 64) return this.options.withHistory ? 1500 : 520;
    return this.stats.bytesRendered / this.rowsRendered;
  }
}

function noop(): void {}
