// The signals facade the engine adapter talks to. The adapter supplies a QuoteSource
// (push one ref's current quote from the engine columns onto a batch) and forwards
// row changes; everything else (grouping, re-evaluation, result books) lives here:
//
//   load(slot, row) ... then evaluateAll(source)   // bulk load: every group evaluated once
//   inserted(slot, row, source)        // a new row (or its line changed): place it, re-evaluate what it changes
//   priced(slot, decimal, suspended, updated, multiplier, source)  // the hot path: a tick, as values
//   changed(slot, source)              // the same, reading the quote through the source
//   removed(slot, source)              // tombstoned: leave its group, re-evaluate what it changes
//   eventMoved(eventId, start, source) // a rescheduled event: its records echo the new start
//   arbitrage.page(...), edges.page(..., now)  // the /arbitrage and /edges reads (edges at the board's time: EngineSignals.boardTime)
//
// A tick settles in O(1) in most cases (ArbitrageBook.priceChanged keeps the best price
// per outcome; EdgeBook.sharpChanged/pickChanged write the kept quote and mark the
// group for re-pricing at the next read). A batch of ticks can be noted (noteTick) and
// warmed (warm) before it is priced, so their cache misses overlap. A retail row
// joining or leaving a group settles like a tick (from or to an unusable quote).
// Other inserts and removals, and the few ticks that need it (the legs of an arb
// change), refill the whole group from its members through the QuoteSource and
// re-evaluate it.

import { ArbitrageBook } from './arbitrageBook.ts';
import { EdgeBook } from './edgeBook.ts';
import { MarketGroups, NONE as NO_REF, type GroupRowInput } from './marketGroups.ts';
import { QuoteBatch, type QuoteSource } from './quoteBatch.ts';
import { signalsConfig, type SignalsConfig } from './records.ts';
import { SourceTable } from './sourceTable.ts';
import { grown } from '../columns.ts';
import { outcomeIndex as importedOutcomeIndex } from './sides.ts';
import { ScreenBook } from './screenBook.ts';
import { DEFAULT_STEAM_CONFIG, type ScreenConfig } from './screenRecords.ts';
import { SteamDetector } from './steamDetector.ts';

// Imported bindings used per tick or per quote, held locally: under tsx an imported
// binding is an export getter call.
const NONE = NO_REF;
const outcomeIndex = importedOutcomeIndex;

// A ref's role word: bits 0-1 its outcome index k in the group (ROLE_NO_OUTCOME when its
// side is none of the group's outcomes), bit 2 set for a DFS row, bits 3-7 its sharp
// slot + 1 (0: not a sharp book), and above ROLE_PICK_SHIFT a DFS row's pick index.
const ROLE_OUTCOME_MASK = 3;
/** The outcome field's value for a ref outside the group's outcomes (k is 0..2). */
const ROLE_NO_OUTCOME = 3;
const ROLE_DFS = 4;
const ROLE_SLOT_SHIFT = 3;
const ROLE_SLOT_MASK = 0x1f << ROLE_SLOT_SHIFT;
const ROLE_BITS = 0xff;
/** Above the role bits: a DFS row's pick index in the edge book (-1: none). */
const ROLE_PICK_SHIFT = 8;
/**
 * On a non-DFS row (which has no pick index) the same bits hold its steam ring + 1 (0:
 * not a fair-line book's row): a sharp tick reaches its price history without another
 * lookup.
 */
const ROLE_RING_SHIFT = ROLE_PICK_SHIFT;

export class SignalBooks {
  readonly config: SignalsConfig;
  readonly groups = new MarketGroups();
  readonly batch: QuoteBatch;
  /**
   * Full group re-reads so far: the slow path. Price ticks should rarely take it; a
   * test watches the ratio, since a regression there keeps every result exact.
   */
  fullReads = 0;
  /** The one changed quote on the hot path. */
  private readonly single: QuoteBatch;
  /**
   * Per ref, 8 bytes that the tick path reads (one random cache line per tick on a
   * large board, so kept small), set on each full read: [2 * ref] its group + 1 (0:
   * none), [2 * ref + 1] its role (outcome index, 2 bits, 3 = none; DFS bit; sharp
   * slot + 1, 5 bits, 0 in groups without DFS rows; above them a DFS row's pick index
   * in the edge book).
   */
  private refInts = new Int32Array(2 * 1024);
  /** Per ref, the line its quote had at the last full read (an upsert on another line must re-place the row). */
  private refLines = new Float64Array(1024);
  readonly arbitrage: ArbitrageBook;
  readonly edges: EdgeBook;
  /** Fair line, best prices, +EV, middles: groups marked per tick, re-read at the next read. */
  readonly screens: ScreenBook;
  readonly steam: SteamDetector;

