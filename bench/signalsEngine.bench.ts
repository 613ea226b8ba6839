// Signals on the real engine, large board by default
// (SIGNALS_BENCH_SIZE=small|medium|large; SIGNALS_BENCH_PART=every-signal runs only the last part):
//   - apply throughput with and without EngineSignals subscribed (price ticks in
//     batches of 100 as the simulator sends them, and the simulator's own mix), so
//     the cost per applied update of keeping edges and arbitrage current is the
//     difference (target: throughput drops by no more than 30%);
//   - the first /edges page read after a burst of ticks (the deferred re-pricing);
//   - /historical/arbitrage for a 10-minute window after 10 simulated minutes of ticks.
//   - every signal on (benchEverySignal): apply throughput off and on interleaved (per
//     CPU-second and per wall second; SIGNALS_BENCH_BATCHES batches of 100 per measure),
//     the sustained rate with a group-topic push and an /arbitrage read every CPU-second,
//     one group-topic push, the first /arbitrage page after a burst of ticks (the
//     arbitrage re-reads ticks deferred to the next read), the screen reads, and tick
//     to steam message in process.
// The route requests/s against hello world are in the HTTP bench (bench/scenarios/signals.ts);
// tick to steam event end to end (ingest POST -> SSE) in bench/steamLatency.bench.ts.
import { ManualClock } from '../engine/clock.ts';
import { OddsEngine, type Change } from '../engine/engine.ts';
import { loadBoard } from '../engine/loadBoard.ts';
import type { BoardSize } from '../engine/model.ts';
import { decimalToAmerican, americanToDecimal } from '../engine/model.ts';
import { NO_PRICE } from '../engine/oddsStore.ts';
import { Simulator } from '../fixtures/simulator.ts';
import { EngineSignals } from '../engine/signals/engineSignals.ts';
import { historicalArbitrage } from '../fixtures/harness/historicalArbitrage.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { mulberry32 } from '../engine/random.ts';
import { SignalTopics, type SignalTopic } from '../engine/stream/signalTopics.ts';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const BATCH = 100;

/**
 * The prices the board was loaded with: ticks move around these, not from the current
 * price, so the board does not random-walk away from its fair values over the rounds
 * (a drifting board arbs more and more, and later rounds would measure a different
 * workload than earlier ones).
 */
interface LoadedPrices {
  american: Int32Array;
  multiplier: Float64Array;
}

function loadedPrices(engine: OddsEngine): LoadedPrices {
  const s = engine.store;
  return { american: s.priceAmerican.slice(0, s.size), multiplier: s.dfsMultiplier.slice(0, s.size) };
}

/** Pre-built price batches over random live rows: within 1% of the loaded price either way, some suspension flips. */
function priceBatches(engine: OddsEngine, loaded: LoadedPrices, count: number, rand: () => number): Change[][] {
  const s = engine.store;
  const slots: number[] = [];
  for (let slot = 0; slot < s.size; slot++) if (s.isLive(slot)) slots.push(slot);
  const batches: Change[][] = [];
  for (let b = 0; b < count; b++) {
    const batch: Change[] = [];
    for (let i = 0; i < BATCH; i++) {
      const slot = slots[Math.floor(rand() * slots.length)];
      // rows the simulator added (or put in a recycled slot) since the load move around their own price
      const current = s.priceAmerican[slot];
      const same = slot < loaded.american.length && (loaded.american[slot] === NO_PRICE) === (current === NO_PRICE);
      const pa = same ? loaded.american[slot] : current;
      const suspended = rand() < 0.02 ? s.suspended[slot] === 0 : s.suspended[slot] === 1;
      if (pa === NO_PRICE) {
        const dm = same && !Number.isNaN(loaded.multiplier[slot]) ? loaded.multiplier[slot] : s.dfsMultiplier[slot];
        batch.push({ op: 'price', slot, priceAmerican: null, dfsMultiplier: Math.max(0.5, Math.round((dm + (rand() - 0.5) * 0.1) * 100) / 100), suspended });
      } else {
        const moved = decimalToAmerican(americanToDecimal(pa) * (1 + (rand() - 0.5) * 0.02));
        batch.push({ op: 'price', slot, priceAmerican: moved, suspended });
      }
    }
    batches.push(batch);
  }
  return batches;
}

