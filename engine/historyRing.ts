// Price history per selection (2.13): the last 50 {fs, ls, pa, dm, su} entries, oldest
// first. Rings live in typed-array slabs and are allocated on demand in three capacity
// classes (4, 16, 50): most selections change a few times, so giving every row 50
// slots up front would triple the memory of a full board. A ring that fills its class
// is promoted to the next one; at 50 the oldest entry is overwritten.
//
// fs/ls are whole epoch seconds (Uint32, floor of the millisecond time). pa is 0 where
// absent (DFS rows), dm is 0 where absent (book rows), su is 1 for a suspended span:
// the same conventions as HistoryBuffer in model.ts. pd is derived from pa on read.

import { americanToDecimal, type HistoryBuffer } from './model.ts';
import { grown } from './columns.ts';

export const HISTORY_CAPACITY = 50;
const CLASS_CAPACITIES = [4, 16, HISTORY_CAPACITY] as const;
const SLAB_SHIFT = 10;
const RINGS_PER_SLAB = 1 << SLAB_SHIFT;
const CLASS_SHIFT = 27;
const RING_MASK = (1 << CLASS_SHIFT) - 1;
/** No ring allocated. */
export const NO_RING = -1;
const BYTES_PER_ENTRY = 4 + 4 + 4 + 8 + 1;

class RingPool {
  readonly fs: Uint32Array[] = [];
  readonly ls: Uint32Array[] = [];
  readonly pa: Int32Array[] = [];
  readonly dm: Float64Array[] = [];
  readonly su: Uint8Array[] = [];
  head = new Uint8Array(0);
  len = new Uint8Array(0);
  private freeRings = new Int32Array(64);
  private freeCount = 0;
  private rings = 0;

  constructor(readonly capacity: number) {}

  allocate(): number {
    if (this.freeCount > 0) return this.freeRings[--this.freeCount];
    const ring = this.rings++;
    if ((ring & (RINGS_PER_SLAB - 1)) === 0) {
      const entries = RINGS_PER_SLAB * this.capacity;
      this.fs.push(new Uint32Array(entries));
      this.ls.push(new Uint32Array(entries));
      this.pa.push(new Int32Array(entries));
      this.dm.push(new Float64Array(entries));
      this.su.push(new Uint8Array(entries));
      this.head = grown(this.head, this.fs.length * RINGS_PER_SLAB);
      this.len = grown(this.len, this.fs.length * RINGS_PER_SLAB);
    }
    return ring;
  }

  release(ring: number): void {
    this.head[ring] = 0;
    this.len[ring] = 0;
    this.freeRings = grown(this.freeRings, this.freeCount + 1);
    this.freeRings[this.freeCount++] = ring;
  }

  /** Offset inside the ring's slab of its i-th entry, oldest first (i < capacity). */
  offset(ring: number, i: number): number {
    let at = this.head[ring] + i;
    if (at >= this.capacity) at -= this.capacity;
    return (ring & (RINGS_PER_SLAB - 1)) * this.capacity + at;
  }

  slabBytes(): number {
    return this.fs.length * RINGS_PER_SLAB * this.capacity * BYTES_PER_ENTRY;
  }
}

export class HistoryRings {
  private readonly pools = CLASS_CAPACITIES.map((capacity) => new RingPool(capacity));

  length(handle: number): number {
    if (handle === NO_RING) return 0;
    return this.pools[handle >>> CLASS_SHIFT].len[handle & RING_MASK];
  }

  /** Appends an entry; returns the ring's handle, which changes when a ring is created or promoted. */
  append(handle: number, fs: number, ls: number, pa: number, dm: number, su: number): number {
    if (handle === NO_RING) handle = this.pools[0].allocate();
    let pool = this.pools[handle >>> CLASS_SHIFT];
    let ring = handle & RING_MASK;
    let length = pool.len[ring];
    if (length === pool.capacity && pool.capacity < HISTORY_CAPACITY) {
      handle = this.promote(handle);
      pool = this.pools[handle >>> CLASS_SHIFT];
      ring = handle & RING_MASK;
      length = pool.len[ring];
    }
    let at: number;
    if (length === pool.capacity) {
      at = pool.offset(ring, 0); // overwrite the oldest
      const head = pool.head[ring] + 1;
      pool.head[ring] = head === pool.capacity ? 0 : head;
    } else {
      at = pool.offset(ring, length);
      pool.len[ring] = length + 1;
    }
    const slab = ring >>> SLAB_SHIFT;
    pool.fs[slab][at] = fs;
    pool.ls[slab][at] = ls;
    pool.pa[slab][at] = pa;
    pool.dm[slab][at] = dm;
    pool.su[slab][at] = su;
    return handle;
  }

