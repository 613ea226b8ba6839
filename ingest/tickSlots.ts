// Slots of rows that price ticks named, by odds id, for the write path's validation: a
// feed ticks the same rows over and over, and one look-up of the whole id costs a
// fraction of resolving its four parts through the string pools (engine.slotOf).
//
// An entry stays true while only price ticks apply: a tick never moves a row to another
// slot. Anything else that applies (an upsert, a remove, a status, an event, a source,
// or a write to the engine from outside the write path) may, so the write path clears
// the whole map when such a batch applies. Validation reads it only through a settled
// view (no pending batch touches rows), so no entry is used across such a change.

/** Entries kept at most; when full the map starts over (a working set larger than this just misses more). */
const MAX_ENTRIES = 1 << 18;

export class TickSlots {
  private readonly slots = new Map<string, number>();

  /** The slot `id` had when it was noted, or -1. */
  get(id: string): number {
    const slot = this.slots.get(id);
    return slot === undefined ? -1 : slot;
  }

  note(id: string, slot: number): void {
    if (this.slots.size >= MAX_ENTRIES) this.slots.clear();
    this.slots.set(id, slot);
  }

  clear(): void {
    if (this.slots.size > 0) this.slots.clear();
  }

  get size(): number {
    return this.slots.size;
  }
}
