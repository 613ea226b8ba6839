// The trader screens over the market groups: the fair line, the best prices and their
// hold, +EV on every book, and middles. A tick only marks its group (touch: one byte
// and, the first time, a push onto the dirty list); the next read re-reads just the
// marked groups' quotes through the QuoteSource into compact per-group arrays (no
// strings: ids and labels are fetched for the rows a read returns), then evaluates
// from what is kept. The fair line depends on the read's clock (sharp quotes age out)
// and on the requested devig method, so it is evaluated per read from the kept sharp
// quotes; a read's cost is the groups its filters select, never the rows of the board.

import { devigInto, devigMethodCode, DEVIG_METHODS, type DevigMethod } from './devig.ts';
import { fairPriceAmerican } from './edges.ts';
import { grown } from '../columns.ts';
import { isoMillis } from '../timeFormat.ts';
import { fingerprint, NO_RECORDS } from './fingerprint.ts';
import type { MarketGroups } from './marketGroups.ts';
import { QuoteBatch, type QuoteSource } from './quoteBatch.ts';
import { OUTCOME_COUNT, OUTCOMES_HOME_AWAY, OUTCOMES_OVER_UNDER, outcomeIndex, SIDE_NAMES } from './sides.ts';
import type { SourceTable } from './sourceTable.ts';
import type {
  BestOutcome, BestPriceQuery, BestPriceRecord, FairLineQuery, FairLineRecord, MiddleLeg, MiddleQuery, MiddleRecord,
  PositiveEvQuery, PositiveEvRecord, ScreenConfig, ScreenFilter, ScreenMarket,
} from './screenRecords.ts';

const MAX_OUTCOMES = 3;

/** One group's non-DFS quotes as last read. price 0: not usable (unpriced or suspended). */
class GroupQuotes {
  count = 0;
  ref = new Int32Array(8);
  book = new Int32Array(8);
  /** Outcome index, -1 when the side is none of the group's outcomes. */
  k = new Int8Array(8);
  price = new Float64Array(8);
  /** The row's American price (records echo it; -100 and +100 share a decimal price). */
  american = new Int32Array(8);
  updated = new Float64Array(8);
  /** The row's interned selection label (QuoteBatch.label): a +EV record echoes the label, so its fingerprint covers it. */
  label = new Int32Array(8);

  clear(): void {
    this.count = 0;
  }

  push(ref: number, book: number, k: number, price: number, american: number, updated: number, label: number): void {
    const i = this.count;
    if (i === this.ref.length) {
      this.ref = grown(this.ref, i + 1);
      this.book = grown(this.book, i + 1);
      this.k = grown(this.k, i + 1);
      this.price = grown(this.price, i + 1);
      this.american = grown(this.american, i + 1);
      this.updated = grown(this.updated, i + 1);
      this.label = grown(this.label, i + 1);
    }
    this.ref[i] = ref;
    this.book[i] = book;
    this.k[i] = k;
    this.price[i] = price;
    this.american[i] = american;
    this.updated[i] = updated;
    this.label[i] = label;
    this.count = i + 1;
  }
}

/** A fair line evaluated at a read: per outcome, and what formed it. */
export interface FairValue {
  fair: Float64Array;
  books: number;
  /** Bit per sharp slot used. */
  mask: number;
  oldest: number;
  newest: number;
  /** The earliest time at which a sharp book used ages out of the staleness window (the line changes then without a tick); Infinity when none is used. */
  expires: number;
}

export class ScreenBook {
  private readonly state: (GroupQuotes | undefined)[] = [];
  private dirty = new Uint8Array(64);
  private dirtyList = new Int32Array(64);
  private dirtyCount = 0;
  /** Source index -> sharp slot (-1: not a fair-line book). */
  private sharpSlotOfBook = new Int32Array(0);
  private readonly weights: Float64Array;
  private readonly batch: QuoteBatch;
  private readonly one: QuoteBatch;
  // scratch of fairAt
  private readonly sharpPrice: Float64Array;
  private readonly sharpUpdated: Float64Array;
  private readonly perBook = new Float64Array(MAX_OUTCOMES);
  /** Bumped whenever a re-read changed kept quotes: cache validity of screen reads (with the clock). */
  version = 0;

  constructor(
    readonly groups: MarketGroups,
    readonly sources: SourceTable,
    readonly config: ScreenConfig,
  ) {
    this.batch = new QuoteBatch(sources);
    this.one = new QuoteBatch(sources, 1);
    this.weights = Float64Array.from(config.sharpBooks, (b) => b.weight);
    this.sharpPrice = new Float64Array(config.sharpBooks.length * MAX_OUTCOMES);
    this.sharpUpdated = new Float64Array(config.sharpBooks.length * MAX_OUTCOMES);
  }

  /** The sharp slot of a source index (-1: not a fair-line book). */
  sharpSlotOf(book: number): number {
    if (this.sources.count !== this.sharpSlotOfBook.length) this.syncSources();
    return this.sharpSlotOfBook[book];
  }

  /** Group g changed (a tick, a row joining or leaving): O(1). */
  touch(g: number): void {
    if (g >= this.dirty.length) this.dirty = grown(this.dirty, g + 1);
    if (this.dirty[g] === 1) return;
    this.dirty[g] = 1;
    if (this.dirtyCount === this.dirtyList.length) this.dirtyList = grown(this.dirtyList, this.dirtyCount + 1);
    this.dirtyList[this.dirtyCount++] = g;
  }