/** Updates per second applying fresh batches (priceBatches), the clock moving 10 ms per batch. */
function applyRate(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, count: number, rand: () => number): number {
  const batches = priceBatches(engine, loaded, count, rand);
  const start = performance.now();
  let applied = 0;
  for (const batch of batches) {
    clock.advance(10);
    applied += engine.apply(batch).applied;
  }
  return applied / ((performance.now() - start) / 1000);
}

/**
 * Updates per second applying the simulator's stream (price moves of both sides of a
 * market together, suspensions, lines added and pulled, events starting and
 * finishing), timing engine.apply alone: building a batch (string work on selection
 * ids) is the simulator's cost, not the engine's, and would dilute the difference.
 */
function simulatorRate(engine: OddsEngine, simulator: Simulator, clock: ManualClock, steps: number): number {
  let time = 0;
  let applied = 0;
  for (let i = 0; i < steps; i++) {
    clock.advance(10);
    const batch = simulator.nextBatch(BATCH);
    const start = performance.now();
    applied += engine.apply(batch).applied;
    time += performance.now() - start;
  }
  return applied / (time / 1000);
}

/** A measure of applying fresh batches: updates per second of wall time, and per second of this process's CPU time. */
interface Rate {
  wall: number;
  cpu: number;
}

/**
 * applyRate's batches timed both ways. On a shared machine the wall rate mostly
 * measures the other processes (the scheduler hands this one a slice of a core); CPU
 * time (process.cpuUsage, user + system) is what the apply itself took. `after` runs
 * inside the timing, after the last batch.
 */
function applyRates(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, count: number, rand: () => number, after?: () => void): Rate {
  const batches = priceBatches(engine, loaded, count, rand);
  const cpu = process.cpuUsage();
  const start = performance.now();
  let applied = 0;
  for (const batch of batches) {
    clock.advance(10);
    applied += engine.apply(batch).applied;
  }
  after?.();
  const wall = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { wall: applied / wall, cpu: applied / ((used.user + used.system) / 1e6) };
}

/** The served process's signals: the books plus a subscriber on every signal-stream topic (sinks that only count bytes). */
function everySignal(engine: OddsEngine, clock: ManualClock, onSteam: () => void = () => {}): { signals: EngineSignals; topics: SignalTopics; bytes: Record<string, number>; close(): void } {
  const signals = new EngineSignals(engine);
  const topics = new SignalTopics(signals, () => clock.now());
  const bytes: Record<string, number> = {};
  const sink = (topic: SignalTopic) => ({
    send(_: SignalTopic, message: Buffer) {
      if (topic === 'steam') onSteam();
      bytes[topic] = (bytes[topic] ?? 0) + message.length;
      return true;
    },
  });
  const all = { leagues: null, eventIds: null };
  topics.subscribe({ topic: 'steam', query: { ...all, sportsbooks: null, minPoints: 0, minCents: 0, since: 0 } }, sink('steam'));
  topics.subscribe({ topic: 'fair_line', query: { ...all, devig: 'multiplicative' } }, sink('fair_line'));
  topics.subscribe({ topic: 'best_price', query: { ...all, maxHold: 0.02 } }, sink('best_price'));
  topics.subscribe({ topic: 'ev', query: { ...all, devig: 'multiplicative', minEv: 0.02, sportsbooks: null } }, sink('ev'));
  topics.subscribe({ topic: 'middle', query: { ...all, minWidth: 0.5, maxCost: 0.05 } }, sink('middle'));
  return { signals, topics, bytes, close: () => { topics.close(); signals.close(); } };
}

/** CPU time of this process so far, seconds. */
function cpuSeconds(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
}

/** What a run of batches with a push every CPU-second did (appliedWithPushes). */
interface PushedRun {
  applied: number;
  /** CPU seconds applying and pushing. */
  busy: number;
  pushes: number;
  /** CPU seconds in the pushes. */
  pushSeconds: number;
}

