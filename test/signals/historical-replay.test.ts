// The two historical-arbitrage replays agree: ArbitrageReplay (over the live groups, what the route
// serves) and historicalArbitrage (every quote regrouped from strings through
// evaluateAt), for random (from, to) windows over a board that ticked, pulled lines,
// removed selections and finished events; and a replay at now with a window covering
// everything equals the live arbitrage book. The simulator's arbitrages are rare and
// short-lived (books catch up within seconds), so a few are planted along the way
// (the last one at the end) to give both replays arbitrage to find.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { historicalArbitrage } from '../../fixtures/harness/historicalArbitrage.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { plantArbitrage } from '../helpers/plantArbitrage.ts';

/** Seconds at which an arbitrage is planted (each on another game total). */
const PLANT_AT = [300, 700, 1200];

test('ArbitrageReplay equals the regrouping replay for random windows; at now it equals the live book', () => {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, testBoard());
  const signals = new EngineSignals(engine);
  const simulator = new Simulator(engine, clock, { ratePerSecond: 0, seed: 3 });
  const start = clock.now();
  // 20 simulated minutes: ticks every second, a few explicit removals, one event finished
  const live = [...engine.eventIdsWithLiveRows()];
  for (let second = 1; second <= 1200; second++) {
    clock.advance(1000);
    simulator.step(8);
    if (second % 97 === 0) {
      const slot = engine.indexes.byEvent[engine.store.events.lookup(live[second % live.length])]?.items[0];
      if (slot !== undefined && engine.isLive(slot)) engine.apply([{ op: 'remove', id: engine.idOf(slot) }]);
    }
    const planted = PLANT_AT.indexOf(second);
    if (planted >= 0) plantArbitrage(engine, planted);
    if (second === 900) engine.apply([{ op: 'status', eventId: live[1], status: 'in_progress' }, { op: 'status', eventId: live[1], status: 'final' }]);
  }
  assert.ok(engine.indexes.tombstones.length > 0, 'tombstones with history exist');
  const end = clock.now();

  const wide = { from: 0, to: end, minProfit: 0, limit: 1000 };
  assert.ok(signals.books.arbitrage.size > 0, 'there is arbitrage to replay');
  assert.deepEqual(signals.arbitrageAt(wide), signals.books.arbitrage.all(), 'at now, every price counts: the live book');

  fc.assert(
    fc.property(
      fc.integer({ min: start - 3_600_000, max: end }),
      fc.integer({ min: 0, max: 30 * 60_000 }),
      fc.constantFrom(0, 0.001, 0.01),
      fc.integer({ min: 1, max: 1000 }),
      (to, window, minProfit, limit) => {
        const query = { from: to - window, to, minProfit, limit };
        assert.deepEqual(signals.arbitrageAt(query), historicalArbitrage(engine, query));
      },
    ),
    { numRuns: 60 },
  );
  signals.close();
});
