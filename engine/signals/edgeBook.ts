// The live edge result book (the Edge records of /edges). Per market group with DFS rows it keeps the
// sharp books' current prices and the DFS rows; the multiplicative edges (the route's
// default) are maintained incrementally in serving order (edge desc, id asc), holding
// only edges >= 0 since min_edge is never negative. A tick only writes the kept
// quote and marks its group dirty (O(1)); dirty groups are re-priced together at the
// next read (refresh), so a burst of ticks on one group costs one re-price, and the
// clock of the read is the evaluation time the staleness rule asks for. Staleness
// depends on the clock too: each group's fair value expires when its oldest used
// sharp quote ages past the window, and refresh(now) re-prices the expired groups.
// Other devig methods are priced per request from the kept quotes (no extra per-update
// cost); bench/signals.bench.ts measures that walk.

import { DEVIG_MULTIPLICATIVE, devigMethodCode, type DevigMethod, DEVIG_METHODS } from './devig.ts';
import { DfsQuotes, NO_LISTED } from './dfsQuotes.ts';
import { EdgeEntry } from './edgeEntry.ts';
import { breakevenProbability } from './edges.ts';
import { ExpiryHeap } from './expiryHeap.ts';
import { grown } from '../columns.ts';
import type { MarketGroups } from './marketGroups.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import { SharpQuotes } from './sharpQuotes.ts';
import { RankedSet, type RankCursor, type RankedPage } from './rankedSet.ts';
import { baseLegDecimalOf, type EdgeRecord, type SignalsConfig } from './records.ts';
import { OUTCOME_COUNT, outcomeIndex, SIDE_NAMES } from './sides.ts';
import type { SourceTable } from './sourceTable.ts';

export interface EdgeQuery {
  leagues: readonly string[] | null;
  /** DFS source ids. */
  sources: readonly string[] | null;
  eventIds: readonly string[] | null;
  /** In [0, 1]; default 0.02 on the route. */
  minEdge: number;
  devig: DevigMethod;
}

const MAX_SHARP_BOOKS = 16;

export class EdgeBook {
  /** Multiplicative edges >= 0, in serving order. */
  readonly set = new RankedSet<EdgeEntry>();
  private readonly sharpCount: number;
  private sharpSlotOfBook = new Int32Array(0);
  private baseLegOfBook = new Float64Array(0);
  /** Sharp quotes of the groups that have DFS rows, by the group's position in dfsGroups (its local slot). */
  private readonly sharp: SharpQuotes;
  private readonly dfs: (DfsQuotes | undefined)[] = [];
  /** Groups ticked since the last refresh. */
  private readonly dirtyStates: (DfsQuotes | undefined)[] = [];
  private dirtyCount = 0;
  private quotesVersion = 0;
  /** ref -> index among its group's kept DFS rows (set on each full read). */
  private pickOfRef = new Int32Array(1024).fill(-1);
  /** Groups that have DFS rows, dense; a group's position here is its local index. */
  private dfsGroups = new Int32Array(64);
  private dfsGroupCount = 0;
  private readonly expiry = new ExpiryHeap();
  private readonly sharpBooksByMask: (string[] | undefined)[] = [];
  private spareListed: string[] = [];

  constructor(
    readonly groups: MarketGroups,
    readonly sources: SourceTable,
    readonly config: SignalsConfig,
  ) {
    this.sharpCount = config.sharpBooks.length;
    if (this.sharpCount > MAX_SHARP_BOOKS) throw new RangeError(`at most ${MAX_SHARP_BOOKS} sharp books`);
    this.sharp = new SharpQuotes(this.sharpCount, config.stalenessMs);
    this.syncSources();
  }

  /**
   * Called first by every read below (version, versionAt, page, all): what the book's
   * owner must settle before the book is read (SignalBooks: the groups a lazy build has
   * not evaluated yet).
   */
  settler: (() => void) | null = null;

  get version(): number {
    this.settler?.();
    return this.set.version;
  }