  /** Groups marked since the last settle (and not yet re-read by a settle in slices under way). */
  get pendingGroups(): number {
    return this.dirtyCount - this.settledTo;
  }

  // A settle in slices (the signal stream's push: beginSettle, then settleSlice until it
  // returns true) re-reads the groups marked when it began, dirtyList[settledTo,
  // settleEnd), a slice at a time; groups marked after it began wait behind them for the
  // next settle. A full settle (a read) in between takes over whatever is left.
  private settledTo = 0;
  private settleEnd = 0;

  /** Re-reads the marked groups; returns how many were re-read. */
  settle(source: QuoteSource): number {
    const from = this.settledTo;
    const count = this.dirtyCount;
    for (let i = from; i < count; i++) this.settleAt(i, source);
    this.dirtyCount = 0;
    this.settledTo = 0;
    this.settleEnd = 0;
    if (count > from) this.version++;
    return count - from;
  }

  /** Starts a settle in slices of the groups marked now. */
  beginSettle(): void {
    this.settleEnd = this.dirtyCount;
  }

  /**
   * Re-reads groups of the settle begun by beginSettle until `deadline`
   * (performance.now(); at least SETTLE_STEP groups); true when it is done.
   */
  settleSlice(source: QuoteSource, deadline: number): boolean {
    const end = Math.min(this.settleEnd, this.dirtyCount);
    let i = this.settledTo;
    const from = i;
    while (i < end) {
      this.settleAt(i++, source);
      if ((i - from) % SETTLE_STEP === 0 && performance.now() >= deadline) break;
    }
    if (i > from) this.version++;
    if (i < end) {
      this.settledTo = i;
      return false;
    }
    // done: the groups marked since it began move to the front
    const rest = this.dirtyCount - i;
    this.dirtyList.copyWithin(0, i, this.dirtyCount);
    this.dirtyCount = rest;
    this.settledTo = 0;
    this.settleEnd = 0;
    return true;
  }

  private settleAt(i: number, source: QuoteSource): void {
    const g = this.dirtyList[i];
    this.dirty[g] = 0;
    this.reread(g, source);
    if (this.collecting) this.collect(g);
  }

  // The groups re-read since the signal stream's last push (whoever settled them: a
  // read settling first must not hide a change from the stream).
  /** Set while the signal stream has group-topic subscribers. */
  collecting = false;
  private collectedMark = new Uint8Array(64);
  private collected: number[] = [];

  private collect(g: number): void {
    if (g >= this.collectedMark.length) this.collectedMark = grown(this.collectedMark, g + 1);
    if (this.collectedMark[g] === 1) return;
    this.collectedMark[g] = 1;
    this.collected.push(g);
  }

  /** Settles, then hands over (and forgets) the groups re-read since the last call. */
  takeCollected(source: QuoteSource): number[] {
    this.settle(source);
    return this.takeCollectedSettled();
  }

  /** Hands over (and forgets) the groups re-read since the last call, without settling (after a settle in slices). */
  takeCollectedSettled(): number[] {
    const out = this.collected;
    this.collected = [];
    for (const g of out) this.collectedMark[g] = 0;
    return out;
  }

  // Which market group a group index holds: an index is reused for another group once
  // empty, and a group's records echo its event's start, which can move. `era` changes
  // whenever either did (or the group left the board) at a re-read, so what the signal
  // stream compares (fingerprints) tells the group that was pushed from the one there now.
  private era = new Uint32Array(64);
  private readonly idSeen: string[] = [];
  private readonly startSeen: string[] = [];

  private noteIdentity(g: number, live: boolean): void {
    if (g >= this.era.length) this.era = grown(this.era, g + 1);
    // dense arrays (filled in order), not holey ones indexed at random
    while (this.idSeen.length <= g) {
      this.idSeen.push('');
      this.startSeen.push('');
    }
    const id = live ? this.groups.id[g] : '';
    const start = live ? this.groups.eventStartTime[g] : '';
    if (this.idSeen[g] === id && this.startSeen[g] === start) return;
    this.idSeen[g] = id;
    this.startSeen[g] = start;
    this.era[g]++;
  }

  private reread(g: number, source: QuoteSource): void {
    if (!this.groups.isLive(g) || this.groups.memberCount(g) === 0) {
      this.state[g] = undefined;
      this.noteIdentity(g, false);
      this.leaveFamily(g);
      return;
    }
    this.noteIdentity(g, true);
    this.joinFamily(g);
    const batch = this.batch;
    batch.clear();
    for (let ref = this.groups.firstMember(g); ref !== -1; ref = this.groups.nextMember(ref)) {
      (source.pushPriceQuote ?? source.pushQuote).call(source, ref, batch);
      batch.ref[batch.length - 1] = ref;
    }
    let state = this.state[g];
    if (state === undefined) {
      state = new GroupQuotes();
      this.state[g] = state;
    }
    state.clear();
    const outcomes = this.groups.outcomes[g];
    for (let i = 0; i < batch.length; i++) {
      if (batch.dfs[i] === 1) continue;
      const price = batch.priceDecimal[i];
      const usable = batch.suspended[i] === 0 && price > 1;
      state.push(batch.ref[i], batch.book[i], outcomeIndex(outcomes, batch.side[i]), usable ? price : 0, batch.priceAmerican[i], batch.updated[i], batch.label[i]);
    }
  }

