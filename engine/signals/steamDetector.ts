// Steam moves: a fair-line (sharp) book's price on one side shortening by at least the
// threshold (implied percentage points, or American cents) within the window, measured
// from the price in force at the window's start. Each sharp row keeps its last
// RING price changes (time, decimal) in typed arrays; a tick appends one and compares
// with the change in force at tick time - window (the oldest kept when all are newer:
// the window then holds more than RING changes, and the move is measured from the
// oldest of them). One move per (row, starting price): a price that keeps shortening
// from the same start is not reported again. The record lists the non-DFS books of the
// market quoting that side above the sharp book's new price: they have not followed.

import { grown } from '../columns.ts';
import { decimalToAmerican } from '../model.ts';
import { isoMillis } from '../timeFormat.ts';
import type { MarketGroups } from './marketGroups.ts';
import { QuoteBatch, type QuoteSource } from './quoteBatch.ts';
import { outcomeIndex, SIDE_NAMES } from './sides.ts';
import type { SourceTable } from './sourceTable.ts';
import { americanCents, type ScreenMarket, type StaleBook, type SteamConfig, type SteamQuery, type SteamRecord } from './screenRecords.ts';

/** Price changes kept per sharp row. */
export const STEAM_RING = 8;

/**
 * The version of SteamState saved (a checkpoint holding one this version does not read
 * is refused with a clear error). Version 1 kept STEAM_RING slots per followed row
 * whatever it held (50 MB for the large board's sharp rows, most of them one price);
 * version 2 keeps only the changes held. Both are read.
 */
const STEAM_STATE_VERSION = 2;
const STEAM_STATE_V1 = 1;

/** The detector as a checkpoint keeps it (SteamDetector.saveState). */
export interface SteamState {
  version: number;
  /** STEAM_RING when saved. */
  ring: number;
  /**
   * Per followed row: its ref, how many changes it keeps (counts), the start of its last
   * fired move (NaN: none). Its changes, oldest first, are in times/prices: version 2
   * row after row (counts[i] each), version 1 at i * ring.
   */
  refs: Int32Array;
  counts: Uint8Array;
  firedFrom: Float64Array;
  times: Float64Array;
  prices: Float64Array;
  /** The reported moves, oldest first. */
  moves: SteamRecord[];
  count: number;
}

export class SteamDetector {
  /** ref -> ring index (-1: not a sharp row). */
  private ringOf = new Int32Array(1024).fill(-1);
  /**
   * Per ring, its STEAM_RING changes as (time, decimal price) pairs side by side: ring r's
   * entry j is at [2 * (r * STEAM_RING + j)] (time) and the double after it (price), so a
   * tick's window search reads one ring's 128 bytes and nothing else of the board.
   */
  private entries = new Float64Array(64 * STEAM_RING * 2);
  /** Per ring: entries kept, position of the newest. */
  private counts = new Uint8Array(64);
  private heads = new Uint8Array(64);
  /** Per ring: the time of the starting price of its last reported move (NaN: none). */
  private firedFrom = new Float64Array(64).fill(NaN);
  private rings = 0;
  /** Per ring: the ref it follows (-1: free), so a save walks the rings, not every ref of the board. */
  private refOfRing = new Int32Array(64).fill(-1);
  private readonly freeRings: number[] = [];
  /** Reported moves, oldest first, at most config.keep. */
  private readonly moves: SteamRecord[] = [];
  private readonly batch: QuoteBatch;
  /** Called with each move as it is seen (the stream topic). */
  onMove: ((record: SteamRecord) => void) | null = null;
  /** Moves reported so far. */
  count = 0;

  constructor(
    readonly groups: MarketGroups,
    readonly sources: SourceTable,
    readonly config: SteamConfig,
  ) {
    this.batch = new QuoteBatch(sources);
    this.pointsUnit = config.unit === 'points';
    this.threshold = config.threshold - 1e-9;
    this.windowMs = config.windowMs;
  }

  /** The config as the tick reads it: the unit, the threshold less a rounding allowance, the window. */
  private readonly pointsUnit: boolean;
  private readonly threshold: number;
  private readonly windowMs: number;

  /** Reads ring r's newest entry (SignalBooks.warm, before a batch's ticks are settled, so their misses overlap). */
  warm(r: number): number {
    return this.heads[r] + this.entries[2 * r * STEAM_RING + 1];
  }

