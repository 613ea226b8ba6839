// History replay from the engine's price rings (/historical/odds and /historical/arbitrage).
//
// "The price in force at t" of a selection is its newest ring entry whose first-seen
// time is at or before t. Ring times are whole seconds (fs/ls, as in the snapshot), so
// replay resolves to the second: an entry first seen during second s counts as in
// force at any t >= s * 1000. A selection is in force at t only while it was on the
// board: a removed selection (a tombstone, history still kept) stops at its removal
// time (the tombstone's updated). Once a tombstone's slot is recycled (>= 10 min after
// removal) its history is gone, and so is it from the replay. A selection removed and
// revived keeps one ring, so a replay inside the gap shows the pre-removal price.
//
//   historicalOdds(engine, eventId, at) -> HistoricalOddsRow rows, in /odds order (sportsbook, id)
// Arbitrage at a past instant is ArbitrageReplay (arbitrageReplay.ts).

import type { OddsEngine } from '../engine.ts';
import { NO_RING } from '../historyRing.ts';
import { NO_PRICE, SLOT_LIVE, SLOT_TOMBSTONE } from '../oddsStore.ts';
import { rowField } from '../rowFields.ts';
import { isoMillis } from '../timeFormat.ts';
import { compareStrings } from '../rowOrder.ts';
import { pointAt, type PricePoint } from './tickHistory.ts';

/** A /historical/odds row. line is absent on pure moneylines; priceAmerican is null on DFS rows. */
export interface HistoricalOddsRow {
  id: string;
  eventId: string;
  sportsbook: string;
  market: string;
  marketSubtype: string;
  period: string;
  selection: string;
  side: string;
  line?: number;
  priceAmerican: number | null;
  /** First-seen time of the price in force (ISO-8601 with ms). */
  asOf: string;
  suspended: boolean;
}

export interface HistoricalOdds {
  rows: HistoricalOddsRow[];
  /** Latest asOf among the rows (epoch ms), 0 when none: meta.updated. */
  updated: number;
}

/** Index of the ring entry of `slot` in force at `at` (epoch ms), -1 when none. */
export function entryInForce(engine: OddsEngine, slot: number, at: number): number {
  const s = engine.store;
  const state = s.state[slot];
  if (state !== SLOT_LIVE && state !== SLOT_TOMBSTONE) return -1;
  if (state === SLOT_TOMBSTONE && s.updated[slot] <= at) return -1; // removed by then
  const handle = s.ring[slot];
  if (handle === NO_RING) return -1;
  const rings = engine.rings;
  const second = Math.floor(at / 1000);
  for (let i = rings.length(handle) - 1; i >= 0; i--) if (rings.fs(handle, i) <= second) return i;
  return -1;
}

/** Slots of one event, live and tombstoned, in (sportsbook, id) order. */
export function eventSlots(engine: OddsEngine, ev: number): number[] {
  const slots: number[] = [];
  const live = engine.indexes.byEvent[ev];
  if (live !== undefined) for (let i = 0; i < live.length; i++) slots.push(live.items[i]);
  const dead = engine.indexes.tombstones;
  const event = engine.store.event;
  for (let i = 0; i < dead.length; i++) if (event[dead.items[i]] === ev) slots.push(dead.items[i]);
  if (slots.length > 0 && dead.length > 0) { const order = engine.indexes.order; slots.sort((a, b) => order.compareSlots(a, b)); }
  return slots;
}

/** The row fields /historical/odds reads from the row's columns, in its JSON order after id (the price and suspended are the history entry's). */
const HISTORICAL_COLUMNS = ['eventId', 'sportsbook', 'market', 'marketSubtype', 'period', 'selection', 'side'].map(rowField);

/**
 * Each selection of the event with its price in force at `at`; null when the event
 * was never seen (the route answers 404).
 */
export function historicalOdds(engine: OddsEngine, eventId: string, at: number): HistoricalOdds | null {
  const s = engine.store;
  const ev = s.events.lookup(eventId);
  if (ev < 0 || !engine.eventTable.has(ev)) return null;
  const rows: HistoricalOddsRow[] = [];
  let updated = 0;
  for (const slot of eventSlots(engine, ev)) {
    const i = entryInForce(engine, slot, at);
    if (i < 0) continue;
    const handle = s.ring[slot];
    const pa = engine.rings.pa(handle, i);
    const firstSeen = engine.rings.fs(handle, i) * 1000;
    const line = s.line[slot];
    const columns: Record<string, unknown> = { id: s.idOf(slot) };
    for (const field of HISTORICAL_COLUMNS) columns[field.name] = s.fieldValue(field, slot);
    const row = columns as unknown as HistoricalOddsRow;
    row.priceAmerican = pa === NO_PRICE ? null : pa;
    row.asOf = isoMillis(firstSeen);
    row.suspended = engine.rings.su(handle, i) === 1;
    if (!Number.isNaN(line)) row.line = line;
    rows.push(row);
    if (firstSeen > updated) updated = firstSeen;
  }
  return { rows, updated };
}

export interface HistoricalArbitrageQuery {
  /** Epoch ms; the staleness window is to - from. */
  from: number;
  to: number;
  minProfit: number;
  limit: number;
}

/**
 * `ring` (historicalOdds at `at`) completed from archived price paths (tickHistory.ts,
 * the event's changes up to `at`): a selection the rings do not reach back to `at` for
 * (more than 50 changes since) gets the archived point in force at `at`, when the board
 * still holds its row or tombstone (the other fields come from there). Rows stay in
 * (sportsbook, id) order.
 */
export function withArchivedPrices(engine: OddsEngine, ring: HistoricalOdds, points: readonly PricePoint[], at: number): HistoricalOdds {
  const have = new Set(ring.rows.map((row) => row.id));
  const paths = new Map<string, PricePoint[]>();
  for (const point of points) {
    if (have.has(point.id)) continue;
    let path = paths.get(point.id);
    if (path === undefined) paths.set(point.id, (path = []));
    path.push(point);
  }
  if (paths.size === 0) return ring;
  const s = engine.store;
  const rows = [...ring.rows];
  let updated = ring.updated;
  for (const [id, path] of paths) {
    const point = pointAt(path, at);
    const slot = engine.slotOf(id);
    if (point === null || point.removed || slot < 0) continue;
    const line = s.line[slot];
    const columns: Record<string, unknown> = { id };
    for (const field of HISTORICAL_COLUMNS) columns[field.name] = s.fieldValue(field, slot);
    const row = columns as unknown as HistoricalOddsRow;
    row.priceAmerican = point.priceAmerican;
    row.asOf = isoMillis(point.time);
    row.suspended = point.suspended;
    if (!Number.isNaN(line)) row.line = line;
    rows.push(row);
    if (point.time > updated) updated = point.time;
  }
  rows.sort((a, b) => compareStrings(a.sportsbook, b.sportsbook) || compareStrings(a.id, b.id));
  return { rows, updated };
}
