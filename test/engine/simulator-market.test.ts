// The simulator as a market: books follow a moving fair value with their own lags, so
// arbitrage stays rare however long it runs, while edges and arbitrages still open
// (a book lags a move) and close (it catches up). Measured with the signal books, on
// several seeds fixed here in advance: a rule that held for one chosen seed only would
// not be the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { NOW, newEngine } from '../helpers/engine-helpers.ts';

const SEEDS = [3, 5, 11, 23, 97];
const CHANGES = 1_000_000;

for (const seed of SEEDS) {
  test(`seed ${seed}: ${CHANGES.toLocaleString('en')} simulated changes keep arbitrage under 1% of groups; edges and arbitrages open and close`, () => {
    const { engine, clock } = newEngine({ tombstoneRetentionMs: 60_000 });
    loadBoard(engine, generateBoard({ seed: 42, size: 'small', now: NOW }));
    const signals = new EngineSignals(engine);
    const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed });
    let arbs = new Set(signals.books.arbitrage.all().map((a) => a.id));
    let edges = new Set(signals.books.edges.all(clock.now()).map((e) => e.id));
    let maxShare = 0;
    let worst = '';
    const opened = { arbs: 0, edges: 0 };
    const closed = { arbs: 0, edges: 0 };
    const seqBefore = engine.seq;
    while (sim.stats.applied < CHANGES) {
      sim.step(500);
      const nowArbs = new Set(signals.books.arbitrage.all().map((a) => a.id));
      const nowEdges = new Set(signals.books.edges.all(clock.now()).map((e) => e.id));
      for (const id of nowArbs) if (!arbs.has(id)) opened.arbs++;
      for (const id of arbs) if (!nowArbs.has(id)) closed.arbs++;
      for (const id of nowEdges) if (!edges.has(id)) opened.edges++;
      for (const id of edges) if (!nowEdges.has(id)) closed.edges++;
      arbs = nowArbs;
      edges = nowEdges;
      const share = nowArbs.size / signals.groups.liveCount;
      if (share > maxShare) {
        maxShare = share;
        worst = `${nowArbs.size} of ${signals.groups.liveCount} groups after ${sim.stats.applied} changes`;
      }
    }
    assert.ok(engine.seq - seqBefore >= CHANGES);
    assert.ok(maxShare < 0.01, `arbitrage share peaked at ${(maxShare * 100).toFixed(2)}% (${worst})`);
    assert.ok(opened.arbs > 0 && closed.arbs > 0, `arbitrages opened ${opened.arbs}, closed ${closed.arbs}`);
    assert.ok(opened.edges > 0 && closed.edges > 0, `edges opened ${opened.edges}, closed ${closed.edges}`);
    signals.close();
  });
}
