// Price history per selection (the snapshot's priceHistory): the last 50 {fs, ls, pa, dm, su} entries, oldest
// first. Rings live in typed-array slabs and are allocated on demand in three capacity
// classes (4, 16, 50): most selections change a few times, so giving every row 50
// slots up front would triple the memory of a full board. A ring that fills its class
// is promoted to the next one; at 50 the oldest entry is overwritten.
//
// Layout (20 bytes an entry, two cache lines touched per append): a Uint32Array with
// three words per entry, fs, ls (whole epoch seconds, floor of the ms time) and
// pa * 2 + su (the American price and the suspended bit; read back through `| 0`
// because pa is signed), plus a Float64Array of dm. pa is 0 where absent (DFS rows),
// dm is 0 where absent (book rows): the conventions of HistoryBuffer in model.ts.
// Each ring's head and length sit side by side in one Uint8Array.

import { americanToDecimal, type HistoryBuffer } from './model.ts';
import { grown } from './columns.ts';

export const HISTORY_CAPACITY = 50;
const CLASS_CAPACITIES = [4, 16, HISTORY_CAPACITY] as const;
const SLAB_SHIFT = 10;
/** Rings a slab holds (a slab is allocated whole, its rings handed out from the front). */
export const RINGS_PER_SLAB = 1 << SLAB_SHIFT;
const CLASS_SHIFT = 27;
const RING_MASK = (1 << CLASS_SHIFT) - 1;
/** No ring allocated. */
export const NO_RING = -1;
const WORDS = 3;
const BYTES_PER_ENTRY = WORDS * 4 + 8;

class RingPool {
  readonly words: Uint32Array[] = [];
  readonly dm: Float64Array[] = [];
  /** [head, length] per ring. */
  meta = new Uint8Array(0);
  private freeRings = new Int32Array(64);
  private freeCount = 0;
  private rings = 0;

  constructor(readonly capacity: number) {}

  allocate(): number {
    if (this.freeCount > 0) return this.freeRings[--this.freeCount];
    const ring = this.rings++;
    if ((ring & (RINGS_PER_SLAB - 1)) === 0) {
      const entries = RINGS_PER_SLAB * this.capacity;
      this.words.push(new Uint32Array(entries * WORDS));
      this.dm.push(new Float64Array(entries));
      this.meta = grown(this.meta, this.words.length * RINGS_PER_SLAB * 2);
    }
    return ring;
  }

  release(ring: number): void {
    this.meta[ring * 2] = 0;
    this.meta[ring * 2 + 1] = 0;
    this.freeRings = grown(this.freeRings, this.freeCount + 1);
    this.freeRings[this.freeCount++] = ring;
  }

  length(ring: number): number {
    return this.meta[ring * 2 + 1];
  }

  /** Entry index inside the ring's slab of its i-th entry, oldest first (i < capacity). */
  offset(ring: number, i: number): number {
    let at = this.meta[ring * 2] + i;
    if (at >= this.capacity) at -= this.capacity;
    return (ring & (RINGS_PER_SLAB - 1)) * this.capacity + at;
  }

  write(ring: number, at: number, fs: number, ls: number, pa: number, dm: number, su: number): void {
    const slab = ring >>> SLAB_SHIFT;
    const words = this.words[slab];
    const w = at * WORDS;
    words[w] = fs;
    words[w + 1] = ls;
    words[w + 2] = pa * 2 + su;
    this.dm[slab][at] = dm;
  }

  slabBytes(): number {
    return this.words.length * RINGS_PER_SLAB * this.capacity * BYTES_PER_ENTRY;
  }

  saveState(): RingPoolState {
    return { words: this.words, dm: this.dm, meta: this.meta, free: this.freeRings.slice(0, this.freeCount), rings: this.rings };
  }

  restoreState(state: RingPoolState): void {
    this.words.length = 0;
    this.dm.length = 0;
    this.words.push(...state.words);
    this.dm.push(...state.dm);
    this.meta = new Uint8Array(state.meta);
    this.freeRings = grown(new Int32Array(64), state.free.length);
    this.freeRings.set(state.free);
    this.freeCount = state.free.length;
    this.rings = state.rings;
  }
}