  /**
   * ref is (true) or is not a sharp book's row (called on every full read of its group);
   * a new sharp row starts its ring with its current price.
   */
  register(ref: number, sharp: boolean, price: number, suspended: boolean, updated: number): number {
    if (ref >= this.ringOf.length) this.ringOf = grown(this.ringOf, ref + 1, -1);
    const ring = this.ringOf[ref];
    if (!sharp) {
      if (ring >= 0) this.release(ref);
      return -1;
    }
    if (ring >= 0) {
      // a full read of a row already followed: a price it had not heard as a tick joins the history, as no move
      const last = this.counts[ring] === 0 ? 0 : this.entries[2 * (ring * STEAM_RING + this.heads[ring]) + 1];
      if (!suspended && price > 1 && price !== last) this.append(ring, updated, price);
      return ring;
    }
    const r = this.freeRings.length > 0 ? this.freeRings.pop()! : this.allocate();
    this.ringOf[ref] = r;
    this.refOfRing[r] = ref;
    this.counts[r] = 0;
    this.heads[r] = 0;
    this.firedFrom[r] = NaN;
    if (!suspended && price > 1) this.append(r, updated, price);
    return r;
  }

  /** ref left its group (removed, or moved to another line): its history ends. */
  release(ref: number): void {
    if (ref >= this.ringOf.length) return;
    const r = this.ringOf[ref];
    if (r < 0) return;
    this.ringOf[ref] = -1;
    this.refOfRing[r] = -1;
    this.freeRings.push(r);
  }

  isSharp(ref: number): boolean {
    return ref < this.ringOf.length && this.ringOf[ref] >= 0;
  }

  /** A tick of sharp row ref (group g, outcome k). Returns the move when it is one. */
  tick(ref: number, g: number, k: number, price: number, suspended: boolean, updated: number, source: QuoteSource): SteamRecord | null {
    if (ref >= this.ringOf.length) return null;
    return this.tickRing(this.ringOf[ref], ref, g, k, price, suspended, updated, source);
  }

  /** tick() for a caller that kept ref's ring (SignalBooks, in the row's role). */
  tickRing(r: number, ref: number, g: number, k: number, price: number, suspended: boolean, updated: number, source: QuoteSource): SteamRecord | null {
    if (r < 0 || suspended || !(price > 1)) return null;
    const count = this.counts[r];
    const head = this.heads[r];
    const entries = this.entries;
    const base = r * STEAM_RING;
    if (count > 0 && entries[2 * (base + head) + 1] === price) return null; // not a price change
    if (count === 0) {
      this.append(r, updated, price);
      return null;
    }
    // the change in force at updated - window: the newest kept at or before it, else the
    // oldest kept (entries newest first: head, head - 1, ... wrapping within the ring)
    const start = updated - this.windowMs;
    let at = head;
    for (let j = 1; j < count && entries[2 * (base + at)] > start; j++) at = at === 0 ? STEAM_RING - 1 : at - 1;
    const fromTime = entries[2 * (base + at)];
    const fromPrice = entries[2 * (base + at) + 1];
    this.append(r, updated, price);
    const points = (1 / price - 1 / fromPrice) * 100;
    if (!(points > 0)) return null;
    // the threshold in points needs no American prices: most ticks end here
    if (this.pointsUnit && points < this.threshold) return null;
    const fromAmerican = decimalToAmerican(fromPrice);
    const toAmerican = decimalToAmerican(price);
    const cents = americanCents(fromAmerican, toAmerican);
    if (!this.pointsUnit && cents < this.threshold) return null;
    if (this.firedFrom[r] === fromTime) return null;
    this.firedFrom[r] = fromTime;
    const record = this.record(ref, g, k, fromPrice, fromAmerican, price, toAmerican, points, cents, fromTime, updated, source);
    this.moves.push(record);
    if (this.moves.length > this.config.keep) this.moves.splice(0, this.moves.length - this.config.keep);
    this.count++;
    this.onMove?.(record);
    return record;
  }

