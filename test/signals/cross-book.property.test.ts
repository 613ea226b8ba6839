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
import { americanToDecimal, oddsId } from '../../engine/model.ts';
import { bruteForceArbitrage, bruteForceFlagged } from '../helpers/bruteForce.ts';
import { evaluateAt } from '../../fixtures/harness/historicalArbitrage.ts';
import { NOW, SignalBoard } from '../helpers/signals-harness.ts';
import { BOOKS, GROUPS, groupQuoteRow, implied } from '../helpers/arbitrageGroups.ts';

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
      for (const [q, p] of start) board.upsert(groupQuoteRow(q, p, board.now));
      check(0);
      ticks.forEach((t, i) => {
        board.now += 1000;
        const input = groupQuoteRow(t.quote, t.p, board.now);
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
