// One selection's price history at every book that quotes it, for a line-movement
// chart: the rows whose odds id differs from the given one only in the sportsbook part
// (an odds id is {eventId}:{sportsbook}:{marketSubtype}:{selectionId}, and the
// selection id already encodes period, side, line and player or team), live ones and
// removed ones whose history is still kept, each with its ring oldest first. One event's
// slots are walked, so the cost is that event's row count, never the board's.
//
//   selectionHistory(engine, oddsId) -> rows in /odds order (sportsbook, id), or null
//   when the event was never seen; [] when no book has that selection.

import type { OddsEngine } from '../engine.ts';
import { historyEntry, NO_RING, type HistoryEntry } from '../historyRing.ts';
import { SIDES, SLOT_TOMBSTONE } from '../oddsStore.ts';
import { isoMinutes } from '../timeFormat.ts';
import { eventSlots } from './historicalReplay.ts';

export interface SelectionHistoryRow {
  id: string;
  eventId: string;
  sportsbook: string;
  market: string;
  marketSubtype: string;
  period: string;
  selection: string;
  side: string;
  line?: number;
  eventStartTime: string;
  /** Present (true) when the selection has left the board; its history is kept a while. */
  removed?: true;
  priceHistory: HistoryEntry[];
}

export interface SelectionHistory {
  rows: SelectionHistoryRow[];
  /** Latest last-seen time among the entries (epoch ms), 0 when none: meta.updated. */
  updated: number;
}

/** The parts of an odds id, or null when it does not have four non-empty parts. */
export function oddsIdParts(id: string): { eventId: string; sportsbook: string; marketSubtype: string; selectionId: string } | null {
  const parts = id.split(':');
  if (parts.length !== 4 || parts.some((part) => part === '')) return null;
  return { eventId: parts[0]!, sportsbook: parts[1]!, marketSubtype: parts[2]!, selectionId: parts[3]! };
}

/** The id without its sportsbook part: the same selection at every book shares it. */
function withoutBook(id: string): string {
  const first = id.indexOf(':');
  return id.slice(0, first) + id.slice(id.indexOf(':', first + 1));
}

/** `oddsId` must have four parts (oddsIdParts); the route checks that first. */
export function selectionHistory(engine: OddsEngine, oddsId: string): SelectionHistory | null {
  const s = engine.store;
  const ev = s.events.lookup(oddsId.slice(0, oddsId.indexOf(':')));
  if (ev < 0 || !engine.eventTable.has(ev)) return null;
  const wanted = withoutBook(oddsId);
  const rows: SelectionHistoryRow[] = [];
  let updated = 0;
  for (const slot of eventSlots(engine, ev)) {
    const id = s.idOf(slot);
    if (withoutBook(id) !== wanted) continue;
    const handle = s.ring[slot];
    const priceHistory: HistoryEntry[] = [];
    if (handle !== NO_RING) {
      const length = engine.rings.length(handle);
      for (let i = 0; i < length; i++) priceHistory.push(historyEntry(engine.rings, handle, i));
    }
    if (s.state[slot] === SLOT_TOMBSTONE && priceHistory.length === 0) continue;
    const row: SelectionHistoryRow = {
      id,
      eventId: s.events.get(ev),
      sportsbook: s.books.get(s.book[slot]),
      market: s.markets.get(s.market[slot]),
      marketSubtype: s.subtypes.get(s.subtype[slot]),
      period: s.periods.get(s.period[slot]),
      selection: s.labels.get(s.selection[slot]),
      side: SIDES[s.side[slot]]!,
      eventStartTime: isoMinutes(s.eventStartTime[slot]),
      priceHistory,
    };
    const line = s.line[slot];
    if (!Number.isNaN(line)) row.line = line;
    if (s.state[slot] === SLOT_TOMBSTONE) row.removed = true;
    rows.push(row);
    const last = priceHistory[priceHistory.length - 1];
    if (last !== undefined && last.ls * 1000 > updated) updated = last.ls * 1000;
  }
  return { rows, updated };
}
