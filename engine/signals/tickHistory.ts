// Price paths, opening and closing prices and closing-line value from archived ticks
// (the tick archive's rows, docs/archive.md). Pure functions over rows in log order:
// the engine and the routes call them; nothing here reads files.
//
// A tick carries only the fields it changed (a suspension toggle carries no price), so
// a path carries the last price forward: the price in force after each change.
// Opening: the first price of the path. Closing: the price in force just before the
// event's start (the last change strictly before it), null when the selection was
// removed then or never priced. CLV of a price taken: raw, the taken decimal over the
// closing decimal of the same selection, minus 1; no-vig, the taken decimal times the
// selection's no-vig closing probability (devig of the closing prices of its market
// group at one book), minus 1.

import { americanToDecimal } from '../model.ts';
import { devig, type DevigMethod } from './devig.ts';

/** The archive row fields these functions read (persistence/archive/archiveSchema.ts ArchiveRow has them). */
export interface Tick {
  seq: number;
  pos: number;
  time_ms: number;
  kind: string;
  odds_id: string | null;
  book: string | null;
  selection_id: string | null;
  line: number | null;
  price_american: number | null;
  dfs_multiplier: number | null;
  suspended: boolean | null;
}

/** The state of one odds row after a change. */
export interface PricePoint {
  seq: number;
  pos: number;
  time: number;
  kind: string;
  id: string;
  book: string;
  selectionId: string;
  priceAmerican: number | null;
  dfsMultiplier: number | null;
  suspended: boolean;
  line: number | null;
  removed: boolean;
}

/** Price points of every odds row in `ticks` (log order), carrying each row's last price forward. */
export function pricePaths(ticks: readonly Tick[]): PricePoint[] {
  const last = new Map<string, PricePoint>();
  const out: PricePoint[] = [];
  for (const tick of ticks) {
    if (tick.odds_id === null) continue;
    const before = last.get(tick.odds_id);
    const point: PricePoint = {
      seq: tick.seq,
      pos: tick.pos,
      time: tick.time_ms,
      kind: tick.kind,
      id: tick.odds_id,
      book: tick.book ?? '',
      selectionId: tick.selection_id ?? '',
      priceAmerican: before?.removed === false ? before.priceAmerican : null,
      dfsMultiplier: before?.removed === false ? before.dfsMultiplier : null,
      suspended: before?.removed === false ? before.suspended : false,
      line: tick.line ?? before?.line ?? null,
      removed: false,
    };
    if (tick.kind === 'upsert') {
      point.priceAmerican = tick.price_american;
      point.dfsMultiplier = tick.dfs_multiplier;
      point.suspended = tick.suspended ?? false;
    } else if (tick.kind === 'remove') {
      point.removed = true;
    } else {
      if (tick.price_american !== null) point.priceAmerican = tick.price_american;
      if (tick.dfs_multiplier !== null) point.dfsMultiplier = tick.dfs_multiplier;
      if (tick.suspended !== null) point.suspended = tick.suspended;
    }
    last.set(tick.odds_id, point);
    out.push(point);
  }
  return out;
}

/** The first point of one row's path with an American price. */
export function openingPoint(path: readonly PricePoint[]): PricePoint | null {
  for (const point of path) if (!point.removed && point.priceAmerican !== null) return point;
  return null;
}

/** The point in force at `at` (the last one with time <= at), or null. */
export function pointAt(path: readonly PricePoint[], at: number): PricePoint | null {
  let found: PricePoint | null = null;
  for (const point of path) {
    if (point.time > at) break;
    found = point;
  }
  return found;
}

/** The closing point: in force just before `startMs` (the last change strictly before it), priced and not removed; else null. */
export function closingPoint(path: readonly PricePoint[], startMs: number): PricePoint | null {
  let found: PricePoint | null = null;
  for (const point of path) {
    if (point.time >= startMs) break;
    found = point;
  }
  return found === null || found.removed || found.priceAmerican === null ? null : found;
}

const SIDE_TOKENS = new Set(['HOME', 'AWAY', 'DRAW', 'OVER', 'UNDER', 'YES', 'NO']);

/**
 * The market group of a selection id: its parts without the side and with a spread's
 * sign dropped (FULL-HOME-m5.5 and FULL-AWAY-5.5 are one group, FULL-OVER-51.5-p and
 * FULL-UNDER-51.5-p another). The selections of a group at one book are the outcomes
 * devigged together.
 */
export function marketGroupOf(selectionId: string): string {
  return selectionId
    .split('-')
    .filter((part) => !SIDE_TOKENS.has(part))
    .map((part) => (/^m\d/.test(part) ? part.slice(1) : part))
    .join('-');
}

export interface ClosingSelection {
  id: string;
  book: string;
  selectionId: string;
  opening: PricePoint | null;
  closing: PricePoint | null;
  /** No-vig closing probability (devig of the group's closing prices at this book), or null when the group is not complete (2 or 3 priced outcomes). */
  noVigProbability: number | null;
}

/**
 * Opening and closing per row, and each row's no-vig closing probability: the
 * closing prices of its market group at its book, devigged with `method`, when the
 * group has 2 or 3 outcomes all priced at the close.
 */
export function closingLines(points: readonly PricePoint[], startMs: number, method: DevigMethod): ClosingSelection[] {
  const byId = new Map<string, PricePoint[]>();
  for (const point of points) {
    let path = byId.get(point.id);
    if (path === undefined) byId.set(point.id, (path = []));
    path.push(point);
  }
  const rows: ClosingSelection[] = [];
  for (const [id, path] of byId) rows.push({ id, book: path[0].book, selectionId: path[0].selectionId, opening: openingPoint(path), closing: closingPoint(path, startMs), noVigProbability: null });
  rows.sort((a, b) => (a.book < b.book ? -1 : a.book > b.book ? 1 : a.selectionId < b.selectionId ? -1 : a.selectionId > b.selectionId ? 1 : 0));
  const groups = new Map<string, ClosingSelection[]>();
  for (const row of rows) {
    const key = `${row.book}\u0000${marketGroupOf(row.selectionId)}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(row);
  }
  for (const group of groups.values()) {
    if (group.length < 2 || group.length > 3 || group.some((row) => row.closing === null)) continue;
    const fair = devig(method, group.map((row) => americanToDecimal(row.closing!.priceAmerican!)));
    group.forEach((row, i) => (row.noVigProbability = fair[i]));
  }
  return rows;
}

export interface Clv {
  takenDecimal: number;
  closingDecimal: number | null;
  noVigClosingDecimal: number | null;
  /** taken / closing - 1. */
  clv: number | null;
  /** taken * no-vig closing probability - 1 (= taken / no-vig closing decimal - 1). */
  clvNoVig: number | null;
}

export function clvOf(takenAmerican: number, closing: ClosingSelection | null): Clv {
  const takenDecimal = americanToDecimal(takenAmerican);
  const closingDecimal = closing?.closing === null || closing === null ? null : americanToDecimal(closing.closing.priceAmerican!);
  const p = closing?.noVigProbability ?? null;
  return {
    takenDecimal,
    closingDecimal,
    noVigClosingDecimal: p === null ? null : 1 / p,
    clv: closingDecimal === null ? null : takenDecimal / closingDecimal - 1,
    clvNoVig: p === null ? null : takenDecimal * p - 1,
  };
}
