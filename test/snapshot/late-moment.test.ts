// A version is handed to waiting requests only when it is fresh, and its moment is fixed
// late enough that it is fresh when it comes out (issue 28: at 1,000 updates/s on the
// large board the first version with history, its moment fixed right after its first
// build with most of the body still to compress, came out 40 s stale and still went to
// the request waiting for it). The engine tests drive the snapshot's timer by hand; the
// board moves through the simulator. A version that "came out stale" is made by the
// refresh hook, which runs as the version is published: the board moves there and the
// timer passes the bound, as when its compression took longer than the bound while ticks came.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoardSnapshot } from '../../engine/snapshot/boardSnapshot.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { fixtureEngine, rawBody, referenceText } from '../helpers/snapshot-helpers.ts';

const MAX_AGE_MS = 2000;

test('a request waiting on the first build with history lets a version that came out stale pass, and gets the next (controlled timer)', async () => {
  const { engine, clock } = fixtureEngine(6);
  let now = 0;
  const snapshot = new BoardSnapshot(engine, { clock, timer: () => now, maxAgeMs: MAX_AGE_MS, historyIdleMs: Infinity });
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 11 });
  let published = 0;
  snapshot.onRefresh = (withHistory) => {
    if (!withHistory) return;
    published++;
    if (published > 1) return;
    sim.step(100); // after its moment
    now += 2.5 * MAX_AGE_MS;
  };
  const body = await snapshot.whenCurrent(true);
  assert.ok(published >= 2, `answered by version ${published}`);
  assert.equal(body.seq, engine.seq, 'the board as it is, not the version missing the changes after its moment');
  assert.equal(snapshot.ageMs(true), 0);
  assert.equal(rawBody(body).toString('utf8'), referenceText(engine, true));
  snapshot.close();
});

test('a poll waiting for a fresh version lets a version that came out stale pass; when every version comes out stale it takes the second (controlled timer)', async () => {
  const { engine, clock } = fixtureEngine(7);
  let now = 0;
  const snapshot = new BoardSnapshot(engine, { clock, timer: () => now, maxAgeMs: MAX_AGE_MS, historyIdleMs: Infinity });
  snapshot.current(false);
  await snapshot.whenCurrent(true);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 12 });

  // The board moves and the newest version falls past the bound before its refresh has run.
  sim.step(100);
  now += 1.25 * MAX_AGE_MS;
  let published = 0;
  snapshot.onRefresh = (withHistory) => {
    if (!withHistory) return;
    published++;
    if (published > 1) return;
    sim.step(100);
    now += 2.5 * MAX_AGE_MS;
  };
  const waited = snapshot.fresh(true);
  assert.ok(waited instanceof Promise, 'missing changes older than the bound: the poll waits');
  const body = await waited;
  assert.ok(published >= 2, `answered by version ${published}`);
  assert.equal(body.seq, engine.seq);
  assert.equal(snapshot.ageMs(true), 0);
  assert.equal(rawBody(body).toString('utf8'), referenceText(engine, true));

  // A machine that cannot keep up: every version comes out stale. Waiting longer would
  // not help, so the poll lets one pass and takes the next.
  sim.step(100);
  now += 1.25 * MAX_AGE_MS;
  let stale = 0;
  snapshot.onRefresh = (withHistory) => {
    if (!withHistory) return;
    stale++;
    sim.step(100);
    now += 2.5 * MAX_AGE_MS;
  };
  const capped = snapshot.fresh(true);
  assert.ok(capped instanceof Promise);
  const taken = await capped;
  snapshot.onRefresh = null;
  assert.equal(stale, 2, 'answered by the second version published while it waited');
  assert.ok(taken.seq < engine.seq, 'that version too came out stale');
  snapshot.close();
});

test("a version's moment is fixed only once the compression threads are done with the variant's earlier pieces (momentPendingBytes)", async () => {
  const { engine, clock } = fixtureEngine(8, 3 * 3600_000);
  // compressionHoldMs: a loaded machine may take longer than the default's 2 s
  const snapshot = new BoardSnapshot(engine, { clock, pieceBytes: 4 * 1024, momentPendingBytes: 0, compressionHoldMs: Infinity });
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed: 9 });
  for (let round = 0; round < 6; round++) {
    sim.step(4000); // a backlog the steps render over several turns
    const asOf = String(engine.asOf());
    const expected = referenceText(engine, false);
    const body = await snapshot.whenCurrent(false);
    assert.equal(snapshot.stats()[0].pendingAtMoment, 0, `round ${round}: nothing out for compression at the moment`);
    assert.equal(body.syncToken, asOf);
    assert.equal(body.seq, engine.seq);
    assert.equal(rawBody(body).toString('utf8'), expected, `round ${round}: the board at the version's moment`);
  }
  // Steps leave pieces with the threads; the final check comes a turn later, before most are back.
  assert.ok(snapshot.stats()[0].momentsHeld > 0, 'some moment waited for the threads');
  snapshot.close();
});

test('the first build with renderAheadBytes far below the body still completes, and equals the board (the steps wait for the threads, never for ever)', async () => {
  const { engine, clock } = fixtureEngine(9);
  const snapshot = new BoardSnapshot(engine, { clock, pieceBytes: 4 * 1024, renderAheadBytes: 0, momentPendingBytes: 0 });
  snapshot.current(false);
  const body = await snapshot.whenCurrent(true);
  assert.equal(body.seq, engine.seq);
  assert.equal(rawBody(body).toString('utf8'), referenceText(engine, true));
  snapshot.close();
});