/**
 * Price-tick batches applied back to back, and a push each time a second of this
 * process's CPU time has gone into applying since the last one, until `seconds` of CPU
 * time (building the batches not counted: that is the feed's work). `beforePush` reads
 * counters, untimed; `push` is timed. Clocked on CPU time, so the figures are those of a
 * core of its own however loaded the machine is.
 */
function appliedWithPushes(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, rand: () => number, seconds: number, push: () => void, beforePush: () => void = () => {}): PushedRun {
  const run: PushedRun = { applied: 0, busy: 0, pushes: 0, pushSeconds: 0 };
  let sincePush = 0;
  while (run.busy < seconds) {
    const batches = priceBatches(engine, loaded, 100, rand);
    const start = cpuSeconds();
    for (const batch of batches) {
      clock.advance(10);
      run.applied += engine.apply(batch).applied;
    }
    const applying = cpuSeconds() - start;
    run.busy += applying;
    sincePush += applying;
    if (sincePush >= 1) {
      beforePush();
      const pushStart = cpuSeconds();
      push();
      const pushing = cpuSeconds() - pushStart;
      run.busy += pushing;
      run.pushSeconds += pushing;
      sincePush = 0;
      run.pushes++;
    }
  }
  return run;
}

/**
 * Every signal on as a served process runs it, with the group topics' once-a-second
 * push and an /arbitrage read at each (as the alerts' poll makes one: the arbitrage
 * re-reads a tick deferred happen there). Returns updates per CPU-second and the pushes'
 * mean cost.
 */
function sustainedWithPushes(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, rand: () => number, every: { topics: SignalTopics; signals: EngineSignals }, seconds: number): { rate: number; pushMs: number; groups: number; arbitrageGroups: number } {
  let groups = 0;
  let arbitrageGroups = 0;
  const run = appliedWithPushes(engine, loaded, clock, rand, seconds, () => {
    every.topics.flush();
    every.signals.arbitragePage(ARBITRAGE_QUERY, null, 100);
  }, () => {
    groups += every.signals.books.screens.pendingGroups;
    arbitrageGroups += every.signals.books.deferredGroups;
  });
  const { pushes } = run;
  return { rate: run.applied / run.busy, pushMs: pushes === 0 ? NaN : (run.pushSeconds / pushes) * 1000, groups: pushes === 0 ? 0 : groups / pushes, arbitrageGroups: pushes === 0 ? 0 : arbitrageGroups / pushes };
}

const ARBITRAGE_QUERY = { types: null, leagues: null, eventIds: null, minProfit: 0.001 };

/**
 * Price-tick batches of 100 per apply-rate measure: 2,000 (200k updates, ~0.1-0.3 s of
 * CPU) on every board; SIGNALS_BENCH_BATCHES overrides. (Until issue 34's second pass
 * the medium board measured 500, ~25-50 ms, where one GC or JIT tier-up decided a round.)
 */
function measureBatches(): number {
  return Number(process.env.SIGNALS_BENCH_BATCHES ?? 2_000);
}

/**
 * Apply rate with signals off and with every signal on (everySignal: the books plus a
 * subscriber on every signal-stream topic), interleaved in one run: three rounds of off
 * then on, each side its best of 2 measures of `count` batches of 100 price ticks, so
 * drift of a shared machine hits both alike; the median round is reported, with every
 * round. A tick only marks its group and checks steam; the group topics' pushes are
 * work of their own (at most once a second, re-reading the groups marked since the last
 * one, like a read), so they are timed apart: the push after the apply measure, and the
 * sustained rate with a push every CPU-second (sustainedWithPushes) in each on round.
 * The books are built for each on round (untimed: a closed EngineSignals no longer
 * follows the board).
 */
