// Property: signal books built lazily (EngineSignals { lazy: true }, what the service
// builds: every row's role now, so the steam detector follows every change from the
// start, and the arbitrage and edge books evaluated by their first read or in steps by
// buildStep) answer every read exactly as books built eagerly on the same board after
// the same changes. Two engines load the same board and follow the same simulator stream
// (price moves, suspensions, lines added and pulled, events going live and final);
// fast-check draws the stream's seed, how many changes come before the first read, how
// many background steps run before it, and the changes between later reads. At each
// read both answer /arbitrage, /edges under every devig method, the flagged books,
// /steam and the screens the same (JSON).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { DEVIG_METHODS } from '../../engine/signals/devig.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { NOW, newEngine } from '../helpers/engine-helpers.ts';

const board = generateBoard({ seed: 42, size: 'small', now: NOW });
const RUNS = Number(process.env.LAZY_BOOKS_CASES ?? 6);

function answers(signals: EngineSignals): string {
  const everything = { leagues: null, eventIds: null };
  const out: Record<string, unknown> = {
    arbitrage: signals.arbitragePage({ types: null, leagues: null, eventIds: null, minProfit: 0 }, null, Number.MAX_SAFE_INTEGER).items,
    flagged: signals.flaggedBooks(),
    // books flagged in some group now (a book whose flags all went keeps a 0 on books that followed it)
    flaggedBySportsbook: [...signals.flaggedCounts().bySportsbook.entries()].filter(([, groups]) => groups > 0).sort(),
    steam: signals.steamMoves({ ...everything, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 }, 10_000),
    bestPrices: signals.bestPrices({ ...everything, maxHold: 1 }, 10_000),
    middles: signals.middles({ ...everything, minWidth: 0, maxCost: 1 }, 10_000),
  };
  const now = signals.boardTime();
  for (const devig of DEVIG_METHODS) {
    out[`edges ${devig}`] = signals.edgesPage({ leagues: null, sources: null, eventIds: null, minEdge: 0, devig }, null, Number.MAX_SAFE_INTEGER).items;
    out[`fair lines ${devig}`] = signals.fairLines({ ...everything, devig }, now, 10_000);
  }
  return JSON.stringify(out);
}

test('lazily built signal books answer every read as eagerly built ones do, first read included, after any changes', async () => {
  await fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 0, max: 3000 }),
      fc.integer({ min: 0, max: 3 }),
      fc.array(fc.integer({ min: 1, max: 1500 }), { minLength: 1, maxLength: 4 }),
      (seed, before, steps, between) => {
        const eager = newEngine({ tombstoneRetentionMs: 60_000 });
        const lazy = newEngine({ tombstoneRetentionMs: 60_000 });
        loadBoard(eager.engine, board);
        loadBoard(lazy.engine, board);
        const eagerBooks = new EngineSignals(eager.engine);
        const lazyBooks = new EngineSignals(lazy.engine, {}, {}, { lazy: true });
        assert.ok(lazyBooks.unevaluatedGroups > 0, 'the lazy build left its groups to their first read');
        const eagerSim = new Simulator(eager.engine, eager.clock, { ratePerSecond: 2000, seed });
        const lazySim = new Simulator(lazy.engine, lazy.clock, { ratePerSecond: 2000, seed });
        try {
          const move = (changes: number): void => {
            eagerSim.step(changes);
            lazySim.step(changes);
            assert.equal(lazy.engine.seq, eager.engine.seq, 'the two boards take the same changes');
          };
          if (before > 0) move(before);
          // some background steps (each evaluates at least one group), then the first read
          for (let i = 0; i < steps; i++) lazyBooks.buildStep(0);
          assert.equal(answers(lazyBooks), answers(eagerBooks), `first read after ${before} changes and ${steps} steps`);
          assert.equal(lazyBooks.unevaluatedGroups, 0, 'a read evaluates what is left');
          for (const changes of between) {
            move(changes);
            assert.equal(answers(lazyBooks), answers(eagerBooks), `after ${changes} more changes`);
          }
        } finally {
          eagerBooks.close();
          lazyBooks.close();
        }
      },
    ),
    { numRuns: RUNS, seed: 20261128 },
  );
});

test('a lazily built steam detector follows the changes before the first read: /steam after them is what the eager books list', () => {
  const eager = newEngine({ tombstoneRetentionMs: 60_000 });
  const lazy = newEngine({ tombstoneRetentionMs: 60_000 });
  loadBoard(eager.engine, board);
  loadBoard(lazy.engine, board);
  const eagerBooks = new EngineSignals(eager.engine);
  const lazyBooks = new EngineSignals(lazy.engine, {}, {}, { lazy: true });
  const eagerSim = new Simulator(eager.engine, eager.clock, { ratePerSecond: 2000, seed: 7 });
  const lazySim = new Simulator(lazy.engine, lazy.clock, { ratePerSecond: 2000, seed: 7 });
  for (let i = 0; i < 40; i++) {
    eagerSim.step(500);
    lazySim.step(500);
  }
  const query = { leagues: null, eventIds: null, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 };
  // steam is read without evaluating the books: the lazy books are still unevaluated here
  const moves = lazyBooks.steamMoves(query, 10_000);
  assert.ok(lazyBooks.unevaluatedGroups > 0);
  assert.deepEqual(moves, eagerBooks.steamMoves(query, 10_000));
  assert.ok(moves.length > 0, 'the stream moved sharp prices far enough for steam');
  eagerBooks.close();
  lazyBooks.close();
});
