// A live board: drives engine.apply with realistic ticks at a configurable rate.
// Mostly small price moves (both sides of a two-way market move together, found by
// swapping the side in the selection id; each move takes back part of the row's
// distance from its first price, so prices wander around their level instead of
// drifting off as a random walk would), some suspension toggles (more on live
// events), alternate lines added and pulled, and the event lifecycle: scheduled
// events whose start has passed go in_progress, in-progress games past their sport's
// duration go final (the engine then tombstones their rows).
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

/** Share of a price's distance from its anchor (implied probability) that each move takes back. */
const PRICE_REVERSION = 0.2;

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
  /** Per slot: which row (rowHash) its anchor belongs to, and the anchor (implied probability; 0: none yet). */
  private anchorRow = new Int32Array(0);
  private anchorProbability = new Float64Array(0);

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
   */
  nextBatch(changes: number): readonly Change[] {
    this.stats.ticks++;
    const batch = this.batch;
    batch.length = 0;
    this.lifecycle(batch);
    const target = batch.length + changes;
    for (let i = 0; batch.length < target && i < changes * 4; i++) {
      const slot = this.randomLiveSlot();
      if (slot < 0) break;
      const r = this.rand();
      if (r < 0.01) this.addAlternate(slot, batch);
      else if (r < 0.02) this.pull(slot, batch);
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
    return 0.02 + (live ? 0.04 : 0.004);
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

  private movePrice(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    this.stats.priceMoves++;
    const suspended = s.suspended[slot] === 1;
    if (s.priceAmerican[slot] === NO_PRICE) {
      const dm = s.dfsMultiplier[slot];
      const next = this.rand() < 0.3 && dm === dm ? Math.min(1.5, Math.max(0.75, Math.round((dm + (this.rand() < 0.5 ? -0.05 : 0.05)) * 100) / 100)) : dm;
      batch.push({ op: 'price', slot, priceAmerican: null, dfsMultiplier: next === next ? next : null, suspended });
      return;
    }
    const american = s.priceAmerican[slot];
    const pull = PRICE_REVERSION * (this.anchorOf(slot) - 1 / americanToDecimal(american));
    const shift = (this.rand() - 0.5) * 0.03 + pull;
    batch.push({ op: 'price', slot, priceAmerican: this.shifted(american, shift), suspended });
    const partner = this.partnerOf(slot);
    if (partner >= 0 && s.priceAmerican[partner] !== NO_PRICE) {
      batch.push({ op: 'price', slot: partner, priceAmerican: this.shifted(s.priceAmerican[partner], -shift), suspended: s.suspended[partner] === 1 });
    }
  }

  /**
   * The implied probability slot's row drifts back to: its price when this simulator
   * first moved it. Books track a shared fair value, so a book's price wanders around
   * its own level rather than away from it. Without the pull every book random-walks
   * on its own: on the small board the spread of implied probabilities from where they
   * started grew from 0.050 to 0.091 over 100k to 400k changes (with it: about 0.02).
   */
  private anchorOf(slot: number): number {
    const s = this.engine.store;
    if (slot >= this.anchorRow.length) {
      const capacity = Math.max(1024, slot + 1);
      this.anchorRow = grown(this.anchorRow, capacity);
      this.anchorProbability = grown(this.anchorProbability, capacity);
    }
    // a recycled slot holds another row: it anchors afresh
    const row = rowHash(s.event[slot], s.book[slot], s.subtype[slot], s.selectionId[slot]);
    if (this.anchorRow[slot] !== row || this.anchorProbability[slot] === 0) {
      this.anchorRow[slot] = row;
      this.anchorProbability[slot] = 1 / americanToDecimal(s.priceAmerican[slot]);
    }
    return this.anchorProbability[slot];
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

  /** A new line next to an OVER/UNDER pair (new row ids), priced consistently with the shift. */
  private addAlternate(slot: number, batch: Change[]): void {
    const s = this.engine.store;
    const side = s.side[slot];
    if ((side !== SIDE_OVER && side !== SIDE_UNDER) || Number.isNaN(s.line[slot])) return this.movePrice(slot, batch);
    const step = (1 + Math.floor(this.rand() * 3)) * (this.rand() < 0.5 ? -1 : 1);
    const line = s.line[slot] + step;
    const partner = this.partnerOf(slot);
    for (const at of partner >= 0 ? [slot, partner] : [slot]) {
      const row = this.alternateOf(at, line, step);
      if (row !== null) batch.push({ op: 'upsert', row });
    }
    this.stats.linesAdded++;
  }

  private alternateOf(slot: number, line: number, step: number): OddsInput | null {
    const s = this.engine.store;
    const row = s.rowInput(slot);
    const oldToken = `-${lineToken(row.line!)}`;
    const at = row.selectionId.indexOf(oldToken, row.period.length + 1);
    if (at < 0) return null;
    row.selectionId = `${row.selectionId.slice(0, at)}-${lineToken(line)}${row.selectionId.slice(at + oldToken.length)}`;
    row.selection = row.selection.replace(String(row.line), String(line));
    row.line = line;
    if (row.priceAmerican !== null) {
      // A higher line makes OVER less likely and UNDER more likely.
      const shift = (row.side === 'OVER' ? -1 : 1) * 0.04 * step;
      row.priceAmerican = this.shifted(row.priceAmerican, shift);
    }
    row.suspended = false;
    return row;
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