export function applyOffAndOn(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, rand: () => number, count: number): Record<string, number | string> {
  const off: Rate[] = [];
  const on: Rate[] = [];
  const sustained: { rate: number; pushMs: number; groups: number; arbitrageGroups: number }[] = [];
  const bestOf = (runs: Rate[]): Rate => runs.reduce((a, b) => (b.cpu > a.cpu ? b : a));
  const seconds = Number(process.env.SIGNALS_BENCH_SUSTAINED_SECONDS ?? 3);
  applyRates(engine, loaded, clock, 50, rand);
  for (let round = 0; round < 3; round++) {
    off.push(bestOf([0, 1].map(() => applyRates(engine, loaded, clock, count, rand))));
    const every = everySignal(engine, clock);
    applyRates(engine, loaded, clock, 50, rand);
    every.topics.flush();
    on.push(bestOf([0, 1].map(() => applyRates(engine, loaded, clock, count, rand))));
    every.topics.flush();
    sustained.push(sustainedWithPushes(engine, loaded, clock, rand, every, seconds));
    every.close();
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[1]!;
  const rounds = (values: number[]): string => values.map(Math.round).join(' / ');
  const out: Record<string, number | string> = {};
  out['apply price ticks, signals off, updates per CPU-second (median round)'] = Math.round(median(off.map((r) => r.cpu)));
  out['apply price ticks, every signal on, updates per CPU-second (median round)'] = Math.round(median(on.map((r) => r.cpu)));
  out['apply price ticks, signals off | every signal on, updates per CPU-second (rounds)'] = `${rounds(off.map((r) => r.cpu))}  |  ${rounds(on.map((r) => r.cpu))}`;
  out['apply price ticks, signals off / every signal on, updates/s wall (median round)'] = `${Math.round(median(off.map((r) => r.wall)))} / ${Math.round(median(on.map((r) => r.wall)))}`;
  out['apply price ticks, signals off | every signal on, updates/s wall (rounds)'] = `${rounds(off.map((r) => r.wall))}  |  ${rounds(on.map((r) => r.wall))}`;
  out['apply price ticks: every signal on costs per update (median rounds, CPU), ns'] = Math.round(1e9 / median(on.map((r) => r.cpu)) - 1e9 / median(off.map((r) => r.cpu)));
  out['every signal on with a group-topic push and an /arbitrage read every CPU-second, updates per CPU-second (rounds)'] = rounds(sustained.map((r) => r.rate));
  out['  its pushes + reads: CPU ms each / screen groups re-read / arbitrage groups re-read, each (rounds)'] = sustained.map((r) => `${Math.round(r.pushMs)} / ${Math.round(r.groups)} / ${Math.round(r.arbitrageGroups)}`).join(', ');
  return out;
}

function best(runs: number, measure: () => number): number {
  let top = 0;
  for (let i = 0; i < runs; i++) top = Math.max(top, measure());
  return top;
}

function meanMs(runs: number, call: () => unknown): number {
  call();
  const start = performance.now();
  for (let i = 0; i < runs; i++) call();
  return (performance.now() - start) / runs;
}

const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

export async function benchSignalsOnEngine(): Promise<Record<string, number | string>> {
  const size = (process.env.SIGNALS_BENCH_SIZE ?? 'large') as BoardSize;
  const out: Record<string, number | string> = { 'engine board': size };
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, generateBoard({ seed: 42, size, now: NOW }));
  out['engine: live rows'] = engine.liveRows;
  const loaded = loadedPrices(engine);
  const rand = mulberry32(11);
  const count = measureBatches();
  const simulator = new Simulator(engine, clock, { ratePerSecond: 0, seed: 5 });

  // Off and on alternate (three rounds of off then on; the books rebuilt for each on round,
  // since a closed EngineSignals no longer follows the board), so drift of this shared
  // machine hits both alike; each round keeps its best of 3. The price-tick rounds run
  // first, all of them: the simulator's stream opens arbitrages as it goes (851 on the
  // fresh large board, ~8,000 after 800k of its changes), and a price-tick round after
  // it would measure a board with more listed groups than the round before it.
  applyRate(engine, loaded, clock, 50, rand);
  const offPrice: number[] = [];
  const onPrice: number[] = [];
  const offSim: number[] = [];
  const onSim: number[] = [];
  let signals: EngineSignals | null = null;
  const subscribe = (): EngineSignals => {
    const built = performance.now();
    const next = new EngineSignals(engine);
    out['EngineSignals start (place + evaluate every group), ms'] = Math.round(performance.now() - built);
    out['arbitrage records at start'] ??= next.books.arbitrage.size;
    return next;
  };
  for (let round = 0; round < 3; round++) {
    signals?.close();
    offPrice.push(best(3, () => applyRate(engine, loaded, clock, count, rand)));
    signals = subscribe();
    applyRate(engine, loaded, clock, 50, rand);
    onPrice.push(best(3, () => applyRate(engine, loaded, clock, count, rand)));
  }
  for (let round = 0; round < 3; round++) {
    signals!.close();
    offSim.push(best(3, () => simulatorRate(engine, simulator, clock, 1000)));
    signals = subscribe();
    onSim.push(best(3, () => simulatorRate(engine, simulator, clock, 1000)));
  }
  signals = signals!;
  out['arbitrage records after the rounds'] = signals.books.arbitrage.size;
  out['market groups'] = signals.books.groups.liveCount;
  const mean = (values: number[]): number => values.reduce((a, b) => a + b) / values.length;
  out['apply price ticks, signals off, updates/s (rounds)'] = offPrice.map(Math.round).join(' / ');
  out['apply price ticks, signals on, updates/s (rounds)'] = onPrice.map(Math.round).join(' / ');
  out['apply price ticks, signals off, updates/s'] = Math.round(mean(offPrice));
  out['apply price ticks, signals on, updates/s'] = Math.round(mean(onPrice));
  const drops = onPrice.map((on, i) => (1 - on / offPrice[i]) * 100);
  out['apply price ticks: throughput drop per round, %'] = drops.map((d) => round(d)).join(' / ');
  out['apply price ticks: throughput drop with signals (median round), %'] = round([...drops].sort((a, b) => a - b)[1]);
  out['apply price ticks: throughput drop with signals (means), %'] = round((1 - mean(onPrice) / mean(offPrice)) * 100);
  out['apply price ticks: signals cost per applied update, ns'] = round(1e9 / mean(onPrice) - 1e9 / mean(offPrice));
  out['simulator mix, signals off, updates/s (rounds)'] = offSim.map(Math.round).join(' / ');
  out['simulator mix, signals on, updates/s (rounds)'] = onSim.map(Math.round).join(' / ');
  out['simulator mix: throughput drop per round, %'] = onSim.map((on, i) => round((1 - on / offSim[i]) * 100)).join(' / ');
  out['simulator mix, signals off, updates/s'] = Math.round(mean(offSim));
  out['simulator mix, signals on, updates/s'] = Math.round(mean(onSim));
  out['simulator mix: throughput drop with signals, %'] = round((1 - mean(onSim) / mean(offSim)) * 100);

  // the deferred edge re-pricing a read pays after a burst of ticks
  const query = { leagues: null, sources: null, eventIds: null, minEdge: 0.02, devig: 'multiplicative' as const };
  for (const burst of [100, 10_000]) {
    for (const batch of priceBatches(engine, loaded, burst / BATCH, rand)) { clock.advance(10); engine.apply(batch); }
    const start = performance.now();
    signals.edgesPage(query, null, 100);
    out[`first /edges page after ${burst} ticks, ms`] = round(performance.now() - start, 3);
  }
  out['/edges page (limit 100, cached books), ms'] = round(meanMs(200, () => signals.edgesPage(query, null, 100)), 4);
  out['/edges page devig=power (limit 100, per request), ms'] = round(meanMs(50, () => signals.edgesPage({ ...query, devig: 'power' }, null, 100)), 3);
  out['/arbitrage page (limit 100), ms'] = round(meanMs(200, () => signals.arbitragePage({ types: null, leagues: null, eventIds: null, minProfit: 0.001 }, null, 100)), 4);

  // 10 simulated minutes of the simulator's mix, then replay a 10-minute window
  const ticksPerSecond = 200;
  for (let second = 0; second < 600; second++) { clock.advance(1000); simulator.step(ticksPerSecond); }
  const to = clock.now();
  let found = 0;
  const window = { from: to - 600_000, to, minProfit: 0.001, limit: 500 };
  const latency = meanMs(5, () => { found = signals.arbitrageAt(window).length; });
  out['/historical/arbitrage 10-min window (live-group replay, served), ms'] = round(latency, 2);
  out['/historical/arbitrage 10-min window: records'] = found;
  out['/historical/arbitrage 10-min window (regrouping replay, reference), ms'] = round(meanMs(3, () => historicalArbitrage(engine, window)), 2);
  out['/historical/arbitrage snapshot (from = to), ms'] = round(meanMs(5, () => signals.arbitrageAt({ ...window, from: to })), 2);
  signals.close();
  Object.assign(out, benchEverySignal(engine, loaded, clock, rand, count));
  return out;
}

