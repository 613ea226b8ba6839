// The live arbitrage result book: one record per market group that currently arbs,
// kept in serving order (profit desc, id asc). updateGroup re-evaluates one group
// from all its quotes. priceChanged (and quoteChanged, its batch form) is the per-tick
// fast path: it keeps each group's best price per outcome and settles most ticks in
// O(1) (a quote that is not and does not become the best changes nothing). The
// runner-up price per outcome is kept as an upper bound of the true second-best price
// (raised by every non-best quote seen, never lowered between full reads), so "still
// strictly above the runner-up" is a safe test: the best stays the best. A best that
// falls below it leaves the bound in its place (loosen: an UNSURE best) until a tick
// could make the group arb at the bounds; then the caller re-ranks the outcome from
// prices. In a group that arbs, a best leg that stays the best re-prices the record
// (legRequoted); the full re-evaluation is left for changes of legs.

import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage, keepLegTimes, requotedRecord, sameArbitrage } from './arbitrage.ts';
import { grown } from '../columns.ts';
import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import { RankedSet, type RankCursor, type RankedPage } from './rankedSet.ts';
import type { ArbitrageRecord, ArbitrageType } from './records.ts';
import { BestPrices, NO_BEST as NO_BEST_REF, UNSURE as UNSURE_REF, UNTRACKED as UNTRACKED_REF } from './bestPrices.ts';
import { OUTCOME_COUNT, outcomeIndex } from './sides.ts';

