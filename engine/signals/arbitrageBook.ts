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
//
// Legs are on distinct books (arbitrage.ts), so the per-outcome bests kept here are a
// bound, not the answer: their sum is at most the legs' sum, and "the bests do not arb"
// still settles a tick. A group that has a record or a flagged book (one book's own
// prices below a sum of 1) is "listed" for the tick path: every change that could move
// its legs or its flags goes to the full read, which is rare (arbs and flagged books are).
// The flagged books of every group are kept here too: flaggedBooks() is the operator's
// list, flaggedCounts() the metric's per-book counts.
//
// A tick the fast paths cannot settle (most of them in listed groups) is not read in
// full on the tick path: SignalBooks marks the group and re-reads it at the next read
// of this book (settler, called first by every read below: page, all, size, version,
// flaggedBooks, flaggedCounts). A record, a flag and the version are functions of the
// group's current quotes, so a read finds what a re-read after every tick would have
// kept; flagEvents, which counts transitions, is counted per tick by SignalBooks
// (SignalBooks.trackFlag), not here.

import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage, flaggedBooksOf, keepLegTimes, requotedRecord, sameArbitrage } from './arbitrage.ts';
import { grown } from '../columns.ts';
import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import { RankedSet, type RankCursor, type RankedPage } from './rankedSet.ts';
import type { ArbitrageRecord, ArbitrageType, FlaggedBook } from './records.ts';
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

/** One book quoting a negative margin on its own in one market group (the operator's list). */
export interface FlaggedQuote extends FlaggedBook {
  /** The market group (the id an /arbitrage record of the group has). */
  groupId: string;
  eventId: string;
  league: string;
  market: string;
  marketSubtype: string;
  period: string;
  line: number | null;
}

