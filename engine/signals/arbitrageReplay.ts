// Historical arbitrage (H5) over the live market groups: the same answer as
// historicalArbitrage() in historicalReplay.ts (which regroups every quote from
// strings through evaluateAt), without building a quote object or a group key per
// row. Live rows are walked group by group through the live books' membership lists;
// rows removed since (tombstones still holding their history) join the live group of
// their key, or a group of their own. Each member contributes its price in force at
// `to` when that price was last seen at or after `from` (to the second); legs carry
// min(lastSeen, to) as updated. A row whose line changed after `to` is replayed in
// its current group (lines are not historized).

import type { OddsEngine } from '../engine.ts';
import { NO_RING } from '../historyRing.ts';
import { NO_PRICE, SIDES, SLOT_TOMBSTONE } from '../oddsStore.ts';
import { americanToDecimal } from '../model.ts';
import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage } from './arbitrage.ts';
import { entryInForce, groupInput, type HistoricalArbitrageQuery } from './historicalReplay.ts';
import { MarketGroups, NONE } from './marketGroups.ts';
import { QuoteBatch } from './quoteBatch.ts';
import type { ArbitrageRecord } from './records.ts';
import { sideCode } from './sides.ts';
import type { SourceTable } from './sourceTable.ts';

/** What the replay needs of the live books (EngineSignals provides it). */
export interface LiveGroups {
  readonly groups: MarketGroups;
  readonly sources: SourceTable;
  /** Source index of a slot's book (interning it if new). */
  sourceOfSlot(slot: number): number;
}

export class ArbitrageReplay {
  private readonly batch: QuoteBatch;
  private readonly scratch = new ArbitrageScratch();
  private readonly sideCodes = Uint8Array.from(SIDES, (side) => sideCode(side));

  constructor(readonly engine: OddsEngine, readonly live: LiveGroups) {
    this.batch = new QuoteBatch(live.sources);
  }

  at(query: HistoricalArbitrageQuery): ArbitrageRecord[] {
    const { groups } = this.live;
    const fromSecond = Math.floor(query.from / 1000);
    const extra = this.removedSince(query.to, fromSecond);
    const found: ArbitrageRecord[] = [];
    for (let g = 0; g < groups.capacity; g++) {
      if (!groups.isLive(g)) continue;
      this.batch.clear();
      for (let slot = groups.firstMember(g); slot !== NONE; slot = groups.nextMember(slot)) this.push(slot, query.to, fromSecond);
      const removed = extra.byLiveGroup.get(g);
      if (removed !== undefined) for (const slot of removed) this.push(slot, query.to, fromSecond);
      this.collect(groups, g, query.minProfit, found);
    }
    for (const [g, slots] of extra.own) {
      this.batch.clear();
      for (const slot of slots) this.push(slot, query.to, fromSecond);
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

  /** Pushes slot's price in force at `to` onto the batch if it can be a leg (usable, seen since from). */
  private push(slot: number, to: number, fromSecond: number): void {
    const s = this.engine.store;
    const rings = this.engine.rings;
    const handle = s.ring[slot];
    if (handle === NO_RING || !Number.isNaN(s.dfsMultiplier[slot])) return;
    if (rings.ls(handle, rings.length(handle) - 1) < fromSecond) return; // ls only grows along a ring
    const i = entryInForce(this.engine, slot, to);
    if (i < 0) return;
    const ls = rings.ls(handle, i);
    const pa = rings.pa(handle, i);
    if (ls < fromSecond || pa === NO_PRICE || rings.su(handle, i) === 1) return;
    const lastSeen = ls * 1000;
    this.batch.push(
      this.live.sourceOfSlot(slot),
      this.sideCodes[s.side[slot]],
      false,
      americanToDecimal(pa),
      pa,
      NaN,
      s.line[slot],
      lastSeen < to ? lastSeen : to,
      s.idOf(slot),
      s.labels.get(s.selection[slot]),
    );
  }

  /** Tombstones in force at `to`, by the live group of their key, or in groups of their own. */
  private removedSince(to: number, fromSecond: number) {
    const s = this.engine.store;
    const dead = this.engine.indexes.tombstones;
    const byLiveGroup = new Map<number, number[]>();
    const own = new Map<number, number[]>();
    const groups = new MarketGroups();
    for (let k = 0; k < dead.length; k++) {
      const slot = dead.items[k];
      if (s.state[slot] !== SLOT_TOMBSTONE || s.updated[slot] <= to || s.scope[slot] !== 0) continue;
      const handle = s.ring[slot];
      if (handle === NO_RING || this.engine.rings.ls(handle, this.engine.rings.length(handle) - 1) < fromSecond) continue;
      const row = groupInput(this.engine, slot);
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