  constructor(config: Partial<SignalsConfig> = {}, readonly sources: SourceTable = new SourceTable(), screenConfig: Partial<ScreenConfig> = {}) {
    this.config = signalsConfig(config);
    this.batch = new QuoteBatch(sources);
    this.single = new QuoteBatch(sources, 1);
    this.arbitrage = new ArbitrageBook(this.groups);
    this.edges = new EdgeBook(this.groups, sources, this.config);
    const screens: ScreenConfig = {
      sharpBooks: this.config.sharpBooks.map((sportsbook) => ({ sportsbook, weight: 1 })),
      stalenessMs: this.config.stalenessMs,
      steam: DEFAULT_STEAM_CONFIG,
      ...screenConfig,
    };
    this.screens = new ScreenBook(this.groups, sources, screens);
    this.steam = new SteamDetector(this.groups, sources, screens.steam);
  }

  /** Bulk load: places a row without evaluating (call evaluateAll once the rows are in). */
  load(ref: number, row: GroupRowInput): void {
    const g = this.groups.groupFor(row);
    if (g >= 0) {
      this.groups.attach(ref, g);
      this.setRef(ref, g, ROLE_NO_OUTCOME, row.line === null ? NaN : row.line);
    }
  }

  /** Evaluates every live group once (after a bulk load). */
  evaluateAll(source: QuoteSource): void {
    for (let g = 0; g < this.groups.capacity; g++) if (this.groups.isLive(g)) this.refreshGroup(g, source);
  }

  /** A new row, or a row whose grouping fields (line) changed. Futures and YES rows are ignored. */
  inserted(ref: number, row: GroupRowInput, source: QuoteSource): void {
    const g = this.groups.groupFor(row);
    const old = this.groups.groupOf(ref);
    if (g === old) {
      if (g >= 0) this.refreshGroup(g, source);
      return;
    }
    if (old >= 0) this.left(old, ref, source);
    if (g >= 0) {
      this.groups.attach(ref, g);
      this.joined(g, ref, source);
    }
  }

  removed(ref: number, source: QuoteSource): void {
    const g = this.groups.groupOf(ref);
    if (g >= 0) this.left(g, ref, source);
  }

  /**
   * ref left group g. To arbitrage that is a tick that made its quote unusable, so a
   * retail row (most rows) settles on the tick path: only a best leg that leaves makes
   * the group re-rank or re-read. A DFS or sharp row of a group with DFS rows, or the
   * last member, re-reads the group (the edge book keeps those quotes by position).
   */
  private left(g: number, ref: number, source: QuoteSource): void {
    this.screens.touch(g);
    this.steam.release(ref);
    this.groups.detach(ref);
    const role = this.refInts[2 * ref + 1];
    this.refInts[2 * ref] = 0;
    if (this.groups.memberCount(g) === 0 || (role & (ROLE_DFS | ROLE_SLOT_MASK)) !== 0) this.refreshGroup(g, source);
    else this.pricedIn(g, ref, role, NaN, true, 0, NaN, source);
  }

  /**
   * ref joined group g. To arbitrage that is a tick that made an unusable quote usable
   * (it can only raise a best price), so a retail row settles on the tick path as
   * well. A group's first member, a DFS row, and a sharp row of a group with DFS rows
   * re-read the group, as left() does.
   */
  private joined(g: number, ref: number, source: QuoteSource): void {
    const one = this.quoteOf(ref, source);
    if (this.groups.memberCount(g) === 1 || one.dfs[0] === 1 || (this.edges.hasPicks(g) && this.edges.sharpSlotOf(one.book[0]) >= 0)) {
      this.refreshGroup(g, source);
      return;
    }
    const k = outcomeIndex(this.groups.outcomes[g], one.side[0]);
    this.screens.touch(g);
    // no sharp slot: without DFS rows in the group a sharp row's ticks skip the edge book (see evaluate)
    this.setRef(ref, g, (k < 0 ? ROLE_NO_OUTCOME : k) | this.steamRole(one, 0, ref), one.line[0]);
    if (k >= 0 && !this.arbitrage.priceChanged(g, k, ref, one.priceDecimal[0], one.suspended[0] === 1)) this.refreshGroup(g, source);
  }

