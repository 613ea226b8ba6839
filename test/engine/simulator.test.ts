import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { NO_PRICE, SIDE_OVER } from '../../engine/oddsStore.ts';
import { americanToDecimal } from '../../engine/model.ts';
import { NOW, checkConsistency, filterOf, liveSlots, newEngine, walkAll } from '../helpers/engine-helpers.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

function simulated(seed = 1, rate = 2000) {
  const { engine, clock } = newEngine({ tombstoneRetentionMs: 60_000 });
  loadBoard(engine, generateBoard({ seed: 42, size: 'small', now: NOW }));
  const sim = new Simulator(engine, clock, { ratePerSecond: rate, seed });
  return { engine, clock, sim };
}

test('two-way selections find their other side', () => {
  const { engine, sim } = simulated();
  // Milestones (e.g. 100+ yards) are one-sided by design; every other OVER has an UNDER.
  const overs = liveSlots(engine).filter(
    (s) => engine.store.side[s] === SIDE_OVER && engine.store.priceAmerican[s] !== 0 && engine.store.markets.get(engine.store.market[s]) !== 'PLAYER_MILESTONE',
  );
  const paired = overs.filter((s) => sim.partnerOf(s) >= 0);
  assert.ok(overs.length > 500 && paired.length > overs.length * 0.95, `${paired.length} of ${overs.length} OVER rows paired`);
  const homes = liveSlots(engine).filter((s) => engine.rowObject(s, 'all').side === 'HOME' && engine.store.priceAmerican[s] !== 0);
  assert.ok(homes.filter((s) => sim.partnerOf(s) >= 0).length > homes.length * 0.9, 'HOME rows find their AWAY side');
  for (const slot of paired.slice(0, 200)) {
    const partner = sim.partnerOf(slot);
    assert.equal(engine.store.line[partner], engine.store.line[slot]);
    assert.equal(engine.rowObject(partner, 'all').side, 'UNDER');
    assert.equal(sim.partnerOf(partner), slot);
  }
});

test('steps move prices coherently, toggle suspensions, add and pull lines, and keep indexes consistent', () => {
  const { engine, sim } = simulated();
  const seqBefore = engine.seq;
  let movedPairs = 0;
  let coherent = 0;
  const before = new Map<number, number>();
  for (const slot of liveSlots(engine)) before.set(slot, engine.store.priceAmerican[slot]);
  for (let i = 0; i < 40; i++) sim.step(500);
  assert.ok(engine.seq > seqBefore + 15_000);
  const { stats } = sim;
  assert.ok(stats.priceMoves > 8_000 && stats.suspensionToggles > 100 && stats.linesAdded > 50 && stats.linesPulled > 50, JSON.stringify(stats));
  for (const slot of liveSlots(engine)) {
    const partner = sim.partnerOf(slot);
    if (partner < slot || engine.store.priceAmerican[slot] === 0 || !before.has(slot) || !before.has(partner)) continue;
    const p = (pa: number) => 1 / (pa > 0 ? 1 + pa / 100 : 1 + 100 / -pa);
    const d1 = p(engine.store.priceAmerican[slot]) - p(before.get(slot)!);
    const d2 = p(engine.store.priceAmerican[partner]) - p(before.get(partner)!);
    if (Math.abs(d1) < 0.01) continue;
    movedPairs++;
    if (Math.sign(d1) !== Math.sign(d2)) coherent++;
  }
  assert.ok(coherent > movedPairs * 0.7, `both sides moved in opposite directions on ${coherent} of ${movedPairs} pairs`);
  checkConsistency(engine);
});

