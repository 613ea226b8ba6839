// The live arbitrage result book: one record per market group that currently arbs,
// kept in serving order (profit desc, id asc, D5). updateGroup re-evaluates one group
// from its quotes; nothing else is ever recomputed.

import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage, keepLegTimes, sameArbitrage } from './arbitrage.ts';
import { growFloat64, growUint8 } from './grow.ts';
import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import { RankedSet, type RankCursor, type RankedPage } from './rankedSet.ts';
import type { ArbitrageRecord, ArbitrageType } from './records.ts';

export interface ArbitrageQuery {
  /** null: both types (middles never exist here). */
  types: readonly ArbitrageType[] | null;
  leagues: readonly string[] | null;
  eventIds: readonly string[] | null;
  /** Fractional margin; default 0.001 on the route. */
  minProfit: number;
}

export class ArbitrageBook {
  readonly set = new RankedSet<ArbitrageRecord>();
  private readonly scratch = new ArbitrageScratch();
  /** 1 while group g has a record in the set. */
  private listed = new Uint8Array(64);
  /** Leg update times of the listed record, [g * 3 + leg]: tells an unchanged arb from a refreshed one. */
  private legUpdated = new Float64Array(64 * 3);

  constructor(readonly groups: MarketGroups) {}

  get version(): number {
    return this.set.version;
  }

  get size(): number {
    return this.set.size;
  }

  /** Re-evaluates group g from all of its current quotes (an empty batch clears it). */
  updateGroup(g: number, batch: QuoteBatch): void {
    if (g >= this.listed.length) this.grow(g);
    const s = this.scratch;
    const found = evaluateArbitrage(batch, this.groups.outcomes[g], s);
    const id = this.groups.id[g];
    if (found) {
      if (this.listed[g] === 1) {
        const current = this.set.get(id)!;
        if (sameArbitrage(current, batch, s, this.legUpdated, g * 3)) return;
      }
      const record = arbitrageRecord(this.groups, g, batch, s);
      this.set.upsert(id, record.profit, record, record.league, record.eventId, record.type);
      this.listed[g] = 1;
      keepLegTimes(batch, s, this.legUpdated, g * 3);
    } else if (this.listed[g] === 1) {
      this.set.delete(id);
      this.listed[g] = 0;
    }
  }

  /** Removes group g's record, if any (its next update re-lists it from scratch). */
  drop(g: number): void {
    if (g < this.listed.length && this.listed[g] === 1) {
      this.set.delete(this.groups.id[g]);
      this.listed[g] = 0;
    }
  }

  page(query: ArbitrageQuery, after: RankCursor | null, limit: number): RankedPage<ArbitrageRecord> {
    return this.set.page(
      { leagues: query.leagues, eventIds: query.eventIds, tags: query.types, minScore: query.minProfit },
      after,
      limit,
    );
  }

  /** Every record in serving order (tests, brute-force comparison). */
  all(): ArbitrageRecord[] {
    const out: ArbitrageRecord[] = [];
    for (let rank = 0; rank < this.set.size; rank++) out.push(this.set.valueAt(rank));
    return out;
  }

  private grow(g: number): void {
    let capacity = this.listed.length;
    while (capacity <= g) capacity *= 2;
    this.listed = growUint8(this.listed, capacity);
    this.legUpdated = growFloat64(this.legUpdated, capacity * 3);
  }
}
