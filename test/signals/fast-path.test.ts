// The signal books stay exact whichever path a tick takes, so the brute-force tests
// cannot see a tick that needlessly re-reads its whole market group. This watches the
// path itself: plain price ticks (same line, no suspension change) on non-DFS and DFS
// rows must mostly settle in O(1), and the books must still equal the brute force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { OddsEngine, type Change } from '../../engine/engine.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { mulberry32 } from '../../engine/random.ts';
import { bruteForceArbitrage, bruteForceEdges, type OddsRowJson } from '../helpers/bruteForce.ts';
import { EngineSignals } from '../../engine/signals/engineSignals.ts';
import { NO_PRICE } from '../../engine/oddsStore.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { boardRows } from '../helpers/oddsReference.ts';

/** A nearby valid American price (never inside (-100, 100)). */
function nudge(american: number, step: number): number {
  const next = american + step;
  if (next > -100 && next < 100) return american > 0 ? -100 - (next - 100) : 100 + (-100 - next);
  return next;
}

test('plain price ticks settle without re-reading their group (the O(1) path), books stay exact', () => {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, testBoard());
  const signals = new EngineSignals(engine);
  const rows = boardRows(engine, 'all') as OddsRowJson[];
  const eventRows = rows.filter((r) => r.marketScope === undefined);
  const rand = mulberry32(5);
  const ticks = 5_000;
  const before = signals.books.fullReads;
  for (let i = 0; i < ticks; i++) {
    const row = eventRows[Math.floor(rand() * eventRows.length)]!;
    const slot = engine.slotOf(row.id);
    const s = engine.store;
    const change: Change = Number.isNaN(s.dfsMultiplier[slot])
      ? { op: 'price', slot, priceAmerican: nudge(s.priceAmerican[slot]!, rand() < 0.5 ? -5 : 5), suspended: s.suspended[slot] === 1 }
      : { op: 'price', slot, priceAmerican: null, dfsMultiplier: rand() < 0.5 ? 1 : 1.05, suspended: s.suspended[slot] === 1 };
    engine.apply([change]);
  }
  const fullReads = signals.books.fullReads - before;
  // Re-reads remain for ticks on a group's best price that touch an arbitrage; on this
  // board that is a small share. Every tick taking the slow path would read 1.0.
  assert.ok(fullReads / ticks < 0.2, `full group re-reads per tick: ${(fullReads / ticks).toFixed(3)}`);
  const now = boardRows(engine, 'all') as OddsRowJson[];
  assert.deepEqual(signals.books.arbitrage.all(), bruteForceArbitrage(now));
  assert.deepEqual(signals.books.edges.all(clock.now()), bruteForceEdges(now, clock.now(), { minEdge: 0 }));
  signals.close();
});

test('retail rows leaving and rejoining their groups settle like ticks, not full re-reads; books stay exact', () => {
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, testBoard());
  const signals = new EngineSignals(engine);
  const sharp = new Set(signals.books.config.sharpBooks);
  const retail = (boardRows(engine, 'all') as OddsRowJson[]).filter(
    (r) => r.marketScope === undefined && r.dfsMultiplier === undefined && !sharp.has(r.sportsbook),
  );
  const inputs = new Map(retail.map((r) => [r.id, engine.store.rowInput(engine.slotOf(r.id))]));
  const removed = new Set<string>();
  const rand = mulberry32(9);
  let legSteps = 0;
  let plainSteps = 0;
  let plainReads = 0;
  for (let i = 0; i < 600; i++) {
    clock.advance(1000);
    if (i % 10 === 0) {
      // open an arbitrage (a long price on one side), so that the next step can take a leg of it away
      const slot = engine.slotOf(retail[Math.floor(rand() * retail.length)]!.id);
      if (slot >= 0 && engine.store.priceAmerican[slot] !== NO_PRICE) engine.apply([{ op: 'price', slot, priceAmerican: 900, suspended: false }]);
      continue;
    }
    const legs = i % 10 === 1 ? signals.books.arbitrage.all().flatMap((a) => a.legs.map((leg) => leg.oddsId)) : [];
    const id = legs.length > 0 ? legs[Math.floor(rand() * legs.length)]! : retail[Math.floor(rand() * retail.length)]!.id;
    const readsBefore = signals.books.fullReads;
    if (removed.delete(id)) engine.apply([{ op: 'upsert', row: { ...inputs.get(id)!, updated: clock.now() } }]);
    else {
      removed.add(id);
      engine.apply([{ op: 'remove', id }]);
    }
    if (legs.length > 0) legSteps++;
    else {
      plainSteps++;
      plainReads += signals.books.fullReads - readsBefore;
    }
    if (i % 3 !== 0) continue;
    const now = boardRows(engine, 'all') as OddsRowJson[];
    assert.deepEqual(signals.books.arbitrage.all(), bruteForceArbitrage(now), `arbitrage after step ${i}`);
    if (i % 60 === 0) assert.deepEqual(signals.books.edges.all(clock.now()), bruteForceEdges(now, clock.now(), { minEdge: 0 }));
  }
  assert.ok(legSteps >= 30, `a leg of a listed arbitrage was taken away ${legSteps} times`);
  // a random retail row is rarely its outcome's only best quote: before this path every
  // such step re-read its group (1.0). A group with a record or a flagged book is read in
  // full on any change of its quotes (its legs need not be its bests), and the +900 quotes
  // planted here flag their own book in each group they open: about 6% of the steps
  assert.ok(plainReads / plainSteps < 0.1, `full group re-reads per plain join/leave: ${(plainReads / plainSteps).toFixed(3)}`);
  signals.close();
});
