// Indexed binary min-heap of group -> time: which group's fair value goes stale
// first. set/remove are O(log n) and allocation-free once grown.

import { grown } from '../columns.ts';

export class ExpiryHeap {
  private heap = new Int32Array(64);
  private key = new Float64Array(64);
  /** Position of each group in heap, -1 when absent. */
  private position = new Int32Array(64).fill(-1);
  size = 0;

  has(g: number): boolean {
    return g < this.position.length && this.position[g] >= 0;
  }

  /** The earliest time, Infinity when empty. */
  peekKey(): number {
    return this.size === 0 ? Infinity : this.key[this.heap[0]];
  }

  peek(): number {
    return this.size === 0 ? -1 : this.heap[0];
  }

  set(g: number, time: number): void {
    this.ensure(g);
    const at = this.position[g];
    this.key[g] = time;
    if (at < 0) {
      if (this.size === this.heap.length) this.heap = grown(this.heap, this.size + 1);
      this.heap[this.size] = g;
      this.position[g] = this.size;
      this.up(this.size++);
      return;
    }
    this.up(at);
    this.down(this.position[g]);
  }

  remove(g: number): void {
    if (!this.has(g)) return;
    const at = this.position[g];
    const last = this.heap[--this.size];
    this.position[g] = -1;
    if (at === this.size) return;
    this.heap[at] = last;
    this.position[last] = at;
    this.up(at);
    this.down(this.position[last]);
  }

  private up(at: number): void {
    const heap = this.heap;
    const g = heap[at];
    const time = this.key[g];
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const p = heap[parent];
      if (this.key[p] <= time) break;
      heap[at] = p;
      this.position[p] = at;
      at = parent;
    }
    heap[at] = g;
    this.position[g] = at;
  }

  private down(at: number): void {
    const heap = this.heap;
    const g = heap[at];
    const time = this.key[g];
    const half = this.size >> 1;
    while (at < half) {
      let child = 2 * at + 1;
      const right = child + 1;
      if (right < this.size && this.key[heap[right]] < this.key[heap[child]]) child = right;
      const c = heap[child];
      if (this.key[c] >= time) break;
      heap[at] = c;
      this.position[c] = at;
      at = child;
    }
    heap[at] = g;
    this.position[g] = at;
  }

  private ensure(g: number): void {
    if (g < this.position.length) return;
    // both double from 64, so key always covers every position
    this.position = grown(this.position, g + 1, -1);
    this.key = grown(this.key, g + 1);
  }
}
