// Snapshot versions under a moving board: a poll is answered at once with the newest
// complete version while the next one is built in the background (pieces compressed
// on the threadpool); every version is one valid gzip member whose document is the
// board at that version's syncToken; the sync contract holds from those versions
// under heavy ticks; and the piece layout is a function of the board: kept up to date
// through any changes (rows turning hot and cold, events going live, lines pulled and
// added) it never loses or repeats a row and gives the bytes a fresh build gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import type { Change, OddsEngine } from '../../engine/engine.ts';
import { BoardSnapshot, type SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { filterOf, inputOf, liveSlots, mulberry32, randomBatch } from '../helpers/engine-helpers.ts';
import { fixtureEngine, parseBody, rawBody, referenceText, testBoardEngine } from '../helpers/snapshot-helpers.ts';

const bytesOf = (body: SnapshotBody): Buffer => Buffer.concat(body.chunks as Buffer[]);
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One gzip member and nothing after it: the deflate stream alone inflates to the whole body. */
function assertSingleMember(body: SnapshotBody): void {
  const all = bytesOf(body);
  assert.deepEqual([...all.subarray(0, 4)], [0x1f, 0x8b, 0x08, 0x00]);
  const inflated = inflateRawSync(all.subarray(10, -8));
  assert.ok(inflated.equals(gunzipSync(all)), 'the member holds the whole body');
  assert.equal(all.readUInt32LE(all.length - 4), inflated.length % 2 ** 32);
  assert.equal(body.rawLength, inflated.length);
}

test('a poll during a long refresh answers at once with the previous complete version', async () => {
  const { engine, clock } = fixtureEngine(2);
  const snapshot = new BoardSnapshot(engine);
  const first = snapshot.current(false);
  assert.equal(snapshot.latest(false), first, 'nothing moved: the same version');
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 3 });
  sim.step(20_000); // a backlog far above what a poll finishes inline
  const rendered = snapshot.stats()[0].rendered.piecesRendered;
  const during = snapshot.latest(false);
  assert.equal(during, first, 'the previous complete version, at once');
  assert.equal(snapshot.stats()[0].rendered.piecesRendered, rendered, 'the poll rendered nothing');
  assert.equal(snapshot.isRefreshing(false), true, 'the next version is being built');
  // Polls keep getting a complete version while the refresh runs; then the new one.
  let polls = 0;
  while (snapshot.isRefreshing(false)) {
    const body = snapshot.latest(false)!;
    assert.ok(body === first || body.syncToken === String(engine.asOf()), 'a complete version, never a partial one');
    polls++;
    await nextTurn();
  }
  assert.ok(polls >= 2, `${polls} polls answered while the refresh ran`);
  const next = snapshot.latest(false)!;
  assert.notEqual(next.etag, first.etag);
  assert.equal(next.syncToken, String(engine.asOf()));
  assert.equal(rawBody(next).toString('utf8'), referenceText(engine, false));
  assertSingleMember(next);
  snapshot.close();
});

test('consecutive versions (both variants) are single gzip members equal to the board at their syncToken', async () => {
  const { engine, clock } = fixtureEngine(5, 3 * 3600_000);
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 8 * 1024, historyIdleMs: Infinity });
  snapshot.current(false);
  snapshot.current(true);
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 12 });
  // The board only moves here, so its document at every asOf it passes through is known.
  const boardAt = new Map<string, string[]>();
  const record = () => boardAt.set(String(engine.asOf()), [referenceText(engine, false), referenceText(engine, true)]);
  record();
  const seen = [new Map<string, SnapshotBody>(), new Map<string, SnapshotBody>()];
  const poll = () => {
    for (const variant of [0, 1]) {
      const body = snapshot.latest(variant === 1)!;
      seen[variant].set(body.etag, body);
    }
  };
  for (let round = 0; round < 14; round++) {
    sim.step(round % 4 === 0 ? 3000 : 150);
    if (round % 5 === 4) clock.advance(40 * 60_000); // games start and finish
    record();
    poll();
    // Every other round the board moves again while a version is being built; else
    // the background work is let run until it is done (its steps are bounded in time,
    // not work, so on a busy machine a version takes more turns: the bound is generous).
    for (let turn = 0; turn < (round % 2 === 0 ? 1 : 200_000); turn++) {
      await nextTurn();
      poll();
      if (!snapshot.isRefreshing(false) && !snapshot.isRefreshing(true)) break;
    }
  }
  await snapshot.whenCurrent(false);
  await snapshot.whenCurrent(true);
  poll();
  for (const variant of [0, 1]) {
    const versions = [...seen[variant].values()].sort((a, b) => Number(a.syncToken) - Number(b.syncToken));
    assert.ok(versions.length >= 4, `${versions.length} versions of variant ${variant}`);
    for (const body of versions) {
      assertSingleMember(body);
      const expected = boardAt.get(body.syncToken);
      assert.ok(expected !== undefined, `syncToken ${body.syncToken} is an asOf the board passed through`);
      assert.equal(rawBody(body).toString('utf8'), expected[variant], `variant ${variant} at ${body.syncToken}`);
      assert.equal(body.count, parseBody(body).events.reduce((n, e) => n + e.odds.length, 0));
    }
    assert.equal(versions[versions.length - 1].syncToken, String(engine.asOf()));
  }
  snapshot.close();
});

