// A live board: drives engine.apply with realistic ticks at a configurable rate.
// Prices follow a market model instead of independent random walks:
//   - each market group (the rows of every book that compete: event, subtype, period,
//     line, player or team; engine/signals/groupKey.ts) has a fair value that moves:
//     news (small jumps) and now and then steam (a big one), each pulling the previous
//     move part of the way back, so the fair value wanders around where it started;
//   - each book quotes its own level (the row's price when the simulator first saw it,
//     hold included) moved by the part of the fair move it has taken in. Moves are
//     shifts of log-odds;
//   - every price a book quotes keeps its overround on the market between HOLD_FLOOR
//     and HOLD_CEIL (2-10% once prices are rounded, as real books): the price is held
//     within what the book's other outcomes on the board (or earlier in the same batch)
//     leave room for, and where one side cannot make room alone (a favourite at the
//     quote ceiling) the other sides are re-quoted with it. So no book's own prices ever
//     sum below 1 (which would be an arbitrage against itself), whatever the fair value,
//     the lags, the noise or the rounding do; cross-book arbitrage still opens when a
//     retail book lags a move a sharp book has taken in;
//   - after news every book re-quotes the group once its lag has passed: sharp books
//     within a second, retail books after a lag of seconds of their own. A retail
//     price lagging a big move opens an arbitrage against a sharp book, and the
//     scheduled re-quote closes it: no book sits on a stale price until a random pick
//     happens to reach it;
//   - DFS multipliers step rarely (a fixed payout ladder): a DFS pick lagging a fair
//     move is an edge until the app steps it;
//   - both sides of a two-way market move together (found by swapping the side in the
//     selection id), with a little noise of each book's own;
//   - an alternate line a book adds is priced from the market's fair probability at
//     that line (what the other books list there, or read between the lines they list
//     either side of it, or along its last two lines beyond them), both sides with the
//     book's own hold; books pull alternate lines but keep their last line of a market.
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
  /**
   * Where the timer's batches go instead of engine.apply: the durable write path (log,
   * then apply), resolving with the changes applied. The next batch is built only once
   * the previous one has settled, since it is read from the board that batch changes.
   */
  submit?: (batch: readonly Change[]) => Promise<number>;
  /** Where a refused submission is reported (default stderr). */
  warn?: (line: string) => void;
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
const STEAM_SIZE = 0.04;
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

/** How far (share of the distance) each book's level moves toward the books' consensus when news makes it re-price a group. */
const CONSENSUS_PULL = 0.5;
/** A fair move of m (implied probability, as measured at even odds) shifts log-odds by LOGIT_PER_MOVE * m (the slope of the logistic curve at 1/2 is 1/4). */
const LOGIT_PER_MOVE = 4;
/** Quotes are kept within these implied probabilities (prices up to about +-19900). */
const QUOTE_MIN = 0.005;
const QUOTE_MAX = 0.995;
/** The extra hold a side books take on an alternate line they add. */
const ALT_LINE_HOLD = 0.01;
/** The least hold (both sides together) a book puts on a pair: a pair quoted thinner is treated as holding this. */
const MIN_PAIR_HOLD = 0.02;
/** The most hold a pair keeps when an alternate is added (plus ALT_LINE_HOLD a side stays within HOLD_CEIL). */
const MAX_PAIR_HOLD = 0.065;
/**
 * A book's overround on a market (its outcomes' implied probabilities summed, minus 1)
 * is kept within these when it quotes: a little inside 2-10%, so that rounding to an
 * American integer (a few thousandths near even money) keeps it within 2-10%.
 */
const HOLD_FLOOR = 0.026;
const HOLD_CEIL = 0.094;
/** No alternate is added where a side's fair probability would fall below this (or rise above 1 minus it). */
const ALT_LINE_MIN = 0.06;
/** Most rows added by the simulator and not yet seen on the board that it remembers the fair move of (a forgotten one reads as of a move of 0). */
const MAX_ADDED_UNSEEN = 4096;
/** Most distinct lines one market lists (alternates included) that the fair-probability reading looks at. */
const MAX_MARKET_LINES = 64;

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

