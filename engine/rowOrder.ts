// The one order of every odds list: sportsbook ascending, then id ascending, both as
// plain JS string comparison (UTF-16 code units). Ids are never stored; they are
// compared through their interned parts. Within one sportsbook, comparing
// "e1:book:s1:x1" with "e2:book:s2:x2" reduces to comparing e1 and e2 as if each ended
// with ':' (ids contain no ':' inside a part), then s1/s2 the same way,
// then x1/x2 plainly, which gives exactly the string order of the full ids.

import type { OddsStore } from './oddsStore.ts';
import type { SlotOrder } from './postingList.ts';

const COLON = 58;

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Compares a + ':' with b + ':' without building either. */
export function compareColonTerminated(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length < b.length && b.startsWith(a)) return COLON - b.charCodeAt(a.length);
  if (b.length < a.length && a.startsWith(b)) return a.charCodeAt(b.length) - COLON;
  return a < b ? -1 : 1;
}

/** Compares `text` with part0:part1:part2:part3 as plain strings, without concatenating. */
function compareToJoined(text: string, p0: string, p1: string, p2: string, p3: string): number {
  let at = 0;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (at >= text.length) return -1;
      const c = text.charCodeAt(at++);
      if (c !== COLON) return c - COLON;
    }
    const piece = part === 0 ? p0 : part === 1 ? p1 : part === 2 ? p2 : p3;
    for (let j = 0; j < piece.length; j++) {
      if (at >= text.length) return -1;
      const d = text.charCodeAt(at++) - piece.charCodeAt(j);
      if (d !== 0) return d;
    }
  }
  return at < text.length ? 1 : 0;
}

export class RowOrder implements SlotOrder {
  constructor(private readonly store: OddsStore) {}

  compareSlots(a: number, b: number): number {
    if (a === b) return 0;
    const s = this.store;
    const bookA = s.book[a];
    const bookB = s.book[b];
    if (bookA !== bookB) return compareStrings(s.books.get(bookA), s.books.get(bookB));
    const eventA = s.event[a];
    const eventB = s.event[b];
    if (eventA !== eventB) return compareColonTerminated(s.events.get(eventA), s.events.get(eventB));
    const subA = s.subtype[a];
    const subB = s.subtype[b];
    if (subA !== subB) return compareColonTerminated(s.subtypes.get(subA), s.subtypes.get(subB));
    const selA = s.selectionId[a];
    const selB = s.selectionId[b];
    if (selA !== selB) return compareStrings(s.selectionIds.get(selA), s.selectionIds.get(selB));
    return 0;
  }

  compareKeyToSlot(book: string, id: string, slot: number): number {
    const s = this.store;
    const slotBook = s.books.get(s.book[slot]);
    if (book !== slotBook) return book < slotBook ? -1 : 1;
    return compareToJoined(
      id,
      s.events.get(s.event[slot]),
      slotBook,
      s.subtypes.get(s.subtype[slot]),
      s.selectionIds.get(s.selectionId[slot]),
    );
  }

  /** Bound once so sorts do not allocate a closure per call. */
  readonly compare = (a: number, b: number): number => this.compareSlots(a, b);
}

/** The sportsbook part of an id (its second ':'-separated part); '' when malformed. */
export function bookOfId(id: string): string {
  const first = id.indexOf(':');
  if (first < 0) return '';
  const second = id.indexOf(':', first + 1);
  return second < 0 ? id.slice(first + 1) : id.slice(first + 1, second);
}
