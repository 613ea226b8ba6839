// Property: the simulator's books keep a positive overround on every market, whatever
// the seed, the rate and the batch sizes: after any run, each book's own prices on each
// market it quotes in full sum above 1 (never an arbitrage against itself, the one-book
// "arbitrage" of the issue), and every market the simulator has re-priced sits within
// the 2-10% real books keep. Genuine cross-book arbitrage still opens on the way (a
// retail book lagging a move a sharp book has taken in), with legs on two books.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { NOW, newEngine } from '../helpers/engine-helpers.ts';
import { bookSums } from './bookHolds.ts';

const board = generateBoard({ seed: 42, size: 'small', now: NOW });

test('property: every book keeps a positive overround (2-10% once re-priced) on every market; arbitrage stays cross-book', () => {
  let arbsSeen = 0;
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 30 }), fc.constantFrom(200, 2000, 20000), fc.integer({ min: 20, max: 400 }), (seed, rate, batch) => {
      const { engine, clock } = newEngine({ tombstoneRetentionMs: 60_000 });
      loadBoard(engine, board);
      const signals = new EngineSignals(engine);
      const before = new Map(bookSums(engine).map((b) => [`${b.group} ${b.sportsbook}`, b.sum]));
      const sim = new Simulator(engine, clock, { ratePerSecond: rate, seed });
      for (let step = 0; step < 30; step++) {
        sim.step(batch);
        for (const arb of signals.books.arbitrage.all()) {
          assert.equal(new Set(arb.legs.map((leg) => leg.sportsbook)).size, arb.legs.length, `${arb.id}: legs on distinct books`);
          arbsSeen++;
        }
      }
      for (const { group, sportsbook, sum } of bookSums(engine)) {
        assert.ok(sum > 1, `${sportsbook} on ${group}: its own prices sum to ${sum.toFixed(4)} (seed ${seed})`);
        // a market the simulator re-priced (its sum moved) holds 2-10%
        if (before.get(`${group} ${sportsbook}`) !== sum) assert.ok(sum >= 1.02 && sum <= 1.1, `${sportsbook} on ${group}: overround ${(sum - 1).toFixed(4)} after re-pricing (seed ${seed})`);
      }
      assert.equal(signals.flaggedBooks().length, 0, 'no book quotes a negative margin on its own');
      signals.close();
    }),
    { numRuns: 12, seed: 30 },
  );
  assert.ok(arbsSeen > 0, 'genuine cross-book arbitrage still opens');
});
