// Property: arbitrage is cross-book. Over random market groups (two-way and three-way,
// a few books each, prices anywhere from a healthy margin to a book's own negative
// margin) and random ticks (moves, suspensions, pulls, re-listings), no record ever has
// two legs on one book; the live book equals the brute force (every assignment of one
// quote per outcome to distinct books, the smallest sum); a book whose own prices sum
// below 1 is flagged, exactly those books; and /historical/arbitrage's replay of the
// same quotes (evaluateAt) holds to the same rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { americanToDecimal, decimalToAmerican, oddsId, type OddsInput } from '../../engine/model.ts';
import { bruteForceArbitrage, bruteForceFlagged } from '../helpers/bruteForce.ts';
import { evaluateAt } from '../../fixtures/harness/historicalArbitrage.ts';
import { NOW, row, SignalBoard } from '../helpers/signals-harness.ts';

const BOOKS = ['betrivers', 'draftkings', 'fanduel', 'pinnacle'];
const GROUPS: { market: string; sides: string[]; line: number | null }[] = [
  { market: 'MONEYLINE', sides: ['HOME', 'AWAY'], line: null },
  { market: 'TOTAL', sides: ['OVER', 'UNDER'], line: 220.5 },
  { market: 'MONEYLINE_3_WAY', sides: ['HOME', 'DRAW', 'AWAY'], line: null },
];

/** Implied probability per quote: around fair with a margin from -12% (a book's own arb) to +10%. */
const implied = fc.double({ min: 0.08, max: 0.9, noNaN: true });

interface Quote {
  group: number;
  book: number;
  side: number;
}

function inputOf(q: Quote, p: number, now: number): OddsInput {
  const g = GROUPS[q.group];
  const side = g.sides[q.side] as OddsInput['side'];
  return row({ sportsbook: BOOKS[q.book], side, market: g.market, line: g.line, teamSide: side === 'HOME' || side === 'AWAY' ? side : 'NONE', priceAmerican: decimalToAmerican(1 / p), updated: now });
}

const quote = fc.record({ group: fc.integer({ min: 0, max: 2 }), book: fc.integer({ min: 0, max: BOOKS.length - 1 }), side: fc.integer({ min: 0, max: 2 }) }).map((q) => ({ ...q, side: q.side % GROUPS[q.group].sides.length }));
const tick = fc.record({ quote, p: implied, kind: fc.constantFrom('price', 'price', 'price', 'suspend', 'remove') });

test('property: no arbitrage record has two legs on one book; flagged books are exactly those with their own negative margin', () => {
  let arbs = 0;
  let flagged = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(quote, implied), { minLength: 4, maxLength: 30 }), fc.array(tick, { maxLength: 40 }), (start, ticks) => {
      const board = new SignalBoard();
      const check = (step: number) => {
        const json = board.json();
        const live = board.books.arbitrage.all();
        for (const arb of live) assert.equal(new Set(arb.legs.map((leg) => leg.sportsbook)).size, arb.legs.length, `${arb.id} at step ${step}: legs on distinct books`);
        assert.deepEqual(live, bruteForceArbitrage(json), `step ${step}`);
        assert.deepEqual(board.books.arbitrage.flaggedBooks().map((f) => `${f.groupId} ${f.sportsbook}`).sort(), bruteForceFlagged(json), `flags at step ${step}`);
        arbs += live.length;
        flagged += board.books.arbitrage.flaggedBooks().length;
      };
      for (const [q, p] of start) board.upsert(inputOf(q, p, board.now));
      check(0);
      ticks.forEach((t, i) => {
        board.now += 1000;
        const input = inputOf(t.quote, t.p, board.now);
        const id = oddsId(input);
        if (!board.has(id)) board.upsert(input);
        else if (t.kind === 'remove') board.remove(id);
        else if (t.kind === 'suspend') board.change(id, { suspended: true, updated: board.now });
        else board.change(id, { priceAmerican: input.priceAmerican, suspended: false, updated: board.now }, i % 2 === 0 ? 'priced' : 'changed');
        check(i + 1);
      });
      // the historical replay of the same quotes at this instant follows the same rules
      const quotes = board.rows().map((r) => ({
        ...r,
        oddsId: oddsId(r),
        priceDecimal: r.priceAmerican === null ? null : americanToDecimal(r.priceAmerican),
        firstSeen: r.updated,
        lastSeen: r.updated,
      }));
      const at = evaluateAt(quotes, { from: 0, to: board.now, minProfit: 0, limit: 1000 });
      for (const arb of at) assert.equal(new Set(arb.legs.map((leg) => leg.sportsbook)).size, arb.legs.length, `historical ${arb.id}: legs on distinct books`);
      assert.deepEqual(at, bruteForceArbitrage(board.json()), 'the historical replay at now equals the live rules');
    }),
    { numRuns: 150, seed: 20261127 },
  );
  // the generator reaches both cases, or the property says little
  assert.ok(arbs > 0, 'some cross-book arbitrage was generated');
  assert.ok(flagged > 0, 'some book quoted a negative margin on its own');
});