  /**
   * What an HTTP cache of an /edges answer should key on, after re-pricing what the
   * clock or the ticks changed: the result set's version for multiplicative, the kept
   * quotes' version (bumped by every tick and every expiry) for the per-request methods.
   */
  versionAt(now: number, devig: DevigMethod = 'multiplicative'): number {
    this.settler?.();
    this.refresh(now);
    return devig === 'multiplicative' ? this.set.version : this.quotesVersion;
  }

  /** Re-reads group g's quotes (an empty batch, or one without DFS rows, clears it); it is re-priced at the next read. */
  updateGroup(g: number, batch: QuoteBatch): void {
    let state = this.dfs[g];
    if (batch.dfsCount === 0) {
      if (state !== undefined) this.forget(g, state);
      return;
    }
    if (this.sources.count !== this.sharpSlotOfBook.length) this.syncSources();
    if (state === undefined) state = this.adopt(g);
    this.readBatch(g, batch, state);
    this.markDirty(state);
  }

  /**
   * One quote of group g changed (batch[i]; same group and side as before): a sharp
   * quote updates the kept prices, a DFS row its entry, then the group is re-priced
   * from what is kept; retail quotes do not matter here. False when the group must be
   * re-read in full with updateGroup.
   */
  quoteChanged(g: number, batch: QuoteBatch, i: number): boolean {
    const state = this.dfs[g];
    if (state === undefined) return batch.dfs[i] === 0;
    const k = outcomeIndex(this.groups.outcomes[g], batch.side[i]);
    if (k < 0) return true;
    if (batch.dfs[i] === 1) {
      const id = batch.oddsId[i];
      let e = 0;
      while (e < state.count && state.oddsId[e] !== id) e++;
      if (e === state.count) return false;
      return this.pickChanged(g, e, batch.suspended[i] === 1, batch.dfsMultiplier[i], batch.updated[i]);
    }
    if (this.sources.count !== this.sharpSlotOfBook.length) this.syncSources();
    const slot = this.sharpSlotOfBook[batch.book[i]];
    return slot < 0 || this.sharpChanged(g, slot, k, batch.priceDecimal[i], batch.suspended[i] === 1, batch.updated[i]);
  }

  /** How many groups wait to be re-priced at the next read. */
  get pendingGroups(): number {
    return this.dirtyCount;
  }

  private markDirty(state: DfsQuotes): void {
    this.quotesVersion++;
    if (state.dirty) return;
    state.dirty = true;
    this.dirtyStates[this.dirtyCount++] = state;
  }

  /** Whether group g has DFS rows (only then do its quotes matter here). */
  hasPicks(g: number): boolean {
    return this.dfs[g] !== undefined;
  }

  /** The sharp slot of a source index (-1: not a configured sharp book). */
  sharpSlotOf(book: number): number {
    if (this.sources.count !== this.sharpSlotOfBook.length) this.syncSources();
    return this.sharpSlotOfBook[book];
  }

  /** Index of ref among its group's kept DFS rows (valid while the group is unchanged since its last full read). */
  pickIndexOf(ref: number): number {
    return ref < this.pickOfRef.length ? this.pickOfRef[ref] : -1;
  }

  /**
   * SignalBooks.warm in two steps: warmGroup reads group g's kept state (the object
   * and its arrays' headers), then warmQuote what sharpChanged (sharpSlot >= 0) or
   * pickChanged (pick >= 0) will touch. The returns only keep the reads alive.
   */
  warmGroup(g: number): number {
    const state = this.dfs[g];
    return state === undefined ? 0 : state.tick.length + state.listPosition;
  }

  warmQuote(g: number, sharpSlot: number, k: number, pick: number): number {
    const state = this.dfs[g];
    if (state === undefined) return 0;
    if (sharpSlot >= 0) return this.sharp.warm(state.listPosition, sharpSlot, k);
    return pick >= 0 && pick < state.count ? state.tick[3 * pick] : 0;
  }

