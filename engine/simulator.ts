// A live board: drives engine.apply with realistic ticks at a configurable rate.
// Prices follow a market model instead of independent random walks:
//   - each market group (the rows of every book that compete: event, subtype, period,
//     line, player or team; engine/signals/groupKey.ts) has a fair value that moves:
//     news (small jumps) and now and then steam (a big one), each pulling the previous
//     move part of the way back, so the fair value wanders around where it started;
//   - each book quotes its own level (the row's price when the simulator first saw it,
//     hold included) moved by the part of the fair move it has taken in: sharp books
//     take a move in within a second, retail books after a lag of seconds of their own
//     (the book's lag), so a retail price that lags a big move opens an arbitrage
//     against a sharp book and closes it when the retail book catches up;
//   - DFS multipliers step rarely (a fixed payout ladder): a DFS pick lagging a fair
//     move is an edge until the app steps it;
//   - both sides of a two-way market move together (found by swapping the side in the
//     selection id), with a little noise of each book's own.
// Besides prices: some suspension toggles (more on live events), alternate lines added
// and pulled, and the event lifecycle: scheduled events whose start has passed go
// in_progress, in-progress games past their sport's duration go final (the engine
// then tombstones their rows).
// Driven by an unref'd setInterval (every intervalMs, rate * intervalMs / 1000
// changes); with a ManualClock each tick also advances the clock by the interval.

import { gameDurationMs } from './calendar.ts';
import { ManualClock, type Clock } from './clock.ts';
import type { ApplyResult, Change, OddsEngine } from './engine.ts';
import { STATUS_IN_PROGRESS, STATUS_SCHEDULED } from './eventTable.ts';
import { americanToDecimal, decimalToAmerican, type OddsInput } from './model.ts';
import { NO_PRICE, SIDES, SIDE_OVER, SIDE_UNDER } from './oddsStore.ts';
import { mulberry32 } from './random.ts';
import { grown } from './columns.ts';

export interface SimulatorOptions {
  ratePerSecond: number;
  seed: number;
  intervalMs?: number;
  /** How long a game of this league lasts (default: the league calendar's durations). */
  durationMs?: (league: string) => number;
}

export interface SimulatorStats {
  ticks: number;
  applied: number;
  priceMoves: number;
  suspensionToggles: number;
  linesAdded: number;
  linesPulled: number;
  statusChanges: number;
}

/** News per simulated change: on the small board about one news item per group every minute of simulated time at 2,000 changes/s. */
const NEWS_PER_CHANGE = 0.004;
/** Fair moves (implied probability): news is a jump of this standard deviation ... */
const NEWS_SIZE = 0.005;
/** ... and one in STEAM_SHARE of them is steam: a move this large, one way. */
const STEAM_SIZE = 0.016;
const STEAM_SHARE = 0.05;
/** Share of the previous fair move each news item takes back (keeps the fair value near where it started). */
const FAIR_REVERSION = 0.3;
/** A book's own noise around its level (implied probability, uniform +-). */
const BOOK_NOISE = 0.0008;
/** Lags: sharp books take a fair move in within SHARP_LAG_MS, retail ones after RETAIL_LAG_MS (+ up to as much again, per book). */
const SHARP_LAG_MS = 250;
const RETAIL_LAG_MS = 2000;
/** How often a DFS pick's multiplier steps when the simulator picks it, and by how much. */
const DFS_STEP_CHANCE = 0.03;
const DFS_STEP = 0.05;
/** A fair move this large (in implied probability) is what a DFS ladder step answers. */
const DFS_STEP_TRIGGER = 0.02;

/** An alternate line no book lists yet: implied probability per point of line, and the extra hold a side. */
const ALT_LINE_SLOPE = 0.04;
const ALT_LINE_HOLD = 0.01;
/** No alternate is added where a side's implied probability would fall below this (or rise above 1 minus it). */
const ALT_LINE_MIN = 0.06;

