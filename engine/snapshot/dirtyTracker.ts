// What changed on the board since a snapshot variant was last refreshed: row slots
// (each with the event it belonged to when it changed) and events with their own
// flags. Marking runs inside engine.apply for every change, so it is a few array
// writes and no allocation; each slot and event is listed once however often it changes.
//
// A refresh finds a changed row's piece by the row's key, read from the slot's
// columns, which a tombstone keeps. Only a slot recycled for another row (after the
// tombstone retention, minutes) loses the old key: then the old row's event is re-cut.

import { grown } from '../columns.ts';
import type { OddsStore } from '../oddsStore.ts';

/** The event's head (status, teams, start) changed: its first piece re-renders. */
export const EVENT_HEAD = 1;
/** Re-cut the event's pieces from scratch: a changed row's old key is lost. */
export const EVENT_RESLICE = 2;

const MARKED = 1;
const REMOVED = 2;

export class DirtyTracker {
  /** MARKED while the slot is listed, | REMOVED once a mark was a removal. */
  private slotMark = new Uint8Array(0);
  /** The event the listed slot belonged to when it was marked. */
  private slotEvent = new Int32Array(0);
  /** The removed row's key parts (with slotEvent), to tell a revived row from a recycled slot. */
  private slotBook = new Int32Array(0);
  private slotSubtype = new Int32Array(0);
  private slotSelection = new Int32Array(0);
  private slotList = new Int32Array(64);
  private slotCount = 0;
  private eventFlags = new Uint8Array(0);
  private eventList = new Int32Array(16);
  private eventCount = 0;

  constructor(private readonly store: OddsStore) {}

  get empty(): boolean {
    return this.slotCount === 0 && this.eventCount === 0;
  }

  get slots(): number {
    return this.slotCount;
  }

  get events(): number {
    return this.eventCount;
  }

  /** A row changed (read from the slot's columns). `removed`: it became a tombstone. */
  markSlot(slot: number, removed: boolean): void {
    const s = this.store;
    const ev = s.event[slot];
    if (slot >= this.slotMark.length) this.grow(slot + 1);
    const mark = this.slotMark[slot];
    if (mark !== 0) {
      if (this.slotEvent[slot] !== ev || ((mark & REMOVED) !== 0 && !this.sameRow(slot))) {
        this.markEvent(this.slotEvent[slot], EVENT_RESLICE); // recycled: the old key is gone
        this.slotEvent[slot] = ev;
        this.slotMark[slot] = MARKED;
      }
      if (removed) this.remember(slot, mark | REMOVED);
      return;
    }
    this.slotEvent[slot] = ev;
    if (removed) this.remember(slot, MARKED | REMOVED);
    else this.slotMark[slot] = MARKED;
    if (this.slotCount === this.slotList.length) this.slotList = grown(this.slotList, this.slotCount + 1);
    this.slotList[this.slotCount++] = slot;
  }

  markEvent(ev: number, flags: number): void {
    if (ev >= this.eventFlags.length) this.eventFlags = grown(this.eventFlags, ev + 1);
    if (this.eventFlags[ev] === 0) {
      if (this.eventCount === this.eventList.length) this.eventList = grown(this.eventList, this.eventCount + 1);
      this.eventList[this.eventCount++] = ev;
    }
    this.eventFlags[ev] |= flags;
  }

  /**
   * Hands every listed slot (with its event) and event (with its flags) to the visitors
   * and clears the lists. Marks made by the visitors land in the cleared lists.
   */
  drain(visitSlot: (slot: number, ev: number) => void, visitEvent: (ev: number, flags: number) => void): void {
    const slotCount = this.slotCount;
    const eventCount = this.eventCount;
    const slots = this.slotList.slice(0, slotCount);
    const events = this.eventList.slice(0, eventCount);
    const flags = new Uint8Array(eventCount);
    const slotEvents = new Int32Array(slotCount);
    for (let i = 0; i < slotCount; i++) {
      slotEvents[i] = this.slotEvent[slots[i]];
      this.slotMark[slots[i]] = 0;
    }
    for (let i = 0; i < eventCount; i++) {
      flags[i] = this.eventFlags[events[i]];
      this.eventFlags[events[i]] = 0;
    }
    this.slotCount = 0;
    this.eventCount = 0;
    for (let i = 0; i < eventCount; i++) visitEvent(events[i], flags[i]);
    for (let i = 0; i < slotCount; i++) visitSlot(slots[i], slotEvents[i]);
  }

  private remember(slot: number, mark: number): void {
    const s = this.store;
    this.slotMark[slot] = mark;
    this.slotBook[slot] = s.book[slot];
    this.slotSubtype[slot] = s.subtype[slot];
    this.slotSelection[slot] = s.selectionId[slot];
  }

  /** The slot still holds the row it held when it was removed (a revival, not a recycle). */
  private sameRow(slot: number): boolean {
    const s = this.store;
    return s.book[slot] === this.slotBook[slot] && s.subtype[slot] === this.slotSubtype[slot] && s.selectionId[slot] === this.slotSelection[slot];
  }

  private grow(length: number): void {
    this.slotMark = grown(this.slotMark, length);
    this.slotEvent = grown(this.slotEvent, length);
    this.slotBook = grown(this.slotBook, length);
    this.slotSubtype = grown(this.slotSubtype, length);
    this.slotSelection = grown(this.slotSelection, length);
  }
}
