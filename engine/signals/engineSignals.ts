// The engine adapter of the signal books: SignalBooks fed from the engine's columns.
// Created once (by the composition root, service/app.ts) after the board is loaded:
// it places every live row, evaluates every group once (lazy: gives every row its role
// now and evaluates the arbitrage and edge books at their first read, or in steps by
// buildStep; SignalBooks.placeAll), then follows engine.subscribe:
//   insert            -> books.inserted (a new row, or a tombstone revived in its slot)
//   price             -> books.priced with the values just written (the O(1) hot path)
//   update, same line -> the same
//   update, new line  -> books.inserted (the row moves to another market group; the
//                        line is compared with its group's line, no per-slot copy)
//   remove            -> books.removed
// Price ticks are collected during an apply and settled together in changesApplied
// (or before the batch's next other change, which keeps the order of moves): a tick
// costs a few cache misses into tables spread over the whole board (its ref record,
// its group's best prices, its edge quotes), and touching them for the whole batch in
// one pass of independent reads (SignalBooks.warm) lets the CPU overlap those misses
// instead of paying them one after another.
// Event moves: upsertEvent rewrites a moved event's rows (each heard as an 'update') and
// then calls eventMoved, where the event's groups take the new start, so the records
// echo the rows (as /odds does).
// Steam: the detector's state is not a function of the board (it is the prices rows had
// before), so it is saved with every checkpoint (part STEAM_PART) and taken back when
// the books are built on a restored engine, before the log after the checkpoint replays
// through them (service/app.ts builds them in the start's `restored` hook).
// Reads go through edgesPage/arbitragePage; validity tokens for HTTP caching come
// from edgesVersion/arbitrageVersion (see there for how the clock enters).

import type { ChangeKind, ChangeListener, OddsEngine } from '../engine.ts';
import { americanToDecimal, type SourceKind } from '../model.ts';
import { NO_PRICE, SIDES } from '../oddsStore.ts';
import type { DevigMethod } from './devig.ts';
import type { EdgeQuery } from './edgeBook.ts';
import type { ArbitrageQuery, FlaggedQuote } from './arbitrageBook.ts';
import { ArbitrageReplay, type LiveGroups } from './arbitrageReplay.ts';
import type { PricePoint } from './tickHistory.ts';
import type { HistoricalArbitrageQuery } from './historicalReplay.ts';
import type { GroupRowInput, MarketGroups } from './marketGroups.ts';
import type { SourceTable } from './sourceTable.ts';
import type { QuoteBatch } from './quoteBatch.ts';
import type { RankCursor, RankedPage } from './rankedSet.ts';
import type { ArbitrageRecord, EdgeRecord, SignalsConfig } from './records.ts';
import { SignalBooks } from './signalBooks.ts';
import type { ScreenCursor, ScreenPage } from './screenBook.ts';
import type { QuoteSource } from './quoteBatch.ts';
import { sideCode } from './sides.ts';
import { grown } from '../columns.ts';
import { blankGroupInput, groupInputOf } from './groupInput.ts';
import type {
  BestPriceQuery, BestPriceRecord, FairLineQuery, FairLineRecord, MiddleQuery, MiddleRecord, PositiveEvQuery, PositiveEvRecord,
  ScreenConfig, SteamQuery, SteamRecord,
} from './screenRecords.ts';

/** The name of the steam detector's state in a checkpoint (OddsEngine.saveWithCheckpoints). */
export const STEAM_PART = 'steam';

export class EngineSignals implements QuoteSource, ChangeListener, LiveGroups {
  readonly books: SignalBooks;
  /** /historical/arbitrage over the live groups. */
  private readonly replay: ArbitrageReplay;
  /** engine book pool index -> SourceTable index (-1 until first seen). */
  private sourceOfBook = new Int32Array(64).fill(-1);
  private sideCodes: Uint8Array;
  private unsubscribe: () => void;
  /** Slots price-ticked in the current apply, not yet settled (see changesApplied). */
  private pending = new Int32Array(256);
  private pendingCount = 0;
  /** The grouping fields of the slot at hand, in one reused object (MarketGroups copies what it keeps). */
  private readonly input: GroupRowInput = blankGroupInput();