  /** The same price seen again: only the newest entry's last-seen time moves. */
  touch(handle: number, ls: number): void {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    const length = pool.len[ring];
    if (length === 0) return;
    pool.ls[ring >>> SLAB_SHIFT][pool.offset(ring, length - 1)] = ls;
  }

  fs(handle: number, i: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.fs[ring >>> SLAB_SHIFT][pool.offset(ring, i)];
  }
  ls(handle: number, i: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.ls[ring >>> SLAB_SHIFT][pool.offset(ring, i)];
  }
  pa(handle: number, i: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.pa[ring >>> SLAB_SHIFT][pool.offset(ring, i)];
  }
  dm(handle: number, i: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.dm[ring >>> SLAB_SHIFT][pool.offset(ring, i)];
  }
  su(handle: number, i: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.su[ring >>> SLAB_SHIFT][pool.offset(ring, i)];
  }

  /** Copies the ring oldest first into `out` (fs/ls as epoch seconds); returns the entry count. */
  copyInto(handle: number, out: HistoryBuffer): number {
    const length = this.length(handle);
    out.length = length;
    if (length === 0) return 0;
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    const slab = ring >>> SLAB_SHIFT;
    for (let i = 0; i < length; i++) {
      const at = pool.offset(ring, i);
      out.fs[i] = pool.fs[slab][at];
      out.ls[i] = pool.ls[slab][at];
      out.pa[i] = pool.pa[slab][at];
      out.dm[i] = pool.dm[slab][at];
      out.su[i] = pool.su[slab][at];
    }
    return length;
  }

  /** Replaces the ring's contents with the last (at most 50) entries of `source`; returns the handle. */
  assign(handle: number, source: HistoryBuffer): number {
    this.free(handle);
    const count = Math.min(source.length, HISTORY_CAPACITY);
    if (count === 0) return NO_RING;
    let cls = 0;
    while (CLASS_CAPACITIES[cls] < count) cls++;
    const pool = this.pools[cls];
    const ring = pool.allocate();
    const slab = ring >>> SLAB_SHIFT;
    const base = (ring & (RINGS_PER_SLAB - 1)) * pool.capacity;
    const first = source.length - count;
    for (let i = 0; i < count; i++) {
      pool.fs[slab][base + i] = Math.floor(source.fs[first + i]);
      pool.ls[slab][base + i] = Math.floor(source.ls[first + i]);
      pool.pa[slab][base + i] = source.pa[first + i];
      pool.dm[slab][base + i] = source.dm[first + i];
      pool.su[slab][base + i] = source.su[first + i];
    }
    pool.head[ring] = 0;
    pool.len[ring] = count;
    return (cls << CLASS_SHIFT) | ring;
  }

  free(handle: number): void {
    if (handle === NO_RING) return;
    this.pools[handle >>> CLASS_SHIFT].release(handle & RING_MASK);
  }

  /** Bytes held by slabs (allocated, used or not). */
  allocatedBytes(): number {
    let total = 0;
    for (const pool of this.pools) total += pool.slabBytes();
    return total;
  }

  private promote(handle: number): number {
    const cls = handle >>> CLASS_SHIFT;
    const from = this.pools[cls];
    const to = this.pools[cls + 1];
    const ring = handle & RING_MASK;
    const target = to.allocate();
    const length = from.len[ring];
    const fromSlab = ring >>> SLAB_SHIFT;
    const toSlab = target >>> SLAB_SHIFT;
    const base = (target & (RINGS_PER_SLAB - 1)) * to.capacity;
    for (let i = 0; i < length; i++) {
      const at = from.offset(ring, i);
      to.fs[toSlab][base + i] = from.fs[fromSlab][at];
      to.ls[toSlab][base + i] = from.ls[fromSlab][at];
      to.pa[toSlab][base + i] = from.pa[fromSlab][at];
      to.dm[toSlab][base + i] = from.dm[fromSlab][at];
      to.su[toSlab][base + i] = from.su[fromSlab][at];
    }
    to.head[target] = 0;
    to.len[target] = length;
    from.release(ring);
    return ((cls + 1) << CLASS_SHIFT) | target;
  }
}

/** An entry as plain data (snapshot, historical odds, tests); keys absent when not applicable (E1). */
export interface HistoryEntry {
  fs: number;
  ls: number;
  pa?: number;
  pd?: number;
  dm?: number;
  su?: true;
}

export function historyEntry(rings: HistoryRings, handle: number, i: number): HistoryEntry {
  const entry: HistoryEntry = { fs: rings.fs(handle, i), ls: rings.ls(handle, i) };
  const pa = rings.pa(handle, i);
  if (pa !== 0) {
    entry.pa = pa;
    entry.pd = americanToDecimal(pa);
  }
  const dm = rings.dm(handle, i);
  if (dm !== 0) entry.dm = dm;
  if (rings.su(handle, i) === 1) entry.su = true;
  return entry;
}