test('a board moving on every turn, faster than the steps render, still gets a new version from every background pass', async () => {
  const { engine, clock } = fixtureEngine(4, 3 * 3600_000);
  // Tiny pieces and 1 ms steps: each turn's ticks dirty more than a step renders.
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 2 * 1024, stepMs: 1 });
  const first = snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 20_000, seed: 8 });
  const boardAt = new Map<string, string>();
  const seen = new Map<string, SnapshotBody>();
  let turns = 0;
  while (seen.size < 4 && turns < 400) {
    sim.step(400); // the board never stands still
    boardAt.set(String(engine.asOf()), referenceText(engine, false));
    const body = snapshot.latest(false)!;
    if (body !== first) seen.set(body.etag, body);
    turns++;
    await nextTurn();
  }
  assert.ok(seen.size >= 4, `${seen.size} versions published in ${turns} turns of a board that never stopped`);
  for (const body of seen.values()) {
    assertSingleMember(body);
    const expected = boardAt.get(body.syncToken);
    assert.ok(expected !== undefined, `syncToken ${body.syncToken} is an asOf the board passed through`);
    assert.equal(rawBody(body).toString('utf8'), expected, `the version at ${body.syncToken} is the board at that moment`);
  }
  snapshot.close();
});

test('the version\'s moment waits until its final render fits the bound; meanwhile polls get the previous complete version', async () => {
  const { engine, clock } = fixtureEngine(4, 3 * 3600_000);
  // No catch-up time and no final render allowed beyond the few rows always finished
  // in one go: the moment is fixed only once the steps brought the backlog down to those.
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 4 * 1024, stepMs: 1, catchUpMs: 0, finalRenderMs: 0, finalRenderShare: 0, maxPutOffMs: Infinity });
  const first = snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 5 });
  sim.step(20_000);
  assert.equal(snapshot.latest(false), first, 'a backlog far above what a poll finishes inline: the previous version');
  const boardAt = String(engine.asOf());
  const expected = referenceText(engine, false);
  let turns = 0;
  while (snapshot.isRefreshing(false)) {
    const body = snapshot.latest(false)!;
    assert.equal(body, first, 'no version until the final render fits its bound');
    turns++;
    await nextTurn();
  }
  const stats = snapshot.stats()[0];
  assert.ok(stats.finalsDeferred > 0, `the moment was put off (${stats.finalsDeferred} times)`);
  assert.ok(turns >= 2, `${turns} turns of steps before the version`);
  const next = snapshot.latest(false)!;
  assert.equal(next.syncToken, boardAt);
  assert.equal(rawBody(next).toString('utf8'), expected);
  assertSingleMember(next);
  // The bound lets a board that keeps moving get versions too, once the backlog is small.
  const seen = new Set<string>([next.etag]);
  for (let turn = 0; turn < 400 && seen.size < 3; turn++) {
    sim.step(2);
    snapshot.latest(false);
    await nextTurn();
    seen.add(snapshot.latest(false)!.etag);
  }
  assert.ok(seen.size >= 3, `${seen.size} versions while the board moved a little on every turn`);
  snapshot.close();
});

/**
 * A step clock the test drives: every reading moves it on by `tickMs` (so a step's
 * length counts the refresh's own clock readings, not the machine's speed), and
 * every `stretchEvery`-th reading jumps `stretchMs` more, as when a garbage-collection
 * pause lands inside a timed step.
 */
function drivenTimer(tickMs: number, stretchEvery = 0, stretchMs = 0) {
  let now = 0;
  let readings = 0;
  return () => {
    readings++;
    now += tickMs;
    if (stretchEvery > 0 && readings % stretchEvery === 0) now += stretchMs;
    return now;
  };
}

/** Turns of a board that moves on every turn until `wanted` new versions are out (or `maxTurns`); each checked against the board at its syncToken. */
async function versionsWhileMoving(snapshot: BoardSnapshot, engine: OddsEngine, sim: Simulator, changesPerTurn: number, wanted: number, maxTurns: number) {
  const first = snapshot.latest(false)!;
  const boardAt = new Map<string, string>();
  const seen = new Map<string, SnapshotBody>();
  let turns = 0;
  while (seen.size < wanted && turns < maxTurns) {
    sim.step(changesPerTurn);
    boardAt.set(String(engine.asOf()), referenceText(engine, false));
    const body = snapshot.latest(false)!;
    if (body !== first) seen.set(body.etag, body);
    turns++;
    await nextTurn();
  }
  for (const body of seen.values()) {
    assertSingleMember(body);
    assert.equal(rawBody(body).toString('utf8'), boardAt.get(body.syncToken), `the version at ${body.syncToken} is the board at that moment`);
  }
  return { versions: seen.size, turns };
}

