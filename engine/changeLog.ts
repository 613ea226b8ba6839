// The delta feed's memory of what changed: a bounded, time-ordered ring of
// (slot, time) per applied change, and the FIFO of tombstones waiting out their
// retention. The log is an accelerator: when a `since` is older than what it still
// covers, the feed walks the posting lists instead, so bounding it never loses rows.

import { grown } from './columns.ts';

export class ChangeLog {
  private slots: Int32Array;
  private times: Float64Array;
  private head = 0;
  private count = 0;
  private mask: number;
  /** Every change at a time strictly after this is in the log. */
  coveredAfter = -Infinity;
  /** Entries ever appended; entry k (absolute) is at logical index k - firstAbsolute. */
  appended = 0;

  /** maxEntries: a power of two. */
  constructor(
    private readonly maxEntries = 1 << 20,
    initialEntries = 1 << 12,
  ) {
    let length = 1;
    while (length < Math.min(initialEntries, maxEntries)) length *= 2;
    this.slots = new Int32Array(length);
    this.times = new Float64Array(length);
    this.mask = length - 1;
  }

  get length(): number {
    return this.count;
  }

  append(slot: number, time: number): void {
    if (this.count === this.slots.length) {
      if (this.slots.length < this.maxEntries) this.grow();
      else this.dropOldest();
    }
    const at = (this.head + this.count) & this.mask;
    this.slots[at] = slot;
    this.times[at] = time;
    this.count++;
    this.appended++;
  }

  /** Absolute index of the oldest entry still held. */
  get firstAbsolute(): number {
    return this.appended - this.count;
  }

  /** Declares that nothing at or before `time` is in the log (e.g. rows loaded without entries). */
  coverFrom(time: number): void {
    if (time > this.coveredAfter) this.coveredAfter = time;
  }

  /** Logical index of the first entry with time >= `time` (count when none). */
  firstAtOrAfter(time: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[(this.head + mid) & this.mask] < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  slotAt(index: number): number {
    return this.slots[(this.head + index) & this.mask];
  }

  bytes(): number {
    return this.slots.byteLength + this.times.byteLength;
  }

  saveState(): ChangeLogState {
    const slots = new Int32Array(this.count);
    const times = new Float64Array(this.count);
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) & this.mask;
      slots[i] = this.slots[at];
      times[i] = this.times[at];
    }
    return { slots, times, coveredAfter: this.coveredAfter, appended: this.appended };
  }

  /** Replaces the log with a saved one (entries oldest first). */
  restoreState(state: ChangeLogState): void {
    const count = state.slots.length;
    let length = this.slots.length;
    while (length < count) length *= 2;
    this.slots = new Int32Array(length);
    this.times = new Float64Array(length);
    this.slots.set(state.slots);
    this.times.set(state.times);
    this.mask = length - 1;
    this.head = 0;
    this.count = count;
    this.coveredAfter = state.coveredAfter;
    this.appended = state.appended;
  }

  private dropOldest(): void {
    const time = this.times[this.head];
    if (time > this.coveredAfter) this.coveredAfter = time;
    this.head = (this.head + 1) & this.mask;
    this.count--;
  }

  private grow(): void {
    const length = this.slots.length * 2;
    const slots = new Int32Array(length);
    const times = new Float64Array(length);
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) & this.mask;
      slots[i] = this.slots[at];
      times[i] = this.times[at];
    }
    this.slots = slots;
    this.times = times;
    this.head = 0;
    this.mask = length - 1;
  }
}

export interface ChangeLogState {
  slots: Int32Array;
  times: Float64Array;
  coveredAfter: number;
  appended: number;
}

export interface TombstoneQueueState {
  slots: Int32Array;
  seqs: Float64Array;
  times: Float64Array;
}

/** Tombstones in removal order; each is recycled once its retention has passed. */
export class TombstoneQueue {
  private slots = new Int32Array(64);
  private seqs = new Float64Array(64);
  private times = new Float64Array(64);
  private head = 0;
  private tail = 0;

  get length(): number {
    return this.tail - this.head;
  }

  push(slot: number, seq: number, time: number): void {
    if (this.tail === this.slots.length) {
      if (this.head > this.slots.length >>> 1) this.compact();
      else {
        this.slots = grown(this.slots, this.tail + 1);
        this.seqs = grown(this.seqs, this.tail + 1);
        this.times = grown(this.times, this.tail + 1);
      }
    }
    this.slots[this.tail] = slot;
    this.seqs[this.tail] = seq;
    this.times[this.tail] = time;
    this.tail++;
  }

  /** True when the oldest entry was removed at or before `time`. */
  hasDueAt(time: number): boolean {
    return this.tail > this.head && this.times[this.head] <= time;
  }

  oldestSlot(): number {
    return this.slots[this.head];
  }
  oldestSeq(): number {
    return this.seqs[this.head];
  }
  oldestTime(): number {
    return this.times[this.head];
  }
  shift(): void {
    this.head++;
    if (this.head === this.tail) this.head = this.tail = 0;
  }

  bytes(): number {
    return this.slots.byteLength + this.seqs.byteLength + this.times.byteLength;
  }

  saveState(): TombstoneQueueState {
    return { slots: this.slots.slice(this.head, this.tail), seqs: this.seqs.slice(this.head, this.tail), times: this.times.slice(this.head, this.tail) };
  }

  restoreState(state: TombstoneQueueState): void {
    const length = Math.max(64, state.slots.length);
    this.slots = new Int32Array(length);
    this.seqs = new Float64Array(length);
    this.times = new Float64Array(length);
    this.slots.set(state.slots);
    this.seqs.set(state.seqs);
    this.times.set(state.times);
    this.head = 0;
    this.tail = state.slots.length;
  }

  private compact(): void {
    this.slots.copyWithin(0, this.head, this.tail);
    this.seqs.copyWithin(0, this.head, this.tail);
    this.times.copyWithin(0, this.head, this.tail);
    this.tail -= this.head;
    this.head = 0;
  }
}
