// Ingests a fixture Board: events first, then every odds row with its history into
// the ring. Rows get one shared seq and the posting lists are built in one linear pass
// over the rows sorted once by integer ranks of their id parts (no per-row binary
// insert, no per-row seq/log entry).

import { grown } from './columns.ts';
import type { Board } from './model.ts';
import type { OddsEngine } from './engine.ts';
import { compareColonTerminated, compareStrings } from './rowOrder.ts';

export interface LoadResult {
  rows: number;
  ms: number;
}

export function loadBoard(engine: OddsEngine, board: Board): LoadResult {
  const started = performance.now();
  for (const event of board.events) engine.upsertEvent(event);
  const store = engine.store;
  const wasEmpty = engine.liveRows === 0;
  // Exactly the board plus 1/16 headroom for lines the simulator adds, not a doubling.
  store.reserve(store.size + board.oddsCount + (board.oddsCount >>> 4), true);
  engine.keys.reserve(engine.keys.size + board.oddsCount);
  let slots = new Int32Array(Math.max(board.oddsCount, 16));
  let count = 0;
  let rows = 0;
  let maxUpdated = -Infinity;
  board.forEachOdds((row, history) => {
    rows++;
    if (row.updated > maxUpdated) maxUpdated = row.updated;
    const slot = engine.loadRow(row, history);
    if (slot < 0) {
      engine.touchLoaded(-1 - slot);
      return;
    }
    if (count === slots.length) slots = grown(slots, count + 1);
    slots[count++] = slot;
  });
  if (wasEmpty) sortByOrder(engine, slots, count);
  engine.finishLoad(slots, count, maxUpdated, wasEmpty);
  return { rows, ms: performance.now() - started };
}

/**
 * Sorts slots into (sportsbook, id) order by integer ranks of the id parts, which
 * give the same order as comparing the id strings (see rowOrder.ts); falls back to
 * the string comparator if the combined rank would not fit a double exactly.
 */
export function sortByOrder(engine: OddsEngine, slots: Int32Array, count: number): void {
  const store = engine.store;
  const bookRank = store.books.ranks(compareStrings);
  const eventRank = store.events.ranks(compareColonTerminated);
  const subtypeRank = store.subtypes.ranks(compareColonTerminated);
  const selectionRank = store.selectionIds.ranks(compareStrings);
  const nE = eventRank.length;
  const nS = subtypeRank.length;
  const nX = selectionRank.length;
  if (bookRank.length * nE * nS * nX >= Number.MAX_SAFE_INTEGER) {
    slots.subarray(0, count).sort(engine.indexes.order.compare);
    return;
  }
  const key = new Float64Array(store.size);
  for (let i = 0; i < count; i++) {
    const slot = slots[i];
    key[slot] =
      ((bookRank[store.book[slot]] * nE + eventRank[store.event[slot]]) * nS + subtypeRank[store.subtype[slot]]) * nX +
      selectionRank[store.selectionId[slot]];
  }
  slots.subarray(0, count).sort((a, b) => key[a] - key[b]);
}
