// The rows and prices crash.test.ts and its child agree on.
import assert from 'node:assert/strict';
import type { ManualClock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import type { OpenedBoard } from './ingest-helpers.ts';

export const CRASH_ROWS = 8;

/** The first CRASH_ROWS live pinnacle rows by slot (the same on every open of the same board). */
export function crashRows(engine: OddsEngine): string[] {
  const s = engine.store;
  const ids: string[] = [];
  for (let slot = 0; slot < s.size && ids.length < CRASH_ROWS; slot++) {
    if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && s.books.get(s.book[slot]) === 'pinnacle') ids.push(engine.idOf(slot));
  }
  return ids;
}

/** Batch n's price for row r: distinct per (n, r), so a row's price names the batch that set it. */
export function crashPrice(n: number, r: number): number {
  return 100 + n * CRASH_ROWS + r;
}

export function batchOf(price: number, r: number): number {
  return (price - 100 - r) / CRASH_ROWS;
}

/** Submits batches `from`..`to` (each a second after the last) of crashPrice prices for the crash rows. */
export async function submitBatches(opened: OpenedBoard, clock: ManualClock, from: number, to: number): Promise<void> {
  const ids = crashRows(opened.durable.engine);
  for (let n = from; n <= to; n++) {
    clock.advance(1000);
    await opened.durable.ingest.submit(ids.map((id, r) => ({ op: 'price', id, priceAmerican: crashPrice(n, r) })));
  }
}

/** Asserts that every crash row holds batch n's price. */
export function pricesAre(opened: OpenedBoard, n: number): void {
  const engine = opened.durable.engine;
  crashRows(engine).forEach((id, r) => assert.equal(engine.store.priceAmerican[engine.slotOf(id)], crashPrice(n, r), `${id} at batch ${n}`));
}
