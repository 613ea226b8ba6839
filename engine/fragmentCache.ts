// Per-row JSON fragments, the serialization hot path. For each odds_format an arena
// (one Buffer, bump-allocated) holds each rendered row's UTF-8 bytes; a fragment is
// valid while the seq it was built at equals the row's seq, so apply() never touches
// the cache. A page renders as one Buffer.allocUnsafe plus one copy per row.
// Stale bytes are garbage: the arena is compacted when half of it is garbage, doubled
// while under the cap, and cleared outright when a full cap cannot be compacted
// (a cache, not a store: rows re-render lazily).

import { grown } from './columns.ts';
import type { OddsStore } from './oddsStore.ts';
import { rowJsonText } from './rowJson.ts';

class Arena {
  buffer: Buffer;
  used = 0;
  garbage = 0;
  /** Bumped whenever every fragment is dropped. */
  epoch = 0;
  offset = new Uint32Array(0);
  length = new Int32Array(0);
  builtAt = new Float64Array(0);

  constructor(initialBytes: number) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  fit(capacity: number): void {
    if (this.length.length >= capacity) return;
    this.offset = grown(this.offset, capacity);
    this.length = grown(this.length, capacity, -1);
    this.builtAt = grown(this.builtAt, capacity, -1);
  }
}

export class FragmentCache {
  private readonly arenas: (Arena | undefined)[] = [undefined, undefined, undefined, undefined];

  constructor(
    private readonly store: OddsStore,
    private readonly maxBytesPerFormat = 256 * 1024 * 1024,
    private readonly initialBytes = 1024 * 1024,
  ) {}

  /**
   * The rows' fragments for format `code`, joined by ',' (no brackets), in a new Buffer.
   * Fragments are stored with their trailing ',' so rows that sit next to each other in
   * the arena (a page rendered before, in the same order) copy as one run.
   */
  join(slots: Int32Array, count: number, code: number): Buffer {
    if (count === 0) return Buffer.alloc(0);
    const out = Buffer.allocUnsafeSlow(this.joinedLength(slots, count, code));
    this.joinInto(slots, count, code, out, 0);
    return out;
  }

  /** Byte length of join(...); renders missing fragments. */
  joinedLength(slots: Int32Array, count: number, code: number): number {
    if (count === 0) return 0;
    const arena = this.arena(code);
    let total = 0;
    for (let attempt = 0; ; attempt++) {
      const epoch = arena.epoch;
      total = 0;
      for (let i = 0; i < count; i++) total += this.ensure(arena, slots[i], code);
      if (arena.epoch === epoch || attempt > 0) break; // a clear mid-page: render the page again
    }
    return total - 1;
  }

  /** Writes join(...) into `target` at `offset` (room for joinedLength bytes); returns the bytes written. */
  joinInto(slots: Int32Array, count: number, code: number, target: Uint8Array, offset: number): number {
    if (count === 0) return 0;
    const arena = this.arena(code);
    const seqs = this.store.seq;
    let at = offset;
    let runStart = -1;
    let runEnd = -1;
    for (let i = 0; i < count; i++) {
      const slot = slots[i];
      if (arena.builtAt[slot] !== seqs[slot]) this.ensure(arena, slot, code);
      const start = arena.offset[slot];
      if (start === runEnd) {
        runEnd += arena.length[slot];
        continue;
      }
      if (runStart >= 0) at += arena.buffer.copy(target, at, runStart, runEnd);
      runStart = start;
      runEnd = start + arena.length[slot];
    }
    at += arena.buffer.copy(target, at, runStart, runEnd - 1); // the last row without its ','
    return at - offset;
  }

  /**
   * Copies the slot's fragment for format `code` into `target` at `offset` (without its
   * trailing ',') if one is cached and current, returning its length; -1 otherwise,
   * and nothing is rendered or cached then: for a reader that holds the rows' bytes
   * itself (the snapshot keeps its rendered pieces, keptPieceRows.ts) and would only
   * fill the arena with a second copy of them.
   */
  copyIfCurrent(slot: number, code: number, target: Buffer, offset: number): number {
    const arena = this.arenas[code];
    if (arena === undefined || slot >= arena.builtAt.length || arena.builtAt[slot] !== this.store.seq[slot]) return -1;
    const start = arena.offset[slot];
    const length = arena.length[slot] - 1;
    if (offset + length > target.length) return -1;
    return arena.buffer.copy(target, offset, start, start + length);
  }

  /** Bytes held by the arenas and their per-row tables. */
  bytes(): number {
    let total = 0;
    for (const arena of this.arenas) {
      if (arena === undefined) continue;
      total += arena.buffer.length + arena.offset.byteLength + arena.length.byteLength + arena.builtAt.byteLength;
    }
    return total;
  }

  private arena(code: number): Arena {
    let arena = this.arenas[code];
    if (arena === undefined) {
      arena = new Arena(this.initialBytes);
      this.arenas[code] = arena;
    }
    arena.fit(this.store.capacity);
    return arena;
  }

  /** Makes the slot's fragment current; returns its byte length. */
  private ensure(arena: Arena, slot: number, code: number): number {
    const seq = this.store.seq[slot];
    if (arena.builtAt[slot] === seq) return arena.length[slot];
    const text = rowJsonText(this.store, slot, code) + ',';
    const worst = text.length * 3;
    if (arena.used + worst > arena.buffer.length) this.makeRoom(arena, worst);
    if (arena.length[slot] >= 0) arena.garbage += arena.length[slot];
    const written = arena.buffer.write(text, arena.used, 'utf8');
    arena.offset[slot] = arena.used;
    arena.length[slot] = written;
    arena.builtAt[slot] = seq;
    arena.used += written;
    return written;
  }

  private makeRoom(arena: Arena, needed: number): void {
    if (arena.garbage * 2 >= arena.used) this.compact(arena, arena.buffer.length);
    let size = arena.buffer.length;
    while (arena.used + needed > size && size * 2 <= this.maxBytesPerFormat) size *= 2;
    if (arena.used + needed <= size) {
      if (size !== arena.buffer.length) this.compact(arena, size);
      return;
    }
    this.clear(arena);
    if (needed > arena.buffer.length) arena.buffer = Buffer.allocUnsafe(needed * 2);
  }

  /** Copies the still-valid fragments into a fresh buffer of `size` bytes. */
  private compact(arena: Arena, size: number): void {
    const next = Buffer.allocUnsafe(size);
    const seqs = this.store.seq;
    let used = 0;
    const limit = Math.min(this.store.size, arena.length.length);
    for (let slot = 0; slot < limit; slot++) {
      const length = arena.length[slot];
      if (length < 0) continue;
      if (arena.builtAt[slot] !== seqs[slot]) {
        arena.length[slot] = -1;
        arena.builtAt[slot] = -1;
        continue;
      }
      const start = arena.offset[slot];
      arena.buffer.copy(next, used, start, start + length);
      arena.offset[slot] = used;
      used += length;
    }
    arena.buffer = next;
    arena.used = used;
    arena.garbage = 0;
  }

  private clear(arena: Arena): void {
    arena.length.fill(-1);
    arena.builtAt.fill(-1);
    arena.used = 0;
    arena.garbage = 0;
    arena.epoch++;
  }
}