  /**
   * The hottest path: one row's price, DFS multiplier, suspension or time changed (not
   * its line), given as the values the engine just wrote (priceDecimal NaN on DFS rows,
   * dfsMultiplier NaN on book rows). Reads no engine column unless the group must be
   * re-read in full.
   */
  priced(ref: number, priceDecimal: number, suspended: boolean, updated: number, dfsMultiplier: number, source: QuoteSource): void {
    if (2 * ref >= this.refInts.length) return;
    const g = this.refInts[2 * ref] - 1;
    if (g < 0) return;
    this.pricedIn(g, ref, this.refInts[2 * ref + 1], priceDecimal, suspended, updated, dfsMultiplier, source);
  }

  /**
   * priced() for a source that also reports the row's current line: false (nothing
   * applied) when the line differs from the one the row's last full read saw, so the
   * caller re-places the row (inserted). Rows in no group are ignored whatever their line.
   */
  pricedAtLine(ref: number, line: number, priceDecimal: number, suspended: boolean, updated: number, dfsMultiplier: number, source: QuoteSource): boolean {
    if (2 * ref >= this.refInts.length) return true;
    const g = this.refInts[2 * ref] - 1;
    if (g < 0) return true;
    const kept = this.refLines[ref];
    if (!(line === kept || (line !== line && kept !== kept))) return false;
    this.pricedIn(g, ref, this.refInts[2 * ref + 1], priceDecimal, suspended, updated, dfsMultiplier, source);
    return true;
  }

  private pricedIn(g: number, ref: number, role: number, priceDecimal: number, suspended: boolean, updated: number, dfsMultiplier: number, source: QuoteSource): void {
    this.screens.touch(g);
    const k = role & ROLE_OUTCOME_MASK;
    if (k === ROLE_NO_OUTCOME) return;
    if ((role & ROLE_DFS) === 0 && role >= 1 << ROLE_RING_SHIFT) this.steam.tickRing((role >> ROLE_RING_SHIFT) - 1, ref, g, k, priceDecimal, suspended, updated, source);
    let settled: boolean;
    if ((role & ROLE_DFS) === 0) {
      settled = this.arbitrage.priceChanged(g, k, ref, priceDecimal, suspended);
      if (!settled && this.arbitrage.legStaysBest(g, k, ref, priceDecimal, suspended)) settled = this.legRequoted(g, k, ref, source);
      if (!settled && source.usablePrice !== undefined) settled = this.arbitrage.loosen(g, k, ref, priceDecimal, suspended) || this.resolve(g, source);
      const slot = ((role & ROLE_BITS) >> ROLE_SLOT_SHIFT) - 1;
      if (settled && slot >= 0) settled = this.edges.sharpChanged(g, slot, k, priceDecimal, suspended, updated);
    } else {
      settled = this.edges.pickChanged(g, role >> ROLE_PICK_SHIFT, suspended, dfsMultiplier, updated);
    }
    if (!settled) this.refreshGroup(g, source);
  }

  /**
   * Notes the i-th tick of a batch (ref) for warm(): reads its group and role now, so
   * that miss overlaps the engine's work on the rest of the batch (measured ~5-10%
   * faster than reading every ref's record in a pass of its own at the end).
   */
  noteTick(i: number, ref: number): void {
    if (2 * i + 1 >= this.warmRoles.length) this.warmRoles = grown(this.warmRoles, 2 * i + 2);
    const at = 2 * ref;
    const inside = at < this.refInts.length;
    this.warmRoles[2 * i] = inside ? this.refInts[at] - 1 : -1;
    this.warmRoles[2 * i + 1] = inside ? this.refInts[at + 1] : ROLE_NO_OUTCOME;
  }

  /**
   * For the ticks noted since the batch began (noteTick 0..count-1), reads what priced()
   * will then read: its group's best prices and edge state, its kept quote. Each pass
   * is a loop of independent reads, so their cache misses overlap (priced() alone pays
   * them in series, one dependent miss after another). Changes nothing.
   */
  warm(count: number): void {
    this.warmSink = this.warmGroups(count) + this.warmQuotes(count);
  }

  /** Last sum of warm's reads (kept so they are not optimised away). */
  warmSink = 0;
  /** Per noted tick its group and role. */
  private warmRoles = new Int32Array(512);