  /** Sharp book `slot` re-quoted outcome k of group g. */
  sharpChanged(g: number, slot: number, k: number, price: number, suspended: boolean, updated: number): boolean {
    const state = this.dfs[g];
    if (state === undefined) return true;
    this.sharp.quote(state.listPosition, slot, k, price, updated, !suspended && price > 1);
    this.markDirty(state);
    return true;
  }

  /** DFS pick e of group g changed. */
  pickChanged(g: number, e: number, suspended: boolean, multiplier: number, updated: number): boolean {
    const state = this.dfs[g];
    if (state === undefined || e < 0 || e >= state.count) return false;
    state.setTick(e, suspended ? 1 : 0, multiplier, updated);
    this.markDirty(state);
    return true;
  }

  /** Drops group g's records (its next re-price lists them afresh, e.g. with a moved event start). */
  drop(g: number): void {
    const state = this.dfs[g];
    if (state === undefined) return;
    for (let i = 0; i < state.listed.length; i++) this.set.delete(state.listed[i]);
    if (state.listed !== NO_LISTED) this.spareListed = state.listed as string[];
    this.spareListed.length = 0;
    state.listed = NO_LISTED;
  }

  /** Re-prices every group whose fair value went stale before now. */
  refresh(now: number): void {
    for (let i = 0; i < this.dirtyCount; i++) {
      const state = this.dirtyStates[i]!;
      this.dirtyStates[i] = undefined;
      if (!state.dirty) continue; // forgotten since
      state.dirty = false;
      this.reprice(state.group, state, now);
    }
    this.dirtyCount = 0;
    // each group expires at most once per refresh: a re-price schedules it at or after now
    for (let budget = this.expiry.size; budget > 0 && this.expiry.peekKey() < now; budget--) {
      const g = this.expiry.peek();
      this.expiry.remove(g);
      this.quotesVersion++;
      this.reprice(g, this.dfs[g]!, now);
    }
  }

  page(query: EdgeQuery, after: RankCursor | null, limit: number, now: number): RankedPage<EdgeRecord> {
    this.settler?.();
    if (query.devig === 'multiplicative') {
      this.refresh(now);
      const minScore = query.minEdge > 0 ? query.minEdge : 0;
      const page = this.set.page({ leagues: query.leagues, eventIds: query.eventIds, tags: query.sources, minScore }, after, limit);
      const items: EdgeRecord[] = new Array(page.items.length);
      for (let i = 0; i < items.length; i++) items[i] = page.items[i].toRecord(this.groups);
      return { items, hasMore: page.hasMore, last: page.last };
    }
    return this.pageComputed(query, after, limit, now);
  }

  /** Every edge >= minEdge at now under a method, in serving order (tests, brute-force comparison). */
  all(now: number, devig: DevigMethod = 'multiplicative', minEdge = 0): EdgeRecord[] {
    const query: EdgeQuery = { leagues: null, sources: null, eventIds: null, minEdge, devig };
    return this.page(query, null, Number.MAX_SAFE_INTEGER, now).items;
  }

  // -- per update -----------------------------------------------------------

  private readBatch(g: number, batch: QuoteBatch, state: DfsQuotes): void {
    const outcomes = this.groups.outcomes[g];
    const local = state.listPosition;
    this.sharp.clear(local);
    state.clear();
    for (let i = 0; i < batch.length; i++) {
      const k = outcomeIndex(outcomes, batch.side[i]);
      if (k < 0) continue;
      if (batch.dfs[i] === 1) {
        const ref = batch.ref[i];
        if (ref >= 0) this.setPickOfRef(ref, state.count);
        state.push(batch.book[i], k, batch.side[i], batch.suspended[i], batch.dfsMultiplier[i], batch.line[i], batch.updated[i], batch.oddsId[i], batch.selection[i]);
        continue;
      }
      const slot = this.sharpSlotOfBook[batch.book[i]];
      const price = batch.priceDecimal[i];
      if (slot >= 0 && batch.suspended[i] === 0 && price > 1) this.sharp.quote(local, slot, k, price, batch.updated[i], true);
    }
  }