  /**
   * What a checkpoint keeps of the detector (its own copy): each followed row's price
   * changes and last fired start, the reported moves and their count. The board alone
   * does not determine them (they are the prices the rows had before), so a restart, or
   * a replica bootstrapped from the checkpoint, takes them from here and then follows
   * the log replayed after it: it lists what the writer listed at the same board seq.
   */
  saveState(): SteamState {
    // the rings in use, not every ref of the board (2M on the large board): the save runs
    // while the checkpoint's copy holds the write path, so it is kept to two short loops
    const refOfRing = this.refOfRing;
    const counts = this.counts;
    const heads = this.heads;
    const entries = this.entries;
    const rings = this.rings;
    let followed = 0;
    let total = 0;
    for (let r = 0; r < rings; r++) {
      if (refOfRing[r] >= 0) {
        followed++;
        total += counts[r];
      }
    }
    const refs = new Int32Array(followed);
    const kept = new Uint8Array(followed);
    const firedFrom = new Float64Array(followed);
    const times = new Float64Array(total);
    const prices = new Float64Array(total);
    let i = 0;
    let e = 0;
    for (let r = 0; r < rings; r++) {
      const ref = refOfRing[r];
      if (ref < 0) continue;
      const count = counts[r];
      refs[i] = ref;
      kept[i] = count;
      firedFrom[i] = this.firedFrom[r];
      // oldest first, so the restore needs no head: the newest is at heads[r], the
      // oldest count - 1 places before it, wrapping within the ring
      let at = heads[r] - count + 1;
      if (at < 0) at += STEAM_RING;
      const base = r * STEAM_RING;
      for (let j = 0; j < count; j++) {
        const x = 2 * (base + at);
        times[e] = entries[x];
        prices[e] = entries[x + 1];
        e++;
        if (++at === STEAM_RING) at = 0;
      }
      i++;
    }
    return { version: STEAM_STATE_VERSION, ring: STEAM_RING, refs, counts: kept, firedFrom, times, prices, moves: this.moves.slice(), count: this.count };
  }

  /**
   * Takes a saved state (saveState) into a detector that follows no row yet (before the
   * first full read of the restored board: register() then finds each row's history
   * and adds nothing, its price being the last one kept). Throws on a state this
   * version cannot read.
   */
  restoreState(state: unknown): void {
    const saved = state as SteamState;
    const n = saved?.refs?.length;
    const v1 = saved?.version === STEAM_STATE_V1;
    if (
      saved === null || typeof saved !== 'object' || (saved.version !== STEAM_STATE_VERSION && !v1) || saved.ring !== STEAM_RING || !(saved.refs instanceof Int32Array) ||
      !(saved.counts instanceof Uint8Array) || saved.counts.length !== n || !(saved.firedFrom instanceof Float64Array) || saved.firedFrom.length !== n ||
      !(saved.times instanceof Float64Array) || !(saved.prices instanceof Float64Array) || saved.times.length !== (v1 ? n * STEAM_RING : keptChanges(saved.counts)) ||
      saved.prices.length !== saved.times.length || !Array.isArray(saved.moves) || typeof saved.count !== 'number'
    ) {
      throw new Error(`the checkpoint's steam state is not one this version reads (version ${String(saved?.version)}, ring ${String(saved?.ring)})`);
    }
    if (this.rings > 0) throw new Error('steam state restored into a detector that already follows rows');
    let e = 0; // version 2: where row i's changes start
    for (let i = 0; i < n; i++) {
      const ref = saved.refs[i];
      if (ref >= this.ringOf.length) this.ringOf = grown(this.ringOf, ref + 1, -1);
      const r = this.allocate();
      this.ringOf[ref] = r;
      this.refOfRing[r] = ref;
      const count = Math.min(saved.counts[i], STEAM_RING);
      const from = v1 ? i * STEAM_RING : e;
      e += count;
      this.counts[r] = count;
      this.heads[r] = count === 0 ? 0 : count - 1;
      this.firedFrom[r] = saved.firedFrom[i];
      for (let j = 0; j < count; j++) {
        this.entries[2 * (r * STEAM_RING + j)] = saved.times[from + j];
        this.entries[2 * (r * STEAM_RING + j) + 1] = saved.prices[from + j];
      }
    }
    this.moves.length = 0;
    for (const move of saved.moves.slice(-this.config.keep)) this.moves.push(move as SteamRecord);
    this.count = saved.count;
  }

  /** Reported moves matching a query, newest first. */
  list(query: SteamQuery, limit: number): SteamRecord[] {
    return this.page(query, null, limit).items;
  }

  /**
   * A page of the reported moves matching a query, newest first, before the move
   * numbered `before` (null: from the newest). A move's number is its place in the order
   * of reporting since the detector began (kept by checkpoints, the same on every
   * replica at the same board sequence), so a walk never meets a move twice: moves
   * reported during the walk come before its first page.
   */
  page(query: SteamQuery, before: number | null, limit: number): { items: SteamRecord[]; hasMore: boolean; last: number } {
    const items: SteamRecord[] = [];
    // the kept moves are the last ones reported: moves[i] is number first + i
    const first = this.count - this.moves.length;
    let i = before === null ? this.moves.length - 1 : Math.min(this.moves.length - 1, before - first - 1);
    let last = -1;
    for (; i >= 0; i--) {
      const m = this.moves[i]!;
      if (!matchesSteam(m, query)) continue;
      if (items.length >= limit) return { items, hasMore: true, last };
      items.push(m);
      last = first + i;
    }
    return { items, hasMore: false, last };
  }