/**
 * Every signal on: first the interleaved off/on apply rates (applyOffAndOn), then, with
 * the books and a subscriber on each signal-stream topic (everySignal): one group-topic
 * push after a burst of ticks, the screen reads, and the time from a sharp tick's apply
 * to its steam message reaching the stream's sink (in process: the hand-off to the
 * transport, before socket writes), p50 / p99 over 2,000 moves each in a batch of 100
 * ticks. The end-to-end figure (ingest POST to SSE event) is bench/steamLatency.bench.ts.
 */
export function benchEverySignal(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, rand: () => number, count: number): Record<string, number | string> {
  const out: Record<string, number | string> = applyOffAndOn(engine, loaded, clock, rand, count);
  let steamAt = 0;
  const every = everySignal(engine, clock, () => (steamAt = performance.now()));
  const { signals, topics, bytes } = every;
  const all = { leagues: null, eventIds: null };
  applyRate(engine, loaded, clock, 50, rand);
  // the group topics push at most once a second: one push after a burst of ticks
  topics.flush();
  for (const batch of priceBatches(engine, loaded, 100, rand)) { clock.advance(10); engine.apply(batch); }
  const pushStart = performance.now();
  topics.flush();
  out['one group-topic push after 10,000 ticks (4 topics), ms'] = round(performance.now() - pushStart, 1);
  // the arbitrage re-reads the ticks deferred to the next read (each deferred group once)
  for (const burst of [100, 10_000, 100_000]) {
    signals.arbitragePage(ARBITRAGE_QUERY, null, 100);
    for (const batch of priceBatches(engine, loaded, burst / BATCH, rand)) { clock.advance(10); engine.apply(batch); }
    const deferred = signals.books.deferredGroups;
    const readStart = performance.now();
    signals.arbitragePage(ARBITRAGE_QUERY, null, 100);
    out[`first /arbitrage page after ${burst} ticks, ms / groups re-read`] = `${round(performance.now() - readStart, 3)} / ${deferred}`;
  }
  out['/arbitrage page (limit 100), ms / records'] = `${round(meanMs(50, () => signals.arbitragePage(ARBITRAGE_QUERY, null, 100)), 4)} / ${signals.books.arbitrage.size}`;
  out['topic bytes pushed (steam / fair_line / best_price / ev / middle)'] = ['steam', 'fair_line', 'best_price', 'ev', 'middle'].map((t) => bytes[t] ?? 0).join(' / ');
  const now = clock.now();
  out['/fair-lines whole board (limit 100), ms'] = round(meanMs(5, () => signals.fairLines({ ...all, devig: 'multiplicative' }, now, 100)), 2);
  out['/fair-lines whole board devig=jensen_shannon (limit 100), ms'] = round(meanMs(2, () => signals.fairLines({ ...all, devig: 'jensen_shannon' }, now, 100)), 2);
  out['/best-prices whole board max_hold=0.02, ms'] = round(meanMs(5, () => signals.bestPrices({ ...all, maxHold: 0.02 }, 100)), 2);
  out['/ev whole board min_ev=0.02, ms'] = round(meanMs(5, () => signals.positiveEv({ ...all, devig: 'multiplicative', minEv: 0.02, sportsbooks: null }, now, 100)), 2);
  out['/middles whole board, ms'] = round(meanMs(5, () => signals.middles({ ...all, minWidth: 0.5, maxCost: 0.05 }, 100)), 2);

  // tick to steam message: each sample is a batch of 99 ordinary ticks and one fair-line
  // book's price shortened by 3 implied points
  const s = engine.store;
  const sharpBooks = new Set(['pinnacle', 'circa', 'bookmaker']);
  const sharpSlots: number[] = [];
  for (let slot = 0; slot < s.size; slot++) {
    if (s.isLive(slot) && s.priceAmerican[slot] !== NO_PRICE && s.suspended[slot] === 0 && sharpBooks.has(s.books.get(s.book[slot])) && signals.groups.groupOf(slot) >= 0) sharpSlots.push(slot);
  }
  const latencies: number[] = [];
  let missed = 0;
  for (let i = 0; i < 2000; i++) {
    const batch = priceBatches(engine, loaded, 1, rand)[0]!.slice(0, BATCH - 1);
    const slot = sharpSlots[Math.floor(rand() * sharpSlots.length)]!;
    const p = 1 / americanToDecimal(s.priceAmerican[slot]);
    batch.push({ op: 'price', slot, priceAmerican: decimalToAmerican(1 / Math.min(0.97, p + 0.03)), suspended: false });
    clock.advance(61_000); // past the window: each move starts from the row's previous price
    steamAt = 0;
    const start = performance.now();
    engine.apply(batch);
    if (steamAt === 0) missed++;
    else latencies.push(steamAt - start);
  }
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  out['tick to steam message (batch of 100 applied, in process), p50 ms'] = round(pct(0.5), 3);
  out['tick to steam message (batch of 100 applied, in process), p99 ms'] = round(pct(0.99), 3);
  out['tick to steam message: samples / without a move'] = `${latencies.length} / ${missed}`;
  every.close();
  return out;
}