  /** Multiplicative edges of group g at now into the set; schedules its next expiry. */
  private reprice(g: number, state: DfsQuotes, now: number): void {
    const previous = state.listed;
    const next = this.spareListed;
    if (this.fairAt(g, state.listPosition, now, DEVIG_MULTIPLICATIVE) > 0) {
      this.expiry.set(g, this.sharp.expiresAt);
      for (let e = 0; e < state.count; e++) {
        const edge = this.edgeOf(state, e);
        if (!(edge >= 0)) continue;
        const id = state.oddsId[e];
        next.push(id);
        let entry = this.set.get(id);
        if (entry === undefined) entry = new EdgeEntry();
        else if (!this.differs(entry, g, state, e)) continue; // unchanged: the set (and its version) stays
        this.fill(entry, g, state, e, 'multiplicative');
        this.set.upsert(id, edge, entry, this.groups.league[g], this.groups.eventId[g], entry.source);
      }
    } else {
      this.expiry.remove(g);
    }
    for (let i = 0; i < previous.length; i++) if (!next.includes(previous[i])) this.set.delete(previous[i]);
    if (next.length === 0) {
      state.listed = NO_LISTED;
      if (previous !== NO_LISTED) this.spareListed = previous as string[];
    } else {
      state.listed = next;
      this.spareListed = previous === NO_LISTED ? [] : (previous as string[]);
    }
    this.spareListed.length = 0;
  }

  /** fairProbability - breakeven of DFS row e under the fair values of the last fairAt; NaN when it cannot be priced. */
  private edgeOf(state: DfsQuotes, e: number): number {
    const multiplier = state.multiplierAt(e);
    if (state.suspendedAt(e) || !(multiplier > 0)) return NaN;
    return this.sharp.fair[state.outcome[e]] - breakevenProbability(this.baseLegOfBook[state.book[e]], multiplier);
  }

  /** Fair value of group g (local slot `local`) at now into sharp.fair; how many sharp books were used. */
  private fairAt(g: number, local: number, now: number, method: number): number {
    return this.sharp.fairAt(local, OUTCOME_COUNT[this.groups.outcomes[g]], now, method);
  }

  /** What pick e of group g is worth under the last fairAt, into entry. */
  private fill(entry: EdgeEntry, g: number, state: DfsQuotes, e: number, devig: DevigMethod): void {
    const line = state.line[e];
    entry.g = g;
    entry.id = state.oddsId[e];
    entry.source = this.sources.ids[state.book[e]];
    entry.selection = state.selection[e];
    entry.side = SIDE_NAMES[state.side[e]];
    entry.line = Number.isNaN(line) ? null : line;
    entry.multiplier = state.multiplierAt(e);
    entry.breakeven = breakevenProbability(this.baseLegOfBook[state.book[e]], state.multiplierAt(e));
    entry.fair = this.sharp.fair[state.outcome[e]];
    entry.updated = state.updatedAt(e) > this.sharp.newest ? state.updatedAt(e) : this.sharp.newest;
    entry.sharpBooks = this.sharpBooksFor(this.sharp.usedMask);
    entry.devig = devig;
    entry.changed();
  }

  /** Whether fill would change anything that shows in the record. */
  private differs(entry: EdgeEntry, g: number, state: DfsQuotes, e: number): boolean {
    const updated = state.updatedAt(e) > this.sharp.newest ? state.updatedAt(e) : this.sharp.newest;
    return entry.g !== g
      || entry.fair !== this.sharp.fair[state.outcome[e]]
      || entry.multiplier !== state.multiplierAt(e)
      || entry.updated !== updated
      || entry.sharpBooks !== this.sharpBooksFor(this.sharp.usedMask)
      || entry.selection !== state.selection[e];
  }

  // -- per request (devig methods other than multiplicative) -----------------

