// Historical arbitrage over the live market groups: the same answer as
// the tests' reference (fixtures/harness/historicalArbitrage.ts, which regroups every quote
// from strings), without building a quote object or a group key per
// row. First every slot's leg at `to` is found in slot order (findLegs: its price in
// force then, when last seen at or after `from`, to the second; legs carry
// min(lastSeen, to) as updated). Then live groups are walked through the live books'
// membership lists; rows removed since (tombstones still holding their history) join
// the live group of their key, or a group of their own. A group is built into a quote
// batch (ids, labels) only when its best prices alone make an arb (couldArb). A row
// whose line changed after `to` is replayed in its current group (lines are not
// historized).

import type { OddsEngine } from '../engine.ts';
import { HISTORY_CAPACITY, NO_RING } from '../historyRing.ts';
import { pointAt, type PricePoint } from './tickHistory.ts';
import { NO_PRICE, SIDES, SLOT_LIVE, SLOT_TOMBSTONE } from '../oddsStore.ts';
import { americanToDecimal } from '../model.ts';
import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage } from './arbitrage.ts';
import { groupInputOf } from './groupInput.ts';
import type { HistoricalArbitrageQuery } from './historicalReplay.ts';
import { MarketGroups, NONE } from './marketGroups.ts';
import { QuoteBatch } from './quoteBatch.ts';
import type { ArbitrageRecord } from './records.ts';
import { OUTCOME_COUNT, outcomeIndex, sideCode } from './sides.ts';
import type { SourceTable } from './sourceTable.ts';

/** What the replay needs of the live books (EngineSignals provides it). */
export interface LiveGroups {
  readonly groups: MarketGroups;
  readonly sources: SourceTable;
  /** Source index of a slot's book (interning it if new). */
  sourceOfSlot(slot: number): number;
}

/** True when the ring of `slot` may have dropped the entry in force at `to`: it is full and its oldest entry was first seen after `to`. */
export function ringShortOf(engine: OddsEngine, slot: number, to: number): boolean {
  const handle = engine.store.ring[slot];
  if (handle === NO_RING) return false;
  const rings = engine.rings;
  return rings.length(handle) >= HISTORY_CAPACITY && rings.fs(handle, 0) > Math.floor(to / 1000);
}

/** Ids of the rows a replay at `to` would read (live, or removed after `to`; not DFS) whose ring does not reach back to it. */
export function idsShortOf(engine: OddsEngine, to: number): string[] {
  const s = engine.store;
  const ids: string[] = [];
  for (let slot = 0; slot < s.size; slot++) {
    const state = s.state[slot];
    if (!(state === SLOT_LIVE || (state === SLOT_TOMBSTONE && s.updated[slot] > to))) continue;
    if (!Number.isNaN(s.dfsMultiplier[slot]) || !ringShortOf(engine, slot, to)) continue;
    ids.push(s.idOf(slot));
  }
  return ids;
}

export class ArbitrageReplay {
  private readonly batch: QuoteBatch;
  private readonly scratch = new ArbitrageScratch();
  private readonly sideCodes = Uint8Array.from(SIDES, (side) => sideCode(side));
  /** Per slot, its leg at the replayed instant (see findLegs); kept between calls. */
  private legPrice = new Int32Array(0);
  private legSeen = new Float64Array(0);
  private readonly bestScratch = new Float64Array(3);

  constructor(readonly engine: OddsEngine, readonly live: LiveGroups) {
    this.batch = new QuoteBatch(live.sources);
  }