  // -- evaluation -------------------------------------------------------------

  /**
   * The fair line of group g at now under a method: per sharp book whose every outcome
   * is quoted (usable) and none older than the staleness window, its no-vig
   * probabilities; their weighted mean. books 0: no fair line.
   */
  fairAt(g: number, now: number, method: number, out: FairValue): FairValue {
    out.books = 0;
    out.mask = 0;
    out.oldest = Infinity;
    out.newest = 0;
    out.expires = Infinity;
    const state = this.state[g];
    const n = OUTCOME_COUNT[this.groups.outcomes[g]];
    if (state === undefined || n === 0) return out;
    if (this.sources.count !== this.sharpSlotOfBook.length) this.syncSources();
    const slots = this.weights.length;
    const present = presentScratch;
    present.fill(0, 0, slots);
    for (let i = 0; i < state.count; i++) {
      const slot = this.sharpSlotOfBook[state.book[i]];
      const k = state.k[i];
      if (slot < 0 || k < 0 || state.price[i] === 0) continue;
      this.sharpPrice[slot * MAX_OUTCOMES + k] = state.price[i];
      this.sharpUpdated[slot * MAX_OUTCOMES + k] = state.updated[i];
      present[slot] |= 1 << k;
    }
    const full = (1 << n) - 1;
    const fair = out.fair;
    fair[0] = fair[1] = fair[2] = 0;
    let weight = 0;
    for (let slot = 0; slot < slots; slot++) {
      if (present[slot] !== full) continue;
      let oldest = Infinity;
      let newest = 0;
      for (let k = 0; k < n; k++) {
        const t = this.sharpUpdated[slot * MAX_OUTCOMES + k];
        if (t < oldest) oldest = t;
        if (t > newest) newest = t;
      }
      if (now - oldest > this.config.stalenessMs) continue;
      devigInto(method, this.sharpPrice, slot * MAX_OUTCOMES, n, this.perBook, 0);
      const w = this.weights[slot];
      for (let k = 0; k < n; k++) fair[k] += w * this.perBook[k];
      weight += w;
      out.books++;
      out.mask |= 1 << slot;
      // used while now - oldest <= stalenessMs: from just after this it is not
      if (oldest + this.config.stalenessMs < out.expires) out.expires = oldest + this.config.stalenessMs;
      if (oldest < out.oldest) out.oldest = oldest;
      if (newest > out.newest) out.newest = newest;
    }
    if (weight > 0) for (let k = 0; k < n; k++) fair[k] /= weight;
    return out;
  }

  /** Groups passing a league / event filter. */
  private selected(filter: ScreenFilter): number[] {
    const out: number[] = [];
    for (let g = 0; g < this.state.length; g++) if (this.passes(g, filter)) out.push(g);
    return out;
  }

  /** Whether group g is kept (live, read) and passes a league / event filter. */
  passes(g: number, filter: ScreenFilter): boolean {
    if (this.state[g] === undefined || !this.groups.isLive(g)) return false;
    if (filter.leagues !== null && !filter.leagues.includes(this.groups.league[g])) return false;
    return filter.eventIds === null || filter.eventIds.includes(this.groups.eventId[g]);
  }

  fairLines(query: FairLineQuery, now: number, limit: number, source: QuoteSource): FairLineRecord[] {
    return this.fairLinesPage(query, now, null, limit, source).items;
  }

  /**
   * A page of fair lines in id order, after the id `after` (null: from the first): the
   * groups are ordered by their kept ids first, so only the page's lines are evaluated
   * into records.
   */
  fairLinesPage(query: FairLineQuery, now: number, after: string | null, limit: number, source: QuoteSource): ScreenPage<FairLineRecord> {
    this.settle(source);
    const ids = this.groups.id;
    const gs = this.selected(query).filter((g) => after === null || ids[g]! > after);
    gs.sort((a, b) => compareIds(ids[a]!, ids[b]!));
    const method = methodCode(query.devig);
    const value = newFairValue();
    const items: FairLineRecord[] = [];
    for (const g of gs) {
      if (this.fairAt(g, now, method, value).books === 0) continue;
      if (items.length >= limit) return { items, hasMore: true };
      items.push(this.fairLineRecord(g, value, query.devig, now));
    }
    return { items, hasMore: false };
  }

  /** The fair lines of the given groups (those passing query's filters), by id. */
  fairLinesIn(gs: readonly number[], query: FairLineQuery, now: number): FairLineRecord[] {
    const method = methodCode(query.devig);
    const value = newFairValue();
    const records: FairLineRecord[] = [];
    for (const g of gs) {
      if (!this.passes(g, query)) continue;
      if (this.fairAt(g, now, method, value).books === 0) continue;
      records.push(this.fairLineRecord(g, value, query.devig, now));
    }
    return records.sort(byId);
  }

