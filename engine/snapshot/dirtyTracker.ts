// What changed on the board since a snapshot variant was last refreshed: row slots
// (each with the event it belonged to when it changed) and events with their own
// flags. Marking runs inside engine.apply for every change, so it is two array writes
// and no allocation; each slot and event is listed once however often it changes.

import { grown } from '../columns.ts';

/** The event's head (status, teams, start) changed: its first piece re-renders. */
export const EVENT_HEAD = 1;
/** Re-cut the event's pieces from scratch (a changed row could not be located, order moved). */
export const EVENT_RESLICE = 2;

const MARKED = 1;
const REMOVED = 2;

export class DirtyTracker {
  /** MARKED while the slot is listed, | REMOVED once a mark was a removal. */
  private slotMark = new Uint8Array(0);
  /** The event the listed slot belonged to when it was marked. */
  private slotEvent = new Int32Array(0);
  private slotList = new Int32Array(64);
  private slotCount = 0;
  private eventFlags = new Uint8Array(0);
  private eventList = new Int32Array(16);
  private eventCount = 0;

  get empty(): boolean {
    return this.slotCount === 0 && this.eventCount === 0;
  }

  get slots(): number {
    return this.slotCount;
  }

  /**
   * A row changed. `removed`: it became a tombstone; `inserted`: it joined the board.
   * A slot listed as removed that is inserted again is either the same row revived or
   * a recycled slot holding another row: the old row's key is gone either way, so its
   * event is re-cut (rare: retention keeps tombstones for minutes).
   */
  markSlot(slot: number, ev: number, removed: boolean, inserted: boolean): void {
    if (slot >= this.slotMark.length) {
      this.slotMark = grown(this.slotMark, slot + 1);
      this.slotEvent = grown(this.slotEvent, slot + 1);
    }
    const mark = this.slotMark[slot];
    if (mark !== 0) {
      if (this.slotEvent[slot] !== ev || (inserted && (mark & REMOVED) !== 0)) {
        this.markEvent(this.slotEvent[slot], EVENT_RESLICE);
        this.slotEvent[slot] = ev;
      }
      if (removed) this.slotMark[slot] = mark | REMOVED;
      return;
    }
    this.slotMark[slot] = removed ? MARKED | REMOVED : MARKED;
    this.slotEvent[slot] = ev;
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
}