/** Held locally: under tsx an imported binding is a getter call on the tick path. */
const COUNT_OF_OUTCOMES = OUTCOME_COUNT;
const LEGS = 3; // outcomes per group at most
const NONE = NO_BEST_REF;
const UNFOLLOWED = UNTRACKED_REF;
const UNKNOWN = UNSURE_REF;

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
  /** Leg update times of the listed record, [g * 3 + leg]: tells an unchanged arb from a refreshed one. */
  private legUpdated = new Float64Array(64 * LEGS);
  /**
   * The ref (engine slot) of each leg of the listed record, [g * 3 + leg], as the full
   * read that found it saw them (-1: unknown): tells legRequoted that a re-quoted best is
   * the record's leg by number, where comparing odds ids needs the row's id built.
   */
  private legRef = new Int32Array(64 * LEGS).fill(-1);
  /**
   * Per group, its best usable quote per outcome (ref and price), an upper bound of the
   * second-best usable price, and whether it is listed, in one record (BestPrices).
   * Only the prices matter for whether a group arbs; the ref tells when the best got
   * worse. On a tie the incumbent stays (any holder of the best price gives the same
   * sum); a tie in a listed group goes to the full path, which applies the tie rule to legs.
   */
  private readonly best = new BestPrices();

  constructor(readonly groups: MarketGroups) {}

  get version(): number {
    return this.set.version;
  }

  get size(): number {
    return this.set.size;
  }

  /** Re-evaluates group g from all of its current quotes (an empty batch clears it). */
  updateGroup(g: number, batch: QuoteBatch): void {
    this.ensure(g);
    const s = this.scratch;
    const found = evaluateArbitrage(batch, this.groups.outcomes[g], s);
    this.keepBest(g, batch, s);
    const id = this.groups.id[g];
    const listed = this.best.isListed(g);
    if (found) {
      // the legs' refs, also when the record stays: a row that came back in another slot keeps its id
      const legs = COUNT_OF_OUTCOMES[s.outcomes];
      for (let k = 0; k < LEGS; k++) this.legRef[g * LEGS + k] = k < legs ? batch.ref[s.best[k]] : -1;
      if (listed) {
        const current = this.set.get(id)!;
        if (sameArbitrage(current, batch, s, this.legUpdated, g * LEGS)) return;
      }
      const record = arbitrageRecord(this.groups, g, batch, s);
      this.set.upsert(id, record.profit, record, record.league, record.eventId, record.type);
      this.best.setListed(g, true);
      keepLegTimes(batch, s, this.legUpdated, g * LEGS);
    } else if (listed) {
      this.set.delete(id);
      this.best.setListed(g, false);
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

  /** Reads what priceChanged(g, k, ...) will read (SignalBooks.warm: outcome k's chunk); returns a value only so the read is kept. */
  warm(g: number, k: number): number {
    return g < this.best.capacity ? this.best.price(g, k) : 0;
  }

  /** quoteChanged for a non-DFS quote on outcome k of group g, given as values. */
  priceChanged(g: number, k: number, ref: number, price: number, suspended: boolean): boolean {
    const b = this.best;
    if (ref < 0 || g >= b.capacity) return false;
    const best = b.ref(g, k);
    if (best === UNFOLLOWED) return false;
    const usable = !suspended && price > 1;
    // the listed flag sits outside outcome k's chunk: read only where it matters
    if (best === ref) {
      if (!usable) return false;
      if (price < b.price(g, k)) {
        // the best got worse: it stays the best only while strictly above every other
        // quote (the runner-up bound); an unlisted group then only moves away from an arb
        if (!(price > b.runnerUp(g, k)) || b.isListed(g)) return false;
        b.setPrice(g, k, price);
        return true;
      }
      b.setPrice(g, k, price);
    } else {
      if (!usable) return true;
      const bestPrice = b.price(g, k);
      if (best !== NONE && !(price > bestPrice)) {
        b.raiseRunnerUp(g, k, price);
        // a tie can hand a listed record's leg to another book (the tie rule): rebuild
        return !(price === bestPrice && b.isListed(g));
      }
      if (best !== NONE) b.raiseRunnerUp(g, k, bestPrice);
      b.setRef(g, k, ref);
      b.setPrice(g, k, price);
    }
    // A best price improved. Only improvements get here, so a listed group (sum < 1)
    // lands below 1 again and goes to the full path, which rebuilds its legs.
    return this.settlesWithoutArb(g);
  }

  /**
   * After priceChanged refused a tick: whether it was on the best leg k of a listed group
   * and that quote stays the unique best (usable, and not worse, or still strictly above
   * the runner-up bound). Then the legs stay; only the record's prices change, and
   * legRequoted rebuilds it without a full read of the group.
   */
  legStaysBest(g: number, k: number, ref: number, price: number, suspended: boolean): boolean {
    const b = this.best;
    if (ref < 0 || g >= b.capacity) return false;
    return b.isListed(g) && b.ref(g, k) === ref && !suspended && price > 1 && (price >= b.price(g, k) || price > b.runnerUp(g, k));
  }

  /** Leg k of listed group g was re-quoted by batch[i] and stays the best (legStaysBest): re-prices or drops the record. */
  legRequoted(g: number, k: number, batch: QuoteBatch, i: number): boolean {
    // the record's leg must be this very quote (a quote that just took the best over has
    // no leg yet); the refs the full read kept say so without the quote's odds id
    const ref = batch.ref[i];
    if (ref < 0 || this.legRef[g * LEGS + k] !== ref) return false;
    const id = this.groups.id[g];
    const record = this.set.get(id);
    if (record === undefined) return false;
    const price = batch.priceDecimal[i];
    const updated = batch.updated[i];
    this.best.setPrice(g, k, price);
    // the sum in leg order and the latest leg time, as evaluateArbitrage computes them
    let sum = 0;
    let latest = 0;
    for (let j = 0; j < record.legs.length; j++) {
      sum += 1 / (j === k ? price : record.legs[j].priceDecimal);
      const time = j === k ? updated : this.legUpdated[g * LEGS + j];
      if (time > latest) latest = time;
    }
    if (!(sum < 1)) {
      this.set.delete(id);
      this.best.setListed(g, false);
      return true;
    }
    if (record.legs[k].priceDecimal === price && this.legUpdated[g * LEGS + k] === updated) return true;
    const next = requotedRecord(record, k, batch, i, sum, latest);
    this.set.upsert(id, next.profit, next, next.league, next.eventId, next.type);
    this.legUpdated[g * LEGS + k] = updated;
    return true;
  }

  /**
   * After priceChanged refused a tick that made outcome k's best quote (ref) worse than
   * the runner-up bound, or unusable, in an unlisted group: rather than re-ranking the
   * outcome now, keeps the runner-up bound as an upper bound of its best price (the
   * best quote itself unknown: UNSURE). True when the group cannot arb even at those
   * bounds, which settles the tick (most groups sit well clear of an arb); false when
   * the caller must resolve the unsure outcomes exactly.
   */
  loosen(g: number, k: number, ref: number, price: number, suspended: boolean): boolean {
    const b = this.best;
    if (ref < 0 || g >= b.capacity || b.isListed(g)) return false;
    if (b.ref(g, k) !== ref || (!suspended && price > 1 && !(price < b.price(g, k)))) return false;
    const bound = b.runnerUp(g, k);
    // a runner-up bound of 0: no other usable quote was seen since the last full read
    b.setRef(g, k, bound > 0 ? UNKNOWN : NONE);
    b.setPrice(g, k, bound);
    return this.settlesWithoutArb(g);
  }

  /** Whether outcome k of group g holds only an upper bound of its best price (loosen). */
  isUnsure(g: number, k: number): boolean {
    return this.best.ref(g, k) === UNKNOWN;
  }

  outcomeCount(g: number): number {
    return COUNT_OF_OUTCOMES[this.groups.outcomes[g]];
  }

  /** Whether outcome k of group g can be re-ranked by the caller (setBest): the group is not listed and its best is tracked. */
  canRerank(g: number, k: number): boolean {
    return g < this.best.capacity && !this.best.isListed(g) && this.best.ref(g, k) !== UNFOLLOWED;
  }

  /**
   * The caller re-ranked outcome k of an unlisted group (canRerank): its best ref (-1:
   * none) and price and the runner-up price, all exact.
   */
  setBest(g: number, k: number, ref: number, price: number, runnerUp: number): void {
    this.best.setRef(g, k, ref < 0 ? NONE : ref);
    this.best.setPrice(g, k, ref < 0 ? 0 : price);
    this.best.setRunnerUp(g, k, runnerUp);
  }

  /**
   * True when group g's best prices (or their upper bounds, for unsure outcomes) do not
   * arb, or an outcome has none; false when they do or cannot be followed.
   */
  settlesWithoutArb(g: number): boolean {
    const b = this.best;
    let sum = 0;
    for (let k = 0, n = COUNT_OF_OUTCOMES[this.groups.outcomes[g]]; k < n; k++) {
      const ref = b.ref(g, k);
      if (ref === UNFOLLOWED) return false;
      if (ref === NONE) return true;
      sum += 1 / b.price(g, k);
    }
    return !(sum < 1);
  }

  /** Removes group g's record, if any (its next update re-lists it from scratch). */
  drop(g: number): void {
    if (g < this.best.capacity && this.best.isListed(g)) {
      this.set.delete(this.groups.id[g]);
      this.best.setListed(g, false);
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
    const best = this.best;
    const n = OUTCOME_COUNT[s.outcomes];
    for (let k = 0; k < LEGS; k++) {
      const b = k < n ? s.best[k] : -1;
      best.setRef(g, k, b < 0 ? NONE : batch.ref[b] < 0 ? UNFOLLOWED : batch.ref[b]);
      best.setPrice(g, k, b < 0 ? 0 : batch.priceDecimal[b]);
      best.setRunnerUp(g, k, 0);
    }
    // the runner-up per outcome: the best usable price among the other quotes
    for (let i = 0; i < batch.length; i++) {
      if (batch.dfs[i] === 1 || batch.suspended[i] === 1) continue;
      const k = outcomeIndex(s.outcomes, batch.side[i]);
      if (k < 0 || i === s.best[k]) continue;
      best.raiseRunnerUp(g, k, batch.priceDecimal[i]);
    }
  }

  private ensure(g: number): void {
    if (g < this.best.capacity) return;
    this.best.ensure(g);
    this.legUpdated = grown(this.legUpdated, this.best.capacity * LEGS, 0, 'exact');
    this.legRef = grown(this.legRef, this.best.capacity * LEGS, -1, 'exact');
  }
}