  private fairLineRecord(g: number, value: FairValue, devig: DevigMethod, now: number): FairLineRecord {
    const n = OUTCOME_COUNT[this.groups.outcomes[g]];
    const outcomes = [];
    for (let k = 0; k < n; k++) {
      const p = value.fair[k];
      outcomes.push({ side: sideOf(this.groups.outcomes[g], k), fairProbability: p, fairPriceDecimal: 1 / p, fairPriceAmerican: fairPriceAmerican(p) });
    }
    return {
      id: this.groups.id[g],
      ...this.market(g),
      line: this.groups.lineOf(g),
      devig,
      outcomes,
      sharpBooks: this.config.sharpBooks.filter((_, slot) => (value.mask & (1 << slot)) !== 0).map((b) => ({ ...b })),
      quotes: value.books * n,
      oldestQuoteAgeMs: now - value.oldest,
      newestQuoteAgeMs: now - value.newest,
      updated: isoMillis(value.newest),
    };
  }

  bestPrices(query: BestPriceQuery, limit: number, source: QuoteSource): BestPriceRecord[] {
    return this.bestPricesPage(query, null, limit, source).items;
  }

  /**
   * A page of best prices in serving order (hold, then id), after `after` (null: from
   * the first): ordered by the holds alone, records built for the page only.
   */
  bestPricesPage(query: BestPriceQuery, after: ScreenCursor | null, limit: number, source: QuoteSource): ScreenPage<BestPriceRecord> {
    this.settle(source);
    const ids = this.groups.id;
    const found: { hold: number; g: number }[] = [];
    for (const g of this.selected(query)) {
      // summed as bestPriceRecord sums it: the record's hold, the cursor's score
      const hold = this.bestHold(g);
      if (!(hold <= query.maxHold)) continue;
      if (after !== null && (hold < after.score || (hold === after.score && ids[g]! <= after.id))) continue;
      found.push({ hold, g });
    }
    found.sort((a, b) => (a.hold - b.hold) || compareIds(ids[a.g]!, ids[b.g]!));
    const items: BestPriceRecord[] = [];
    let i = 0;
    for (; i < found.length && items.length < limit; i++) {
      const record = this.bestPriceRecord(found[i]!.g, source);
      if (record !== null) items.push(record);
    }
    return { items, hasMore: i < found.length };
  }

  bestPricesIn(gs: readonly number[], query: BestPriceQuery, source: QuoteSource): BestPriceRecord[] {
    const records: BestPriceRecord[] = [];
    for (const g of gs) {
      // the hold first, as bestPriceRecord sums it: most groups are left out before a string is built
      if (!this.passes(g, query) || !(this.bestHold(g) <= query.maxHold)) continue;
      const record = this.bestPriceRecord(g, source);
      if (record !== null && record.hold <= query.maxHold) records.push(record);
    }
    return records.sort((a, b) => (a.hold - b.hold) || byId(a, b));
  }

  /** The hold of group g's best prices, summed as bestPriceRecord sums it; NaN when an outcome has no usable price. */
  private bestHold(g: number): number {
    const state = this.state[g]!;
    const n = OUTCOME_COUNT[this.groups.outcomes[g]];
    if (n === 0) return NaN;
    let implied = 0;
    for (let k = 0; k < n; k++) {
      let best = 0;
      for (let i = 0; i < state.count; i++) if (state.k[i] === k && state.price[i] > best) best = state.price[i];
      if (best === 0) return NaN;
      implied += 1 / best;
    }
    return implied - 1;
  }

  /** The best usable price per outcome of group g (every outcome must have one), or null. */
  bestPriceRecord(g: number, source: QuoteSource): BestPriceRecord | null {
    const state = this.state[g]!;
    const n = OUTCOME_COUNT[this.groups.outcomes[g]];
    if (n === 0) return null;
    const outcomes: BestOutcome[] = [];
    let implied = 0;
    let latest = 0;
    for (let k = 0; k < n; k++) {
      let best = 0;
      for (let i = 0; i < state.count; i++) if (state.k[i] === k && state.price[i] > best) best = state.price[i];
      if (best === 0) return null;
      const books: { id: string; i: number }[] = [];
      for (let i = 0; i < state.count; i++) if (state.k[i] === k && state.price[i] === best) books.push({ id: this.sources.ids[state.book[i]], i });
      books.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const first = books[0]!.i;
      const quote = this.quote(state.ref[first], source);
      outcomes.push({
        side: sideOf(this.groups.outcomes[g], k),
        priceAmerican: quote.priceAmerican[0],
        priceDecimal: best,
        sportsbooks: [...new Set(books.map((b) => b.id))],
        oddsId: quote.oddsId[0],
        updated: isoMillis(state.updated[first]),
      });
      implied += 1 / best;
      if (state.updated[first] > latest) latest = state.updated[first];
    }
    return { id: this.groups.id[g], ...this.market(g), line: this.groups.lineOf(g), outcomes, hold: implied - 1, updated: isoMillis(latest) };
  }

  positiveEv(query: PositiveEvQuery, now: number, limit: number, source: QuoteSource): PositiveEvRecord[] {
    return this.positiveEvPage(query, now, null, limit, source).items;
  }

