// The order of the snapshot body and the piece keys that encode it. Events are
// ordered by (startTime, id); inside an event rows keep the /odds order (sportsbook,
// id). A piece key sorts exactly where its piece belongs, so a PieceSet with plain
// string comparison keeps the body in order:
//   event key   <startTime, 15 digits>\u0001<eventId>
//   slice key   <event key>\u0001<book>\u0001<row id>   a slice ending at that row (inclusive)
//               <event key>\u0001\uffff                 the event's last slice
//   group key   <event key of first member>\u0001\u0000  whole small events, in order
// Ids and codes never contain \u0000, \u0001 or \uffff, and "<book>\u0001<id>" sorts
// like the pair (book, id) because \u0001 is below every character of a book code.

import type { OddsEngine } from '../engine.ts';
import { STATUS_IN_PROGRESS } from '../eventTable.ts';
import { statusCode } from '../eventTable.ts';

const STATUS_SUSPENDED = statusCode('suspended');

export function eventKey(engine: OddsEngine, ev: number): string {
  return String(engine.eventTable.startTime[ev]).padStart(15, '0') + '\u0001' + engine.store.events.get(ev);
}

export function sliceKey(eventKeyText: string, book: string, id: string): string {
  return eventKeyText + '\u0001' + book + '\u0001' + id;
}

export function lastSliceKey(eventKeyText: string): string {
  return eventKeyText + '\u0001\uffff';
}

export function groupKey(firstEventKey: string): string {
  return firstEventKey + '\u0001\u0000';
}

/** The greatest key a piece of this event can have (its last slice's). */
export function eventKeyEnd(eventKeyText: string): string {
  return lastSliceKey(eventKeyText);
}

/** Fast-moving events get pieces of their own: games in play (not futures anchors). */
export function isLiveEvent(engine: OddsEngine, ev: number): boolean {
  const table = engine.eventTable;
  if (table.futures[ev] === 1) return false;
  const status = table.status[ev];
  return status === STATUS_IN_PROGRESS || status === STATUS_SUSPENDED;
}