  private record(ref: number, g: number, k: number, fromPrice: number, fromAmerican: number, price: number, toAmerican: number, points: number, cents: number, fromTime: number, at: number, source: QuoteSource): SteamRecord {
    const batch = this.batch;
    batch.clear();
    let mine = -1;
    for (let member = this.groups.firstMember(g); member !== -1; member = this.groups.nextMember(member)) {
      source.pushQuote(member, batch);
      if (member === ref) mine = batch.length - 1;
    }
    const outcomes = this.groups.outcomes[g];
    const stale: StaleBook[] = [];
    for (let i = 0; i < batch.length; i++) {
      if (i === mine || batch.dfs[i] === 1 || batch.suspended[i] === 1 || outcomeIndex(outcomes, batch.side[i]) !== k) continue;
      if (!(batch.priceDecimal[i] > price)) continue;
      stale.push({ sportsbook: this.sources.ids[batch.book[i]], oddsId: batch.oddsId[i], priceAmerican: batch.priceAmerican[i], priceDecimal: batch.priceDecimal[i], updated: isoMillis(batch.updated[i]) });
    }
    stale.sort((a, b) => (b.priceDecimal - a.priceDecimal) || (a.sportsbook < b.sportsbook ? -1 : a.sportsbook > b.sportsbook ? 1 : 0));
    const line = batch.line[mine];
    const groups = this.groups;
    const market: ScreenMarket = {
      eventId: groups.eventId[g], league: groups.league[g], market: groups.market[g], marketSubtype: groups.marketSubtype[g],
      period: groups.period[g], playerId: groups.playerId[g], playerName: groups.playerName[g], eventStartTime: groups.eventStartTime[g],
    };
    return {
      id: `${batch.oddsId[mine]}@${at}`,
      oddsId: batch.oddsId[mine],
      groupId: groups.id[g],
      ...market,
      sportsbook: this.sources.ids[batch.book[mine]],
      selection: batch.selection[mine],
      side: SIDE_NAMES[batch.side[mine]],
      line: Number.isNaN(line) ? null : line,
      fromPriceAmerican: fromAmerican,
      toPriceAmerican: toAmerican,
      fromPriceDecimal: fromPrice,
      toPriceDecimal: price,
      movePoints: points,
      moveCents: cents,
      from: isoMillis(fromTime),
      at: isoMillis(at),
      staleBooks: stale,
    };
  }

  private append(r: number, time: number, price: number): void {
    const head = this.counts[r] === 0 ? 0 : (this.heads[r] + 1) % STEAM_RING;
    this.heads[r] = head;
    this.entries[2 * (r * STEAM_RING + head)] = time;
    this.entries[2 * (r * STEAM_RING + head) + 1] = price;
    if (this.counts[r] < STEAM_RING) this.counts[r]++;
  }

  private allocate(): number {
    const r = this.rings++;
    if (r === this.counts.length) {
      this.counts = grown(this.counts, r + 1);
      this.heads = grown(this.heads, r + 1);
      this.firedFrom = grown(this.firedFrom, r + 1, NaN);
      this.refOfRing = grown(this.refOfRing, r + 1, -1);
      this.entries = grown(this.entries, (r + 1) * STEAM_RING * 2);
    }
    return r;
  }
}

export function matchesSteam(m: SteamRecord, query: SteamQuery): boolean {
  if (query.leagues !== null && !query.leagues.includes(m.league)) return false;
  if (query.eventIds !== null && !query.eventIds.includes(m.eventId)) return false;
  if (query.sportsbooks !== null && !query.sportsbooks.includes(m.sportsbook)) return false;
  if (m.movePoints < query.minPoints || m.moveCents < query.minCents) return false;
  return Date.parse(m.at) >= query.since;
}

/** Changes a version-2 state holds: its rows' counts summed (each at most STEAM_RING; more is not a state this version wrote). */
function keptChanges(counts: Uint8Array): number {
  let total = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] > STEAM_RING) return -1;
    total += counts[i];
  }
  return total;
}