  /**
   * A page of +EV records in serving order (ev descending, then odds id), after `after`
   * (null: from the first). The quotes are ordered by ev alone; odds ids (built strings)
   * are read only for the runs of equal ev the page reaches, and records built for the
   * page only.
   */
  positiveEvPage(query: PositiveEvQuery, now: number, after: ScreenCursor | null, limit: number, source: QuoteSource): ScreenPage<PositiveEvRecord> {
    this.settle(source);
    const method = methodCode(query.devig);
    const value = newFairValue();
    const found: { ev: number; g: number; i: number; id: string }[] = [];
    for (const g of this.selected(query)) {
      if (this.fairAt(g, now, method, value).books === 0) continue;
      const state = this.state[g]!;
      for (let i = 0; i < state.count; i++) {
        const ev = this.evOf(state, i, value, query);
        if (ev === null || (after !== null && ev > after.score)) continue;
        found.push({ ev, g, i, id: '' });
      }
    }
    found.sort((a, b) => b.ev - a.ev);
    const items: PositiveEvRecord[] = [];
    for (let n = 0; n < found.length; ) {
      let end = n + 1;
      while (end < found.length && found[end]!.ev === found[n]!.ev) end++;
      const run = found.slice(n, end);
      for (const c of run) c.id = this.quote(this.state[c.g]!.ref[c.i], source).oddsId[0]!;
      if (run.length > 1) run.sort(byId);
      for (const c of run) {
        if (after !== null && c.ev === after.score && c.id <= after.id) continue;
        if (items.length >= limit) return { items, hasMore: true };
        this.fairAt(c.g, now, method, value);
        items.push(this.positiveEvRecord(c.g, c.i, value, query, this.sharpBookIds(value), source));
      }
      n = end;
    }
    return { items, hasMore: false };
  }

  /** The ev of group g's quote i against the fair line `value`, or null when the query leaves it out. */
  private evOf(state: GroupQuotes, i: number, value: FairValue, query: PositiveEvQuery): number | null {
    const k = state.k[i];
    const price = state.price[i];
    if (k < 0 || price === 0) return null;
    if (query.sportsbooks !== null && !query.sportsbooks.includes(this.sources.ids[state.book[i]]!)) return null;
    const ev = value.fair[k] * price - 1;
    return ev >= query.minEv ? ev : null;
  }

  private sharpBookIds(value: FairValue): string[] {
    return this.config.sharpBooks.filter((_, slot) => (value.mask & (1 << slot)) !== 0).map((b) => b.sportsbook);
  }

  /** Group g's quote i as a +EV record against the fair line `value` (as evaluated for it). */
  private positiveEvRecord(g: number, i: number, value: FairValue, query: PositiveEvQuery, sharpBooks: string[], source: QuoteSource): PositiveEvRecord {
    const state = this.state[g]!;
    const price = state.price[i];
    const fair = value.fair[state.k[i]];
    const quote = this.quote(state.ref[i], source);
    const line = quote.line[0];
    return {
      id: quote.oddsId[0]!,
      groupId: this.groups.id[g]!,
      ...this.market(g),
      sportsbook: this.sources.ids[state.book[i]]!,
      selection: quote.selection[0]!,
      side: SIDE_NAMES[quote.side[0]]!,
      line: Number.isNaN(line) ? null : line,
      priceAmerican: quote.priceAmerican[0],
      priceDecimal: price,
      fairProbability: fair,
      fairPriceAmerican: fairPriceAmerican(fair),
      ev: fair * price - 1,
      devig: query.devig,
      sharpBooks,
      updated: isoMillis(Math.max(state.updated[i], value.newest)),
    };
  }

  positiveEvIn(gs: readonly number[], query: PositiveEvQuery, now: number, source: QuoteSource): PositiveEvRecord[] {
    const method = methodCode(query.devig);
    const value = newFairValue();
    const found: { ev: number; id: string; record: PositiveEvRecord }[] = [];
    for (const g of gs) {
      if (!this.passes(g, query) || this.fairAt(g, now, method, value).books === 0) continue;
      const state = this.state[g]!;
      const sharpBooks = this.sharpBookIds(value);
      for (let i = 0; i < state.count; i++) {
        const ev = this.evOf(state, i, value, query);
        if (ev === null) continue;
        const record = this.positiveEvRecord(g, i, value, query, sharpBooks, source);
        found.push({ ev, id: record.id, record });
      }
    }
    found.sort((a, b) => (b.ev - a.ev) || compareIds(a.id, b.id));
    return found.map((f) => f.record);
  }

  /**
   * Middles: in each family of groups that differ only in their line (spreads: HOME/AWAY
   * with a line; totals: OVER/UNDER), the best OVER at line a against the best UNDER at
   * line b > a (both win on a total strictly between), and the best HOME of the group at
   * home line h1 against the best AWAY of the group at h2 < h1 (both win on a home margin
   * strictly between -h1 and -h2).
   */
  middles(query: MiddleQuery, limit: number, source: QuoteSource): MiddleRecord[] {
    return this.middlesPage(query, null, limit, source).items;
  }