  private pageComputed(query: EdgeQuery, after: RankCursor | null, limit: number, now: number): RankedPage<EdgeRecord> {
    const method = devigMethodCode(query.devig);
    if (method < 0) throw new RangeError(`unknown devig method ${query.devig}; expected one of ${DEVIG_METHODS.join(', ')}`);
    const minEdge = query.minEdge > 0 ? query.minEdge : 0;
    const found: { edge: number; id: string; g: number; e: number }[] = [];
    for (let i = 0; i < this.dfsGroupCount; i++) {
      const g = this.dfsGroups[i];
      if (query.leagues !== null && !query.leagues.includes(this.groups.league[g])) continue;
      if (query.eventIds !== null && !query.eventIds.includes(this.groups.eventId[g])) continue;
      const state = this.dfs[g]!;
      if (this.fairAt(g, i, now, method) === 0) continue;
      for (let e = 0; e < state.count; e++) {
        if (query.sources !== null && !query.sources.includes(this.sources.ids[state.book[e]])) continue;
        const edge = this.edgeOf(state, e);
        if (edge >= minEdge) found.push({ edge, id: state.oddsId[e], g, e });
      }
    }
    found.sort((a, b) => (b.edge - a.edge) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    let start = 0;
    if (after !== null) {
      while (start < found.length && (found[start].edge > after.score || (found[start].edge === after.score && found[start].id <= after.id))) start++;
    }
    const end = Math.min(found.length, start + limit);
    const items: EdgeRecord[] = [];
    for (let i = start; i < end; i++) {
      const { g, e } = found[i];
      this.fairAt(g, this.dfs[g]!.listPosition, now, method);
      const entry = new EdgeEntry();
      this.fill(entry, g, this.dfs[g]!, e, query.devig);
      items.push(entry.toRecord(this.groups));
    }
    const lastItem = items.length > 0 ? items[items.length - 1] : null;
    return {
      items,
      hasMore: end < found.length,
      last: lastItem === null ? null : { score: lastItem.edge, id: lastItem.id },
    };
  }

  // -- bookkeeping ------------------------------------------------------------

  private sharpBooksFor(mask: number): string[] {
    let books = this.sharpBooksByMask[mask];
    if (books === undefined) {
      books = this.config.sharpBooks.filter((_, slot) => (mask & (1 << slot)) !== 0);
      Object.freeze(books);
      this.sharpBooksByMask[mask] = books;
    }
    return books;
  }

  private adopt(g: number): DfsQuotes {
    const state = new DfsQuotes(g);
    this.dfs[g] = state;
    const local = this.dfsGroupCount++;
    if (local === this.dfsGroups.length) this.dfsGroups = grown(this.dfsGroups, local + 1);
    this.sharp.ensure(local);
    state.listPosition = local;
    this.dfsGroups[local] = g;
    return state;
  }

  /** Group g has no DFS rows any more: drop its records and its state; the last local slot moves into its place. */
  private forget(g: number, state: DfsQuotes): void {
    this.quotesVersion++;
    for (let i = 0; i < state.listed.length; i++) this.set.delete(state.listed[i]);
    this.expiry.remove(g);
    state.dirty = false;
    const local = state.listPosition;
    const lastLocal = --this.dfsGroupCount;
    if (local !== lastLocal) {
      const last = this.dfsGroups[lastLocal];
      this.dfsGroups[local] = last;
      this.dfs[last]!.listPosition = local;
      this.sharp.move(lastLocal, local);
    }
    this.dfs[g] = undefined;
  }

  private syncSources(): void {
    const count = this.sources.count;
    const slots = new Int32Array(count).fill(-1);
    const baseLeg = new Float64Array(count);
    for (let book = 0; book < count; book++) {
      const id = this.sources.ids[book];
      slots[book] = this.config.sharpBooks.indexOf(id);
      baseLeg[book] = baseLegDecimalOf(this.config, id);
    }
    this.sharpSlotOfBook = slots;
    this.baseLegOfBook = baseLeg;
  }

  private setPickOfRef(ref: number, e: number): void {
    if (ref >= this.pickOfRef.length) this.pickOfRef = grown(this.pickOfRef, ref + 1, -1);
    this.pickOfRef[ref] = e;
  }
}