  constructor(readonly engine: OddsEngine, config: Partial<SignalsConfig> = {}, screenConfig: Partial<ScreenConfig> = {}, options: { lazy?: boolean } = {}) {
    this.books = new SignalBooks(config, undefined, screenConfig);
    this.sideCodes = Uint8Array.from(SIDES, (side) => sideCode(side));
    // the steam detector's histories and moves as the checkpoint this engine was restored
    // from held them (before the first full read, which then finds each row's history)
    const savedSteam = engine.takeRestoredPart(STEAM_PART);
    if (savedSteam !== undefined) this.books.steam.restoreState(savedSteam);
    const s = engine.store;
    for (let slot = 0; slot < s.size; slot++) {
      if (!s.isLive(slot)) continue;
      this.books.load(slot, groupInputOf(this.engine.store, slot, this.input));
    }
    // lazy: the rows get their roles (the steam detector follows every tick from here),
    // the arbitrage and edge books are evaluated by their first read, or in steps by
    // buildStep (the service does that once it is ready): a start does not wait for them
    if (options.lazy === true) this.books.placeAll(this);
    else this.books.evaluateAll(this);
    this.replay = new ArbitrageReplay(engine, this);
    this.unsubscribe = engine.subscribe(this);
    this.unsave = engine.saveWithCheckpoints(STEAM_PART, () => this.books.steam.saveState());
  }

  private readonly unsave: () => void;

  /** Groups a lazy build has not evaluated yet (0: the books are whole). */
  get unevaluatedGroups(): number {
    return this.books.unevaluatedCount;
  }

  /** Evaluates what a lazy build left until `deadline` (performance.now()); true once nothing is left. */
  buildStep(deadline: number): boolean {
    return this.books.evaluatePending(deadline);
  }

  /** Before a read of the books: the ticks of the apply at hand settled, and every group a lazy build left evaluated. */
  private ready(): void {
    this.changesApplied();
    this.books.evaluatePending();
  }

  get groups(): MarketGroups {
    return this.books.groups;
  }

  get sources(): SourceTable {
    return this.books.sources;
  }

  close(): void {
    // the board as the books last heard it: deferred arbitrage re-reads happen now, not
    // at a later read that would see changes made after the books stopped listening
    this.settleTicks();
    this.books.settleArbitrage();
    this.unsubscribe();
    this.unsave();
  }

  /**
   * Subscribes again, now last among the engine's listeners. The composition root builds
   * the books before a restore replays the log (so the steam detector follows every
   * replayed tick, as the writer did), then moves them behind the listeners it
   * subscribes afterwards (the push stream first).
   */
  resubscribed(): this {
    this.unsubscribe();
    this.unsubscribe = this.engine.subscribe(this);
    return this;
  }

  // -- engine -> books ------------------------------------------------------

  rowChanged(slot: number, kind: ChangeKind): void {
    if (kind === 'price') {
      if (this.pendingCount === this.pending.length) this.pending = grown(this.pending, this.pendingCount + 1);
      this.books.noteTick(this.pendingCount, slot);
      this.pending[this.pendingCount++] = slot;
      return;
    }
    // Anything else may move a row between groups: the ticks before it settle first, on
    // the lines they were made on (a later 'price' never moves a line, so a deferred
    // tick reads the row's final price on its own line).
    this.changesApplied();
    if (kind === 'remove') this.books.removed(slot, this);
    else if (kind === 'insert') this.books.inserted(slot, groupInputOf(this.engine.store, slot, this.input), this);
    else this.updated(slot);
  }

  /** A rescheduled event: its groups' records are rebuilt with the start its rows now carry. */
  eventMoved(eventId: string, startTime: number): void {
    this.changesApplied();
    this.books.eventMoved(eventId, startTime, this);
  }

  /** Settles the price ticks collected since the last call (the engine calls it at the end of apply). */
  changesApplied(): void {
    this.settleTicks();
    if (this.appliedListener !== null && this.books.screens.pendingGroups > 0) this.appliedListener();
  }

  /** Prices the ticks collected since the last call. */
  private settleTicks(): void {
    const count = this.pendingCount;
    if (count > 0) {
      this.pendingCount = 0;
      const pending = this.pending;
      this.books.warm(count);
      for (let i = 0; i < count; i++) this.priced(pending[i]);
    }
  }

  /**
   * Called when changes have marked screen groups (at the end of an apply, or before a
   * read): the signal stream's group topics settle and push them (engine/stream/signalTopics.ts).
   */
  appliedListener: (() => void) | null = null;