  /**
   * A page of middles in serving order (worst-case cost, then id), after `after` (null:
   * from the first): every pair is found from prices alone (its id is the family's key
   * and the two lines), records built for the page only.
   */
  middlesPage(query: MiddleQuery, after: ScreenCursor | null, limit: number, source: QuoteSource): ScreenPage<MiddleRecord> {
    this.settle(source);
    const families = new Map<string, readonly number[]>();
    for (const g of this.selected(query)) {
      const key = this.familyOf[g];
      if (key !== undefined && !families.has(key)) families.set(key, this.families.get(key)!);
    }
    const found = this.middlePairs(families, query).filter((m) => after === null || m.cost > after.score || (m.cost === after.score && m.id > after.id));
    const items = found.slice(0, limit).map((m) => this.middleRecord(m, source));
    return { items, hasMore: found.length > limit };
  }

  /** The middles of the families of the given groups (the signal stream: the groups an apply re-read). */
  middlesIn(gs: readonly number[], query: MiddleQuery, source: QuoteSource): MiddleRecord[] {
    const families = new Map<string, readonly number[]>();
    for (const g of gs) {
      const key = this.familyOf[g];
      if (key !== undefined && this.passes(g, query) && !families.has(key)) families.set(key, this.families.get(key)!);
    }
    return this.middlesOf(families, query, source);
  }

  private middlesOf(families: ReadonlyMap<string, readonly number[]>, query: MiddleQuery, source: QuoteSource): MiddleRecord[] {
    return this.middlePairs(families, query).map((m) => this.middleRecord(m, source));
  }

  /** The middles of the families, in serving order (cost, then id), before any of their quotes' strings are read. */
  private middlePairs(families: ReadonlyMap<string, readonly number[]>, query: MiddleQuery): MiddlePair[] {
    const pairs: MiddlePair[] = [];
    for (const [key, members] of families) {
      if (members.length < 2) continue;
      // per group: the best quote index of outcome 0 (HOME / OVER) and 1 (AWAY / UNDER)
      const bests = members.map((g) => ({ g, line: this.groups.line[g], low: this.bestIndex(g, 0), high: this.bestIndex(g, 1) }));
      for (const a of bests) {
        for (const b of bests) {
          if (a.g === b.g || a.low < 0 || b.high < 0) continue;
          const total = this.groups.outcomes[a.g] === OUTCOMES_OVER_UNDER;
          // totals: OVER at a.line, UNDER at b.line > a.line; spreads: HOME at home line a.line, AWAY at b.line < a.line
          const width = total ? b.line - a.line : a.line - b.line;
          if (!(width > 0) || width < query.minWidth) continue;
          // the cost as middleRecord computes it, before any of the record's strings are built
          const implied = 1 / this.state[a.g]!.price[a.low] + 1 / this.state[b.g]!.price[b.high];
          const cost = 1 - 1 / implied;
          if (!(cost <= query.maxCost)) continue;
          const low = total ? a.line : b.line;
          const high = total ? b.line : a.line;
          pairs.push({ id: `${key}:${lineText(low)}:${lineText(high)}`, cost, total, width, ga: a.g, ia: a.low, gb: b.g, ib: b.high });
        }
      }
    }
    return pairs.sort((a, b) => (a.cost - b.cost) || byId(a, b));
  }

  // Families: the groups with a line of a spread or total market that differ only in their
  // line, kept as groups are read (a group's family is fixed by its id).
  private readonly families = new Map<string, number[]>();
  private readonly familyOf: (string | undefined)[] = [];

  private joinFamily(g: number): void {
    const outcomes = this.groups.outcomes[g];
    const key = (outcomes === OUTCOMES_HOME_AWAY || outcomes === OUTCOMES_OVER_UNDER) && this.groups.lineOf(g) !== null ? familyKey(this.groups, g) : undefined;
    if (this.familyOf[g] === key) return;
    this.leaveFamily(g);
    if (key === undefined) return;
    this.familyOf[g] = key;
    let members = this.families.get(key);
    if (members === undefined) this.families.set(key, (members = []));
    members.push(g);
  }

  private leaveFamily(g: number): void {
    const key = this.familyOf[g];
    if (key === undefined) return;
    this.familyOf[g] = undefined;
    const members = this.families.get(key)!;
    members.splice(members.indexOf(g), 1);
    if (members.length === 0) this.families.delete(key);
    // the family's middles changed without a tick on the members left: the stream re-reads them
    else if (this.collecting) for (const m of members) this.collect(m);
  }

  /** Index in group g's kept quotes of the best usable price of outcome k (ties: the alphabetically first book), -1 if none. */
  private bestIndex(g: number, k: number): number {
    const state = this.state[g]!;
    let best = -1;
    for (let i = 0; i < state.count; i++) {
      if (state.k[i] !== k || state.price[i] === 0) continue;
      if (best < 0 || state.price[i] > state.price[best] || (state.price[i] === state.price[best] && this.sources.ids[state.book[i]] < this.sources.ids[state.book[best]])) best = i;
    }
    return best;
  }