test('prices wander around their own level instead of drifting away from it', () => {
  // Books track a shared fair value: a random walk per book would spread the board's
  // prices further with every move (and keep opening arbitrages). Root-mean-square
  // distance of each row's implied probability from where it started, over the rows
  // still on the board, after ~14 and ~28 moves per row.
  // Pooled over two seeds: one seed's path turns on where its few steam moves land.
  const squares = [0, 0];
  const counts = [0, 0];
  for (const seed of [3, 11]) {
    const { engine, sim } = simulated(seed);
    const implied = (slot: number) => 1 / americanToDecimal(engine.store.priceAmerican[slot]);
    const start = new Map<number, [string, number]>();
    for (const slot of liveSlots(engine)) if (engine.store.priceAmerican[slot] !== NO_PRICE) start.set(slot, [engine.idOf(slot), implied(slot)]);
    const spread = (at: number) => {
      let rows = 0;
      for (const [slot, [id, was]] of start) {
        if (!engine.isLive(slot) || engine.idOf(slot) !== id) continue;
        squares[at] += (implied(slot) - was) ** 2;
        rows++;
      }
      assert.ok(rows > start.size / 2, `${rows} of ${start.size} rows still on the board`);
      counts[at] += rows;
    };
    for (let i = 0; i < 200; i++) sim.step(500);
    spread(0);
    for (let i = 0; i < 200; i++) sim.step(500);
    spread(1);
  }
  const early = Math.sqrt(squares[0] / counts[0]);
  const late = Math.sqrt(squares[1] / counts[1]);
  // a free walk measured 0.050 then 0.067 here (growing like the square root of the moves)
  assert.ok(early < 0.035 && late < 0.035 && late < early * 1.25, `spread ${early.toFixed(4)} then ${late.toFixed(4)}`);
});

test('events start and finish with the clock; finished games leave the board as tombstones', () => {
  const { engine, clock, sim } = simulated(2, 200);
  const scheduled = engine.eventIdsWithLiveRows().filter((id) => engine.event(id)!.status === 'scheduled' && !engine.event(id)!.isFutures);
  const live = engine.eventIdsWithLiveRows().filter((id) => engine.event(id)!.status === 'in_progress' && !engine.event(id)!.isFutures);
  assert.ok(live.length > 0 && scheduled.length > 0);
  const firstStart = Math.min(...scheduled.map((id) => engine.event(id)!.startTime));
  clock.set(firstStart);
  sim.step(10);
  const started = scheduled.filter((id) => engine.event(id)!.startTime <= clock.now());
  for (const id of started) assert.equal(engine.event(id)!.status, 'in_progress');
  clock.advance(5 * 3600_000);
  sim.step(10);
  for (const id of [...live, ...started]) {
    assert.equal(engine.event(id)!.status, 'final', id);
    assert.equal(walkAll(engine, filterOf({ eventIds: [id] }), 100).length, 0);
  }
  const delta = engine.delta({ leagues: null, sportsbooks: null, markets: null }, clock.now(), null, 1000);
  assert.ok(delta.count > 0 && engine.isTombstone(delta.slots[0]));
  checkConsistency(engine);
});

test('the same seed replays the same changes', () => {
  const a = simulated(7);
  const b = simulated(7);
  for (let i = 0; i < 10; i++) {
    a.sim.step(300);
    b.sim.step(300);
  }
  assert.equal(a.engine.seq, b.engine.seq);
  const render = (e: typeof a.engine) => e.odds.render(e.odds.page(filterOf(), null, 5000), 'all').toString();
  assert.equal(render(a.engine), render(b.engine));
});

test('start/stop drive apply from an unref\'d timer, advancing a manual clock', async () => {
  const { engine, clock, sim } = simulated(3, 4000);
  const t0 = clock.now();
  const seq0 = engine.seq;
  sim.start();
  assert.ok(sim.running);
  assert.ok(await eventually(() => sim.stats.ticks >= 2), 'the timer ticks on its own');
  sim.stop();
  assert.ok(!sim.running);
  assert.ok(sim.stats.ticks >= 2, `ticks ${sim.stats.ticks}`);
  assert.ok(engine.seq > seq0 + 100);
  assert.equal(clock.now() - t0, sim.stats.ticks * 50);
  const ticks = sim.stats.ticks;
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.equal(sim.stats.ticks, ticks, 'stopped means stopped');
});
