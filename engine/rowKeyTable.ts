// id -> slot without keeping id strings: an open-addressing hash table over the
// row's interned (event, book, subtype, selectionId) parts, storing slot + 1 in an
// Int32Array (0 = empty). Linear probing with backward-shift deletion, so there are no
// deleted markers to accumulate under constant insert/remove churn.

import type { OddsStore } from './oddsStore.ts';

function hashParts(event: number, book: number, subtype: number, selection: number): number {
  let h = Math.imul(event ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ book, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16) ^ subtype, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13) ^ selection, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class RowKeyTable {
  private table: Int32Array = new Int32Array(1024);
  private mask = 1023;
  private count = 0;

  constructor(private readonly store: OddsStore) {}

  get size(): number {
    return this.count;
  }

  /** Slot of the row with these parts, or -1. */
  find(event: number, book: number, subtype: number, selection: number): number {
    const s = this.store;
    let at = hashParts(event, book, subtype, selection) & this.mask;
    for (;;) {
      const entry = this.table[at];
      if (entry === 0) return -1;
      const slot = entry - 1;
      if (
        s.selectionId[slot] === selection &&
        s.event[slot] === event &&
        s.book[slot] === book &&
        s.subtype[slot] === subtype
      ) {
        return slot;
      }
      at = (at + 1) & this.mask;
    }
  }

  /** Slot of the row with this id string, or -1 (never interns anything). */
  findId(id: string): number {
    const a = id.indexOf(':');
    const b = a < 0 ? -1 : id.indexOf(':', a + 1);
    const c = b < 0 ? -1 : id.indexOf(':', b + 1);
    if (c < 0) return -1;
    const s = this.store;
    const event = s.events.lookup(id.slice(0, a));
    const book = s.books.lookup(id.slice(a + 1, b));
    const subtype = s.subtypes.lookup(id.slice(b + 1, c));
    const selection = s.selectionIds.lookup(id.slice(c + 1));
    if (event < 0 || book < 0 || subtype < 0 || selection < 0) return -1;
    return this.find(event, book, subtype, selection);
  }

  /** Adds `slot` under the parts its columns hold (the caller knows they are not present). */
  add(slot: number): void {
    if ((this.count + 1) * 2 > this.table.length) this.resize(this.table.length * 2);
    this.place(slot);
    this.count++;
  }

  /** Makes room for `rows` entries at once (load). */
  reserve(rows: number): void {
    let length = this.table.length;
    while (rows * 2 > length) length *= 2;
    if (length > this.table.length) this.resize(length);
  }

  delete(slot: number): boolean {
    let at = this.home(slot);
    for (;;) {
      const entry = this.table[at];
      if (entry === 0) return false;
      if (entry - 1 === slot) break;
      at = (at + 1) & this.mask;
    }
    // Backward shift: pull later entries of the probe run into the hole when allowed.
    let hole = at;
    let next = (hole + 1) & this.mask;
    while (this.table[next] !== 0) {
      const home = this.home(this.table[next] - 1);
      if (((next - home) & this.mask) >= ((next - hole) & this.mask)) {
        this.table[hole] = this.table[next];
        hole = next;
      }
      next = (next + 1) & this.mask;
    }
    this.table[hole] = 0;
    this.count--;
    return true;
  }

  bytes(): number {
    return this.table.byteLength;
  }

  /** The table as it is (the live array: copy it before the next add or delete) and its entry count, for a checkpoint. */
  saveState(): { table: Int32Array; count: number } {
    return { table: this.table, count: this.count };
  }

  /**
   * Takes a table saveState gave (a checkpoint's) as this table, instead of adding every
   * slot again. The caller checked that its entries are the store's used slots, each
   * once (engine/checkpoint.ts); where each sits is the saved table's own probing.
   */
  adopt(table: Int32Array, count: number): void {
    if (table.length < 16 || (table.length & (table.length - 1)) !== 0 || count * 2 > table.length) throw new Error(`a key table of ${table.length} entries cannot hold ${count} rows`);
    this.table = table;
    this.mask = table.length - 1;
    this.count = count;
  }

  private home(slot: number): number {
    const s = this.store;
    return hashParts(s.event[slot], s.book[slot], s.subtype[slot], s.selectionId[slot]) & this.mask;
  }

  private place(slot: number): void {
    let at = this.home(slot);
    while (this.table[at] !== 0) at = (at + 1) & this.mask;
    this.table[at] = slot + 1;
  }

  private resize(length: number): void {
    const old = this.table;
    this.table = new Int32Array(length);
    this.mask = length - 1;
    for (let i = 0; i < old.length; i++) if (old[i] !== 0) this.place(old[i] - 1);
  }
}