  private middleRecord(pair: MiddlePair, source: QuoteSource): MiddleRecord {
    const { total, width, ga, ia, gb, ib } = pair;
    const a = this.state[ga]!;
    const b = this.state[gb]!;
    const implied = 1 / a.price[ia] + 1 / b.price[ib];
    const leg = (state: GroupQuotes, i: number): MiddleLeg => {
      const quote = this.quote(state.ref[i], source);
      return {
        oddsId: quote.oddsId[0],
        sportsbook: this.sources.ids[state.book[i]],
        side: SIDE_NAMES[quote.side[0]],
        line: quote.line[0],
        priceAmerican: quote.priceAmerican[0],
        priceDecimal: state.price[i],
        stake: 1 / state.price[i] / implied,
        updated: isoMillis(state.updated[i]),
      };
    };
    const legs: [MiddleLeg, MiddleLeg] = [leg(a, ia), leg(b, ib)];
    return {
      id: pair.id,
      type: total ? 'total' : 'spread',
      ...this.market(ga),
      width,
      legs,
      impliedSum: implied,
      worstCaseCost: 1 - 1 / implied,
      middleProfit: 2 / implied - 1,
      updated: isoMillis(Math.max(a.updated[ia], b.updated[ib])),
    };
  }

  // -- fingerprints (the signal stream: has a group's record changed since it was pushed?) --
  //
  // Each is a fingerprint (fingerprint.ts) of every number a group's records for one
  // query are built from, read from the kept quotes with no string built: the group's
  // era (which group the index holds, and its event's start), and per quote used its
  // row ref (its odds id and side), book, prices and time. A ref does not fix the
  // selection label: a row removed and revived in its slot (at the same price and
  // time) may come back with another one, so +EV, the one group record echoing the
  // label, folds the interned label id in too. Equal
  // fingerprints: equal records, whatever their strings. NO_RECORDS: the group has no
  // record for that query. The caller checks passes(g, filter) first.

  /**
   * Group g's fair-line record at now under a method. The quotes' ages are left out
   * (they move with the clock alone: a pushed record's ages are those at its push); the
   * times they are counted from are in. `value` is left holding the line (its `expires`).
   */
  fairLineMark(g: number, now: number, method: number, value: FairValue): number {
    if (this.fairAt(g, now, method, value).books === 0) return NO_RECORDS;
    const n = OUTCOME_COUNT[this.groups.outcomes[g]];
    fingerprint.begin(this.era[g]);
    fingerprint.int(g);
    fingerprint.int(value.mask);
    fingerprint.num(value.oldest);
    fingerprint.num(value.newest);
    for (let k = 0; k < n; k++) fingerprint.num(value.fair[k]);
    return fingerprint.end();
  }

  /** Group g's best-price record when its hold is at most maxHold: per outcome the best price and every quote at it. */
  bestPriceMark(g: number, maxHold: number): number {
    const state = this.state[g]!;
    const n = OUTCOME_COUNT[this.groups.outcomes[g]];
    if (n === 0 || !(this.bestHold(g) <= maxHold)) return NO_RECORDS;
    fingerprint.begin(this.era[g]);
    fingerprint.int(g);
    for (let k = 0; k < n; k++) {
      let best = 0;
      for (let i = 0; i < state.count; i++) if (state.k[i] === k && state.price[i] > best) best = state.price[i];
      fingerprint.num(best);
      for (let i = 0; i < state.count; i++) {
        if (state.k[i] !== k || state.price[i] !== best) continue;
        fingerprint.int(state.book[i]);
        fingerprint.int(state.ref[i]);
        fingerprint.int(state.american[i]);
        fingerprint.num(state.updated[i]);
      }
    }
    return fingerprint.end();
  }

  /**
   * Group g's +EV records at now: the fair line's books and newest time, and each quote
   * passing min_ev on a book `books` allows (bookMask; null: every book) with its fair
   * probability. `value` is left holding the fair line.
   */
  positiveEvMark(g: number, now: number, method: number, minEv: number, books: Uint8Array | null, value: FairValue): number {
    if (this.fairAt(g, now, method, value).books === 0) return NO_RECORDS;
    const state = this.state[g]!;
    let used = 0;
    fingerprint.begin(this.era[g]);
    fingerprint.int(g);
    fingerprint.int(value.mask);
    fingerprint.num(value.newest);
    for (let i = 0; i < state.count; i++) {
      const k = state.k[i];
      const price = state.price[i];
      if (k < 0 || price === 0) continue;
      if (books !== null && books[state.book[i]] !== 1) continue;
      const fair = value.fair[k];
      if (!(fair * price - 1 >= minEv)) continue;
      used++;
      fingerprint.int(state.ref[i]);
      fingerprint.int(state.label[i]);
      fingerprint.int(state.book[i]);
      fingerprint.int(state.american[i]);
      fingerprint.num(price);
      fingerprint.num(state.updated[i]);
      fingerprint.num(fair);
    }
    return used === 0 ? NO_RECORDS : fingerprint.end();
  }

  /** Source index -> 1 when the book is one of `sportsbooks` (positiveEvMark's filter); rebuild it when sources.count outgrows it. */
  bookMask(sportsbooks: readonly string[]): Uint8Array {
    const mask = new Uint8Array(this.sources.count);
    for (let book = 0; book < mask.length; book++) mask[book] = sportsbooks.includes(this.sources.ids[book]!) ? 1 : 0;
    return mask;
  }