export class ArbitrageBook {
  readonly set = new RankedSet<ArbitrageRecord>();
  /** Per group id, its flagged books (only groups that have some). */
  private readonly flagged = new Map<string, FlaggedQuote[]>();
  /** Flagged groups per sportsbook. */
  private readonly flaggedByBook = new Map<string, number>();
  /**
   * Times a book became flagged in a group (a counter for the metric), counted by
   * SignalBooks per tick and per full read (its flag bits per row), since a deferred
   * re-read would miss a flag that came and went between two reads.
   */
  flagEvents = 0;
  /** Re-reads the groups whose ticks were deferred (SignalBooks); every read calls it first. */
  settler: (() => void) | null = null;
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
    this.settler?.();
    return this.set.version;
  }

  get size(): number {
    this.settler?.();
    return this.set.size;
  }

  /** The books updateGroup just found flagged (SourceTable indices): count and index f. */
  get lastFlaggedCount(): number {
    return this.scratch.flaggedCount;
  }

  lastFlaggedBook(f: number): number {
    return this.scratch.flaggedBook[f];
  }

  /** Re-evaluates group g from all of its current quotes (an empty batch clears it). */
  updateGroup(g: number, batch: QuoteBatch): void {
    this.ensure(g);
    const s = this.scratch;
    const found = evaluateArbitrage(batch, this.groups.outcomes[g], s);
    this.keepBest(g, batch, s);
    const id = this.groups.id[g];
    this.setFlags(g, id, s.flaggedCount > 0 ? flaggedBooksOf(batch, s) : null);
    const current = this.set.get(id);
    // listed for the tick path: a record to keep exact, or flags to clear
    this.best.setListed(g, found || s.flaggedCount > 0);
    if (found) {
      // the legs' refs, also when the record stays: a row that came back in another slot keeps its id
      const legs = COUNT_OF_OUTCOMES[s.outcomes];
      for (let k = 0; k < LEGS; k++) this.legRef[g * LEGS + k] = k < legs ? batch.ref[s.best[k]] : -1;
      if (current !== undefined && sameArbitrage(current, batch, s, this.legUpdated, g * LEGS) && sameFlags(current.flaggedBooks, this.flagged.get(id))) return;
      const record = arbitrageRecord(this.groups, g, batch, s);
      this.set.upsert(id, record.profit, record, record.league, record.eventId, record.type);
      keepLegTimes(batch, s, this.legUpdated, g * LEGS);
    } else if (current !== undefined) {
      this.set.delete(id);
    }
  }

  /** Every flagged book of every group, lowest own implied sum first (the operator's list). */
  flaggedBooks(): FlaggedQuote[] {
    this.settler?.();
    const out: FlaggedQuote[] = [];
    for (const list of this.flagged.values()) out.push(...list);
    return out.sort((a, b) => a.impliedSum - b.impliedSum || (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : a.sportsbook < b.sportsbook ? -1 : 1));
  }

  /** Flagged market groups per sportsbook. */
  flaggedCounts(): ReadonlyMap<string, number> {
    this.settler?.();
    return this.flaggedByBook;
  }

  private setFlags(g: number, id: string, books: FlaggedBook[] | null): void {
    const before = this.flagged.get(id);
    if (before === undefined && books === null) return;
    if (before !== undefined) for (const f of before) this.countBook(f.sportsbook, -1);
    if (books === null) {
      this.flagged.delete(id);
      return;
    }
    const groups = this.groups;
    const list = books.map((f) => ({
      ...f,
      groupId: id,
      eventId: groups.eventId[g],
      league: groups.league[g],
      market: groups.market[g],
      marketSubtype: groups.marketSubtype[g],
      period: groups.period[g],
      line: groups.lineOf(g),
    }));
    for (const f of list) this.countBook(f.sportsbook, 1);
    this.flagged.set(id, list);
  }

  private countBook(book: string, delta: number): void {
    const next = (this.flaggedByBook.get(book) ?? 0) + delta;
    if (next > 0) this.flaggedByBook.set(book, next);
    else this.flaggedByBook.delete(book);
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
      // a listed group's legs need not be the bests (two bests on one book), and its
      // flags read every book: a change of any of its quotes is read in full
      if (!usable) return !b.isListed(g);
      const bestPrice = b.price(g, k);
      if (best !== NONE && !(price > bestPrice)) {
        b.raiseRunnerUp(g, k, price);
        if (b.isListed(g)) return false;
        // a better non-best quote can pair with another outcome's best on a different
        // book: settled only while the bests themselves cannot arb
        return this.settlesWithoutArb(g);
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
    // only a leg that got no better: a better price could make its own book's prices
    // sum below 1 (a flag), which only the full read sees
    return b.isListed(g) && b.ref(g, k) === ref && !suspended && price > 1 && price <= b.price(g, k) && (price === b.price(g, k) || price > b.runnerUp(g, k));
  }

  /** Leg k of listed group g was re-quoted by batch[i] and stays the best (legStaysBest): re-prices or drops the record. */
  legRequoted(g: number, k: number, batch: QuoteBatch, i: number): boolean {
    // the record's leg must be this very quote (a quote that just took the best over has
    // no leg yet); the refs the full read kept say so without the quote's odds id
    const ref = batch.ref[i];
    if (ref < 0 || this.legRef[g * LEGS + k] !== ref) return false;
    const id = this.groups.id[g];
    const record = this.set.get(id);
    if (record === undefined || this.flagged.has(id)) return false;
    // the legs must be the bests of their outcomes: then they stay the best assignment
    // (legs on distinct books) while this one stays the best of its outcome
    for (let j = 0; j < record.legs.length; j++) if (this.legRef[g * LEGS + j] !== this.best.ref(g, j)) return false;
    if (batch.priceDecimal[i] > record.legs[k].priceDecimal) return false;
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
      this.setFlags(g, this.groups.id[g], null);
      this.best.setListed(g, false);
    }
  }

  page(query: ArbitrageQuery, after: RankCursor | null, limit: number): RankedPage<ArbitrageRecord> {
    this.settler?.();
    return this.set.page(
      { leagues: query.leagues, eventIds: query.eventIds, tags: query.types, minScore: query.minProfit },
      after,
      limit,
    );
  }

  /** Every record in serving order (tests, brute-force comparison). */
  all(): ArbitrageRecord[] {
    this.settler?.();
    const out: ArbitrageRecord[] = [];
    for (let rank = 0; rank < this.set.size; rank++) out.push(this.set.valueAt(rank));
    return out;
  }

  private keepBest(g: number, batch: QuoteBatch, s: ArbitrageScratch): void {
    const best = this.best;
    const n = OUTCOME_COUNT[s.outcomes];
    for (let k = 0; k < LEGS; k++) {
      const b = k < n ? s.top[k] : -1;
      best.setRef(g, k, b < 0 ? NONE : batch.ref[b] < 0 ? UNFOLLOWED : batch.ref[b]);
      best.setPrice(g, k, b < 0 ? 0 : batch.priceDecimal[b]);
      best.setRunnerUp(g, k, 0);
    }
    // the runner-up per outcome: the best usable price among the other quotes
    for (let i = 0; i < batch.length; i++) {
      if (batch.dfs[i] === 1 || batch.suspended[i] === 1) continue;
      const k = outcomeIndex(s.outcomes, batch.side[i]);
      if (k < 0 || i === s.top[k]) continue;
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

function sameFlags(shown: readonly FlaggedBook[], now: readonly FlaggedBook[] | undefined): boolean {
  const current = now ?? [];
  if (shown.length !== current.length) return false;
  for (let i = 0; i < shown.length; i++) if (shown[i].sportsbook !== current[i].sportsbook || shown[i].impliedSum !== current[i].impliedSum) return false;
  return true;
}
