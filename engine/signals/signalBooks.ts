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
// Other inserts and removals refill the whole group from its members through the
// QuoteSource and re-evaluate it. A tick the arbitrage fast paths cannot settle (a
// quote of a listed group, one that makes a group arb) is not re-read on the tick path:
// the group is marked (deferArbitrage) and its arbitrage re-read once at the next read
// of the arbitrage book (settleArbitrage), so a tick costs O(1) in the group's size
// whichever path it takes. Until then the group's ticks skip the arbitrage fast paths;
// only the flag of the ticked row's own book is followed per tick (trackFlag, through
// the book's rows in the group: a ring per book), for the flag counter.

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
// A ref's record in refInts (see there): its group + 1 at 4 * ref, then these.
const REF_ROLE = 1;
const REF_NEXT = 2;
const REF_FLAG = 3;

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
   * Per ref, 16 bytes that the tick path reads (one random cache line per tick on a
   * large board, and 16-byte aligned, so never two), set on each full read:
   *   [4 * ref]            its group + 1 (0: none)
   *   [4 * ref + REF_ROLE] its role (outcome index, 2 bits, 3 = none; DFS bit; sharp
   *                        slot + 1, 5 bits, 0 in groups without DFS rows; above them a
   *                        DFS row's pick index in the edge book, or a sharp row's steam ring + 1)
   *   [4 * ref + REF_NEXT] the next row of the same book in the same group (a ring; a
   *                        DFS row, or a row alone, points to itself): the rows
   *                        trackFlag sums for the book's own margin (book rows sit in
   *                        neighbouring slots, so their records share the line)
   *   [4 * ref + REF_FLAG] 1 while its book is flagged in its group (its own prices sum
   *                        below 1), equal across the book's ring: the state a flag
   *                        event is a change of
   */
  private refInts = new Int32Array(4 * 1024);
  /** Per ref, the line its quote had at the last full read (an upsert on another line must re-place the row). */
  private refLines = new Float64Array(1024);
  /** Per ref, its source index (SourceTable) as the last full read or join saw it. */
  private refBook = new Int32Array(1024);
  /** Per group, its position in dirtyGroups + 1 (0: its arbitrage is up to date). */
  private dirtyAt = new Int32Array(64);
  /** Groups whose arbitrage waits for the next read (deferArbitrage), dirtyCount of them. */
  private dirtyGroups = new Int32Array(64);
  private dirtyCount = 0;
  /** The source the deferred groups are re-read through (the one their ticks came from). */
  private dirtySource: QuoteSource | null = null;
  /** Group arbitrage re-reads done at reads for deferred ticks (settleArbitrage). */
  settledReads = 0;
  /**
   * Per group, 1 while a lazy build (placeAll) has not evaluated it yet: its rows hold
   * their roles (outcome, steam ring), so ticks reach the steam detector and the screens
   * as they would, but the arbitrage and edge books hold nothing of it until it is read
   * in full (refreshGroup): before any other change to it, or by evaluatePending, which
   * every read of those books calls first. Unevaluated groups: unevaluatedCount.
   */
  private unevaluated = new Uint8Array(64);
  unevaluatedCount = 0;
  /** Where evaluatePending's scan goes on from. */
  private unevaluatedFrom = 0;
  /** The source a lazy build placed the rows through (what evaluatePending reads them through). */
  private placedSource: QuoteSource | null = null;
  /** Per source index, a ring's last ref while a full read links its rows (-1 between reads). */
  private ringLast = new Int32Array(64).fill(-1);
  private ringFirst = new Int32Array(64).fill(-1);
  /** Per flagged book of an evaluation, whether one of its rows was flagged before it. */
  private wasFlagged = new Uint8Array(8);
  /** Best usable price per outcome of the book trackFlag sums. */
  private readonly ownBest = new Float64Array(3);
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
    this.arbitrage.settler = () => {
      this.evaluatePending();
      this.settleArbitrage();
    };
    this.edges = new EdgeBook(this.groups, sources, this.config);
    this.edges.settler = () => this.evaluatePending();
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

  /**
   * evaluateAll, lazily (after a bulk load): every live group's rows get their roles
   * now, as a full read gives them (each sharp row registered with the steam detector,
   * in the same order), without their quotes' ids or the books' evaluation; each group
   * is evaluated by its first full read (see unevaluated). What any read answers is
   * what it would answer after evaluateAll: a group's books are a function of its
   * members' quotes, which a full read takes as they are then.
   */
  placeAll(source: QuoteSource): void {
    this.placedSource = source;
    const batch = this.batch;
    const push = source.pushPriceQuote ?? source.pushQuote;
    for (let g = 0; g < this.groups.capacity; g++) {
      if (!this.groups.isLive(g)) continue;
      this.screens.touch(g);
      batch.clear();
      const outcomes = this.groups.outcomes[g];
      for (let ref = this.groups.firstMember(g); ref !== NONE; ref = this.groups.nextMember(ref)) {
        push.call(source, ref, batch);
        const i = batch.length - 1;
        batch.ref[i] = ref;
        this.setRole(g, ref, outcomes, batch, i);
      }
      if (g >= this.unevaluated.length) this.unevaluated = grown(this.unevaluated, g + 1);
      if (this.unevaluated[g] === 0) this.unevaluatedCount++;
      this.unevaluated[g] = 1;
    }
    this.unevaluatedFrom = 0;
  }

  /** Whether group g waits for its first full read (placeAll). */
  isUnevaluated(g: number): boolean {
    return g >= 0 && g < this.unevaluated.length && this.unevaluated[g] === 1;
  }

  /**
   * Evaluates the groups a lazy build left (placeAll), in group order, until none is left
   * (true) or, past `deadline` (performance.now()), after the group at hand (false: call
   * again). Every read of the arbitrage or edge book calls it first with no deadline.
   */
  evaluatePending(deadline = Infinity): boolean {
    const source = this.placedSource;
    if (this.unevaluatedCount === 0 || source === null) return true;
    // a read made while a group is evaluated (none does today) waits for the outer scan
    if (this.evaluating) return false;
    this.evaluating = true;
    try {
      while (this.unevaluatedCount > 0 && this.unevaluatedFrom < this.groups.capacity) {
        const g = this.unevaluatedFrom++;
        if (this.unevaluated[g] !== 1) continue;
        this.refreshGroup(g, source);
        if (this.unevaluatedCount > 0 && performance.now() >= deadline) return false;
      }
    } finally {
      this.evaluating = false;
    }
    if (this.unevaluatedCount === 0) this.placedSource = null;
    return this.unevaluatedCount === 0;
  }

  private evaluating = false;

  /** A change about to touch group g: a group a lazy build left is read in full first. */
  private evaluateIfPending(g: number, source: QuoteSource): void {
    if (g >= 0 && g < this.unevaluated.length && this.unevaluated[g] === 1) this.refreshGroup(g, source);
  }

  /** A new row, or a row whose grouping fields (line) changed. Futures and YES rows are ignored. */
  inserted(ref: number, row: GroupRowInput, source: QuoteSource): void {
    const old = this.groups.groupOf(ref);
    this.evaluateIfPending(old, source);
    const g = this.groups.groupFor(row);
    this.evaluateIfPending(g, source);
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
    this.evaluateIfPending(g, source);
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
    this.unlinkBookRing(ref);
    const role = this.refInts[REF_ROLE + 4 * ref];
    this.refInts[4 * ref] = 0;
    if (this.groups.memberCount(g) === 0 || (role & (ROLE_DFS | ROLE_SLOT_MASK)) !== 0 || this.isDeferred(g)) this.refreshGroup(g, source);
    else this.pricedIn(g, ref, role, NaN, true, 0, NaN, source, false);
  }

  /**
   * ref joined group g. To arbitrage that is a tick that made an unusable quote usable
   * (it can only raise a best price), so a retail row settles on the tick path as
   * well. A group's first member, a DFS row, and a sharp row of a group with DFS rows
   * re-read the group, as left() does.
   */
  private joined(g: number, ref: number, source: QuoteSource): void {
    const one = this.quoteOf(ref, source);
    if (this.groups.memberCount(g) === 1 || one.dfs[0] === 1 || (this.edges.hasPicks(g) && this.edges.sharpSlotOf(one.book[0]) >= 0) || this.isDeferred(g)) {
      this.refreshGroup(g, source);
      return;
    }
    const k = outcomeIndex(this.groups.outcomes[g], one.side[0]);
    this.screens.touch(g);
    // no sharp slot: without DFS rows in the group a sharp row's ticks skip the edge book (see evaluate)
    this.setRef(ref, g, (k < 0 ? ROLE_NO_OUTCOME : k) | this.steamRole(one, 0, ref), one.line[0]);
    this.linkBookRing(g, ref, one.book[0]);
    if (k >= 0 && !this.arbitrage.priceChanged(g, k, ref, one.priceDecimal[0], one.suspended[0] === 1)) this.refreshGroup(g, source);
  }

  /**
   * The hottest path: one row's price, DFS multiplier, suspension or time changed (not
   * its line), given as the values the engine just wrote (priceDecimal NaN on DFS rows,
   * dfsMultiplier NaN on book rows). Reads no engine column unless the group must be
   * re-read in full.
   */
  priced(ref: number, priceDecimal: number, suspended: boolean, updated: number, dfsMultiplier: number, source: QuoteSource): void {
    if (4 * ref >= this.refInts.length) return;
    const g = this.refInts[4 * ref] - 1;
    if (g < 0) return;
    this.pricedIn(g, ref, this.refInts[REF_ROLE + 4 * ref], priceDecimal, suspended, updated, dfsMultiplier, source, true);
  }

  /**
   * priced() for a source that also reports the row's current line: false (nothing
   * applied) when the line differs from the one the row's last full read saw, so the
   * caller re-places the row (inserted). Rows in no group are ignored whatever their line.
   */
  pricedAtLine(ref: number, line: number, priceDecimal: number, suspended: boolean, updated: number, dfsMultiplier: number, source: QuoteSource): boolean {
    if (4 * ref >= this.refInts.length) return true;
    const g = this.refInts[4 * ref] - 1;
    if (g < 0) return true;
    const kept = this.refLines[ref];
    if (!(line === kept || (line !== line && kept !== kept))) return false;
    this.pricedIn(g, ref, this.refInts[REF_ROLE + 4 * ref], priceDecimal, suspended, updated, dfsMultiplier, source, true);
    return true;
  }

  /**
   * A tick (tick: true) or a retail row leaving a group that is not deferred (tick:
   * false, its quote given as unusable) on outcome k of its role. A tick the arbitrage
   * fast paths cannot settle defers the group's arbitrage to the next read (with a
   * source that can report prices, which trackFlag needs); the leaving row re-reads it.
   */
  private pricedIn(g: number, ref: number, role: number, priceDecimal: number, suspended: boolean, updated: number, dfsMultiplier: number, source: QuoteSource, tick: boolean): void {
    this.screens.touch(g);
    const k = role & ROLE_OUTCOME_MASK;
    if (k === ROLE_NO_OUTCOME) return;
    if (g < this.unevaluated.length && this.unevaluated[g] === 1) {
      // not evaluated yet (placeAll): the steam detector hears the tick as it would; the
      // books read the group in full when it is first read
      if (!tick) {
        this.refreshGroup(g, source);
        return;
      }
      if ((role & ROLE_DFS) === 0 && role >= 1 << ROLE_RING_SHIFT) this.steam.tickRing((role >> ROLE_RING_SHIFT) - 1, ref, g, k, priceDecimal, suspended, updated, source);
      return;
    }
    if ((role & ROLE_DFS) !== 0) {
      if (!this.edges.pickChanged(g, role >> ROLE_PICK_SHIFT, suspended, dfsMultiplier, updated)) this.refreshGroup(g, source);
      return;
    }
    if (role >= 1 << ROLE_RING_SHIFT) this.steam.tickRing((role >> ROLE_RING_SHIFT) - 1, ref, g, k, priceDecimal, suspended, updated, source);
    let deferred = g < this.dirtyAt.length && this.dirtyAt[g] !== 0;
    if (!deferred) {
      let settled = this.arbitrage.priceChanged(g, k, ref, priceDecimal, suspended);
      if (!settled && this.arbitrage.legStaysBest(g, k, ref, priceDecimal, suspended)) settled = this.legRequoted(g, k, ref, source);
      if (!settled && source.usablePrice !== undefined) settled = this.arbitrage.loosen(g, k, ref, priceDecimal, suspended) || this.resolve(g, source);
      if (!settled) {
        if (!tick || source.usablePrice === undefined) {
          this.refreshGroup(g, source);
          return;
        }
        this.deferArbitrage(g, source);
        deferred = true;
      }
    }
    // the book's flag as a re-read after this tick would find it (a settled tick moves no flag)
    if (deferred) this.trackFlag(ref, g, !suspended && priceDecimal > 1 ? priceDecimal : 0, source);
    const slot = ((role & ROLE_BITS) >> ROLE_SLOT_SHIFT) - 1;
    if (slot >= 0 && !this.edges.sharpChanged(g, slot, k, priceDecimal, suspended, updated)) this.refreshGroup(g, source);
  }

  /** Whether group g's arbitrage waits for the next read (deferArbitrage). */
  private isDeferred(g: number): boolean {
    return g < this.dirtyAt.length && this.dirtyAt[g] !== 0;
  }

  /** Marks group g's arbitrage for a re-read at the next read of the arbitrage book. */
  private deferArbitrage(g: number, source: QuoteSource): void {
    if (g >= this.dirtyAt.length) this.dirtyAt = grown(this.dirtyAt, g + 1);
    if (this.dirtyCount === this.dirtyGroups.length) this.dirtyGroups = grown(this.dirtyGroups, this.dirtyCount + 1);
    this.dirtyGroups[this.dirtyCount++] = g;
    this.dirtyAt[g] = this.dirtyCount;
    this.dirtySource = source;
  }

  /** Group g's arbitrage is up to date (a full read evaluated it): off the deferred list. */
  private undefer(g: number): void {
    const at = this.dirtyAt[g] - 1;
    this.dirtyAt[g] = 0;
    const last = this.dirtyGroups[--this.dirtyCount];
    if (last !== g) {
      this.dirtyGroups[at] = last;
      this.dirtyAt[last] = at + 1;
    }
  }

  /** Groups whose arbitrage waits for the next read. */
  get deferredGroups(): number {
    return this.dirtyCount;
  }

  /**
   * Re-reads the arbitrage of every deferred group (the arbitrage book calls it before
   * each of its reads): each once, whatever number of ticks it took since the last read.
   */
  settleArbitrage(): void {
    const source = this.dirtySource;
    if (this.dirtyCount === 0 || source === null) return;
    const batch = this.batch;
    while (this.dirtyCount > 0) {
      const g = this.dirtyGroups[this.dirtyCount - 1];
      batch.clear();
      for (let ref = this.groups.firstMember(g); ref !== NONE; ref = this.groups.nextMember(ref)) {
        source.pushQuote(ref, batch);
        batch.ref[batch.length - 1] = ref;
      }
      this.settledReads++;
      this.evaluateArbitrage(g, batch);
    }
    this.dirtySource = null;
  }

  /**
   * The tick of ref (usable price `price`, 0: none) in deferred group g: its book's own
   * prices in the group summed from the book's ring, and a flag event when that makes
   * the book flagged (its rows' flag words say whether it was). Settled ticks need none:
   * a group whose bests do not arb has no flagged book, and a listed group's settled
   * tick (legRequoted) is a leg that got no better in a group without flags.
   */
  private trackFlag(ref: number, g: number, price: number, source: QuoteSource): void {
    const n = this.arbitrage.outcomeCount(g);
    const best = this.ownBest;
    best[0] = best[1] = best[2] = 0;
    let r = ref;
    do {
      const k = this.refInts[REF_ROLE + 4 * r] & ROLE_OUTCOME_MASK;
      if (k < n) {
        const p = r === ref ? price : source.usablePrice!(r);
        if (p > 1 && p > best[k]) best[k] = p;
      }
      r = this.refInts[REF_NEXT + 4 * r];
    } while (r !== ref);
    let own = 0;
    for (let k = 0; k < n; k++) own += best[k] > 0 ? 1 / best[k] : Infinity;
    const flagged = n > 0 && own < 1 ? 1 : 0;
    if (flagged === this.refInts[REF_FLAG + 4 * ref]) return;
    if (flagged === 1) this.arbitrage.flagEvents++;
    r = ref;
    do {
      this.refInts[REF_FLAG + 4 * r] = flagged;
      r = this.refInts[REF_NEXT + 4 * r];
    } while (r !== ref);
  }

  /** Puts retail row ref (book `book`) of group g into its book's ring, taking the book's flag. */
  private linkBookRing(g: number, ref: number, book: number): void {
    this.refBook[ref] = book;
    this.refInts[REF_NEXT + 4 * ref] = ref;
    this.refInts[REF_FLAG + 4 * ref] = 0;
    for (let r = this.groups.firstMember(g); r !== NONE; r = this.groups.nextMember(r)) {
      if (r === ref || this.refBook[r] !== book || (this.refInts[REF_ROLE + 4 * r] & ROLE_DFS) !== 0) continue;
      this.refInts[REF_NEXT + 4 * ref] = this.refInts[REF_NEXT + 4 * r];
      this.refInts[REF_NEXT + 4 * r] = ref;
      this.refInts[REF_FLAG + 4 * ref] = this.refInts[REF_FLAG + 4 * r];
      return;
    }
  }

  /** Takes ref out of its book's ring (it left its group). */
  private unlinkBookRing(ref: number): void {
    if (4 * ref >= this.refInts.length) return;
    let r = ref;
    while (this.refInts[REF_NEXT + 4 * r] !== ref) r = this.refInts[REF_NEXT + 4 * r];
    this.refInts[REF_NEXT + 4 * r] = this.refInts[REF_NEXT + 4 * ref];
    this.refInts[REF_NEXT + 4 * ref] = ref;
    this.refInts[REF_FLAG + 4 * ref] = 0;
  }

  /**
   * Notes the i-th tick of a batch (ref) for warm(): reads its group and role now, so
   * that miss overlaps the engine's work on the rest of the batch (measured ~5-10%
   * faster than reading every ref's record in a pass of its own at the end).
   */
  noteTick(i: number, ref: number): void {
    if (2 * i + 1 >= this.warmRoles.length) this.warmRoles = grown(this.warmRoles, 2 * i + 2);
    const at = 4 * ref;
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
    this.evaluateIfPending(g, source);
    const one = this.quoteOf(ref, source);
    this.screens.touch(g);
    if (this.isDeferred(g)) {
      // the fast paths would read the group's stale bests: read it in full, as ticks once did
      if (this.steam.isSharp(ref)) {
        const k = outcomeIndex(this.groups.outcomes[g], one.side[0]);
        if (k >= 0) this.steam.tick(ref, g, k, one.priceDecimal[0], one.suspended[0] === 1, one.updated[0], source);
      }
      this.refreshGroup(g, source);
      return;
    }
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
      const role = this.refInts[REF_ROLE + 4 * ref];
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
    if (g < this.unevaluated.length && this.unevaluated[g] === 1) {
      this.unevaluated[g] = 0;
      this.unevaluatedCount--;
    }
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
      // the dropped flags are flags no more: the re-read finds (and counts) them anew
      for (let ref = this.groups.firstMember(g); ref !== NONE; ref = this.groups.nextMember(ref)) this.refInts[REF_FLAG + 4 * ref] = 0;
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
    if (4 * ref >= this.refInts.length) {
      // all double from 1024 refs (4096 ints), so refInts stays four times refLines
      this.refInts = grown(this.refInts, 4 * ref + 4);
      this.refLines = grown(this.refLines, ref + 1);
      this.refBook = grown(this.refBook, ref + 1);
    }
    this.refInts[4 * ref] = g + 1;
    this.refInts[REF_ROLE + 4 * ref] = role;
    this.refLines[ref] = line;
  }

  /** Both books on an already filled batch (with batch.ref set, so the fast paths can track it). */
  evaluate(g: number, batch: QuoteBatch): void {
    this.linkBookRings(batch);
    this.evaluateArbitrage(g, batch);
    this.edges.updateGroup(g, batch);
    // The DFS rows' pick indexes join the per-ref record (the edge book sets them on a
    // full read). Without DFS rows the edge book keeps nothing for the group, so its
    // sharp rows lose their sharp slot and their ticks skip the edge book altogether.
    const noPicks = batch.dfsCount === 0;
    for (let i = 0; i < batch.length; i++) {
      const ref = batch.ref[i];
      if (ref < 0 || 4 * ref >= this.refInts.length) continue;
      if (batch.dfs[i] === 1) {
        this.refInts[REF_ROLE + 4 * ref] = (this.refInts[REF_ROLE + 4 * ref] & ROLE_BITS) | (this.edges.pickIndexOf(ref) << ROLE_PICK_SHIFT);
      } else if (noPicks) {
        this.refInts[REF_ROLE + 4 * ref] &= ~ROLE_SLOT_MASK;
      }
    }
    if (batch.length === 0) this.groups.releaseIfEmpty(g);
  }

  /**
   * The arbitrage book on group g's full batch, then each row's flag bit from what it
   * found: a flagged book none of whose rows was flagged is a flag event. The group is
   * no longer deferred.
   */
  private evaluateArbitrage(g: number, batch: QuoteBatch): void {
    if (g < this.dirtyAt.length && this.dirtyAt[g] !== 0) this.undefer(g);
    const arbitrage = this.arbitrage;
    arbitrage.updateGroup(g, batch);
    const flagged = arbitrage.lastFlaggedCount;
    if (flagged > this.wasFlagged.length) this.wasFlagged = grown(this.wasFlagged, flagged);
    const was = this.wasFlagged;
    was.fill(0, 0, flagged);
    for (let i = 0; i < batch.length; i++) {
      const ref = batch.ref[i];
      if (ref < 0 || 4 * ref >= this.refInts.length) continue;
      let bit = 0;
      if (batch.dfs[i] === 0) {
        for (let f = 0; f < flagged; f++) {
          if (arbitrage.lastFlaggedBook(f) !== batch.book[i]) continue;
          was[f] |= this.refInts[REF_FLAG + 4 * ref];
          bit = 1;
          break;
        }
      }
      this.refInts[REF_FLAG + 4 * ref] = bit;
    }
    for (let f = 0; f < flagged; f++) if (was[f] === 0) arbitrage.flagEvents++;
  }

  /** The book rings of a full batch's retail rows (each DFS row alone in its own). */
  private linkBookRings(batch: QuoteBatch): void {
    if (this.ringLast.length < batch.sources.count) {
      this.ringLast = grown(this.ringLast, batch.sources.count, -1);
      this.ringFirst = grown(this.ringFirst, batch.sources.count, -1);
    }
    const last = this.ringLast;
    const first = this.ringFirst;
    for (let i = 0; i < batch.length; i++) {
      const ref = batch.ref[i];
      if (ref < 0 || 4 * ref >= this.refInts.length) continue;
      const book = batch.book[i];
      this.refBook[ref] = book;
      this.refInts[REF_NEXT + 4 * ref] = ref;
      if (batch.dfs[i] === 1) continue;
      if (last[book] < 0) first[book] = ref;
      else this.refInts[REF_NEXT + 4 * last[book]] = ref;
      last[book] = ref;
    }
    for (let i = 0; i < batch.length; i++) {
      const ref = batch.ref[i];
      if (ref < 0 || 4 * ref >= this.refInts.length || batch.dfs[i] === 1) continue;
      const book = batch.book[i];
      if (last[book] < 0) continue;
      this.refInts[REF_NEXT + 4 * last[book]] = first[book];
      last[book] = -1;
      first[book] = -1;
    }
  }
}