const KIND_UNKNOWN = 0;
const KIND_SHARP = 1;
const KIND_RETAIL = 2;
const KIND_DFS = 3;

/** The fair move's sign per side (SIDES order: HOME, AWAY, DRAW, OVER, UNDER, YES): a move toward HOME/OVER raises them. */
const SIDE_SIGN = [1, -1, 0, 1, -1, 0];

/** A row's identity (the engine's key: event, book, subtype, selection id) folded into 32 bits. */
function rowHash(event: number, book: number, subtype: number, selection: number): number {
  let h = Math.imul(event ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ book ^ (h >>> 13), 0xc2b2ae35);
  h = Math.imul(h ^ subtype ^ (h >>> 16), 0x85ebca6b);
  return Math.imul(h ^ selection ^ (h >>> 13), 0xc2b2ae35) ^ (h >>> 16);
}

const OPPOSITE: Record<string, string> = { OVER: 'UNDER', UNDER: 'OVER', HOME: 'AWAY', AWAY: 'HOME' };


/** 'm3.5' for -3.5 (the fixtures' URL-safe line encoding). */
function lineToken(line: number): string {
  return line < 0 ? `m${-line}` : String(line);
}

export class Simulator {
  readonly stats: SimulatorStats = { ticks: 0, applied: 0, priceMoves: 0, suspensionToggles: 0, linesAdded: 0, linesPulled: 0, statusChanges: 0 };
  private readonly rand: () => number;
  private readonly intervalMs: number;
  private readonly durationMs: (league: string) => number;
  private timer: NodeJS.Timeout | null = null;
  private carry = 0;
  private batch: Change[] = [];
  /** Per slot: which row (rowHash) its state belongs to, and the anchor: the book's level (implied probability; 0: none yet). */
  private anchorRow = new Int32Array(0);
  private anchorProbability = new Float64Array(0);
  /** Per slot: its market group, and the part of the group's fair move its book has taken in. */
  private slotGroup = new Int32Array(0);
  private seenMove = new Float64Array(0);
  /** Per market group: the fair move (implied probability of HOME/OVER) and when it last changed. */
  private readonly groupIds = new Map<string, number>();
  private fairMove = new Float64Array(256);
  private movedAt = new Float64Array(256);
  /** Per book (engine pool index): KIND_*, and its lag. */
  private bookKind = new Uint8Array(64);
  private bookLag = new Float64Array(64);
  private newsCarry = 0;
  /** The board's seq when the simulator was made: rows not changed since are priced as of a fair move of 0. */
  private readonly startSeq: number;

