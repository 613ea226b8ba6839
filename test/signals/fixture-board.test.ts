// The incremental books on generated fixture boards (small and medium): bulk load,
// then random ticks, removals and the clock moving; after each stage both books must
// equal the brute-force recompute over the same rows as /odds would serve them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { americanToDecimal, type OddsInput } from '../../engine/model.ts';
import { bruteForceArbitrage, bruteForceEdges } from '../helpers/bruteForce.ts';
import { RowQuoteSource } from '../helpers/rowQuoteSource.ts';
import { SignalBooks } from '../../engine/signals/signalBooks.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { NOW, rowJson } from '../helpers/signals-harness.ts';
import { mulberry32 } from '../../engine/random.ts';


function loadBoard(size: 'small' | 'medium') {
  const board = generateBoard({ seed: 42, size, now: NOW });
  const books = new SignalBooks();
  const source = new RowQuoteSource(books.sources);
  let ref = 0;
  board.forEachOdds((row) => {
    source.set(ref, row);
    books.load(ref++, row);
  });
  books.evaluateAll(source);
  return { books, source, count: ref };
}

function assertMatchesReference(books: SignalBooks, source: RowQuoteSource, now: number, stage: string): { arbs: number; edges: number } {
  const json = source.rows.filter((r): r is OddsInput => r !== undefined).map(rowJson);
  const arbs = books.arbitrage.all();
  assert.deepEqual(arbs, bruteForceArbitrage(json), `arbitrage ${stage}`);
  const edges = books.edges.all(now);
  assert.deepEqual(edges, bruteForceEdges(json, now, { minEdge: 0 }), `edges ${stage}`);
  assert.deepEqual(books.edges.all(now, 'shin'), bruteForceEdges(json, now, { minEdge: 0, devig: 'shin' }), `shin edges ${stage}`);
  return { arbs: arbs.length, edges: edges.length };
}

for (const size of ['small', 'medium'] as const) {
  test(`${size} fixture board: books equal the brute force after load, ticks, removals and time`, () => {
    const { books, source, count } = loadBoard(size);
    const loaded = assertMatchesReference(books, source, NOW, 'after load');
    if (size === 'medium') {
      assert.ok(loaded.arbs > 0, 'the medium board has arbitrage to find');
      assert.ok(loaded.edges > 0, 'the medium board has DFS edges to find');
    }
    const rand = mulberry32(7);
    let now = NOW;
    for (let round = 0; round < 3; round++) {
      now += 60_000;
      for (let i = 0; i < 2000; i++) {
        const ref = Math.floor(rand() * count);
        const row = source.rows[ref];
        if (row === undefined) continue;
        const roll = rand();
        if (roll < 0.02) {
          books.removed(ref, source);
          source.delete(ref);
          continue;
        }
        const next: OddsInput = { ...row, updated: now };
        if (roll < 0.1) next.suspended = !row.suspended;
        else if (row.priceAmerican !== null) next.priceAmerican = row.priceAmerican + (row.priceAmerican > 0 ? 1 : -1) * Math.floor(rand() * 8 - 3);
        else if (row.dfsMultiplier !== null) next.dfsMultiplier = Math.round((row.dfsMultiplier + (rand() - 0.5) * 0.1) * 100) / 100;
        if (next.priceAmerican !== null && Math.abs(next.priceAmerican) < 100) next.priceAmerican = row.priceAmerican;
        source.set(ref, next);
        const decimal = next.priceAmerican === null ? NaN : americanToDecimal(next.priceAmerican);
        books.priced(ref, decimal, next.suspended, next.updated, next.dfsMultiplier ?? NaN, source);
      }
      assertMatchesReference(books, source, now, `after tick round ${round + 1}`);
    }
    // eleven minutes on, every untouched sharp quote is stale
    assertMatchesReference(books, source, now + 11 * 60_000, 'after the clock moved');
  });
}
