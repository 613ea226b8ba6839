// The live arbitrage result book: one record per market group that currently arbs,
// kept in serving order (profit desc, id asc, D5). updateGroup re-evaluates one group
// from all its quotes. priceChanged (and quoteChanged, its batch form) is the per-tick
// fast path: it keeps each group's best price per outcome and settles most ticks in
// O(1) (a quote that is not and does not become the best changes nothing); it asks
// for a full re-evaluation only when a best price got worse than the runner-up or the
// group arbs (or did), which is when legs must be rebuilt. The runner-up price per
// outcome is kept as an upper bound of the true second-best price (raised by every
// non-best quote seen, never lowered between full reads), so "still at least as good
// as the runner-up" is a safe test: the best stays the best without a re-read.

import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage, keepLegTimes, sameArbitrage } from './arbitrage.ts';
import { growFloat64, growUint8 } from './grow.ts';
import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import { RankedSet, type RankCursor, type RankedPage } from './rankedSet.ts';
import type { ArbitrageRecord, ArbitrageType } from './records.ts';
import { OUTCOME_COUNT, outcomeIndex } from './sides.ts';

/** Held locally: under tsx an imported binding is a getter call on the tick path. */
const COUNT_OF_OUTCOMES = OUTCOME_COUNT;
const LEGS = 3; // per-group stride of the best-price tables
const NO_BEST = -1;
const STRIDE = 9;
const PRICE = 3;
const RUNNER_UP = 6;
/** The best quote came from a batch without refs: the fast path cannot track it. */
const UNTRACKED = -2;

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
  private legUpdated = new Float64Array(64 * LEGS);
  /**
   * Per group, one stride of 9 (the tick path touches one group's cache lines only):
   * per outcome k its best usable quote's ref [g * 9 + k] and decimal price [+ 3], and
   * an upper bound of the second-best usable price [+ 6] (0: none). Only
   * the price matters for whether a group arbs; the ref tells when the best got worse.
   * On a tie the incumbent stays (any holder of the best price gives the same sum);
   * a tie in a listed group goes to the full path, which applies the tie rule to legs.
   */
  private table = emptyTable(0, 64);

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
    this.keepBest(g, batch, s);
    const id = this.groups.id[g];
    if (found) {
      if (this.listed[g] === 1) {
        const current = this.set.get(id)!;
        if (sameArbitrage(current, batch, s, this.legUpdated, g * LEGS)) return;
      }
      const record = arbitrageRecord(this.groups, g, batch, s);
      this.set.upsert(id, record.profit, record, record.league, record.eventId, record.type);
      this.listed[g] = 1;
      keepLegTimes(batch, s, this.legUpdated, g * LEGS);
    } else if (this.listed[g] === 1) {
      this.set.delete(id);
      this.listed[g] = 0;
    }
  }

  /**
   * One quote of group g changed (batch[i], same group and side as before): applies it
   * in O(1) when that settles it, else returns false and the caller re-evaluates the
   * group with updateGroup.
   */
  quoteChanged(g: number, batch: QuoteBatch, i: number): boolean {
    if (batch.dfs[i] === 1) return true;
    const k = outcomeIndex(this.groups.outcomes[g], batch.side[i]);
    if (k < 0) return true;
    return this.priceChanged(g, k, batch.ref[i], batch.priceDecimal[i], batch.suspended[i] === 1);
  }

  /** quoteChanged for a non-DFS quote on outcome k of group g, given as values. */
  priceChanged(g: number, k: number, ref: number, price: number, suspended: boolean): boolean {
    if (ref < 0 || g >= this.listed.length) return false;
    const at = g * STRIDE + k;
    const best = this.table[at];
    if (best === UNTRACKED) return false;
    const usable = !suspended && price > 1;
    if (best === ref) {
      if (!usable) return false;
      if (price < this.table[at + PRICE]) {
        // the best got worse: it stays the best only while strictly above every other
        // quote (the runner-up bound); an unlisted group then only moves away from an arb
        if (this.listed[g] === 1 || !(price > this.table[at + RUNNER_UP])) return false;
        this.table[at + PRICE] = price;
        return true;
      }
      this.table[at + PRICE] = price;
    } else {
      if (!usable) return true;
      if (best !== NO_BEST && !(price > this.table[at + PRICE])) {
        if (price > this.table[at + RUNNER_UP]) this.table[at + RUNNER_UP] = price;
        // a tie can hand a listed record's leg to another book (the tie rule): rebuild
        return !(price === this.table[at + PRICE] && this.listed[g] === 1);
      }
      if (best !== NO_BEST && this.table[at + PRICE] > this.table[at + RUNNER_UP]) this.table[at + RUNNER_UP] = this.table[at + PRICE];
      this.table[at] = ref;
      this.table[at + PRICE] = price;
    }
    // A best price improved. Only improvements get here, so a listed group (sum < 1)
    // lands below 1 again and goes to the full path, which rebuilds its legs.
    let sum = 0;
    for (let j = g * STRIDE, end = j + COUNT_OF_OUTCOMES[this.groups.outcomes[g]]; j < end; j++) {
      if (this.table[j] === UNTRACKED) return false;
      if (this.table[j] === NO_BEST) return true;
      sum += 1 / this.table[j + PRICE];
    }
    return !(sum < 1);
  }

  /** Whether outcome k of group g can be re-ranked by the caller (setBest): the group is not listed and its best is tracked. */
  canRerank(g: number, k: number): boolean {
    return g < this.listed.length && this.listed[g] === 0 && this.table[g * STRIDE + k] !== UNTRACKED;
  }

  /**
   * The caller re-ranked outcome k of an unlisted group (canRerank): its best ref (-1:
   * none) and price and the runner-up price. True when that settles the tick (the
   * group does not arb); false when it now arbs and needs the full path for its legs.
   */
  setBest(g: number, k: number, ref: number, price: number, runnerUp: number): boolean {
    const at = g * STRIDE + k;
    this.table[at] = ref < 0 ? NO_BEST : ref;
    this.table[at + PRICE] = ref < 0 ? 0 : price;
    this.table[at + RUNNER_UP] = runnerUp;
    let sum = 0;
    for (let j = g * STRIDE, end = j + COUNT_OF_OUTCOMES[this.groups.outcomes[g]]; j < end; j++) {
      if (this.table[j] === UNTRACKED) return false;
      if (this.table[j] === NO_BEST) return true;
      sum += 1 / this.table[j + PRICE];
    }
    return !(sum < 1);
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

  private keepBest(g: number, batch: QuoteBatch, s: ArbitrageScratch): void {
    const n = OUTCOME_COUNT[s.outcomes];
    for (let k = 0; k < LEGS; k++) {
      const at = g * STRIDE + k;
      const b = k < n ? s.best[k] : -1;
      this.table[at] = b < 0 ? NO_BEST : batch.ref[b] < 0 ? UNTRACKED : batch.ref[b];
      this.table[at + PRICE] = b < 0 ? 0 : batch.priceDecimal[b];
      this.table[at + RUNNER_UP] = 0;
    }
    // the runner-up per outcome: the best usable price among the other quotes
    for (let i = 0; i < batch.length; i++) {
      if (batch.dfs[i] === 1 || batch.suspended[i] === 1) continue;
      const k = outcomeIndex(s.outcomes, batch.side[i]);
      if (k < 0 || i === s.best[k]) continue;
      const at = g * STRIDE + k;
      if (batch.priceDecimal[i] > this.table[at + RUNNER_UP]) this.table[at + RUNNER_UP] = batch.priceDecimal[i];
    }
  }

  private grow(g: number): void {
    let capacity = this.listed.length;
    while (capacity <= g) capacity *= 2;
    this.listed = growUint8(this.listed, capacity);
    this.legUpdated = growFloat64(this.legUpdated, capacity * LEGS);
    const table = emptyTable(this.table.length / STRIDE, capacity);
    table.set(this.table);
    this.table = table;
  }
}

/** A best-price table for capacity groups, groups from `from` on holding no best. */
function emptyTable(from: number, capacity: number): Float64Array<ArrayBuffer> {
  const table = new Float64Array(capacity * STRIDE);
  for (let g = from; g < capacity; g++) table.fill(NO_BEST, g * STRIDE, g * STRIDE + LEGS);
  return table;
}
