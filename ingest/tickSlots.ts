// Slots of rows that price ticks named, by odds id, for the write path's validation: a
// feed ticks the same rows over and over, and one look-up of the whole id costs a
// fraction of resolving its four parts through the string pools (engine.slotOf).
//
// Keyed by the id's bytes (ASCII ids only; any other id is simply not kept), so a batch
// read straight from msgpack (tickBatch.ts) looks its ids up where they lie in the body,
// without making a string of each: an open-addressing table of entry numbers, each
// entry the id's hash (idBytes.ts), its bytes (in one growing arena) and its slot.
//
// An entry stays true while only price ticks apply: a tick never moves a row to another
// slot. Anything else that applies (an upsert, a remove, a status, an event, a source,
// or a write to the engine from outside the write path) may, so the write path clears
// the whole table when such a batch applies. Validation reads it only through a settled
// view (no pending batch touches rows), so no entry is used across such a change.

import { hashAsciiBytes, sameBytes, viewOf } from './idBytes.ts';

/** Entries kept at most; when full the table starts over (a working set larger than this just misses more). */
const MAX_ENTRIES = 1 << 18;
const FIRST_CAPACITY = 1 << 10;
/** Longest id kept (longer ones are looked up in the engine every time; ids are at most 400 characters). */
const MAX_KEY_BYTES = 512;

export class TickSlots {
  /** Entry number + 1 per bucket, 0 = empty; twice the entry capacity, so at most half full. */
  private table = new Int32Array(FIRST_CAPACITY * 2);
  private entryHash = new Int32Array(FIRST_CAPACITY);
  private entryStart = new Int32Array(FIRST_CAPACITY);
  private entryLength = new Int32Array(FIRST_CAPACITY);
  private entrySlot = new Int32Array(FIRST_CAPACITY);
  private arena = new Uint8Array(FIRST_CAPACITY * 64);
  private arenaView = viewOf(this.arena);
  private arenaUsed = 0;
  private count = 0;
  /** A string id's bytes while it is looked up or noted. */
  private readonly scratch = new Uint8Array(MAX_KEY_BYTES);
  private readonly scratchView = viewOf(this.scratch);

  /** The slot `id` had when it was noted, or -1. */
  get(id: string): number {
    const hash = this.scratchKey(id);
    return hash < 0 ? -1 : this.find(this.scratchView, 0, id.length, hash);
  }

  note(id: string, slot: number): void {
    const hash = this.scratchKey(id);
    if (hash >= 0) this.noteBytes(this.scratch, 0, id.length, hash, slot);
  }

  /** The slot noted for the id in view[start, start + length), whose hashAsciiBytes is `hash`, or -1. */
  find(view: DataView, start: number, length: number, hash: number): number {
    const table = this.table;
    const mask = table.length - 1;
    const arena = this.arenaView;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = table[at] - 1;
      if (entry < 0) return -1;
      if (this.entryHash[entry] === hash && this.entryLength[entry] === length && sameBytes(arena, this.entryStart[entry], view, start, length)) {
        return this.entrySlot[entry];
      }
    }
  }

  /** Notes the id in bytes[start, start + length) (not yet noted; its hashAsciiBytes is `hash`) as naming `slot`. */
  noteBytes(bytes: Uint8Array, start: number, length: number, hash: number, slot: number): void {
    if (length > MAX_KEY_BYTES) return;
    if (this.count >= MAX_ENTRIES) this.clear();
    if (this.count === this.entrySlot.length) this.grow();
    if (this.arenaUsed + length > this.arena.length) {
      const arena = new Uint8Array(Math.max(this.arena.length * 2, this.arenaUsed + length));
      arena.set(this.arena.subarray(0, this.arenaUsed));
      this.arena = arena;
      this.arenaView = viewOf(arena);
    }
    const entry = this.count++;
    this.arena.set(bytes.subarray(start, start + length), this.arenaUsed);
    this.entryHash[entry] = hash;
    this.entryStart[entry] = this.arenaUsed;
    this.entryLength[entry] = length;
    this.entrySlot[entry] = slot;
    this.arenaUsed += length;
    this.place(entry);
  }

  clear(): void {
    if (this.count === 0) return;
    this.table.fill(0);
    this.count = 0;
    this.arenaUsed = 0;
  }

  get size(): number {
    return this.count;
  }

  private place(entry: number): void {
    const table = this.table;
    const mask = table.length - 1;
    let at = this.entryHash[entry] & mask;
    while (table[at] !== 0) at = (at + 1) & mask;
    table[at] = entry + 1;
  }

  private grow(): void {
    const capacity = this.entrySlot.length * 2;
    const widen = (old: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const next = new Int32Array(capacity);
      next.set(old);
      return next;
    };
    this.entryHash = widen(this.entryHash);
    this.entryStart = widen(this.entryStart);
    this.entryLength = widen(this.entryLength);
    this.entrySlot = widen(this.entrySlot);
    this.table = new Int32Array(capacity * 2);
    for (let entry = 0; entry < this.count; entry++) this.place(entry);
  }

  /** Writes an id into the scratch bytes and returns its hashAsciiBytes; -1 for an id not kept. */
  private scratchKey(id: string): number {
    const length = id.length;
    if (length > MAX_KEY_BYTES) return -1;
    const scratch = this.scratch;
    for (let i = 0; i < length; i++) {
      const code = id.charCodeAt(i);
      if (code >= 0x80) return -1;
      scratch[i] = code;
    }
    return hashAsciiBytes(this.scratchView, 0, length);
  }
}