  constructor(
    private readonly engine: OddsEngine,
    private readonly clock: Clock,
    private readonly options: SimulatorOptions,
  ) {
    this.rand = mulberry32(options.seed);
    this.intervalMs = options.intervalMs ?? 50;
    this.durationMs = options.durationMs ?? gameDurationMs;
    this.startSeq = engine.seq;
  }

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
  }

  /** One interval's worth of changes (what the timer runs). */
  tick(): ApplyResult {
    this.carry += (this.options.ratePerSecond * this.intervalMs) / 1000;
    const count = Math.floor(this.carry);
    this.carry -= count;
    if (this.clock instanceof ManualClock) this.clock.advance(this.intervalMs);
    return this.run(count);
  }

  /** Applies `changes` changes as one batch now (tests); a ManualClock advances by their share of a second. */
  step(changes: number): ApplyResult {
    if (this.clock instanceof ManualClock && this.options.ratePerSecond > 0) {
      this.clock.advance(Math.max(1, Math.round((changes * 1000) / this.options.ratePerSecond)));
    }
    return this.run(changes);
  }

  private run(changes: number): ApplyResult {
    const result = this.engine.apply(this.nextBatch(changes));
    this.stats.applied += result.applied;
    return result;
  }

  /**
   * The next batch of `changes` changes (plus any due status changes), built from the
   * board as it is now but not applied: the caller applies it before asking for the
   * next (benchmarks time the apply alone). The array is reused by the next call.
   */
  nextBatch(changes: number): readonly Change[] {
    this.stats.ticks++;
    const batch = this.batch;
    batch.length = 0;
    this.lifecycle(batch);
    this.news(changes);
    const target = batch.length + changes;
    for (let i = 0; batch.length < target && i < changes * 4; i++) {
      const slot = this.randomLiveSlot();
      if (slot < 0) break;
      const r = this.rand();
      if (r < 0.013) this.addAlternate(slot, batch);
      else if (r < 0.023) this.pull(slot, batch);
      else if (r < this.suspendChance(slot)) this.toggleSuspension(slot, batch);
      else this.movePrice(slot, batch);
    }
    return batch;
  }

  // ---- event lifecycle -------------------------------------------------------------

  private lifecycle(batch: Change[]): void {
    const table = this.engine.eventTable;
    const now = this.clock.now();
    for (let ev = 0; ev < table.known.length; ev++) {
      if (table.known[ev] === 0 || table.futures[ev] === 1) continue;
      const status = table.status[ev];
      const start = table.startTime[ev];
      if (status === STATUS_SCHEDULED && start <= now) {
        batch.push({ op: 'status', eventId: this.engine.store.events.get(ev), status: 'in_progress' });
        this.stats.statusChanges++;
      } else if (status === STATUS_IN_PROGRESS && now >= start + this.durationMs(this.engine.store.leagues.get(table.league[ev]))) {
        batch.push({ op: 'status', eventId: this.engine.store.events.get(ev), status: 'final' });
        this.stats.statusChanges++;
      }
    }
  }

  // ---- row changes -----------------------------------------------------------------

  private randomLiveSlot(): number {
    const size = this.engine.store.size;
    for (let tries = 0; tries < 64 && size > 0; tries++) {
      const slot = Math.floor(this.rand() * size);
      if (this.engine.isLive(slot)) return slot;
    }
    return -1;
  }

  private suspendChance(slot: number): number {
    const live = this.engine.eventTable.status[this.engine.store.event[slot]] === STATUS_IN_PROGRESS;
    return 0.023 + (live ? 0.04 : 0.004);
  }

  /** The other side of a two-way selection (OVER/UNDER at the same line, HOME/AWAY at the mirrored line), or -1. */
  partnerOf(slot: number): number {
    const s = this.engine.store;
    const side = SIDES[s.side[slot]];
    const other = OPPOSITE[side];
    if (other === undefined) return -1;
    const period = s.periods.get(s.period[slot]);
    const selection = s.selectionIds.get(s.selectionId[slot]);
    const prefix = `${period}-${side}`;
    if (!selection.startsWith(prefix)) return -1;
    let rest = selection.slice(prefix.length);
    const line = s.line[slot];
    if (!Number.isNaN(line) && (side === 'HOME' || side === 'AWAY')) {
      const token = `-${lineToken(line)}`;
      if (!rest.startsWith(token)) return -1;
      rest = `-${lineToken(-line)}${rest.slice(token.length)}`;
    }
    const partnerSelection = s.selectionIds.lookup(`${period}-${other}${rest}`);
    if (partnerSelection < 0) return -1;
    const partner = this.engine.keys.find(s.event[slot], s.book[slot], s.subtype[slot], partnerSelection);
    return partner >= 0 && this.engine.isLive(partner) ? partner : -1;
  }

  // ---- the market model --------------------------------------------------------------

  /** News and steam on random groups, in proportion to the changes asked for. */
  private news(changes: number): void {
    this.newsCarry += changes * NEWS_PER_CHANGE;
    const now = this.clock.now();
    for (; this.newsCarry >= 1; this.newsCarry--) {
      const slot = this.randomLiveSlot();
      if (slot < 0) return;
      this.anchorOf(slot);
      const g = this.slotGroup[slot];
      const jump = this.rand() < STEAM_SHARE ? (this.rand() < 0.5 ? -STEAM_SIZE : STEAM_SIZE) : (this.rand() + this.rand() + this.rand() - 1.5) * 2 * NEWS_SIZE;
      this.fairMove[g] = this.fairMove[g] * (1 - FAIR_REVERSION) + jump;
      this.movedAt[g] = now;
    }
  }

  private kindOf(book: number): number {
    if (book >= this.bookKind.length) {
      this.bookKind = grown(this.bookKind, book + 1);
      this.bookLag = grown(this.bookLag, book + 1);
    }
    if (this.bookKind[book] === KIND_UNKNOWN) {
      const kind = this.engine.sources.kindOf(this.engine.store.books.get(book));
      this.bookKind[book] = kind === 'sharp' ? KIND_SHARP : kind === 'dfs' ? KIND_DFS : KIND_RETAIL;
      // each book's own lag, fixed for the run (derived from the seed and the book)
      const spread = this.rand();
      this.bookLag[book] = this.bookKind[book] === KIND_SHARP ? SHARP_LAG_MS * (0.5 + spread * 3) : RETAIL_LAG_MS * (1 + spread);
    }
    return this.bookKind[book];
  }

  /** The part of its group's fair move the slot's book shows now: all of it once the book's lag has passed. */
  private caughtUp(slot: number, now: number): number {
    const g = this.slotGroup[slot];
    if (now - this.movedAt[g] >= this.bookLag[this.engine.store.book[slot]]) this.seenMove[slot] = this.fairMove[g];
    return this.seenMove[slot];
  }

  private movePrice(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    this.stats.priceMoves++;
    const suspended = s.suspended[slot] === 1;
    this.anchorOf(slot);
    const kind = this.kindOf(s.book[slot]);
    const now = this.clock.now();
    if (s.priceAmerican[slot] === NO_PRICE) {
      // a pick whose multiplier does not step sends nothing (a repeated price is no tick)
      const dm = s.dfsMultiplier[slot];
      const next = dm === dm ? this.dfsStep(slot, dm) : dm;
      if (next !== dm) batch.push({ op: 'price', slot, priceAmerican: null, dfsMultiplier: next, suspended });
      return;
    }
    const price = this.quoted(slot, now, kind);
    if (price !== s.priceAmerican[slot]) batch.push({ op: 'price', slot, priceAmerican: price, suspended });
    const partner = this.partnerOf(slot);
    if (partner >= 0 && s.priceAmerican[partner] !== NO_PRICE) {
      this.anchorOf(partner);
      const other = this.quoted(partner, now, kind);
      if (other !== s.priceAmerican[partner]) batch.push({ op: 'price', slot: partner, priceAmerican: other, suspended: s.suspended[partner] === 1 });
    }
  }

  /** The book's price for the slot: its level, moved by the fair move it has taken in, plus its own noise. */
  private quoted(slot: number, now: number, kind: number): number {
    const sign = SIDE_SIGN[this.engine.store.side[slot]];
    const seen = kind === KIND_DFS ? 0 : this.caughtUp(slot, now);
    const p = this.anchorProbability[slot] + sign * seen + (this.rand() - 0.5) * 2 * BOOK_NOISE;
    return this.priceOf(p);
  }

  /** A DFS pick's multiplier: now and then one step of the ladder toward where the fair move says it belongs. */
  private dfsStep(slot: number, multiplier: number): number {
    if (this.rand() >= DFS_STEP_CHANCE) return multiplier;
    const g = this.slotGroup[slot];
    const move = SIDE_SIGN[this.engine.store.side[slot]] * this.fairMove[g];
    // the side got likelier: the pick pays less; less likely: more; no move to speak of: back to its level
    const level = this.anchorProbability[slot];
    const target = move > DFS_STEP_TRIGGER ? multiplier - DFS_STEP : move < -DFS_STEP_TRIGGER ? multiplier + DFS_STEP : level;
    const next = Math.abs(target - multiplier) < 1e-9 ? multiplier : multiplier + Math.sign(target - multiplier) * DFS_STEP;
    return Math.min(1.5, Math.max(0.75, Math.round(next * 100) / 100));
  }

  /**
   * Sets up the slot's market state on first sight (its group, its book's level) and
   * returns the level. A row on the board since the simulator started is priced as
   * of a fair move of 0; a newer one (an alternate line added since) at the move its
   * group has now. A recycled slot holds another row: it starts afresh.
   */
  private anchorOf(slot: number): number {
    const s = this.engine.store;
    if (slot >= this.anchorRow.length) {
      const capacity = Math.max(1024, slot + 1);
      this.anchorRow = grown(this.anchorRow, capacity);
      this.anchorProbability = grown(this.anchorProbability, capacity);
      this.slotGroup = grown(this.slotGroup, capacity);
      this.seenMove = grown(this.seenMove, capacity);
    }
    const row = rowHash(s.event[slot], s.book[slot], s.subtype[slot], s.selectionId[slot]);
    if (this.anchorRow[slot] === row && this.anchorProbability[slot] !== 0) return this.anchorProbability[slot];
    this.anchorRow[slot] = row;
    const g = this.groupOf(slot);
    this.slotGroup[slot] = g;
    const dfs = s.priceAmerican[slot] === NO_PRICE;
    // a DFS pick's level is its multiplier
    const now = dfs ? s.dfsMultiplier[slot] : 1 / americanToDecimal(s.priceAmerican[slot]);
    const seen = s.seq[slot] <= this.startSeq ? 0 : this.fairMove[g];
    this.seenMove[slot] = seen;
    this.anchorProbability[slot] = dfs ? (now === now ? now : 1) : now - SIDE_SIGN[s.side[slot]] * seen;
    this.kindOf(s.book[slot]);
    return this.anchorProbability[slot];
  }

  /** The slot's market group (the rows of every book that compete), numbered on first sight. */
  private groupOf(slot: number): number {
    const s = this.engine.store;
    const side = s.side[slot];
    const line = s.line[slot];
    const groupLine = Number.isNaN(line) ? 'n' : SIDES[side] === 'AWAY' ? String(-line) : String(line);
    const scope = s.player[slot] >= 0 ? `p${s.player[slot]}` : side === SIDE_OVER || side === SIDE_UNDER ? `t${s.teamSide[slot]}` : 'g';
    const key = `${s.event[slot]}|${s.subtype[slot]}|${s.period[slot]}|${groupLine}|${scope}`;
    let g = this.groupIds.get(key);
    if (g === undefined) {
      g = this.groupIds.size;
      this.groupIds.set(key, g);
      if (g >= this.fairMove.length) {
        this.fairMove = grown(this.fairMove, g + 1);
        this.movedAt = grown(this.movedAt, g + 1);
      }
      this.fairMove[g] = 0;
      this.movedAt[g] = -Infinity;
    }
    return g;
  }

  /** The American price of implied probability p (kept within 3%..97%). */
  private priceOf(p: number): number {
    const clamped = Math.min(0.97, Math.max(0.03, p));
    const next = decimalToAmerican(Math.round((1 / clamped) * 10000) / 10000);
    return next > -100 && next < 100 ? (next < 0 ? -100 : 100) : next;
  }

  /** The American price whose implied probability is `shift` higher. */
  private shifted(american: number, shift: number): number {
    const p = Math.min(0.97, Math.max(0.03, 1 / americanToDecimal(american) + shift));
    const next = decimalToAmerican(Math.round((1 / p) * 10000) / 10000);
    return next > -100 && next < 100 ? (next < 0 ? -100 : 100) : next;
  }

  private toggleSuspension(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    this.stats.suspensionToggles++;
    const suspended = s.suspended[slot] === 0;
    const price = (at: number) => (s.priceAmerican[at] === NO_PRICE ? null : s.priceAmerican[at]);
    batch.push({ op: 'price', slot, priceAmerican: price(slot), suspended });
    const partner = this.partnerOf(slot);
    if (partner >= 0) batch.push({ op: 'price', slot: partner, priceAmerican: price(partner), suspended });
  }

  /**
   * A new line next to an OVER/UNDER pair (new row ids). A line another book already
   * lists is priced like that book prices it (the market agrees on a line's price; a
   * made-up price would be an arbitrage against it); a line no book lists yet is priced
   * from the pair, ALT_LINE_SLOPE per point, with ALT_LINE_HOLD more hold a side.
   */
  private addAlternate(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    const side = s.side[slot];
    if ((side !== SIDE_OVER && side !== SIDE_UNDER) || Number.isNaN(s.line[slot])) return this.movePrice(slot, batch);
    const step = (1 + Math.floor(this.rand() * 3)) * (this.rand() < 0.5 ? -1 : 1);
    const line = s.line[slot] + step;
    if (line < 0) return this.movePrice(slot, batch);
    const partner = this.partnerOf(slot);
    const before = batch.length;
    for (const at of partner >= 0 ? [slot, partner] : [slot]) {
      const row = this.alternateOf(at, line, step);
      if (row !== null) batch.push({ op: 'upsert', row });
    }
    if (batch.length === before) return this.movePrice(slot, batch);
    this.stats.linesAdded++;
  }

  /** The row of `slot` moved to `line`, or null when its book lists that line already. */
  private alternateOf(slot: number, line: number, step: number): OddsInput | null {
    const s = this.engine.store;
    const row = s.rowInput(slot);
    const oldToken = `-${lineToken(row.line!)}`;
    const at = row.selectionId.indexOf(oldToken, row.period.length + 1);
    if (at < 0) return null;
    row.selectionId = `${row.selectionId.slice(0, at)}-${lineToken(line)}${row.selectionId.slice(at + oldToken.length)}`;
    const selection = s.selectionIds.lookup(row.selectionId);
    if (selection >= 0 && this.engine.isLive(this.engine.keys.find(s.event[slot], s.book[slot], s.subtype[slot], selection))) return null;
    row.selection = row.selection.replace(String(row.line), String(line));
    row.line = line;
    if (row.priceAmerican !== null) {
      const listed = selection >= 0 ? this.listedPrice(slot, selection) : 0;
      if (listed !== 0) row.priceAmerican = this.priceOf(listed + (this.rand() - 0.5) * 2 * BOOK_NOISE);
      else {
        // A higher line makes OVER less likely and UNDER more likely.
        const shift = (row.side === 'OVER' ? -1 : 1) * ALT_LINE_SLOPE * step + ALT_LINE_HOLD;
        const p = 1 / americanToDecimal(row.priceAmerican) + shift;
        // books do not offer lines that far out; there a price clamped at the edge would lose its hold
        if (p < ALT_LINE_MIN || p > 1 - ALT_LINE_MIN) return null;
        row.priceAmerican = this.shifted(row.priceAmerican, shift);
      }
    }
    row.suspended = false;
    return row;
  }

  /** The implied probability another (non-DFS) book quotes for this selection of the slot's event and subtype; 0 when none does. */
  private listedPrice(slot: number, selection: number): number {
    const s = this.engine.store;
    for (let book = 0; book < s.books.size; book++) {
      if (book === s.book[slot]) continue;
      const other = this.engine.keys.find(s.event[slot], book, s.subtype[slot], selection);
      if (other >= 0 && this.engine.isLive(other) && s.priceAmerican[other] !== NO_PRICE) return 1 / americanToDecimal(s.priceAmerican[other]);
    }
    return 0;
  }

  /** Pulls a line: the row and its other side. */
  private pull(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    if (Number.isNaN(s.line[slot])) return this.movePrice(slot, batch);
    batch.push({ op: 'remove', id: this.engine.idOf(slot) });
    const partner = this.partnerOf(slot);
    if (partner >= 0) batch.push({ op: 'remove', id: this.engine.idOf(partner) });
    this.stats.linesPulled++;
  }
}
