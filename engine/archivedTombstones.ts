// Rows removed so long ago that the board has recycled their tombstones, brought back
// from the tick archive for the replay window (ingest/replayWindow.ts): each row as the
// board held it when removed, in a small store of its own, so it renders through the
// same code as a board tombstone (rowJsonText: the same bytes) and is tested with the
// same compiled filters. The engine knows nothing of where they came from.
import type { OddsInput } from './model.ts';
import { NO_PRICE, OddsStore, SLOT_TOMBSTONE } from './oddsStore.ts';
import { compareStrings, RowOrder } from './rowOrder.ts';
import { rowJsonText } from './rowJson.ts';
import { CompiledFilter, type StreamFilter } from './stream/streamFilter.ts';

export class ArchivedTombstones {
  readonly store: OddsStore;
  /** Slots of `store` in the one odds order (sportsbook, then id). */
  readonly slots: Int32Array;

  /** rows: the removed rows, one per id (the latest removal), each with its removal time as `updated`. */
  constructor(rows: readonly OddsInput[]) {
    const store = new OddsStore(Math.max(16, rows.length));
    const slots = new Int32Array(rows.length);
    rows.forEach((row, i) => {
      const slot = store.allocate();
      store.writeRow(slot, row);
      store.priceAmerican[slot] = row.priceAmerican ?? NO_PRICE;
      store.dfsMultiplier[slot] = row.dfsMultiplier ?? NaN;
      store.suspended[slot] = row.suspended ? 1 : 0;
      store.updated[slot] = row.updated;
      store.state[slot] = SLOT_TOMBSTONE;
      slots[i] = slot;
    });
    const order = new RowOrder(store);
    slots.sort((a, b) => order.compareSlots(a, b));
    this.store = store;
    this.slots = slots;
  }

  get count(): number {
    return this.slots.length;
  }

  idOf(slot: number): string {
    return this.store.idOf(slot);
  }

  bookOf(slot: number): string {
    return this.store.books.get(this.store.book[slot]);
  }

  updatedOf(slot: number): number {
    return this.store.updated[slot];
  }

  /** A matcher of a stream filter (or the delta feed's league, sportsbook and market filter) over these rows. */
  matcher(filter: StreamFilter): CompiledFilter {
    return new CompiledFilter(filter, this.store);
  }

  /** The row's JSON (odds format code as formatCode), "removed": true. */
  json(slot: number, code: number): string {
    return rowJsonText(this.store, slot, code);
  }
}

/** Compares (sportsbook, id) pairs: the one order of every odds list (engine/rowOrder.ts). */
export function compareOddsKeys(bookA: string, idA: string, bookB: string, idB: string): number {
  return bookA !== bookB ? compareStrings(bookA, bookB) : compareStrings(idA, idB);
}

/**
 * Where a delta feed older than the board's tombstone horizon finds the rows removed
 * since: implemented over the tick archive (ingest/replayWindow.ts).
 */
export interface ReplaySource {
  /** True when a since this old is inside the replay window (worth asking). */
  covers(since: number): boolean;
  /**
   * The rows removed at or after `since` (their latest removal), whether or not the
   * board still holds them (callers skip ids the board holds: its row is the truth), or
   * null when the archive cannot vouch for every removal since then.
   */
  tombstonesSince(since: number): Promise<ArchivedTombstones | null>;
}
