// Test support (not a test file): each book's overround on each market of a board, the
// way a bettor reads it: per market group (engine/signals/groupKey.ts) and book, the
// book's best price per outcome, implied probabilities summed. Only books that quote
// every outcome of the market count; DFS picks, futures and unpriced rows do not. Suspended
// quotes do: the price a book shows is its price.
import type { OddsEngine } from '../../engine/engine.ts';
import { marketGroupIdOf, type GroupKeyInput } from '../../engine/signals/groupKey.ts';
import { OUTCOME_COUNT, outcomeSetOf } from '../../engine/signals/sides.ts';
import { americanToDecimal } from '../../engine/model.ts';

export interface BookSum {
  group: string;
  sportsbook: string;
  /** The book's implied probabilities over the market's outcomes: 1 + its overround. */
  sum: number;
}

export function bookSums(engine: OddsEngine): BookSum[] {
  const best = new Map<string, Map<string, number>>();
  const outcomes = new Map<string, number>();
  for (let slot = 0; slot < engine.store.size; slot++) {
    if (!engine.isLive(slot)) continue;
    const row = engine.rowObject(slot, 'american') as unknown as Record<string, any>;
    if (typeof row.priceAmerican !== 'number') continue;
    const input = { ...row, playerId: row.playerId ?? null, marketScope: row.marketScope ?? null, line: row.line ?? null } as GroupKeyInput;
    const group = marketGroupIdOf(input);
    if (group === null) continue;
    const key = `${group} ${row.sportsbook}`;
    let sides = best.get(key);
    if (sides === undefined) best.set(key, (sides = new Map()));
    const implied = 1 / americanToDecimal(row.priceAmerican);
    sides.set(row.side, Math.min(sides.get(row.side) ?? Infinity, implied));
    outcomes.set(key, OUTCOME_COUNT[outcomeSetOf(row.market, row.side)]);
  }
  const out: BookSum[] = [];
  for (const [key, sides] of best) {
    if (sides.size < outcomes.get(key)!) continue;
    let sum = 0;
    for (const p of sides.values()) sum += p;
    const at = key.lastIndexOf(' ');
    out.push({ group: key.slice(0, at), sportsbook: key.slice(at + 1), sum });
  }
  return out;
}