  /**
   * The middles of group g's family (its records on the middle topic), as middlesOf
   * finds them: each pair of members, its legs' quotes. The same for every member.
   */
  middleMark(g: number, query: MiddleQuery): number {
    const key = this.familyOf[g];
    const members = key === undefined ? undefined : this.families.get(key);
    if (members === undefined || members.length < 2) return NO_RECORDS;
    if (members.length > lowScratch.length) {
      lowScratch = new Int32Array(members.length * 2);
      highScratch = new Int32Array(members.length * 2);
    }
    for (let m = 0; m < members.length; m++) {
      lowScratch[m] = this.bestIndex(members[m]!, 0);
      highScratch[m] = this.bestIndex(members[m]!, 1);
    }
    let used = 0;
    fingerprint.begin(0x6d1dd1e5);
    for (let a = 0; a < members.length; a++) {
      const ga = members[a]!;
      const low = lowScratch[a];
      if (low < 0) continue;
      const total = this.groups.outcomes[ga] === OUTCOMES_OVER_UNDER;
      for (let b = 0; b < members.length; b++) {
        const gb = members[b]!;
        const high = highScratch[b];
        if (a === b || high < 0) continue;
        const width = total ? this.groups.line[gb] - this.groups.line[ga] : this.groups.line[ga] - this.groups.line[gb];
        if (!(width > 0) || width < query.minWidth) continue;
        const sa = this.state[ga]!;
        const sb = this.state[gb]!;
        const implied = 1 / sa.price[low] + 1 / sb.price[high];
        if (!(1 - 1 / implied <= query.maxCost)) continue;
        used++;
        fingerprint.int(ga);
        fingerprint.int(this.era[ga]);
        fingerprint.int(gb);
        fingerprint.int(this.era[gb]);
        fingerprint.int(sa.ref[low]);
        fingerprint.int(sa.book[low]);
        fingerprint.int(sa.american[low]);
        fingerprint.num(sa.price[low]);
        fingerprint.num(sa.updated[low]);
        fingerprint.int(sb.ref[high]);
        fingerprint.int(sb.book[high]);
        fingerprint.int(sb.american[high]);
        fingerprint.num(sb.price[high]);
        fingerprint.num(sb.updated[high]);
      }
    }
    return used === 0 ? NO_RECORDS : fingerprint.end();
  }

  /** The groups of group g's family (middles), g included; undefined when it has none. */
  familyMembers(g: number): readonly number[] | undefined {
    const key = this.familyOf[g];
    return key === undefined ? undefined : this.families.get(key);
  }

  // -- helpers ----------------------------------------------------------------

  /** One row's quote with its strings (for the rows a read returns). */
  private quote(ref: number, source: QuoteSource): QuoteBatch {
    this.one.clear();
    source.pushQuote(ref, this.one);
    return this.one;
  }

  market(g: number): ScreenMarket {
    const groups = this.groups;
    return {
      eventId: groups.eventId[g],
      league: groups.league[g],
      market: groups.market[g],
      marketSubtype: groups.marketSubtype[g],
      period: groups.period[g],
      playerId: groups.playerId[g],
      playerName: groups.playerName[g],
      eventStartTime: groups.eventStartTime[g],
    };
  }

  private syncSources(): void {
    const count = this.sources.count;
    const slots = new Int32Array(count).fill(-1);
    for (let book = 0; book < count; book++) slots[book] = this.config.sharpBooks.findIndex((b) => b.sportsbook === this.sources.ids[book]);
    this.sharpSlotOfBook = slots;
  }
}

const presentScratch = new Uint8Array(16);
// scratch of middleMark: each family member's best index of outcome 0 and 1
let lowScratch = new Int32Array(16);
let highScratch = new Int32Array(16);
/** A settle in slices looks at the clock every this many groups. */
const SETTLE_STEP = 16;

export function newFairValue(): FairValue {
  return { fair: new Float64Array(MAX_OUTCOMES), books: 0, mask: 0, oldest: Infinity, newest: 0, expires: Infinity };
}

function methodCode(method: DevigMethod): number {
  const code = devigMethodCode(method);
  if (code < 0) throw new RangeError(`unknown devig method ${method}; expected one of ${DEVIG_METHODS.join(', ')}`);
  return code;
}

const OUTCOME_SIDE_NAMES: readonly (readonly string[])[] = [[], ['HOME', 'AWAY'], ['OVER', 'UNDER'], ['HOME', 'DRAW', 'AWAY']];

function sideOf(outcomes: number, k: number): string {
  return OUTCOME_SIDE_NAMES[outcomes]![k]!;
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One page of a screen in its serving order. */
export interface ScreenPage<R> {
  items: R[];
  /** Another record follows the last item. */
  hasMore: boolean;
}

/** Where a page of a screen sorted by a number starts: after the record with this score (hold, ev, cost) and id. */
export interface ScreenCursor {
  score: number;
  id: string;
}

/** A middle found from prices: its id, cost and the two legs (group, quote index). */
interface MiddlePair {
  id: string;
  cost: number;
  total: boolean;
  width: number;
  ga: number;
  ia: number;
  gb: number;
  ib: number;
}

function lineText(line: number): string {
  return line < 0 ? `m${-line}` : String(line);
}

/** The group id without its line: {eventId}:{subtype}:{period}:{scope}. */
export function familyKey(groups: MarketGroups, g: number): string {
  const id = groups.id[g];
  const scope = id.slice(id.lastIndexOf(':') + 1);
  return `${groups.eventId[g]}:${groups.marketSubtype[g]}:${groups.period[g]}:${scope}`;
}