  private warmGroups(count: number): number {
    const gr = this.warmRoles;
    let sink = 0;
    for (let i = 0; i < count; i++) {
      const g = gr[2 * i];
      const role = gr[2 * i + 1];
      const k = role & ROLE_OUTCOME_MASK;
      if (g < 0 || k === ROLE_NO_OUTCOME) continue;
      if ((role & ROLE_DFS) === 0) {
        sink += this.arbitrage.warm(g, k);
        // a fair-line book's row: its steam ring (the tick's window search reads it)
        if (role >= 1 << ROLE_RING_SHIFT) sink += this.steam.warm((role >> ROLE_RING_SHIFT) - 1);
      }
      if ((role & (ROLE_DFS | ROLE_SLOT_MASK)) !== 0) sink += this.edges.warmGroup(g);
    }
    return sink;
  }

  private warmQuotes(count: number): number {
    const gr = this.warmRoles;
    let sink = 0;
    for (let i = 0; i < count; i++) {
      const g = gr[2 * i];
      const role = gr[2 * i + 1];
      const k = role & ROLE_OUTCOME_MASK;
      if (g < 0 || k === ROLE_NO_OUTCOME || (role & (ROLE_DFS | ROLE_SLOT_MASK)) === 0) continue;
      const dfs = (role & ROLE_DFS) !== 0;
      sink += this.edges.warmQuote(g, dfs ? -1 : ((role & ROLE_BITS) >> ROLE_SLOT_SHIFT) - 1, k, dfs ? role >> ROLE_PICK_SHIFT : -1);
    }
    return sink;
  }

  /** Like priced, reading the row's quote through the source. */
  changed(ref: number, source: QuoteSource): void {
    const g = this.groups.groupOf(ref);
    if (g < 0) return;
    const one = this.quoteOf(ref, source);
    this.screens.touch(g);
    if (this.steam.isSharp(ref)) {
      const k = outcomeIndex(this.groups.outcomes[g], one.side[0]);
      if (k >= 0) this.steam.tick(ref, g, k, one.priceDecimal[0], one.suspended[0] === 1, one.updated[0], source);
    }
    const settled = this.arbitrage.quoteChanged(g, one, 0) && this.edges.quoteChanged(g, one, 0);
    if (!settled) this.refreshGroup(g, source);
  }

  /** A listed group's best leg moved and stays the best: its record is re-priced from that one quote. */
  private legRequoted(g: number, k: number, ref: number, source: QuoteSource): boolean {
    if (source.pushPriceQuote === undefined) return this.arbitrage.legRequoted(g, k, this.quoteOf(ref, source), 0);
    const one = this.single;
    one.clear();
    source.pushPriceQuote(ref, one);
    one.ref[0] = ref;
    return this.arbitrage.legRequoted(g, k, one, 0);
  }

  /** ref's current quote as the one entry of the reused single-quote batch (with its ref, so the fast paths can track it). */
  private quoteOf(ref: number, source: QuoteSource): QuoteBatch {
    const one = this.single;
    one.clear();
    source.pushQuote(ref, one);
    one.ref[0] = ref;
    return one;
  }

  /**
   * Re-ranks the unsure outcomes of group g (see ArbitrageBook.loosen) exactly; true
   * when the group then does not arb, false when it must be re-read in full (it arbs,
   * or did: its legs change).
   */
  private resolve(g: number, source: QuoteSource): boolean {
    for (let k = 0, n = this.arbitrage.outcomeCount(g); k < n; k++) {
      if (this.arbitrage.isUnsure(g, k) && !this.rerank(g, k, source)) return false;
    }
    return this.arbitrage.settlesWithoutArb(g);
  }

  /**
   * Finds outcome k's best quote and runner-up price from the members' prices alone (no
   * batch, no ids). False when it cannot (a listed group, or a best it cannot follow).
   */
  private rerank(g: number, k: number, source: QuoteSource): boolean {
    if (!this.arbitrage.canRerank(g, k)) return false;
    let best = NONE;
    let bestPrice = 0;
    let runnerUp = 0;
    for (let ref = this.groups.firstMember(g); ref !== NONE; ref = this.groups.nextMember(ref)) {
      const role = this.refInts[2 * ref + 1];
      if ((role & ROLE_DFS) !== 0 || (role & ROLE_OUTCOME_MASK) !== k) continue;
      const price = source.usablePrice!(ref);
      if (price > bestPrice) {
        runnerUp = bestPrice;
        bestPrice = price;
        best = ref;
      } else if (price > runnerUp) {
        runnerUp = price;
      }
    }
    this.arbitrage.setBest(g, k, best, bestPrice, runnerUp);
    return true;
  }

