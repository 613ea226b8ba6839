// BoardSnapshot under change: after any sequence of engine changes (price moves,
// suspensions, lines added, pulled and revived, events starting, finishing, moving,
// appearing inside a group, slots recycled) the incrementally kept body equals what a
// from-scratch serializer writes, and only the pieces holding changed rows re-render.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Change, OddsEngine } from '../../engine/engine.ts';
import type { ManualClock } from '../../engine/clock.ts';
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { inputOf, liveSlots, mulberry32, randomBatch, boardOf, makeTestBoard } from '../helpers/engine-helpers.ts';
import { fixtureEngine, parseBody, rawBody, referenceText, testBoardEngine } from '../helpers/snapshot-helpers.ts';

/** Changes the random batches of the engine tests do not make: event lifecycle and moves, new events. */
function eventChanges(engine: OddsEngine, rand: () => number, counter: { n: number }): Change[] {
  const table = engine.eventTable;
  const known: number[] = [];
  for (let ev = 0; ev < table.known.length; ev++) if (table.known[ev] === 1 && table.futures[ev] === 0) known.push(ev);
  const ev = known[Math.floor(rand() * known.length)];
  const id = engine.store.events.get(ev);
  const r = rand();
  if (r < 0.3) return [{ op: 'status', eventId: id, status: 'in_progress' }];
  if (r < 0.45) return [{ op: 'status', eventId: id, status: 'final' }];
  if (r < 0.6) {
    const info = engine.event(id)!;
    engine.upsertEvent({ ...info, startTime: info.startTime + Math.round((rand() - 0.5) * 48) * 3600_000 });
    return [];
  }
  // A new event (unknown id) between existing ones: its first row creates it.
  const slots = liveSlots(engine);
  if (slots.length === 0) return [];
  const row = inputOf(engine, slots[Math.floor(rand() * slots.length)]);
  const other = known[Math.floor(rand() * known.length)];
  row.eventId = `${row.eventId}-n${++counter.n}`;
  row.eventStartTime = table.startTime[other] + (rand() < 0.5 ? 0 : 60_000);
  const second = { ...row, selectionId: `${row.selectionId}-x`, side: row.side };
  return [{ op: 'upsert', row }, { op: 'upsert', row: second }];
}

function assertMatchesReference(engine: OddsEngine, snapshot: BoardSnapshot, label: string): void {
  for (const withHistory of [false, true]) {
    const text = rawBody(snapshot.current(withHistory)).toString('utf8');
    const reference = referenceText(engine, withHistory);
    if (text !== reference) {
      let at = 0;
      while (at < text.length && text[at] === reference[at]) at++;
      assert.fail(`${label} (history ${withHistory}): bodies differ at ${at}\n got ${text.slice(at - 200, at + 200)}\nwant ${reference.slice(at - 200, at + 200)}`);
    }
  }
}

test('property: incremental body equals the from-scratch body after random changes', () => {
  const seen = { recut: 0, dropped: 0, split: 0, dissolved: 0, newEvents: 0, revivals: 0 };
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.constantFrom(2 * 1024, 16 * 1024, 1 << 20),
      fc.integer({ min: 1, max: 60 }),
      (seed, pieceBytes, batchSize) => {
        const { engine, clock } = testBoardEngine(seed % 97, 10, 5_000);
        const snapshot = new BoardSnapshot(engine, { pieceBytes });
        assertMatchesReference(engine, snapshot, 'initial');
        const rand = mulberry32(seed);
        const removed: ReturnType<typeof inputOf>[] = [];
        const counter = { n: 0, revivals: 0 };
        for (let round = 0; round < 6; round++) {
          // Several batches between polls, minutes apart at times: tombstones get
          // recycled into new rows before the snapshot hears of it.
          const batches = 1 + Math.floor(rand() * 3);
          for (let b = 0; b < batches; b++) {
            clock.advance(Math.floor(rand() * 4000));
            const batch = randomBatch(engine, rand, removed, batchSize, counter);
            if (rand() < 0.5) batch.push(...eventChanges(engine, rand, counter));
            engine.apply(batch);
          }
          assertMatchesReference(engine, snapshot, `seed ${seed} round ${round}`);
        }
        for (const stats of snapshot.stats()) {
          seen.recut += stats.rendered.eventsRecut;
          seen.dropped += stats.rendered.slicesDropped;
          seen.split += stats.rendered.slicesSplit;
          seen.dissolved += stats.rendered.groupsDissolved;
        }
        seen.newEvents += counter.n;
        seen.revivals += counter.revivals;
        snapshot.close();
      },
    ),
    // One fixed run per rare path (2 KiB pieces split and drop slices, 1 MiB pieces
    // dissolve groups), so the coverage check below does not depend on the draw.
    { numRuns: 14, examples: [[999993, 2 * 1024, 25], [803376, 1 << 20, 41]] },
  );
  // The runs must have gone through the rare paths, or the property proves little.
  assert.ok(Object.values(seen).every((n) => n > 0), JSON.stringify(seen));
});