/** One capacity class of rings as a checkpoint holds it: the slabs as they are in memory. */
export interface RingPoolState {
  words: Uint32Array[];
  dm: Float64Array[];
  meta: Uint8Array;
  free: Int32Array;
  rings: number;
}

export class HistoryRings {
  private readonly pools = CLASS_CAPACITIES.map((capacity) => new RingPool(capacity));

  length(handle: number): number {
    if (handle === NO_RING) return 0;
    return this.pools[handle >>> CLASS_SHIFT].length(handle & RING_MASK);
  }

  /** Appends an entry; returns the ring's handle, which changes when a ring is created or promoted. */
  append(handle: number, fs: number, ls: number, pa: number, dm: number, su: number): number {
    if (handle === NO_RING) handle = this.pools[0].allocate();
    let pool = this.pools[handle >>> CLASS_SHIFT];
    let ring = handle & RING_MASK;
    let length = pool.meta[ring * 2 + 1];
    if (length === pool.capacity && pool.capacity < HISTORY_CAPACITY) {
      handle = this.promote(handle);
      pool = this.pools[handle >>> CLASS_SHIFT];
      ring = handle & RING_MASK;
      length = pool.meta[ring * 2 + 1];
    }
    let at: number;
    if (length === pool.capacity) {
      at = pool.offset(ring, 0); // overwrite the oldest
      const head = pool.meta[ring * 2] + 1;
      pool.meta[ring * 2] = head === pool.capacity ? 0 : head;
    } else {
      at = pool.offset(ring, length);
      pool.meta[ring * 2 + 1] = length + 1;
    }
    pool.write(ring, at, fs, ls, pa, dm, su);
    return handle;
  }

  /** The same price seen again: only the newest entry's last-seen time moves. */
  touch(handle: number, ls: number): void {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    const length = pool.length(ring);
    if (length === 0) return;
    pool.words[ring >>> SLAB_SHIFT][pool.offset(ring, length - 1) * WORDS + 1] = ls;
  }

  /**
   * Reads what touch() or append() will read of a ring (its head and length, then its
   * newest entry) and returns a number made of them: a caller about to write to many
   * rings reads them all first, in loops of independent reads whose cache misses
   * overlap, instead of paying them one after another. Changes nothing.
   */
  warmMeta(handle: number): number {
    if (handle === NO_RING) return 0;
    return this.pools[handle >>> CLASS_SHIFT].meta[(handle & RING_MASK) * 2 + 1];
  }

  /** The second read of warmMeta: the ring's newest entry (its meta now at hand). */
  warmNewest(handle: number): number {
    if (handle === NO_RING) return 0;
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    const length = pool.meta[ring * 2 + 1];
    if (length === 0) return 0;
    return pool.words[ring >>> SLAB_SHIFT][pool.offset(ring, length - 1) * WORDS + 1];
  }

  /**
   * The index of the entry in force at `second` (the newest first seen at or before it)
   * when that entry was last seen at or after `since`; -1 otherwise. One pool and slab
   * lookup for the whole scan: the arbitrage replay calls it for every row.
   */
  inForceSince(handle: number, second: number, since: number): number {
    if (handle === NO_RING) return -1;
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    const words = pool.words[ring >>> SLAB_SHIFT];
    for (let i = pool.meta[ring * 2 + 1] - 1; i >= 0; i--) {
      const w = pool.offset(ring, i) * WORDS;
      // ls only grows along a ring: once an entry was last seen before since, so were all older ones
      if (words[w + 1] < since) return -1;
      if (words[w] <= second) return i;
    }
    return -1;
  }

  fs(handle: number, i: number): number {
    return this.word(handle, i, 0);
  }
  ls(handle: number, i: number): number {
    return this.word(handle, i, 1);
  }
  pa(handle: number, i: number): number {
    return (this.word(handle, i, 2) | 0) >> 1;
  }
  su(handle: number, i: number): number {
    return this.word(handle, i, 2) & 1;
  }
  dm(handle: number, i: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.dm[ring >>> SLAB_SHIFT][pool.offset(ring, i)];
  }