test('steps stretched by pauses (a GC inside a timed step) do not put versions off: the cost per item is a median', async () => {
  const { engine, clock } = fixtureEngine(4, 3 * 3600_000);
  // One clock reading in 331 jumps 1 s: about one step in ten is stretched a
  // thousandfold. No catch-up time, no share of the age and no limit on put-offs:
  // only the estimate decides whether the final render fits its 20 ms.
  const timer = drivenTimer(0.02, 331, 1000);
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 2 * 1024, stepMs: 1, catchUpMs: 0, finalRenderMs: 20, finalRenderShare: 0, maxPutOffMs: Infinity, timer });
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 21 });
  const { versions, turns } = await versionsWhileMoving(snapshot, engine, sim, 40, 6, 300);
  assert.ok(versions >= 6, `${versions} versions in ${turns} turns of a board that moved on every turn, with stretched steps`);
  snapshot.close();
});

test('a version put off for maxPutOffMs gets a final render as long as a step, while the board moves on every turn', async () => {
  const { engine, clock } = fixtureEngine(4, 3 * 3600_000);
  // No final render beyond the few rows always finished in one go, and a board that
  // dirties more than that on every turn: without the limit on put-offs the moment
  // would never be fixed (the test of the moment waiting for its bound shows the wait on a board that stops).
  const timer = drivenTimer(0.05);
  const snapshot = new BoardSnapshot(engine, { pieceBytes: 2 * 1024, stepMs: 1, catchUpMs: 0, finalRenderMs: 0, finalRenderShare: 0, maxPutOffMs: 20, timer });
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 22 });
  const { versions, turns } = await versionsWhileMoving(snapshot, engine, sim, 200, 4, 400);
  assert.ok(versions >= 4, `${versions} versions in ${turns} turns of a board that moved on every turn`);
  assert.ok(snapshot.stats()[0].finalsDeferred > 0, 'moments were put off before the limit let them through');
  snapshot.close();
});

test('sync contract under heavy ticks: a background version + the delta feed from its syncToken equals the next still version', async () => {
  const { engine, clock } = fixtureEngine(3, 3 * 3600_000);
  const snapshot = new BoardSnapshot(engine);
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 5000, seed: 21 });
  let tombstones = 0;
  for (let round = 0; round < 6; round++) {
    sim.step(4000);
    if (round % 2 === 1) clock.advance(45 * 60_000);
    snapshot.latest(false); // starts the next version
    for (let turn = 0; turn < 3; turn++) {
      sim.step(500); // heavy ticks while it is built
      await nextTurn();
    }
    const loaded = snapshot.latest(false)!;
    const client = rowsOf(loaded);
    // Walk the delta feed from the version's syncToken while the board keeps moving, then once more when still.
    let since = Number(loaded.syncToken);
    for (const moving of [true, false]) {
      const next = engine.asOf();
      let after: string | null = null;
      for (;;) {
        const page = engine.delta(filterOf(), since, after, 300);
        const rows = JSON.parse(page.count === 0 ? '[]' : `[${engine.odds.render(page, 'all').toString('utf8')}]`) as Record<string, unknown>[];
        for (const row of rows) {
          if (row.removed === true) {
            client.delete(row.id as string);
            tombstones++;
          } else client.set(row.id as string, JSON.stringify(row));
        }
        if (!page.hasMore) break;
        after = page.lastId;
        if (moving) sim.step(200);
      }
      since = next;
    }
    const still = await snapshot.whenCurrent(false);
    assert.equal(still.syncToken, String(engine.asOf()));
    const fresh = rowsOf(still);
    assert.deepEqual([...client.keys()].sort(), [...fresh.keys()].sort(), `round ${round}: same rows`);
    for (const [id, row] of fresh) assert.equal(client.get(id), row, `round ${round}: row ${id}`);
  }
  assert.ok(tombstones > 0);
  snapshot.close();
});

function rowsOf(body: SnapshotBody): Map<string, string> {
  const rows = new Map<string, string>();
  for (const event of parseBody(body).events) {
    for (const { priceHistory, ...row } of event.odds) {
      assert.equal(priceHistory, null);
      rows.set(row.id as string, JSON.stringify(row));
    }
  }
  return rows;
}

