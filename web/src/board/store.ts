// The board as the page holds it: rows by id, grouped into lines (one selection of one
// event market, one price per book), with the best price per line. apply() takes any
// batch from the feed; the views read lines and ask for the filtered, ordered list only
// when the set of lines or the filters changed.
import { marketWords, selectionOf } from './marketWords.ts';
import type { EventInfo, OddsRow } from './types.ts';

export interface Line {
  /** eventId:marketSubtype:selectionId: the row id without its sportsbook. */
  key: string;
  eventId: string;
  league: string;
  market: string;
  /** What a reader tells lines apart by: the selection (a player's name, side and line included). */
  selection: string;
  /** The market, period and event it belongs to. */
  context: string;
  /** selection · context, for titles. */
  label: string;
  order: string;
  /** Book -> row. */
  prices: Map<string, OddsRow>;
  /** The book with the highest decimal price among unsuspended priced rows, or null. */
  best: string | null;
}

export interface Filters {
  league: string;
  market: string;
  eventId: string;
}

export interface Flash {
  until: number;
  up: boolean;
}

export const FLASH_MS = 900;

/** The row id without the book: {eventId}:{sportsbook}:{marketSubtype}:{selectionId}. */
export function lineKeyOf(id: string): string {
  const first = id.indexOf(':');
  const second = id.indexOf(':', first + 1);
  return id.slice(0, first) + id.slice(second);
}

function marketOf(row: OddsRow): string {
  const period = row.period === 'FULL' ? '' : ` ${row.period}`;
  return `${marketWords(row.marketSubtype)}${period}`;
}

function byOrder(a: Line, b: Line): number {
  return a.order < b.order ? -1 : a.order > b.order ? 1 : 0;
}

function priceOf(row: OddsRow): number | null {
  if (row.suspended || row.priceDecimal === undefined) return null;
  return row.priceDecimal;
}

export class BoardStore {
  readonly rows = new Map<string, OddsRow>();
  readonly lines = new Map<string, Line>();
  readonly events = new Map<string, EventInfo>();
  /** Books with at least one row, sorted. */
  books: string[] = [];
  /** Row id -> when its flash ends and which way the price moved. */
  readonly flashes = new Map<string, Flash>();
  /** Price changes seen (rows whose price or suspension changed), for the rate in the health bar. */
  changes = 0;
  /** Newest row updated seen, epoch ms. */
  newest = 0;
  /** Bumped when lines appear or leave, or books change: views re-filter. */
  shape = 0;
  /** Bumped on every applied batch: views redraw. */
  version = 0;
  /** Whether a board has been loaded (reset) yet: until then an empty list means loading, not "nothing matches". */
  loaded = false;
  private readonly bookCounts = new Map<string, number>();
  /**
   * Every line in display order, kept sorted as lines come and go (a binary search and
   * one splice each), so a filter change or a moving board never sorts 30k lines again.
   */
  private ordered: Line[] = [];
  private readonly changeListeners: ((changed: readonly OddsRow[]) => void)[] = [];

  onApplied(listener: (changed: readonly OddsRow[]) => void): void {
    this.changeListeners.push(listener);
  }

  reset(rows: readonly OddsRow[], events: readonly EventInfo[]): void {
    this.rows.clear();
    this.lines.clear();
    this.bookCounts.clear();
    this.flashes.clear();
    this.events.clear();
    for (const event of events) this.events.set(event.id, event);
    this.ordered = [];
    for (const row of rows) this.upsert(row, false);
    this.ordered = [...this.lines.values()].sort(byOrder);
    this.refreshBooks();
    this.loaded = true;
    this.shape++;
    this.version++;
  }

  /** Upserts rows by id and deletes tombstones; rows whose price did not change cost a comparison. */
  apply(batch: readonly OddsRow[]): void {
    const now = performance.now();
    const changed: OddsRow[] = [];
    let shapeChanged = false;
    for (const row of batch) {
      const old = this.rows.get(row.id);
      if (row.removed === true) {
        if (old !== undefined) {
          this.remove(old);
          shapeChanged = true;
          changed.push(row);
        }
        continue;
      }
      if (old !== undefined && old.priceDecimal === row.priceDecimal && old.dfsMultiplier === row.dfsMultiplier && old.suspended === row.suspended && old.updated === row.updated) continue;
      if (old === undefined || old.priceDecimal !== row.priceDecimal || old.dfsMultiplier !== row.dfsMultiplier || old.suspended !== row.suspended) {
        this.changes++;
        changed.push(row);
        if (old !== undefined) {
          const before = old.priceDecimal ?? old.dfsMultiplier ?? 0;
          const after = row.priceDecimal ?? row.dfsMultiplier ?? 0;
          this.flashes.set(row.id, { until: now + FLASH_MS, up: after >= before });
        }
      }
      if (this.upsert(row, true)) shapeChanged = true;
    }
    if (shapeChanged) {
      this.refreshBooks();
      this.shape++;
    }
    this.version++;
    if (changed.length > 0) for (const listener of this.changeListeners) listener(changed);
  }