  /** Copies the ring oldest first into `out` (fs/ls as epoch seconds); returns the entry count. */
  copyInto(handle: number, out: HistoryBuffer): number {
    const length = this.length(handle);
    out.length = length;
    if (length === 0) return 0;
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    const words = pool.words[ring >>> SLAB_SHIFT];
    const dm = pool.dm[ring >>> SLAB_SHIFT];
    for (let i = 0; i < length; i++) {
      const at = pool.offset(ring, i);
      const w = at * WORDS;
      out.fs[i] = words[w];
      out.ls[i] = words[w + 1];
      const pasu = words[w + 2] | 0;
      out.pa[i] = pasu >> 1;
      out.su[i] = pasu & 1;
      out.dm[i] = dm[at];
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
    const base = (ring & (RINGS_PER_SLAB - 1)) * pool.capacity;
    const first = source.length - count;
    for (let i = 0; i < count; i++) {
      const k = first + i;
      pool.write(ring, base + i, Math.floor(source.fs[k]), Math.floor(source.ls[k]), source.pa[k], source.dm[k], source.su[k] === 0 ? 0 : 1);
    }
    pool.meta[ring * 2] = 0;
    pool.meta[ring * 2 + 1] = count;
    return (cls << CLASS_SHIFT) | ring;
  }

  free(handle: number): void {
    if (handle === NO_RING) return;
    this.pools[handle >>> CLASS_SHIFT].release(handle & RING_MASK);
  }

  /** Every ring slab, by capacity class (the arrays themselves, not copies: save before the next append). */
  saveState(): RingPoolState[] {
    return this.pools.map((pool) => pool.saveState());
  }

  /** Replaces every ring with a saved state (handles in the store's ring column stay valid). */
  restoreState(state: readonly RingPoolState[]): void {
    if (state.length !== this.pools.length) throw new Error(`saved rings have ${state.length} classes, expected ${this.pools.length}`);
    this.pools.forEach((pool, i) => pool.restoreState(state[i]));
  }

  /** Bytes held by slabs (allocated, used or not). */
  allocatedBytes(): number {
    let total = 0;
    for (const pool of this.pools) total += pool.slabBytes() + pool.meta.byteLength;
    return total;
  }

  private word(handle: number, i: number, field: number): number {
    const pool = this.pools[handle >>> CLASS_SHIFT];
    const ring = handle & RING_MASK;
    return pool.words[ring >>> SLAB_SHIFT][pool.offset(ring, i) * WORDS + field];
  }

  private promote(handle: number): number {
    const cls = handle >>> CLASS_SHIFT;
    const from = this.pools[cls];
    const to = this.pools[cls + 1];
    const ring = handle & RING_MASK;
    const target = to.allocate();
    const length = from.length(ring);
    const fromWords = from.words[ring >>> SLAB_SHIFT];
    const fromDm = from.dm[ring >>> SLAB_SHIFT];
    const toWords = to.words[target >>> SLAB_SHIFT];
    const toDm = to.dm[target >>> SLAB_SHIFT];
    const base = (target & (RINGS_PER_SLAB - 1)) * to.capacity;
    for (let i = 0; i < length; i++) {
      const at = from.offset(ring, i);
      const w = (base + i) * WORDS;
      toWords[w] = fromWords[at * WORDS];
      toWords[w + 1] = fromWords[at * WORDS + 1];
      toWords[w + 2] = fromWords[at * WORDS + 2];
      toDm[base + i] = fromDm[at];
    }
    to.meta[target * 2] = 0;
    to.meta[target * 2 + 1] = length;
    from.release(ring);
    return ((cls + 1) << CLASS_SHIFT) | target;
  }
}

/** An entry as plain data (snapshot, historical odds, tests); keys absent when not applicable. */
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
