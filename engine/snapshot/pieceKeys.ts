// The order of the snapshot body and the piece keys that encode it. Events are
// ordered by (startTime, id); inside an event rows keep the /odds order (sportsbook,
// id). A piece is named after its last row, so a PieceSet with plain string
// comparison keeps the body in order, and a row's piece is the first whose key is at
// or after the row's key:
//   event key   <startTime, 15 digits>\u0001<eventId>
//   row key     <event key>\u0001<book>\u0001<row id>
//   END_KEY     \uffff: the body's last piece (rows appended at the end land in it)
// Ids and codes never contain \u0001 or \uffff, and "<book>\u0001<id>" sorts like the
// pair (book, id) because \u0001 is below every character of a book code.

import type { OddsEngine } from '../engine.ts';
import { STATUS_IN_PROGRESS } from '../eventTable.ts';
import { statusCode } from '../eventTable.ts';

const STATUS_SUSPENDED = statusCode('suspended');
const SEP = '\u0001';

export const END_KEY = '\uffff';

export function eventKey(engine: OddsEngine, ev: number): string {
  return String(engine.eventTable.startTime[ev]).padStart(15, '0') + SEP + engine.store.events.get(ev);
}

export function rowKey(eventKeyText: string, book: string, id: string): string {
  return eventKeyText + SEP + book + SEP + id;
}

/** Above every row key of the event. */
export function eventKeyEnd(eventKeyText: string): string {
  return eventKeyText + SEP + END_KEY;
}

/** A row key's parts: [event key, book, id]. */
export function splitRowKey(key: string): [string, string, string] {
  const eventEnd = key.indexOf(SEP, 16);
  const bookEnd = key.indexOf(SEP, eventEnd + 1);
  return [key.slice(0, eventEnd), key.slice(eventEnd + 1, bookEnd), key.slice(bookEnd + 1)];
}

/** Fast-moving events get pieces of their own: games in play (not futures anchors). */
export function isLiveEvent(engine: OddsEngine, ev: number): boolean {
  const table = engine.eventTable;
  if (table.futures[ev] === 1) return false;
  const status = table.status[ev];
  return status === STATUS_IN_PROGRESS || status === STATUS_SUSPENDED;
}
