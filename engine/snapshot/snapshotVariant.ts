// One variant of the snapshot body (with or without priceHistory) kept as compressed
// pieces in a PieceSet, re-rendered where the board changed and nowhere else.
// Events too big or too live to share a piece get slices of their own
// (eventSlices.ts). Small quiet events (scheduled games, futures anchors) share
// pieces as groups of whole events, formed only by the initial build, which walks the
// events in body order; a group is re-rendered whole when a member changes, and
// dissolved into single events when a member turns live, outgrows maxPieceBytes, or
// another event would have to sit inside it. Work runs in passes over the events the
// tracker lists; a pass (like the build) can stop at a deadline and resume.

import type { OddsEngine } from '../engine.ts';
import { compareStrings } from '../rowOrder.ts';
import { DirtyTracker } from './dirtyTracker.ts';
import { EventSlices, type EventPlan, type Group } from './eventSlices.ts';
import type { GzipMember } from './gzipMember.ts';
import { COMMA, PieceRenderer, type VariantStats } from './pieceRenderer.ts';
import { eventKey, groupKey, isLiveEvent } from './pieceKeys.ts';
import { ByteSink } from './byteSink.ts';

export type { VariantStats };

export interface VariantOptions {
  withHistory: boolean;
  /** Raw bytes at which a slice is cut and a group is closed. */
  pieceBytes: number;
  /** A slice or group re-rendered past this is re-cut (slices) or dissolved (groups). */
  maxPieceBytes: number;
  /** zlib level of the pieces (deflatePiece.ts explains level 1). */
  level?: number;
}

interface EventWork {
  flags: number;
  slots: number[];
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
  private readonly renderer: PieceRenderer;
  private readonly slices: EventSlices;
  /** The group being filled by the initial build. */
  private readonly groupSink = new ByteSink();
  private readonly plans: (EventPlan | undefined)[] = [];
  private readonly groups = new Map<string, Group>();
  private build: BuildState | null = null;
  /** A refresh stopped at its deadline, resumed by the next call. */
  private pass: RefreshPass | null = null;
  private built = false;

  constructor(
    private readonly engine: OddsEngine,
    private readonly options: VariantOptions,
  ) {
    this.tracker = new DirtyTracker(engine.store);
    this.renderer = new PieceRenderer(engine, options.withHistory, options.level);
    this.slices = new EventSlices(engine, this.renderer, options.pieceBytes, options.maxPieceBytes);
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
    const estimate = this.rowCount(ev) * this.renderer.rowEstimate();
    if (isLiveEvent(this.engine, ev) || estimate >= this.options.pieceBytes) {
      this.flushGroup(build);
      this.plans[ev] = this.slices.standalone(ev, key);
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
    this.renderer.writeWholeEvent(this.groupSink, ev);
    const plan: EventPlan = { ev, key, slices: null, group };
    group.members.push(plan);
    this.plans[ev] = plan;
    if (this.groupSink.length >= this.options.pieceBytes) this.flushGroup(build);
  }

  private flushGroup(build: BuildState): void {
    const group = build.group;
    if (group === null) return;
    this.renderer.setPiece(group.key, this.groupSink);
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
    this.slices.refresh(plan, item.flags, item.slots);
  }

  private renderGroup(group: Group, replan: number[]): void {
    const sink = this.renderer.sink;
    sink.reset();
    for (let i = 0; i < group.members.length; i++) {
      if (i > 0) sink.byte(COMMA);
      this.renderer.writeWholeEvent(sink, group.members[i].ev);
    }
    if (sink.length > this.options.maxPieceBytes) this.dissolve(group, replan);
    else this.renderer.setPiece(group.key, sink);
  }

  /** The event leaves the body: its slices go, or it leaves its group. */
  private drop(plan: EventPlan, toRender: Set<Group>): void {
    this.plans[plan.ev] = undefined;
    if (plan.slices !== null) return this.slices.remove(plan);
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
      this.plans[ev] = this.slices.standalone(ev, key);
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

  private rowCount(ev: number): number {
    return this.renderer.rowCount(ev);
  }
}

function noop(): void {}
