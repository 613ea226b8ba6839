// A posting list: row slots kept in /odds order (sportsbook, then id) so that a page is
// a slice. Single inserts/removes are a binary search plus copyWithin; bulk changes
// (load, an event going final) go through build/removeMarked/mergeSorted, which are
// linear, never one copyWithin per row.

import { grown } from './columns.ts';

/** The (sportsbook, id) order over slots, and over a cursor key that may no longer exist. */
export interface SlotOrder {
  compareSlots(a: number, b: number): number;
  /** Sign of (book, id) minus the key of `slot`. */
  compareKeyToSlot(book: string, id: string, slot: number): number;
}

export class PostingList {
  items: Int32Array;
  length = 0;
  /** Seq of the last change to any row in the list, membership changes included. */
  version = 0;

  constructor(capacity = 4) {
    this.items = new Int32Array(capacity);
  }

  /** Appends a slot the caller knows sorts after every current item. */
  push(slot: number): void {
    if (this.length === this.items.length) this.items = grown(this.items, this.length + 1);
    this.items[this.length++] = slot;
  }

  insert(slot: number, order: SlotOrder): void {
    const lo = this.lowerBound(slot, order);
    if (this.length === this.items.length) this.items = grown(this.items, this.length + 1);
    this.items.copyWithin(lo + 1, lo, this.length);
    this.items[lo] = slot;
    this.length++;
  }

  /** Removes `slot` (its columns must still hold its key); false when absent. */
  remove(slot: number, order: SlotOrder): boolean {
    const at = this.indexOf(slot, order);
    if (at < 0) return false;
    this.items.copyWithin(at, at + 1, this.length);
    this.length--;
    return true;
  }

  indexOf(slot: number, order: SlotOrder): number {
    const lo = this.lowerBound(slot, order);
    return lo < this.length && this.items[lo] === slot ? lo : -1;
  }

  /** The first position whose item does not sort before `slot` (binary search). */
  private lowerBound(slot: number, order: SlotOrder): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (order.compareSlots(this.items[mid], slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first item strictly after the key (book, id). */
  after(book: string, id: string, order: SlotOrder): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (order.compareKeyToSlot(book, id, this.items[mid]) >= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops every item whose mark is set, in one pass; returns how many were dropped. */
  removeMarked(mark: Uint8Array): number {
    const items = this.items;
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const slot = items[i];
      if (mark[slot] === 0) items[kept++] = slot;
    }
    const dropped = this.length - kept;
    this.length = kept;
    return dropped;
  }

  /** Merges `count` slots, already sorted and absent from the list, in one pass. */
  mergeSorted(sorted: Int32Array, count: number, order: SlotOrder): void {
    if (count === 0) return;
    const total = this.length + count;
    const merged = new Int32Array(Math.max(total, this.items.length));
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < this.length && j < count) {
      merged[k++] = order.compareSlots(this.items[i], sorted[j]) < 0 ? this.items[i++] : sorted[j++];
    }
    while (i < this.length) merged[k++] = this.items[i++];
    while (j < count) merged[k++] = sorted[j++];
    this.items = merged;
    this.length = total;
  }

  /** Releases unused capacity (after a bulk build). */
  trim(): void {
    if (this.items.length > this.length) this.items = this.items.slice(0, Math.max(this.length, 4));
  }

  bytes(): number {
    return this.items.byteLength;
  }
}