  /** Lines passing the filters, by event start, event, then label (one pass over the kept order). */
  select(filters: Filters): Line[] {
    if (filters.league === '' && filters.market === '' && filters.eventId === '') return this.ordered.slice();
    const out: Line[] = [];
    for (const line of this.ordered) {
      if (filters.league !== '' && line.league !== filters.league) continue;
      if (filters.market !== '' && line.market !== filters.market) continue;
      if (filters.eventId !== '' && line.eventId !== filters.eventId) continue;
      out.push(line);
    }
    return out;
  }

  /** Where `line` is, or would go, in the kept order. */
  private orderIndex(line: Line): number {
    let low = 0;
    let high = this.ordered.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.ordered[mid]!.order < line.order) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  leagues(): string[] {
    return [...new Set([...this.lines.values()].map((line) => line.league))].sort();
  }

  markets(league: string): string[] {
    const set = new Set<string>();
    for (const line of this.lines.values()) if (league === '' || line.league === league) set.add(line.market);
    return [...set].sort();
  }

  eventsOf(league: string): EventInfo[] {
    const ids = new Set<string>();
    for (const line of this.lines.values()) if (league === '' || line.league === league) ids.add(line.eventId);
    return [...ids]
      .map((id) => this.events.get(id) ?? { id, league, startTime: '', status: '', homeTeamId: null, awayTeamId: null })
      .sort((a, b) => (a.startTime + a.id < b.startTime + b.id ? -1 : 1));
  }

  /** Returns whether a new line was made. */
  private upsert(row: OddsRow, live: boolean): boolean {
    const old = this.rows.get(row.id);
    this.rows.set(row.id, row);
    const updated = Date.parse(row.updated);
    if (updated > this.newest) this.newest = updated;
    const key = lineKeyOf(row.id);
    let line = this.lines.get(key);
    let made = false;
    if (line === undefined) {
      line = {
        key,
        eventId: row.eventId,
        league: row.league,
        market: row.market,
        selection: selectionOf(row),
        context: `${marketOf(row)}${this.eventLabel(row.eventId)}`,
        label: `${selectionOf(row)} · ${marketOf(row)}${this.eventLabel(row.eventId)}`,
        order: `${row.eventStartTime}\u0000${row.eventId}\u0000${row.marketSubtype}\u0000${row.period}\u0000${row.line ?? ''}\u0000${row.selection}\u0000${key}`,
        prices: new Map(),
        best: null,
      };
      this.lines.set(key, line);
      if (live) this.ordered.splice(this.orderIndex(line), 0, line);
      made = true;
    }
    line.prices.set(row.sportsbook, row);
    if (old === undefined) {
      const count = this.bookCounts.get(row.sportsbook) ?? 0;
      this.bookCounts.set(row.sportsbook, count + 1);
      if (count === 0 && live) made = true;
    }
    this.rank(line);
    return made;
  }

  private eventLabel(eventId: string): string {
    const event = this.events.get(eventId);
    if (event === undefined || event.homeTeamId === null || event.awayTeamId === null) return '';
    const short = (teamId: string) => teamId.slice(teamId.indexOf('-') + 1).toUpperCase();
    return ` · ${short(event.awayTeamId)} @ ${short(event.homeTeamId)}`;
  }

  private remove(row: OddsRow): void {
    this.rows.delete(row.id);
    this.flashes.delete(row.id);
    const count = (this.bookCounts.get(row.sportsbook) ?? 1) - 1;
    if (count <= 0) this.bookCounts.delete(row.sportsbook);
    else this.bookCounts.set(row.sportsbook, count);
    const key = lineKeyOf(row.id);
    const line = this.lines.get(key);
    if (line === undefined) return;
    line.prices.delete(row.sportsbook);
    if (line.prices.size === 0) {
      this.lines.delete(key);
      const at = this.orderIndex(line);
      if (this.ordered[at] === line) this.ordered.splice(at, 1);
    } else this.rank(line);
  }

  private rank(line: Line): void {
    let best: string | null = null;
    let bestPrice = 0;
    for (const [book, row] of line.prices) {
      const price = priceOf(row);
      if (price !== null && price > bestPrice) {
        best = book;
        bestPrice = price;
      }
    }
    line.best = best;
  }

  private refreshBooks(): void {
    this.books = [...this.bookCounts.keys()].sort();
  }
}