/** One subscriber per group topic (no steam), its sinks counting bytes. */
function groupTopicSubscribers(signals: EngineSignals, clock: ManualClock): { topics: SignalTopics; bytes: { total: number } } {
  const topics = new SignalTopics(signals, () => clock.now());
  const bytes = { total: 0 };
  const sink = { send(_: SignalTopic, message: Buffer) { bytes.total += message.length; return true; } };
  const all = { leagues: null, eventIds: null };
  topics.subscribe({ topic: 'fair_line', query: { ...all, devig: 'multiplicative' } }, sink);
  topics.subscribe({ topic: 'best_price', query: { ...all, maxHold: 0.02 } }, sink);
  topics.subscribe({ topic: 'ev', query: { ...all, devig: 'multiplicative', minEv: 0.02, sportsbooks: null } }, sink);
  topics.subscribe({ topic: 'middle', query: { ...all, minWidth: 0.5, maxCost: 0.05 } }, sink);
  return { topics, bytes };
}

/** The pushes' own counters where the SignalTopics has them (groups compared and listed; older builds had none). */
function pushCounters(topics: SignalTopics): { compared: number; listed: number } {
  const stats = (topics as unknown as { pushStats?: { compared?: number; listed?: number } }).pushStats;
  return { compared: stats?.compared ?? NaN, listed: stats?.listed ?? NaN };
}