test('with the simulator running, incremental equals from scratch and equals a fresh BoardSnapshot', () => {
  const { engine, clock } = fixtureEngine(3, 20_000);
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 8 * 1024 });
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 9 });
  snapshot.current(false);
  snapshot.current(true);
  for (let round = 0; round < 12; round++) {
    sim.step(round % 3 === 0 ? 1500 : 40);
    clock.advance(30 * 60_000 * (round % 4 === 3 ? 1 : 0)); // lets games start and finish
    assertMatchesReference(engine, snapshot, `round ${round}`);
    const fresh = new BoardSnapshot(engine);
    assert.equal(snapshot.current(false).etag, fresh.current(false).etag, 'same bytes, same ETag, whatever the piece layout');
    fresh.close();
  }
  assert.ok(sim.stats.statusChanges > 0 && sim.stats.linesAdded > 0 && sim.stats.linesPulled > 0, JSON.stringify(sim.stats));
  snapshot.close();
});

test('a price move re-renders the one piece holding the row; N moved events re-render at most N pieces', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  snapshot.current(false);
  const rendered = () => snapshot.stats()[0].rendered;
  const slots = liveSlots(engine).filter((slot) => engine.store.priceAmerican[slot] !== 0);
  const before = { ...rendered() };
  // The clock moves by milliseconds: within one heat second no row cools (its
  // re-render would be counted here; cooling.test.ts counts those).
  clock.advance(1);
  engine.apply([{ op: 'price', slot: slots[0], priceAmerican: engine.store.priceAmerican[slots[0]] === 150 ? 160 : 150, suspended: false }]);
  snapshot.current(false);
  assert.equal(rendered().piecesRendered - before.piecesRendered, 1);
  assert.ok(rendered().bytesRendered - before.bytesRendered <= 4 * 64 * 1024);
  const rand = mulberry32(5);
  for (const n of [1, 5, 20]) {
    const events = new Set<number>();
    const batch: Change[] = [];
    while (events.size < n) {
      const slot = slots[Math.floor(rand() * slots.length)];
      if (events.has(engine.store.event[slot])) continue;
      events.add(engine.store.event[slot]);
      batch.push({ op: 'price', slot, priceAmerican: engine.store.priceAmerican[slot] > 0 ? engine.store.priceAmerican[slot] + 1 : engine.store.priceAmerican[slot] - 1, suspended: false });
    }
    const start = { ...rendered() };
    clock.advance(1);
    engine.apply(batch);
    snapshot.current(false);
    const pieces = rendered().piecesRendered - start.piecesRendered;
    assert.ok(pieces >= 1 && pieces <= n, `${n} events moved: ${pieces} pieces re-rendered`);
  }
  snapshot.close();
});

test('a dirty piece renders only its changed rows; its other rows are copied from the bytes kept when it was made', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 64 * 1024 });
  snapshot.current(false);
  const rendered = () => snapshot.stats()[0].rendered;
  const slots = liveSlots(engine).filter((slot) => engine.store.priceAmerican[slot] !== 0);
  const rand = mulberry32(9);
  for (const n of [1, 3, 10]) {
    const start = { ...rendered() };
    const batch: Change[] = [];
    const chosen = new Set<number>();
    while (chosen.size < n) chosen.add(slots[Math.floor(rand() * slots.length)]);
    for (const slot of chosen) {
      const price = engine.store.priceAmerican[slot];
      batch.push({ op: 'price', slot, priceAmerican: price > 0 ? price + 2 : price - 2, suspended: false });
    }
    clock.advance(1000);
    engine.apply(batch);
    const body = snapshot.current(false);
    const pieces = rendered().piecesRendered - start.piecesRendered;
    const rows = rendered().rowsRendered - start.rowsRendered;
    assert.ok(pieces >= 1, `${n} rows moved: ${pieces} pieces re-made`);
    assert.equal(rows, n, `${n} rows moved: ${rows} rows rendered, the rest of the ${pieces} pieces copied`);
    assert.equal(rawBody(body).toString('utf8'), referenceText(engine, false));
  }
  snapshot.close();
});