  /** A price-only change: the values just written, on the row's kept group and role. */
  private priced(slot: number): void {
    const s = this.engine.store;
    const pa = s.priceAmerican[slot];
    const decimal = pa === UNPRICED ? NaN : toDecimal(pa);
    this.books.priced(slot, decimal, s.suspended[slot] === 1, s.updated[slot], s.dfsMultiplier[slot], this);
  }

  /** An upserted row: a price tick in place, or (new line) a move to another group. */
  private updated(slot: number): void {
    const s = this.engine.store;
    // A new line moves the row to another group: the books compare it with the line
    // the row's last full read saw (same cache line as its group and role).
    const pa = s.priceAmerican[slot];
    const decimal = pa === UNPRICED ? NaN : toDecimal(pa);
    if (!this.books.pricedAtLine(slot, s.line[slot], decimal, s.suspended[slot] === 1, s.updated[slot], s.dfsMultiplier[slot], this)) {
      this.books.inserted(slot, groupInputOf(this.engine.store, slot, this.input), this);
    }
  }

  /**
   * QuoteSource: one row's current quote from the columns. The odds id is built here
   * (a short-lived string) rather than kept per slot: kept ids cost ~190 bytes a row
   * (~200 MB on the large board) to save ~40 ns per quote on a full group refill.
   */
  pushQuote(slot: number, batch: QuoteBatch): void {
    const s = this.engine.store;
    this.pushQuoteWith(slot, batch, s.idOf(slot), s.labels.get(s.selection[slot]));
  }

  /** QuoteSource: pushQuote without the odds id and selection label (see SignalBooks). */
  pushPriceQuote(slot: number, batch: QuoteBatch): void {
    this.pushQuoteWith(slot, batch, '', '');
  }

  private pushQuoteWith(slot: number, batch: QuoteBatch, oddsId: string, selectionLabel: string): void {
    const s = this.engine.store;
    const pa = s.priceAmerican[slot];
    batch.push(
      this.sourceOfSlot(slot),
      this.sideCodes[s.side[slot]],
      s.suspended[slot] === 1,
      pa === UNPRICED ? NaN : toDecimal(pa),
      pa === UNPRICED ? 0 : pa,
      s.dfsMultiplier[slot],
      s.line[slot],
      s.updated[slot],
      oddsId,
      selectionLabel,
      s.selection[slot],
    );
  }

  /** QuoteSource: the decimal price when the row can be an arbitrage leg, else 0. */
  usablePrice(slot: number): number {
    const s = this.engine.store;
    const pa = s.priceAmerican[slot];
    return pa === UNPRICED || s.suspended[slot] === 1 ? 0 : toDecimal(pa);
  }

  // -- reads ------------------------------------------------------------------

  /**
   * A page of /edges at the board's time (boardTime). Not this process's clock: sharp
   * quotes age on the time of the last logged change (the writer's clock, replayed with
   * the log), so the writer and every replica expire the same quote at the same board
   * sequence and answer the same bytes. The book expires only forwards, so every reader
   * of it (the routes, the alerts) must read it at this same time.
   */
  edgesPage(query: EdgeQuery, after: RankCursor | null, limit: number): RankedPage<EdgeRecord> {
    // nothing is pending after an apply returns; settling first keeps reads exact even
    // after an apply that threw before its changesApplied
    this.ready();
    return this.books.edges.page(query, after, limit, this.boardTime());
  }

  /** The time /edges is evaluated at: the engine's as-of (the last logged change's time). */
  boardTime(): number {
    return this.engine.asOf();
  }

  arbitragePage(query: ArbitrageQuery, after: RankCursor | null, limit: number): RankedPage<ArbitrageRecord> {
    this.ready();
    return this.books.arbitrage.page(query, after, limit);
  }

  /**
   * Cache validity of an /edges answer at the board's time (boardTime). The edge book
   * re-prices on read: first the groups ticked since the last read, then every group
   * whose oldest used sharp quote aged past the staleness window before that time (an
   * expiry heap). The version it returns moves whenever either changed a record
   * (multiplicative) or a kept quote (other methods), so a cached page stays valid
   * exactly while this number holds, board time included.
   */
  edgesVersion(devig: DevigMethod): number {
    this.ready();
    return this.books.edges.versionAt(this.boardTime(), devig);
  }

  /** Books quoting a negative margin on their own, per market group, lowest own implied sum first (the operator's list). */
  flaggedBooks(): FlaggedQuote[] {
    this.ready();
    return this.books.arbitrage.flaggedBooks();
  }