  /**
   * archived: price paths from the tick archive (tickHistory.ts pricePaths, by odds id)
   * of rows whose ring does not reach back to `to` (ringsShortOf): their leg comes from
   * the archived point in force at `to` instead.
   */
  at(query: HistoricalArbitrageQuery, archived?: ReadonlyMap<string, PricePoint[]>): ArbitrageRecord[] {
    const { groups } = this.live;
    const fromSecond = Math.floor(query.from / 1000);
    this.findLegs(query.to, fromSecond);
    if (archived !== undefined) this.archivedLegs(archived, query.to, fromSecond);
    const extra = this.removedWithLegs();
    const found: ArbitrageRecord[] = [];
    for (let g = 0; g < groups.capacity; g++) {
      if (!groups.isLive(g)) continue;
      const removed = extra.byLiveGroup.get(g);
      if (!this.couldArb(groups, g, removed, query.minProfit)) continue;
      this.batch.clear();
      for (let slot = groups.firstMember(g); slot !== NONE; slot = groups.nextMember(slot)) this.push(slot);
      if (removed !== undefined) for (const slot of removed) this.push(slot);
      this.collect(groups, g, query.minProfit, found);
    }
    for (const [g, slots] of extra.own) {
      this.batch.clear();
      for (const slot of slots) this.push(slot);
      this.collect(extra.groups, g, query.minProfit, found);
    }
    found.sort((a, b) => b.profit - a.profit || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return found.length > query.limit ? found.slice(0, query.limit) : found;
  }

  private collect(groups: MarketGroups, g: number, minProfit: number, found: ArbitrageRecord[]): void {
    if (this.batch.length === 0) return;
    if (!evaluateArbitrage(this.batch, groups.outcomes[g], this.scratch) || this.scratch.profit < minProfit) return;
    found.push(arbitrageRecord(groups, g, this.batch, this.scratch));
  }

  /**
   * For every slot, in slot order, the leg it can be at `to`: its price in force then
   * (legPrice, American; 0 when it cannot be a leg: a DFS row, unpriced, suspended,
   * removed by then, or not seen since from) and when that price was last seen
   * (legSeen, ms, at most to). Slot order walks the columns and the history slabs
   * (allocated in load order) nearly sequentially; walking group by group instead
   * jumps across both for every member, which cost ~100 ns a row on the large board.
   */
  private findLegs(to: number, fromSecond: number): void {
    const s = this.engine.store;
    const rings = this.engine.rings;
    if (this.legPrice.length < s.size) {
      this.legPrice = new Int32Array(s.capacity);
      this.legSeen = new Float64Array(s.capacity);
    }
    const legPrice = this.legPrice;
    const legSeen = this.legSeen;
    const toSecond = Math.floor(to / 1000);
    for (let slot = 0; slot < s.size; slot++) {
      legPrice[slot] = NO_PRICE;
      const state = s.state[slot];
      // live, or removed after to
      if (!(state === SLOT_LIVE || (state === SLOT_TOMBSTONE && s.updated[slot] > to))) continue;
      if (!Number.isNaN(s.dfsMultiplier[slot])) continue;
      const handle = s.ring[slot];
      const i = rings.inForceSince(handle, toSecond, fromSecond);
      if (i < 0 || rings.su(handle, i) === 1) continue;
      const ls = rings.ls(handle, i);
      legPrice[slot] = rings.pa(handle, i);
      const lastSeen = ls * 1000;
      legSeen[slot] = lastSeen < to ? lastSeen : to;
    }
  }

  /**
   * The legs of rows whose ring does not reach back to `to`, from their archived price
   * paths: the point in force at `to` (the last change at or before it) is a leg when it
   * is a price, not suspended, not a removal, and was seen (its change's time) since the
   * window opened; seen at most `to`, as a ring leg.
   */
  private archivedLegs(archived: ReadonlyMap<string, PricePoint[]>, to: number, fromSecond: number): void {
    const s = this.engine.store;
    for (const [id, path] of archived) {
      const slot = this.engine.slotOf(id);
      if (slot < 0 || !ringShortOf(this.engine, slot, to)) continue;
      const state = s.state[slot];
      if (!(state === SLOT_LIVE || (state === SLOT_TOMBSTONE && s.updated[slot] > to))) continue;
      if (!Number.isNaN(s.dfsMultiplier[slot])) continue;
      this.legPrice[slot] = NO_PRICE;
      const point = pointAt(path, to);
      if (point === null || point.removed || point.suspended || point.priceAmerican === null || Math.floor(point.time / 1000) < fromSecond) continue;
      this.legPrice[slot] = point.priceAmerican;
      this.legSeen[slot] = point.time < to ? point.time : to;
    }
  }

  /**
   * Whether group g (with the removed rows that join it) can hold an arb of at least
   * minProfit from its legs' prices alone: the same best prices, sum and profit that
   * evaluateArbitrage computes, without building a batch (ids and labels are strings).
   * Most groups fail here.
   */
  private couldArb(groups: MarketGroups, g: number, removed: number[] | undefined, minProfit: number): boolean {
    const outcomes = groups.outcomes[g];
    const n = OUTCOME_COUNT[outcomes];
    if (n === 0) return false;
    const best = this.bestScratch;
    best[0] = best[1] = best[2] = 0;
    for (let slot = groups.firstMember(g); slot !== NONE; slot = groups.nextMember(slot)) this.offer(outcomes, slot, best);
    if (removed !== undefined) for (const slot of removed) this.offer(outcomes, slot, best);
    let sum = 0;
    for (let k = 0; k < n; k++) {
      if (best[k] === 0) return false;
      sum += 1 / best[k];
    }
    return sum < 1 && !(1 / sum - 1 < minProfit);
  }

  private offer(outcomes: number, slot: number, best: Float64Array): void {
    const pa = this.legPrice[slot];
    if (pa === NO_PRICE) return;
    const k = outcomeIndex(outcomes, this.sideCodes[this.engine.store.side[slot]]);
    if (k < 0) return;
    const d = americanToDecimal(pa);
    if (d > 1 && d > best[k]) best[k] = d;
  }

  /** Pushes slot's leg at `to` (findLegs) onto the batch, if it has one. */
  private push(slot: number): void {
    const pa = this.legPrice[slot];
    if (pa === NO_PRICE) return;
    const s = this.engine.store;
    this.batch.push(
      this.live.sourceOfSlot(slot),
      this.sideCodes[s.side[slot]],
      false,
      americanToDecimal(pa),
      pa,
      NaN,
      s.line[slot],
      this.legSeen[slot],
      s.idOf(slot),
      s.labels.get(s.selection[slot]),
    );
  }

  /**
   * Tombstones that have a leg at the replayed instant (findLegs: removed after it,
   * seen since the window opened), by the live group of their key, or in groups of
   * their own.
   */
  private removedWithLegs() {
    const s = this.engine.store;
    const dead = this.engine.indexes.tombstones;
    const byLiveGroup = new Map<number, number[]>();
    const own = new Map<number, number[]>();
    const groups = new MarketGroups();
    for (let k = 0; k < dead.length; k++) {
      const slot = dead.items[k];
      if (s.state[slot] !== SLOT_TOMBSTONE || this.legPrice[slot] === NO_PRICE || s.scope[slot] !== 0) continue;
      const row = groupInputOf(this.engine.store, slot);
      const temp = groups.groupFor(row);
      if (temp < 0) continue;
      const g = this.live.groups.indexOf(groups.id[temp]);
      const into = g >= 0 ? byLiveGroup : own;
      const key = g >= 0 ? g : temp;
      let list = into.get(key);
      if (list === undefined) into.set(key, (list = []));
      list.push(slot);
    }
    return { byLiveGroup, own, groups };
  }
}