test('with no bytes kept, every row of a dirty piece is rendered again (and the body is the same)', () => {
  const { engine, clock } = fixtureEngine();
  const kept = new BoardSnapshot(engine, { pieceBytes: 64 * 1024 });
  const none = new BoardSnapshot(engine, { pieceBytes: 64 * 1024, renderedBytes: 0 });
  kept.current(false);
  none.current(false);
  const slot = liveSlots(engine).find((s) => engine.store.priceAmerican[s] !== 0)!;
  const before = none.stats()[0].rendered.rowsRendered;
  clock.advance(1000);
  engine.apply([{ op: 'price', slot, priceAmerican: engine.store.priceAmerican[slot] === 150 ? 160 : 150, suspended: false }]);
  assert.ok(Buffer.concat(none.current(false).chunks as Buffer[]).equals(Buffer.concat(kept.current(false).chunks as Buffer[])));
  assert.ok(none.stats()[0].rendered.rowsRendered - before > 1);
  kept.close();
  none.close();
});

test('ETag: equal bodies, equal tags; changed bodies, changed tags; the variants never share one', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 4 });
  const seen = new Map<string, string>();
  for (let round = 0; round < 15; round++) {
    for (const withHistory of [false, true]) {
      const body = snapshot.current(withHistory);
      assert.match(body.etag, /^"snap-[nh]-[0-9a-f]{8}-[0-9a-f]+"$/);
      const text = rawBody(body).toString('latin1');
      const known = seen.get(body.etag);
      if (known !== undefined) assert.equal(known, text, 'one ETag, one body');
      seen.set(body.etag, text);
    }
    if (round % 3 !== 2) sim.step(20);
  }
  const bodies = new Map<string, string>();
  for (const [etag, text] of seen) {
    const other = bodies.get(text);
    assert.equal(other, undefined, `two ETags (${other}, ${etag}) for one body`);
    bodies.set(text, etag);
  }
  assert.ok(seen.size >= 20);
  assert.notEqual(snapshot.etag(false), snapshot.etag(true));
  snapshot.close();
});

test('a status change with no row change moves the head (updated, syncToken) and the event', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 1 << 20 });
  const before = snapshot.current(false);
  assert.ok(snapshot.stats()[0].groups > 0, 'quiet small events are grouped');
  const doc = parseBody(before);
  const scheduled = doc.events.find((e) => e.status === 'scheduled')!;
  clock.advance(5000);
  engine.apply([{ op: 'status', eventId: scheduled.id, status: 'in_progress' }]);
  const after = snapshot.current(false);
  assert.notEqual(after.etag, before.etag);
  assert.equal(after.syncToken, String(engine.asOf()));
  assert.equal(parseBody(after).events.find((e) => e.id === scheduled.id)!.status, 'in_progress');
  assert.equal(rawBody(after).toString('utf8'), referenceText(engine, false));
  assert.ok(snapshot.stats()[0].rendered.groupsDissolved >= 1, 'a member turning live leaves its group');
  snapshot.close();
});

test('the with-history variant is kept while requested and dropped after historyIdleMs', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine, { historyIdleMs: 60_000 });
  snapshot.current(false);
  assert.equal(snapshot.keepsHistory, false);
  const first = snapshot.current(true);
  assert.equal(snapshot.keepsHistory, true);
  clock.advance(30_000);
  snapshot.current(false);
  assert.equal(snapshot.keepsHistory, true);
  clock.advance(61_000);
  snapshot.current(false);
  assert.equal(snapshot.keepsHistory, false);
  const again = snapshot.current(true);
  assert.equal(again.etag, first.etag, 'rebuilt from the same board: same bytes, same tag');
  snapshot.close();
});