  /** Flagged market groups per sportsbook, and how many times a book became flagged in a group (for the metrics). */
  flaggedCounts(): { bySportsbook: ReadonlyMap<string, number>; events: number } {
    this.ready();
    return { bySportsbook: this.books.arbitrage.flaggedCounts(), events: this.books.arbitrage.flagEvents };
  }

  /** Arbitrage as it stood at query.to with staleness window to - from, replayed from the rings (and, for rows whose ring does not reach back, from `archived` price paths by id). */
  arbitrageAt(query: HistoricalArbitrageQuery, archived?: ReadonlyMap<string, PricePoint[]>): ArbitrageRecord[] {
    this.ready();
    return this.replay.at(query, archived);
  }

  /** Cache validity of an /arbitrage answer (arbitrage does not depend on the clock). */
  arbitrageVersion(): number {
    this.ready();
    return this.books.arbitrage.version;
  }

  // -- the trader screens (engine/signals/screenBook.ts, steamDetector.ts) ---------

  fairLines(query: FairLineQuery, now: number, limit: number): FairLineRecord[] {
    this.ready();
    return this.books.screens.fairLines(query, now, limit, this);
  }

  bestPrices(query: BestPriceQuery, limit: number): BestPriceRecord[] {
    this.ready();
    return this.books.screens.bestPrices(query, limit, this);
  }

  positiveEv(query: PositiveEvQuery, now: number, limit: number): PositiveEvRecord[] {
    this.ready();
    return this.books.screens.positiveEv(query, now, limit, this);
  }

  middles(query: MiddleQuery, limit: number): MiddleRecord[] {
    this.ready();
    return this.books.screens.middles(query, limit, this);
  }

  steamMoves(query: SteamQuery, limit: number): SteamRecord[] {
    this.changesApplied();
    return this.books.steam.list(query, limit);
  }

  // Pages of the screens for the routes' cursors: each in its serving order, after the
  // cursor's record (screenBook.ts ScreenCursor; steam: before the move numbered so).

  fairLinesPage(query: FairLineQuery, now: number, after: string | null, limit: number): ScreenPage<FairLineRecord> {
    this.changesApplied();
    return this.books.screens.fairLinesPage(query, now, after, limit, this);
  }

  bestPricesPage(query: BestPriceQuery, after: ScreenCursor | null, limit: number): ScreenPage<BestPriceRecord> {
    this.changesApplied();
    return this.books.screens.bestPricesPage(query, after, limit, this);
  }

  positiveEvPage(query: PositiveEvQuery, now: number, after: ScreenCursor | null, limit: number): ScreenPage<PositiveEvRecord> {
    this.changesApplied();
    return this.books.screens.positiveEvPage(query, now, after, limit, this);
  }

  middlesPage(query: MiddleQuery, after: ScreenCursor | null, limit: number): ScreenPage<MiddleRecord> {
    this.changesApplied();
    return this.books.screens.middlesPage(query, after, limit, this);
  }

  steamPage(query: SteamQuery, before: number | null, limit: number): ScreenPage<SteamRecord> & { last: number } {
    this.changesApplied();
    return this.books.steam.page(query, before, limit);
  }

  /** Each steam move as it is seen (at the end of the apply that brought it); returns the unsubscribe. */
  onSteam(listener: (record: SteamRecord) => void): () => void {
    this.steamListeners.add(listener);
    this.books.steam.onMove = (record) => { for (const l of this.steamListeners) l(record); };
    return () => { this.steamListeners.delete(listener); };
  }

  private readonly steamListeners = new Set<(record: SteamRecord) => void>();

  // -- helpers ----------------------------------------------------------------

  /** Source index of a slot's book (interned with the kind its row reveals when first seen). */
  sourceOfSlot(slot: number): number {
    const s = this.engine.store;
    const book = s.book[slot];
    if (book >= this.sourceOfBook.length) this.sourceOfBook = grown(this.sourceOfBook, book + 1, -1);
    let source = this.sourceOfBook[book];
    if (source < 0) {
      const kind: SourceKind = Number.isNaN(s.dfsMultiplier[slot]) ? 'retail' : 'dfs';
      source = this.books.sources.intern(s.books.get(book), kind);
      this.sourceOfBook[book] = source;
    }
    return source;
  }
}

// Imported bindings read per tick, held locally: under tsx an imported binding is an
// export getter call, which showed in the tick profile.
const UNPRICED = NO_PRICE;
const toDecimal = americanToDecimal;
