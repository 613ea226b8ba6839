// What the alert tests change on the small board: scheduled game events (status
// changes) and live sportsbook rows with an American price (line moves), found on the
// engine the app serves.
import type { OddsEngine } from '../../engine/engine.ts';
import { EVENT_STATUSES } from '../../engine/model.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';

export function scheduledEvents(engine: OddsEngine, count: number): string[] {
  const out: string[] = [];
  const t = engine.eventTable;
  for (let ev = 0; ev < t.known.length && out.length < count; ev++) {
    if (t.known[ev] === 1 && t.futures[ev] === 0 && EVENT_STATUSES[t.status[ev]!] === 'scheduled') out.push(engine.store.events.get(ev));
  }
  if (out.length < count) throw new Error(`the board has ${out.length} scheduled events, not ${count}`);
  return out;
}

export function pricedRows(engine: OddsEngine, count: number): string[] {
  const out: string[] = [];
  const s = engine.store;
  for (let slot = 0; slot < s.size && out.length < count; slot++) {
    if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && Number.isNaN(s.dfsMultiplier[slot]) && s.suspended[slot] === 0) out.push(engine.idOf(slot));
  }
  if (out.length < count) throw new Error(`the board has ${out.length} priced rows, not ${count}`);
  return out;
}

/** The k-th price of a walk that moves every step: 110, 115, ... back and forth below +500. */
export function walkPrice(k: number): number {
  return 110 + 5 * (k % 70);
}
