// What one signal-stream channel was last pushed, per market group: a fingerprint
// (engine/signals/fingerprint.ts; 0: nothing pushed yet). A channel without a league or
// event filter can list any group, so its marks are a Float64Array by group index (8
// bytes a group: 480 KB on the large board's 60,000 groups). A filtered one lists the
// few groups its filter selects, so its marks are an open-addressing table of just
// those (group index -> mark, in typed arrays), and a thousand event subscriptions cost
// what their events' groups do, not a thousand copies of the board.

import { grown } from '../columns.ts';

const EMPTY = -1;

export class GroupMarks {
  private dense: Float64Array | null = null;
  private keys = new Int32Array(0);
  private values = new Float64Array(0);
  private shift = 32;
  private count = 0;

  constructor(hashed: boolean) {
    if (hashed) this.rehash(16);
    else this.dense = new Float64Array(64);
  }

  /** The mark last pushed for group g (0: none). */
  get(g: number): number {
    const dense = this.dense;
    if (dense !== null) return g < dense.length ? dense[g] : 0;
    const mask = this.keys.length - 1;
    for (let i = Math.imul(g, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      const key = this.keys[i];
      if (key === g) return this.values[i];
      if (key === EMPTY) return 0;
    }
  }

  set(g: number, mark: number): void {
    if (this.dense !== null) {
      if (g >= this.dense.length) this.dense = grown(this.dense, g + 1);
      this.dense[g] = mark;
      return;
    }
    if (2 * (this.count + 1) > this.keys.length) this.rehash(this.keys.length * 2);
    this.put(g, mark);
  }

  /** Whether both hold the same mark for every group (channels asking the same that can share from now on). */
  equals(other: GroupMarks): boolean {
    if (this.dense !== null && other.dense !== null) {
      const a = this.dense;
      const b = other.dense;
      const n = Math.max(a.length, b.length);
      for (let g = 0; g < n; g++) if ((g < a.length ? a[g] : 0) !== (g < b.length ? b[g] : 0)) return false;
      return true;
    }
    if (this.dense !== null || other.dense !== null) return false;
    // marks are never set back to 0, so equal counts and every key of one matching the other suffice
    if (this.count !== other.count) return false;
    for (let i = 0; i < this.keys.length; i++) {
      const g = this.keys[i];
      if (g !== EMPTY && other.get(g) !== this.values[i]) return false;
    }
    return true;
  }

  private put(g: number, mark: number): void {
    const mask = this.keys.length - 1;
    for (let i = Math.imul(g, 0x9e3779b1) >>> this.shift; ; i = (i + 1) & mask) {
      const key = this.keys[i];
      if (key === g) {
        this.values[i] = mark;
        return;
      }
      if (key === EMPTY) {
        this.keys[i] = g;
        this.values[i] = mark;
        this.count++;
        return;
      }
    }
  }

  private rehash(capacity: number): void {
    const keys = this.keys;
    const values = this.values;
    this.keys = new Int32Array(capacity).fill(EMPTY);
    this.values = new Float64Array(capacity);
    this.shift = 32 - Math.log2(capacity);
    this.count = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== EMPTY) this.put(keys[i], values[i]);
  }
}