function logit(p: number): number {
  return Math.log(p / (1 - p));
}

function logistic(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** The line a row's market group is keyed by: HOME/AWAY quotes at mirrored lines compete, so AWAY's line is negated. */
function groupLineOf(side: number, line: number): number {
  return SIDES[side] === 'AWAY' && line !== 0 ? -line : line;
}

export class Simulator {
  readonly stats: SimulatorStats = { ticks: 0, applied: 0, priceMoves: 0, suspensionToggles: 0, linesAdded: 0, linesPulled: 0, statusChanges: 0 };
  private readonly rand: () => number;
  private readonly intervalMs: number;
  private readonly durationMs: (league: string) => number;
  private timer: NodeJS.Timeout | null = null;
  private carry = 0;
  private batch: Change[] = [];
  /** This batch's price changes by slot (index in the batch) and the implied probability they set: the holds of later quotes read them. */
  private readonly pendingAt = new Map<number, number>();
  private readonly pendingImplied = new Map<number, number>();
  /** siblingsOf's answer. */
  private readonly siblings = new Int32Array(2);
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
  /** Per market group: 1 once its books have re-priced it from the market (news, or the simulator's first re-quote of it). */
  private repriced = new Uint8Array(256);
  /** Per book (engine pool index): KIND_*, and its lag. */
  private bookKind = new Uint8Array(64);
  private bookLag = new Float64Array(64);
  private newsCarry = 0;
  /** Re-quotes due after news: when, which slot, and the row (rowHash) the slot held when it was scheduled. */
  private dueAt = new Float64Array(256);
  private dueSlot = new Int32Array(256);
  private dueRow = new Int32Array(256);
  private dueCount = 0;
  /**
   * Rows this simulator added (alternate lines), by row key, with the fair move their
   * group had when they were priced: their level is read as of that move. Every other
   * row was priced before any move the simulator made (a fair move of 0). An entry
   * goes once the row is first seen on the board.
   */
  private readonly addedAtMove = new Map<string, number>();
  /** Scratch for reading a market's fair probability per line: line, summed OVER and UNDER implied probabilities. */
  private readonly marketLine = new Float64Array(MAX_MARKET_LINES);
  private readonly marketOver = new Float64Array(MAX_MARKET_LINES);
  private readonly marketUnder = new Float64Array(MAX_MARKET_LINES);
  /** Scratch for re-pricing a group: its rows; per book its HOME/OVER, DRAW and AWAY/UNDER rows (-1: none); the books' fair probabilities of one outcome; the consensus. */
  private members = new Int32Array(64);
  private bookLevel = new Int32Array(0);
  private bookFair = new Float64Array(0);
  private readonly consensus = new Float64Array(3);

  constructor(
    private readonly engine: OddsEngine,
    private readonly clock: Clock,
    private readonly options: SimulatorOptions,
  ) {
    this.rand = mulberry32(options.seed);
    this.intervalMs = options.intervalMs ?? 50;
    this.durationMs = options.durationMs ?? gameDurationMs;
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

  /** One interval's worth of changes (what the timer runs). With submit: handed to it, and applied: 0 here. */
  tick(): ApplyResult {
    // while a submitted batch waits for the log the changes due pile up, up to a second's worth
    this.carry += (this.options.ratePerSecond * this.intervalMs) / 1000;
    if (this.options.submit !== undefined) this.carry = Math.min(this.carry, Math.max(1, this.options.ratePerSecond));
    if (this.clock instanceof ManualClock) this.clock.advance(this.intervalMs);
    if (this.options.submit !== undefined && this.submitting) return { applied: 0, seq: this.engine.seq };
    const count = Math.floor(this.carry);
    this.carry -= count;
    if (this.options.submit !== undefined) {
      this.submitNext(this.options.submit, count);
      return { applied: 0, seq: this.engine.seq };
    }
    return this.run(count);
  }

  private submitting = false;

  private submitNext(submit: (batch: readonly Change[]) => Promise<number>, count: number): void {
    const batch = this.nextBatch(count);
    if (batch.length === 0) return;
    this.submitting = true;
    submit(batch.slice()).then(
      (applied) => {
        this.stats.applied += applied;
        this.submitting = false;
      },
      (error: unknown) => {
        this.submitting = false;
        (this.options.warn ?? ((line: string) => process.stderr.write(`${line}\n`)))(`simulator: a batch was refused: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  /** Applies `changes` changes as one batch now (tests); a ManualClock advances by their share of a second. Not with submit: that path is asynchronous. */
  step(changes: number): ApplyResult {
    if (this.options.submit !== undefined) throw new Error('a simulator that submits through the write path cannot step synchronously');
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
   * Re-quotes that fall due count toward `changes`.
   */
  nextBatch(changes: number): readonly Change[] {
    this.stats.ticks++;
    const batch = this.batch;
    batch.length = 0;
    this.pendingAt.clear();
    this.pendingImplied.clear();
    this.lifecycle(batch);
    const target = batch.length + changes;
    this.dueRequotes(batch, target);
    this.news(changes);
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

  /** News and steam on random groups, in proportion to the changes asked for; every book's re-quote of the group is scheduled after its lag. */
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
      this.scheduleGroup(slot, now);
    }
  }

  /**
   * After news on the slot's group: every book re-prices the group from the market
   * (its level part of the way toward the books' consensus, its own hold kept) and
   * shows it when its lag has passed. Without the first part a book that opened off
   * the market (a stale or outlier price on the board it started from) would stay
   * off it for good, an arbitrage that opens and shuts with every bit of noise.
   * The simulator's first re-quote of a group does the same without news.
   */
  private scheduleGroup(slot: number, now: number): void {
    this.repriced[this.slotGroup[slot]] = 1;
    const count = this.groupMembers(slot);
    this.towardConsensus(count);
    const s = this.engine.store;
    for (let i = 0; i < count; i++) {
      const at = this.members[i];
      this.schedule(at, now + this.bookLag[s.book[at]]);
    }
  }

  /** Fills `members` with the live priced rows of the slot's market group (every book), anchored; returns how many. */
  private groupMembers(slot: number): number {
    const s = this.engine.store;
    const list = this.engine.indexes.byEvent[s.event[slot]];
    if (list === undefined) return 0;
    const items = list.items;
    const subtype = s.subtype[slot];
    const period = s.period[slot];
    const player = s.player[slot];
    const teamSide = s.teamSide[slot];
    const lineKey = groupLineOf(s.side[slot], s.line[slot]);
    const scoped = s.side[slot] === SIDE_OVER || s.side[slot] === SIDE_UNDER;
    let count = 0;
    for (let i = 0; i < list.length; i++) {
      const at = items[i];
      if (s.subtype[at] !== subtype || s.period[at] !== period || s.player[at] !== player) continue;
      if (scoped && s.teamSide[at] !== teamSide) continue;
      const key = groupLineOf(s.side[at], s.line[at]);
      if (key !== lineKey && !(Number.isNaN(key) && Number.isNaN(lineKey))) continue;
      if (s.priceAmerican[at] === NO_PRICE || !this.engine.isLive(at)) continue;
      this.anchorOf(at);
      if (count === this.members.length) this.members = grown(this.members, count + 1);
      this.members[count++] = at;
    }
    return count;
  }

  /**
   * Moves each book's levels on the group (its rows in `members`: HOME/OVER, DRAW,
   * AWAY/UNDER) CONSENSUS_PULL of the way toward the books' consensus: per outcome
   * the median of the books' fair probabilities (each book's levels devigged: an
   * outcome's share of their sum), normalised to sum to 1. The book keeps its own sum
   * (its hold). Levels are read before any fair move, so books that have taken in
   * different parts of a move still compare. Books that do not quote every outcome
   * are left as they are.
   */
  private towardConsensus(count: number): void {
    const s = this.engine.store;
    const books = s.books.size;
    if (this.bookLevel.length < books * 3) {
      this.bookLevel = new Int32Array(books * 3);
      this.bookFair = new Float64Array(books);
    }
    const level = this.bookLevel;
    level.fill(-1, 0, books * 3);
    let outcomes = 2;
    for (let i = 0; i < count; i++) {
      const at = this.members[i];
      const sign = SIDE_SIGN[s.side[at]];
      if (sign === 0) outcomes = 3;
      level[s.book[at] * 3 + (sign > 0 ? 0 : sign < 0 ? 2 : 1)] = at;
    }
    const consensus = this.consensus;
    let total = 0;
    for (let k = 0; k < 3; k++) {
      consensus[k] = 0;
      if (outcomes === 2 && k === 1) continue;
      let quoting = 0;
      for (let b = 0; b < books; b++) {
        const sum = this.levelSum(b, outcomes);
        if (sum > 0) this.bookFair[quoting++] = this.anchorProbability[level[b * 3 + k]] / sum;
      }
      if (quoting < 2) return;
      const sorted = this.bookFair.subarray(0, quoting).sort();
      consensus[k] = quoting % 2 === 1 ? sorted[quoting >> 1] : (sorted[quoting / 2 - 1] + sorted[quoting / 2]) / 2;
      total += consensus[k];
    }
    for (let b = 0; b < books; b++) {
      const sum = this.levelSum(b, outcomes);
      if (sum === 0) continue;
      for (let k = 0; k < 3; k++) {
        const at = level[b * 3 + k];
        if (outcomes === 2 && k === 1) continue;
        const fair = this.anchorProbability[at] / sum;
        this.anchorProbability[at] = (fair + (consensus[k] / total - fair) * CONSENSUS_PULL) * sum;
      }
    }
  }

  /** The sum of book b's levels over the group's outcomes (towardConsensus' scratch), or 0 when it does not quote them all. */
  private levelSum(b: number, outcomes: number): number {
    const level = this.bookLevel;
    let sum = 0;
    for (let k = 0; k < 3; k++) {
      if (outcomes === 2 && k === 1) continue;
      const at = level[b * 3 + k];
      if (at < 0) return 0;
      sum += this.anchorProbability[at];
    }
    return sum;
  }

  private schedule(slot: number, due: number): void {
    if (this.dueCount === this.dueAt.length) {
      this.dueAt = grown(this.dueAt, this.dueCount + 1);
      this.dueSlot = grown(this.dueSlot, this.dueCount + 1);
      this.dueRow = grown(this.dueRow, this.dueCount + 1);
    }
    this.dueAt[this.dueCount] = due;
    this.dueSlot[this.dueCount] = slot;
    this.dueRow[this.dueCount] = this.anchorRow[slot];
    this.dueCount++;
  }

  /** Re-quotes every row whose book's lag has passed since news on its group (up to `target` changes in the batch; the rest stay due). */
  private dueRequotes(batch: Change[], target: number): void {
    const s = this.engine.store;
    const now = this.clock.now();
    let kept = 0;
    for (let i = 0; i < this.dueCount; i++) {
      const slot = this.dueSlot[i];
      if (this.dueAt[i] > now || batch.length >= target) {
        this.dueAt[kept] = this.dueAt[i];
        this.dueSlot[kept] = slot;
        this.dueRow[kept] = this.dueRow[i];
        kept++;
        continue;
      }
      // a row pulled since (or its slot reused by another row) has nothing to re-quote
      if (!this.engine.isLive(slot) || s.priceAmerican[slot] === NO_PRICE) continue;
      if (rowHash(s.event[slot], s.book[slot], s.subtype[slot], s.selectionId[slot]) !== this.dueRow[i]) continue;
      this.requote(slot, now, batch);
    }
    this.dueCount = kept;
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
    // the first time the simulator re-quotes a group every book re-prices it from the market
    if (this.repriced[this.slotGroup[slot]] === 0) this.scheduleGroup(slot, now);
    this.pushQuote(slot, this.quoted(slot, now, kind), batch);
    const partner = this.partnerOf(slot);
    if (partner >= 0 && s.priceAmerican[partner] !== NO_PRICE) {
      this.anchorOf(partner);
      this.pushQuote(partner, this.quoted(partner, now, kind), batch);
    }
  }

  /**
   * Pushes the book's new quote for `slot` (implied probability p, before its hold is
   * checked), held within HOLD_FLOOR..HOLD_CEIL of the book's other outcomes on the
   * market; where the quote ceiling keeps it from making room, the other outcomes are
   * lengthened with it.
   */
  private pushQuote(slot: number, p: number, batch: Change[]): void {
    const s = this.engine.store;
    const n = this.siblingsOf(slot);
    let others = 0;
    for (let i = 0; i < n; i++) others += this.impliedNow(this.siblings[i]);
    // a sibling without a price (NaN): nothing to hold against
    const held = n === 0 || !(others === others) ? p : Math.min(1 + HOLD_CEIL - others, Math.max(1 + HOLD_FLOOR - others, p));
    const price = this.priceOf(held);
    this.setPending(slot, price, batch);
    if (n === 0 || !(others === others)) return;
    const short = 1 + HOLD_FLOOR - (this.impliedNow(slot) + others);
    if (short <= 0) return;
    // the ceiling held this side down: the others make up the rest, in proportion
    const siblings = this.siblings.slice(0, n);
    for (const sibling of siblings) {
      const q = this.impliedNow(sibling);
      this.setPending(sibling, this.priceOf(q + (short * q) / others + 0.001), batch);
    }
  }

  /** Adds (or replaces, within this batch) a price change and remembers it for the holds of later quotes in the batch. */
  private setPending(slot: number, price: number, batch: Change[]): void {
    const s = this.engine.store;
    const at = this.pendingAt.get(slot);
    if (at !== undefined && batch[at] !== undefined && (batch[at] as { slot?: number }).slot === slot && batch[at].op === 'price') {
      (batch[at] as { priceAmerican: number | null }).priceAmerican = price;
    } else if (price !== s.priceAmerican[slot] || this.pendingAt.has(slot)) {
      this.pendingAt.set(slot, batch.length);
      batch.push({ op: 'price', slot, priceAmerican: price, suspended: s.suspended[slot] === 1 });
    } else {
      return;
    }
    this.pendingImplied.set(slot, 1 / americanToDecimal(price));
  }

  /** The slot's implied probability as the board will have it after this batch (NaN: no price). */
  private impliedNow(slot: number): number {
    const pending = this.pendingImplied.get(slot);
    if (pending !== undefined) return pending;
    const price = this.engine.store.priceAmerican[slot];
    return price === NO_PRICE ? NaN : 1 / americanToDecimal(price);
  }

  /**
   * The book's other outcomes of the slot's market (into this.siblings): the other
   * side of a two-way selection, or the other two of HOME / DRAW / AWAY.
   */
  private siblingsOf(slot: number): number {
    let n = 0;
    const partner = this.partnerOf(slot);
    if (partner >= 0) this.siblings[n++] = partner;
    const s = this.engine.store;
    const side = SIDES[s.side[slot]];
    if (side !== 'HOME' && side !== 'AWAY' && side !== 'DRAW') return n;
    if (!Number.isNaN(s.line[slot])) return n;
    const period = s.periods.get(s.period[slot]);
    const selection = s.selectionIds.get(s.selectionId[slot]);
    const prefix = `${period}-${side}`;
    if (!selection.startsWith(prefix)) return n;
    const rest = selection.slice(prefix.length);
    for (const other of side === 'DRAW' ? ['HOME', 'AWAY'] : ['DRAW']) {
      const id = s.selectionIds.lookup(`${period}-${other}${rest}`);
      if (id < 0) continue;
      const at = this.engine.keys.find(s.event[slot], s.book[slot], s.subtype[slot], id);
      if (at >= 0 && this.engine.isLive(at) && s.priceAmerican[at] !== NO_PRICE) this.siblings[n++] = at;
    }
    return n;
  }

  /** A scheduled re-quote of one priced row (its other side has its own). */
  private requote(slot: number, now: number, batch: Change[]): void {
    const s = this.engine.store;
    this.stats.priceMoves++;
    this.anchorOf(slot);
    this.pushQuote(slot, this.quoted(slot, now, this.kindOf(s.book[slot])), batch);
  }

  /** The book's implied probability for the slot: its level, moved (in log-odds) by the fair move it has taken in, plus its own noise (pushQuote holds and prices it). */
  private quoted(slot: number, now: number, kind: number): number {
    const sign = SIDE_SIGN[this.engine.store.side[slot]];
    const seen = kind === KIND_DFS ? 0 : this.caughtUp(slot, now);
    const level = this.anchorProbability[slot];
    const moved = sign === 0 || seen === 0 ? level : logistic(logit(level) + sign * seen * LOGIT_PER_MOVE);
    return moved + (this.rand() - 0.5) * 2 * BOOK_NOISE;
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
   * returns the level. A row the simulator added is priced as of the fair move its
   * group had then; any other row as of a fair move of 0 (it was priced before the
   * simulator moved anything). A recycled slot holds another row: it starts afresh.
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
    let seen = 0;
    if (this.addedAtMove.size > 0) {
      const key = this.rowKey(s.event[slot], s.book[slot], s.subtype[slot], s.selectionIds.get(s.selectionId[slot]));
      const added = this.addedAtMove.get(key);
      if (added !== undefined) {
        seen = added;
        this.addedAtMove.delete(key);
      }
    }
    this.seenMove[slot] = seen;
    if (dfs) {
      // a DFS pick's level is its multiplier
      const multiplier = s.dfsMultiplier[slot];
      this.anchorProbability[slot] = multiplier === multiplier ? multiplier : 1;
    } else {
      const implied = Math.min(QUOTE_MAX, Math.max(QUOTE_MIN, 1 / americanToDecimal(s.priceAmerican[slot])));
      const sign = SIDE_SIGN[s.side[slot]];
      this.anchorProbability[slot] = sign === 0 || seen === 0 ? implied : logistic(logit(implied) - sign * seen * LOGIT_PER_MOVE);
    }
    this.kindOf(s.book[slot]);
    return this.anchorProbability[slot];
  }

  private rowKey(event: number, book: number, subtype: number, selectionId: string): string {
    return `${event}|${book}|${subtype}|${selectionId}`;
  }

  /** The slot's market group (the rows of every book that compete), numbered on first sight. */
  private groupOf(slot: number): number {
    const s = this.engine.store;
    return this.groupNumber(s.event[slot], s.subtype[slot], s.period[slot], s.side[slot], s.line[slot], s.player[slot], s.teamSide[slot]);
  }

  private groupNumber(event: number, subtype: number, period: number, side: number, line: number, player: number, teamSide: number): number {
    const groupLine = Number.isNaN(line) ? 'n' : String(groupLineOf(side, line));
    const scope = player >= 0 ? `p${player}` : side === SIDE_OVER || side === SIDE_UNDER ? `t${teamSide}` : 'g';
    const key = `${event}|${subtype}|${period}|${groupLine}|${scope}`;
    let g = this.groupIds.get(key);
    if (g === undefined) {
      g = this.groupIds.size;
      this.groupIds.set(key, g);
      if (g >= this.fairMove.length) {
        this.fairMove = grown(this.fairMove, g + 1);
        this.movedAt = grown(this.movedAt, g + 1);
        this.repriced = grown(this.repriced, g + 1);
      }
      this.fairMove[g] = 0;
      this.movedAt[g] = -Infinity;
    }
    return g;
  }

  /** The American price of implied probability p (kept within QUOTE_MIN..QUOTE_MAX). */
  private priceOf(p: number): number {
    const clamped = Math.min(QUOTE_MAX, Math.max(QUOTE_MIN, p));
    const next = decimalToAmerican(Math.round((1 / clamped) * 10000) / 10000);
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
   * A new line next to a priced OVER/UNDER pair (new row ids), priced from the
   * market's fair probability at that line with the pair's own hold (and
   * ALT_LINE_HOLD more a side): one side copied from another book and the other
   * extrapolated would let a book quote a pair summing below 1, an arbitrage against
   * itself. Where the market lists fewer than two lines (or the book lists the new
   * line already) a price move happens instead.
   */
  private addAlternate(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    const side = s.side[slot];
    if ((side !== SIDE_OVER && side !== SIDE_UNDER) || Number.isNaN(s.line[slot]) || s.priceAmerican[slot] === NO_PRICE) return this.movePrice(slot, batch);
    const partner = this.partnerOf(slot);
    if (partner < 0 || s.priceAmerican[partner] === NO_PRICE) return this.movePrice(slot, batch);
    const step = (1 + Math.floor(this.rand() * 3)) * (this.rand() < 0.5 ? -1 : 1);
    const line = s.line[slot] + step;
    if (line < 0) return this.movePrice(slot, batch);
    const over = side === SIDE_OVER ? slot : partner;
    const under = over === slot ? partner : slot;
    const overRow = this.alternateOf(over, line);
    const underRow = this.alternateOf(under, line);
    const fair = this.fairOverAt(over, line);
    if (overRow === null || underRow === null || !(fair >= ALT_LINE_MIN && fair <= 1 - ALT_LINE_MIN)) return this.movePrice(slot, batch);
    const implied = (at: number) => 1 / americanToDecimal(s.priceAmerican[at]);
    const hold = Math.min(MAX_PAIR_HOLD, Math.max(MIN_PAIR_HOLD, implied(over) + implied(under) - 1));
    overRow.priceAmerican = this.priceOf(fair * (1 + hold) + ALT_LINE_HOLD + (this.rand() - 0.5) * 2 * BOOK_NOISE);
    underRow.priceAmerican = this.priceOf((1 - fair) * (1 + hold) + ALT_LINE_HOLD + (this.rand() - 0.5) * 2 * BOOK_NOISE);
    // the new rows' group may have moved already: their prices are read as of that move
    const move = this.fairMove[this.groupNumber(s.event[over], s.subtype[over], s.period[over], SIDE_OVER, line, s.player[over], s.teamSide[over])];
    this.addedAtMove.set(this.rowKey(s.event[over], s.book[over], s.subtype[over], overRow.selectionId), move);
    this.addedAtMove.set(this.rowKey(s.event[under], s.book[under], s.subtype[under], underRow.selectionId), move);
    // rows pulled (or never applied) before the simulator saw them would stay here for good: the oldest go first
    while (this.addedAtMove.size > MAX_ADDED_UNSEEN) this.addedAtMove.delete(this.addedAtMove.keys().next().value!);
    batch.push({ op: 'upsert', row: overRow }, { op: 'upsert', row: underRow });
    this.stats.linesAdded++;
  }

  /** The row of `slot` moved to `line` (price still to set), or null when its book lists that line already. */
  private alternateOf(slot: number, line: number): OddsInput | null {
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
    row.suspended = false;
    return row;
  }

  /**
   * The market's fair probability of OVER at `line` for the market of the OVER row
   * `over` (same event, subtype, period, player and team): the books' OVER and UNDER
   * prices at each line they list, devigged together (OVER's share of their sum);
   * at `line` itself when listed, else read between the nearest listed lines either
   * side of it (linear in log-odds), or beyond the outermost listed line along the
   * last two. NaN when the market lists fewer than two lines.
   */
  private fairOverAt(over: number, line: number): number {
    const s = this.engine.store;
    const list = this.engine.indexes.byEvent[s.event[over]];
    if (list === undefined) return NaN;
    const lines = this.marketLine;
    const overSum = this.marketOver;
    const underSum = this.marketUnder;
    let count = 0;
    const subtype = s.subtype[over];
    const period = s.period[over];
    const player = s.player[over];
    const teamSide = s.teamSide[over];
    for (let i = 0; i < list.length; i++) {
      const at = list.items[i];
      const side = s.side[at];
      if ((side !== SIDE_OVER && side !== SIDE_UNDER) || s.subtype[at] !== subtype || s.period[at] !== period) continue;
      if (s.player[at] !== player || s.teamSide[at] !== teamSide || s.priceAmerican[at] === NO_PRICE || !this.engine.isLive(at)) continue;
      const l = s.line[at];
      let k = 0;
      while (k < count && lines[k] !== l) k++;
      if (k === count) {
        if (count === MAX_MARKET_LINES) continue;
        lines[k] = l;
        overSum[k] = 0;
        underSum[k] = 0;
        count++;
      }
      const p = 1 / americanToDecimal(s.priceAmerican[at]);
      if (side === SIDE_OVER) overSum[k] += p;
      else underSum[k] += p;
    }
    let below = -1;
    let above = -1;
    for (let k = 0; k < count; k++) {
      if (overSum[k] === 0 || underSum[k] === 0) continue;
      const l = lines[k];
      if (l === line) return overSum[k] / (overSum[k] + underSum[k]);
      if (l < line && (below < 0 || l > lines[below])) below = k;
      if (l > line && (above < 0 || l < lines[above])) above = k;
    }
    // beyond the listed ladder: carry on from its last two lines
    if (below < 0 && above >= 0) below = this.nextListed(above, 1, count);
    else if (above < 0 && below >= 0) above = this.nextListed(below, -1, count);
    if (below < 0 || above < 0) return NaN;
    const lo = logit(overSum[below] / (overSum[below] + underSum[below]));
    const hi = logit(overSum[above] / (overSum[above] + underSum[above]));
    const t = (line - lines[below]) / (lines[above] - lines[below]);
    return logistic(lo + (hi - lo) * t);
  }

  /** In the scratch of fairOverAt: the listed line (both sides priced) nearest to lines[from] on the side `direction` says (1: above, -1: below), or -1. */
  private nextListed(from: number, direction: number, count: number): number {
    const lines = this.marketLine;
    let found = -1;
    for (let k = 0; k < count; k++) {
      if (this.marketOver[k] === 0 || this.marketUnder[k] === 0 || (lines[k] - lines[from]) * direction <= 0) continue;
      if (found < 0 || (lines[k] - lines[found]) * direction < 0) found = k;
    }
    return found;
  }

  /** True when the slot's book lists the slot's side of its market at another line too. */
  private listsOtherLine(slot: number): boolean {
    const s = this.engine.store;
    const list = this.engine.indexes.byEvent[s.event[slot]];
    if (list === undefined) return false;
    for (let i = 0; i < list.length; i++) {
      const at = list.items[i];
      if (s.book[at] !== s.book[slot] || s.side[at] !== s.side[slot] || s.subtype[at] !== s.subtype[slot] || s.period[at] !== s.period[slot]) continue;
      if (s.player[at] !== s.player[slot] || s.teamSide[at] !== s.teamSide[slot] || s.line[at] === s.line[slot]) continue;
      if (this.engine.isLive(at)) return true;
    }
    return false;
  }

  /** Pulls an alternate line: the row and its other side. A book keeps its last line of a market (it suspends that instead). */
  private pull(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    if (Number.isNaN(s.line[slot]) || !this.listsOtherLine(slot)) return this.movePrice(slot, batch);
    batch.push({ op: 'remove', id: this.engine.idOf(slot) });
    const partner = this.partnerOf(slot);
    if (partner >= 0) batch.push({ op: 'remove', id: this.engine.idOf(partner) });
    this.stats.linesPulled++;
  }
}