/** Moves the same few rows again and again, seconds apart: they turn hot (their pieces shrink). */
function heatUp(engine: OddsEngine, rand: () => number, clockAdvance: (ms: number) => void): void {
  const slots = liveSlots(engine).filter((slot) => engine.store.priceAmerican[slot] !== 0);
  const hot = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => slots[Math.floor(rand() * slots.length)]);
  for (let move = 0; move < 5; move++) {
    clockAdvance(1000 + Math.floor(rand() * 20_000));
    const batch: Change[] = [];
    for (const slot of hot) {
      if (!engine.isLive(slot)) continue;
      const price = engine.store.priceAmerican[slot];
      batch.push({ op: 'price', slot, priceAmerican: price > 0 ? price + 1 + move : price - 1 - move, suspended: false });
    }
    engine.apply(batch);
  }
}

test('property: re-splitting never loses or repeats a row, and the bytes equal a fresh build of the same board', () => {
  const seen = { split: 0, dropped: 0, dissolved: 0 };
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(1024, 4 * 1024, 1 << 20), (seed, pieceBytes) => {
      const { engine, clock } = testBoardEngine(seed % 89, 10, 3_000);
      const snapshot = new BoardSnapshot(engine, { pieceBytes });
      snapshot.current(false);
      snapshot.current(true);
      const rand = mulberry32(seed);
      const removed: ReturnType<typeof inputOf>[] = [];
      const counter = { n: 0, revivals: 0 };
      for (let round = 0; round < 5; round++) {
        const r = rand();
        if (r < 0.4) heatUp(engine, rand, (ms) => clock.advance(ms));
        else if (r < 0.55) clock.advance(2 * 3600_000); // every row cools down relative to nothing: heat is the rows' own
        const batch = randomBatch(engine, rand, removed, 1 + Math.floor(rand() * 30), counter);
        if (rand() < 0.4) {
          const events = engine.eventIdsWithLiveRows();
          const id = events[Math.floor(rand() * events.length)];
          batch.push({ op: 'status', eventId: id, status: rand() < 0.7 ? 'in_progress' : 'final' });
        }
        clock.advance(Math.floor(rand() * 5000));
        engine.apply(batch);
        for (const withHistory of [false, true]) {
          const body = snapshot.current(withHistory);
          const ids = parseBody(body).events.flatMap((event) => event.odds.map((row) => row.id as string));
          assert.equal(new Set(ids).size, ids.length, 'no row twice');
          assert.equal(ids.length, engine.liveRows, 'no row lost');
          const fresh = new BoardSnapshot(engine, { pieceBytes });
          assert.ok(bytesOf(fresh.current(withHistory)).equals(bytesOf(body)), `seed ${seed} round ${round}: the same bytes as a fresh build`);
          fresh.close();
        }
      }
      for (const stats of snapshot.stats()) {
        seen.split += stats.rendered.slicesSplit;
        seen.dropped += stats.rendered.slicesDropped;
        seen.dissolved += stats.rendered.groupsDissolved;
      }
      snapshot.close();
    }),
    // One fixed run with pieces the size of the board (events going live split them) and one with tiny pieces.
    { numRuns: 6, examples: [[7, 1 << 20], [11, 1024]] },
  );
  assert.ok(Object.values(seen).every((n) => n > 0), JSON.stringify(seen));
});

test('while the write path takes batches, background steps are short (1 ms with a batch waiting to apply, 2 ms for a second after); without it they are stepMs', async () => {
  // Two snapshots of one board refresh the same backlog, timed by driven timers (every
  // reading 0.01 ms on): one with no write path, one whose write path had a batch waiting
  // on the first step only. Each turn is one step; what a step renders is bounded by its length.
  const { engine, clock } = fixtureEngine(4, 3 * 3600_000);
  const plain = new BoardSnapshot(engine, { pieceBytes: 2 * 1024, stepMs: 10, maxAgeMs: 2000, timer: drivenTimer(0.01) });
  const writing = new BoardSnapshot(engine, { pieceBytes: 2 * 1024, stepMs: 10, maxAgeMs: 2000, timer: drivenTimer(0.01) });
  plain.current(false);
  writing.current(false);
  let checks = 0;
  writing.urgent = () => checks++ === 0;
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 23 });
  sim.step(20_000);
  const rendered = (snapshot: BoardSnapshot) => snapshot.stats()[0].rendered.piecesRendered;
  const before = [rendered(plain), rendered(writing)];
  for (let turn = 0; turn < 4; turn++) await nextTurn(); // the kick, then three steps each
  const plainPieces = rendered(plain) - before[0];
  const writingPieces = rendered(writing) - before[1];
  assert.ok(writingPieces > 0, 'the refresh goes on while the write path takes batches');
  assert.ok(writingPieces * 2 < plainPieces, `steps of 1 + 2 + 2 ms rendered ${writingPieces} pieces, steps of 10 ms ${plainPieces}`);
  plain.close();
  writing.close();
});