  /** Refills group g from its members and re-evaluates both books; frees the group once empty. */
  refreshGroup(g: number, source: QuoteSource): void {
    this.fullReads++;
    this.screens.touch(g);
    const batch = this.batch;
    batch.clear();
    const outcomes = this.groups.outcomes[g];
    for (let ref = this.groups.firstMember(g); ref !== NONE; ref = this.groups.nextMember(ref)) {
      source.pushQuote(ref, batch);
      const i = batch.length - 1;
      batch.ref[i] = ref;
      this.setRole(g, ref, outcomes, batch, i);
    }
    this.evaluate(g, batch);
  }

  /** An event's start moved (postponed, rescheduled): its groups' records are rebuilt with the new start. Rare: scans the groups. */
  eventMoved(eventId: string, eventStartTime: number, source: QuoteSource): void {
    for (let g = 0; g < this.groups.capacity; g++) {
      if (!this.groups.isLive(g) || this.groups.eventId[g] !== eventId) continue;
      this.groups.setEventStart(g, eventStartTime);
      this.arbitrage.drop(g);
      this.edges.drop(g);
      this.refreshGroup(g, source);
    }
  }

  /** Caches what priced() needs to know about a ref: its outcome, DFS or not, and its sharp slot. */
  private setRole(g: number, ref: number, outcomes: number, batch: QuoteBatch, i: number): void {
    const k = outcomeIndex(outcomes, batch.side[i]);
    const slot = batch.dfs[i] === 1 ? -1 : this.edges.sharpSlotOf(batch.book[i]);
    const role = (k < 0 ? ROLE_NO_OUTCOME : k) | (batch.dfs[i] === 1 ? ROLE_DFS : 0) | ((slot + 1) << ROLE_SLOT_SHIFT) | this.steamRole(batch, i, ref);
    this.setRef(ref, g, role, batch.line[i]);
  }

  /** A fair-line book's row: its steam ring + 1 in the role's high bits (registering it with the steam detector, which starts its price history); else 0. */
  private steamRole(batch: QuoteBatch, i: number, ref: number): number {
    const sharp = batch.dfs[i] === 0 && this.screens.sharpSlotOf(batch.book[i]) >= 0;
    const ring = this.steam.register(ref, sharp, batch.priceDecimal[i], batch.suspended[i] === 1, batch.updated[i]);
    return (ring + 1) << ROLE_RING_SHIFT;
  }

  private setRef(ref: number, g: number, role: number, line: number): void {
    if (2 * ref >= this.refInts.length) {
      // both double from 1024 lines and 2048 ints, so refInts stays twice refLines
      this.refInts = grown(this.refInts, 2 * ref + 2);
      this.refLines = grown(this.refLines, ref + 1);
    }
    this.refInts[2 * ref] = g + 1;
    this.refInts[2 * ref + 1] = role;
    this.refLines[ref] = line;
  }

  /** Both books on an already filled batch (with batch.ref set, so the fast paths can track it). */
  evaluate(g: number, batch: QuoteBatch): void {
    this.arbitrage.updateGroup(g, batch);
    this.edges.updateGroup(g, batch);
    // The DFS rows' pick indexes join the per-ref record (the edge book sets them on a
    // full read). Without DFS rows the edge book keeps nothing for the group, so its
    // sharp rows lose their sharp slot and their ticks skip the edge book altogether.
    const noPicks = batch.dfsCount === 0;
    for (let i = 0; i < batch.length; i++) {
      const ref = batch.ref[i];
      if (ref < 0 || 2 * ref >= this.refInts.length) continue;
      if (batch.dfs[i] === 1) {
        this.refInts[2 * ref + 1] = (this.refInts[2 * ref + 1] & ROLE_BITS) | (this.edges.pickIndexOf(ref) << ROLE_PICK_SHIFT);
      } else if (noPicks) {
        this.refInts[2 * ref + 1] &= ~ROLE_SLOT_MASK;
      }
    }
    if (batch.length === 0) this.groups.releaseIfEmpty(g);
  }
}