/**
 * The group-topic push as a served process makes it (SIGNALS_BENCH_PART=push): the
 * books, one subscriber per group topic, price-tick batches applied back to back and a
 * push (flush: settle, compare, serialise, hand to the sinks) each time a CPU-second
 * went into applying, for SIGNALS_BENCH_SUSTAINED_SECONDS (3) of CPU per round, three
 * rounds. Per round: updates per CPU-second with the pushes' CPU counted, each push's
 * CPU ms, the groups it re-read, compared and listed (all subscriptions), and its bytes.
 * First, once: the push after subscribing (each subscriber's full image). All on CPU
 * time, so a loaded machine slows the run but not the figures (much).
 */
export function benchGroupPush(engine: OddsEngine, loaded: LoadedPrices, clock: ManualClock, rand: () => number): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  const seconds = Number(process.env.SIGNALS_BENCH_SUSTAINED_SECONDS ?? 3);
  const signals = new EngineSignals(engine);
  applyRates(engine, loaded, clock, 50, rand);
  const { topics, bytes } = groupTopicSubscribers(signals, clock);
  const firstStart = cpuSeconds();
  topics.flush();
  out['push after subscribing (4 topics, full images): CPU ms / MB'] = `${Math.round((cpuSeconds() - firstStart) * 1000)} / ${round(bytes.total / 1e6, 1)}`;
  const rounds: string[] = [];
  const rates: number[] = [];
  const pushMs: number[] = [];
  const roundCount = Number(process.env.SIGNALS_BENCH_PUSH_ROUNDS ?? 3);
  for (let r = 0; r < roundCount; r++) {
    let settled = 0;
    const counters = pushCounters(topics);
    const bytesBefore = bytes.total;
    const { applied, busy, pushes, pushSeconds: pushTime } = appliedWithPushes(engine, loaded, clock, rand, seconds, () => topics.flush(), () => {
      settled += signals.books.screens.pendingGroups;
    });
    const after = pushCounters(topics);
    const per = (value: number) => (pushes === 0 ? NaN : Math.round(value / pushes));
    rates.push(applied / busy);
    pushMs.push(pushes === 0 ? NaN : (pushTime / pushes) * 1000);
    rounds.push(`${Math.round(applied / busy)} upd/CPU-s, ${pushes} pushes: ${Math.round((pushTime / pushes) * 1000)} CPU ms, ${per(settled)} re-read, ${per(after.compared - counters.compared)} compared, ${per(after.listed - counters.listed)} listed, ${round(per(bytes.total - bytesBefore) / 1e6, 2)} MB each`);
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  if (roundCount > 0) {
    out['ticks with a push every CPU-second, updates per CPU-second (median round)'] = Math.round(median(rates));
    out['  each push, CPU ms (median round)'] = Math.round(median(pushMs));
    rounds.forEach((line, i) => { out[`  round ${i + 1}`] = line; });
  }
  // a feed at 10,000 updates a second: a push after each 10,000 ticks (5 pushes, the median)
  const small: { ms: number; settled: number; compared: number; listed: number; bytes: number }[] = [];
  for (let r = 0; r < 5; r++) {
    for (const batch of priceBatches(engine, loaded, 100, rand)) { clock.advance(10); engine.apply(batch); }
    const settled = signals.books.screens.pendingGroups;
    const counters = pushCounters(topics);
    const bytesBefore = bytes.total;
    const start = cpuSeconds();
    topics.flush();
    const ms = (cpuSeconds() - start) * 1000;
    const after = pushCounters(topics);
    small.push({ ms, settled, compared: after.compared - counters.compared, listed: after.listed - counters.listed, bytes: bytes.total - bytesBefore });
  }
  small.sort((a, b) => a.ms - b.ms);
  const mid = small[2]!;
  out['a push after 10,000 ticks: CPU ms / re-read / compared / listed / MB (median of 5)'] = `${round(mid.ms, 1)} / ${mid.settled} / ${mid.compared} / ${mid.listed} / ${round(mid.bytes / 1e6, 2)}`;
  topics.close();
  signals.close();
  return out;
}