test('a bulk load after the snapshot exists (no listener calls) is noticed through asOf', () => {
  const { engine, clock } = testBoardEngine(3, 6);
  const snapshot = new BoardSnapshot(engine);
  snapshot.current(false);
  clock.advance(60_000);
  const extra = makeTestBoard(4, 4);
  for (const row of extra.rows) row.updated = clock.now();
  loadBoard(engine, boardOf(extra, 4));
  assert.equal(rawBody(snapshot.current(false)).toString('utf8'), referenceText(engine, false));
  snapshot.close();
});

test('whenCurrent() builds in steps (changes between steps included); current() finishes a build in progress', async () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 4096 });
  assert.equal(snapshot.isBehind(false), true, 'nothing built yet');
  const built = snapshot.whenCurrent(false, 0); // one event per step
  assert.equal(snapshot.whenCurrent(false, 0), built, 'waiters share one build');
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(snapshot.isBehind(false), true, 'still building after a few steps');
  clock.advance(1000);
  engine.apply([{ op: 'price', slot: liveSlots(engine)[0], priceAmerican: 333, suspended: false }]);
  const body = await built;
  assert.equal(rawBody(body).toString('utf8'), referenceText(engine, false));
  assert.equal(snapshot.isBehind(false), false);

  const other = new BoardSnapshot(engine);
  const pending = other.whenCurrent(true, 0);
  const now = other.current(true); // a synchronous caller finishes the build at once
  assert.equal(rawBody(now).toString('utf8'), referenceText(engine, true));
  assert.equal((await pending).etag, now.etag);
  snapshot.close();
  other.close();
});

test('isBehind(): a backlog beyond the limit asks for stepped work', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 2 });
  sim.step(50);
  assert.equal(snapshot.isBehind(false, 2000), false);
  assert.equal(snapshot.isBehind(false, 10), true);
  snapshot.current(false);
  assert.equal(snapshot.isBehind(false, 0), false);
  assert.equal(snapshot.isBehind(true), true, 'the with-history variant is not built');
  snapshot.close();
});

test('close() stops listening: later changes cost the snapshot nothing', () => {
  const { engine, clock } = fixtureEngine();
  const snapshot = new BoardSnapshot(engine);
  snapshot.current(false);
  snapshot.close();
  const clockBefore = clock.now();
  engine.apply([{ op: 'price', slot: liveSlots(engine)[1], priceAmerican: 444, suspended: false }]);
  assert.equal(clock.now(), clockBefore);
  assert.equal((engine as unknown as { listeners: unknown[] }).listeners.includes(snapshot), false);
});

// keep the helper type import used
export type { ManualClock };

test('a refresh step stops at its deadline even when every piece is dirty: one walk takes on a few pieces, not the board', () => {
  const { engine } = fixtureEngine(6);
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 2 * 1024 });
  snapshot.current(false);
  const pieces = snapshot.stats()[0].pieces;
  assert.ok(pieces > 200, `${pieces} pieces`);
  // Every priced row moves: every piece is dirty, in one run from the first to the last.
  const s = engine.store;
  const batch: Change[] = [];
  for (const slot of liveSlots(engine)) {
    const price = s.priceAmerican[slot];
    if (price !== 0 && price !== -100 && price !== 100) batch.push({ op: 'price', slot, priceAmerican: price > 0 ? price + 1 : price - 1, suspended: s.suspended[slot] === 1 });
  }
  engine.apply(batch);
  const variant = (snapshot as unknown as { plain: { variant: import('../../engine/snapshot/snapshotVariant.ts').SnapshotVariant } }).plain.variant;
  const before = variant.stats.piecesRendered;
  // A deadline already past: the call does one walk and stops.
  assert.equal(variant.refresh(performance.now() - 1, false), false);
  const walked = variant.stats.piecesRendered - before;
  assert.ok(walked >= 1 && walked <= 24, `${walked} pieces re-made by one step of ${pieces} dirty`);
  let calls = 1;
  while (!variant.refresh(performance.now() - 1, false)) calls++;
  assert.ok(calls > pieces / 24, `${calls} steps`);
  assert.equal(rawBody(snapshot.current(false)).toString('utf8'), referenceText(engine, false));
  snapshot.close();
});