if (import.meta.url === `file://${process.argv[1]}` && process.env.SIGNALS_BENCH_PART === 'push') {
  // the group-topic push alone: SIGNALS_BENCH_PART=push SIGNALS_BENCH_SIZE=medium node --import tsx bench/signalsEngine.bench.ts
  const size = (process.env.SIGNALS_BENCH_SIZE ?? 'large') as BoardSize;
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, generateBoard({ seed: 42, size, now: NOW }));
  console.log('board'.padEnd(64), size, engine.liveRows, 'live rows');
  const results = benchGroupPush(engine, loadedPrices(engine), clock, mulberry32(11));
  for (const [key, value] of Object.entries(results)) console.log(key.padEnd(64), value);
} else if (import.meta.url === `file://${process.argv[1]}` && process.env.SIGNALS_BENCH_PART === 'every-signal') {
  // the every-signal part alone (interleaved off/on apply rates, one push, the screen reads, tick to steam in process):
  // SIGNALS_BENCH_PART=every-signal SIGNALS_BENCH_SIZE=medium node --import tsx bench/signalsEngine.bench.ts
  const size = (process.env.SIGNALS_BENCH_SIZE ?? 'large') as BoardSize;
  const clock = new ManualClock(NOW);
  const engine = new OddsEngine(clock);
  loadBoard(engine, generateBoard({ seed: 42, size, now: NOW }));
  console.log('board'.padEnd(64), size, engine.liveRows, 'live rows');
  const results = benchEverySignal(engine, loadedPrices(engine), clock, mulberry32(11), measureBatches());
  for (const [key, value] of Object.entries(results)) console.log(key.padEnd(64), value);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await benchSignalsOnEngine();
  for (const [key, value] of Object.entries(results)) console.log(key.padEnd(64), value);
}
