// Snapshot freshness is bounded whatever the poll pattern (maxAgeMs, SNAPSHOT_MAX_AGE_MS):
// every kept variant (with history: while kept) is refreshed whenever the board moves,
// polled or not; a poll whose newest version misses changes older than the bound waits
// for the next version instead of being answered with the old one; and no answer carries a syncToken the delta feed would answer with the
// re-bootstrap note. The engine tests drive the snapshot's timer and the board's clock by
// hand; the HTTP test talks to the real server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoardSnapshot, type SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { fixtureEngine, rawBody, referenceText } from '../helpers/snapshot-helpers.ts';
import { startTestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { liveSlots } from '../helpers/engine-helpers.ts';
import { gunzipSync } from 'node:zlib';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('the variant without history refreshes as the board moves though nobody polls it', async () => {
  const { engine, clock } = fixtureEngine(3);
  const snapshot = new BoardSnapshot(engine, { clock, maxAgeMs: 2000 });
  snapshot.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 5 });
  for (let round = 0; round < 3; round++) {
    clock.advance(60_000); // far past watchMs: it would not count as polled
    sim.step(200);
    assert.ok(await eventually(() => snapshot.ageMs(false) === 0 && !snapshot.isRefreshing(false), 10_000), `round ${round}: refreshed without a poll`);
  }
  const body = snapshot.latest(false)!;
  assert.equal(body.seq, engine.seq);
  assert.equal(rawBody(body).toString('utf8'), referenceText(engine, false));
  snapshot.close();
});

test('the variant with history refreshes unpolled while kept; a poll whose newest version misses changes older than the bound waits for the next (controlled clock and timer)', async () => {
  const { engine, clock } = fixtureEngine(4);
  let now = 0;
  const snapshot = new BoardSnapshot(engine, { clock, timer: () => now, maxAgeMs: 2000, historyIdleMs: Infinity });
  snapshot.current(false);
  const first = await snapshot.whenCurrent(true);
  assert.equal(snapshot.fresh(true), first, 'fresh: answered at once');
  // nobody polls the history variant for longer than watchMs: it is kept, so it still refreshes as the board moves
  clock.advance(31_000);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 6 });
  sim.step(300);
  assert.ok(await eventually(() => snapshot.ageMs(true) === 0 && !snapshot.isRefreshing(true), 10_000), 'refreshed without a poll');
  const refreshed = snapshot.latest(true)!;
  assert.equal(refreshed.seq, engine.seq);
  assert.equal(rawBody(refreshed).toString('utf8'), referenceText(engine, true));
  // changes its refresh has not reached yet (no turn of the event loop since): within the bound, the newest version is still an answer
  sim.step(300);
  now += 1500;
  const within = snapshot.fresh(true);
  assert.ok(within !== null && !(within instanceof Promise), 'missing changes only 1.5 s old: answered at once');
  assert.equal((within as SnapshotBody).seq, refreshed.seq);
  // past it, the poll waits for the next version, which shows the board as it is
  now += 1000;
  const waited = snapshot.fresh(true);
  assert.ok(waited instanceof Promise, 'missing changes 2.5 s old: the poll waits');
  const body = await waited;
  assert.equal(body.seq, engine.seq);
  assert.equal(rawBody(body).toString('utf8'), referenceText(engine, true));
  assert.equal(snapshot.ageMs(true), 0);
  snapshot.close();
});

test('without a freshness bound an unpolled variant stops refreshing after watchMs (what a bench of the refresh alone runs)', async () => {
  const { engine, clock } = fixtureEngine(4);
  const snapshot = new BoardSnapshot(engine, { clock, historyIdleMs: Infinity });
  snapshot.current(false);
  const first = await snapshot.whenCurrent(true);
  clock.advance(31_000);
  new Simulator(engine, clock, { ratePerSecond: 1000, seed: 6 }).step(300);
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.equal(snapshot.isRefreshing(true), false, 'not refreshing');
  assert.equal(snapshot.isRefreshing(false), false, 'not refreshing');
  assert.ok(engine.seq > first.seq);
  snapshot.close();
});

test('a version whose syncToken the delta feed no longer answers completely is never served', async () => {
  const { engine, clock } = fixtureEngine(5);
  let now = 0;
  const snapshot = new BoardSnapshot(engine, { clock, timer: () => now, maxAgeMs: 2000, historyIdleMs: Infinity });
  snapshot.current(false);
  await snapshot.whenCurrent(true);
  clock.advance(31_000);
  // a removal, then a batch past its retention recycles it: the horizon passes the version's syncToken
  engine.apply([{ op: 'remove', id: engine.idOf(liveSlots(engine)[0]!) }]);
  clock.advance(11 * 60_000);
  new Simulator(engine, clock, { ratePerSecond: 1000, seed: 7 }).step(50);
  assert.ok(engine.deltaHorizon() > Number(snapshot.latest(true)!.syncToken), 'the setup: the version fell behind the horizon');
  const served = snapshot.fresh(true);
  const body = served instanceof Promise ? await served : served!;
  assert.ok(Number(body.syncToken) >= engine.deltaHorizon(), `syncToken ${body.syncToken} before the delta horizon ${engine.deltaHorizon()}`);
  assert.equal(body.seq, engine.seq);
  snapshot.close();
});

test('HTTP: after an idle spell of 11 minutes both variants answer the board as it is, with a syncToken /odds/updated accepts', async () => {
  const t = await startTestApp({ size: 'small', simulatorSeed: 9 });
  try {
    const get = async (path: string) => {
      const reply = await t.request(path, { headers: { 'Accept-Encoding': 'gzip' } });
      assert.equal(reply.status, 200);
      return { seq: Number(reply.headers['x-board-seq']), doc: JSON.parse(gunzipSync(reply.body).toString('utf8')) as { syncToken: string; count: number } };
    };
    await get('/api/v1/snapshot');
    await get('/api/v1/snapshot?include_history=true');
    // nobody polls for 11 minutes while the board moves (rows removed, their tombstones recycled)
    for (let minute = 0; minute < 11; minute++) {
      t.clock.advance(60_000);
      t.app.simulator.step(40);
      t.app.engine.apply([{ op: 'remove', id: t.app.engine.idOf(liveSlots(t.app.engine)[0]!) }]);
    }
    assert.ok(t.app.engine.tombstoneHorizon() > 0, 'tombstones were recycled');
    for (const path of ['/api/v1/snapshot', '/api/v1/snapshot?include_history=true']) {
      const { seq, doc } = await get(path);
      assert.equal(seq, t.app.engine.seq, `${path}: the board as it is`);
      const updated = await t.request(`/api/v1/odds/updated?since=${doc.syncToken}&limit=1000`);
      const meta = (JSON.parse(updated.body.toString()) as { meta: { note?: string } }).meta;
      assert.equal(meta.note, undefined, `${path}: /odds/updated?since=syncToken answered the re-bootstrap note`);
      assert.equal(doc.count, t.app.engine.liveRows);
    }
  } finally {
    await t.close();
  }
});

test('a version is not fixed while the write path has a logged batch to apply (urgent), and is once it applied, or after at most 50 ms of waiting', async () => {
  const { engine, clock } = fixtureEngine(3);
  let now = 0;
  const snapshot = new BoardSnapshot(engine, { clock, timer: () => now, maxAgeMs: 2000 });
  const first = snapshot.current(false);
  let urgent = true;
  snapshot.urgent = () => urgent;
  // the same refreshes without a write path: how long a version takes here
  const control = new BoardSnapshot(engine, { clock, timer: () => now, maxAgeMs: 2000 });
  control.current(false);
  const sim = new Simulator(engine, clock, { ratePerSecond: 1000, seed: 8 });
  for (const wait of ['applied', 'bounded'] as const) {
    const before = snapshot.stats()[0].refreshes;
    const controlBefore = control.stats()[0].refreshes;
    urgent = true;
    sim.step(300);
    // its final render would hold the event loop in one go: it waits (the timer stands still)
    assert.ok(await eventually(() => control.stats()[0].refreshes > controlBefore && !control.isRefreshing(false), 10_000), `${wait}: the control's version is out`);
    assert.ok(await eventually(() => !snapshot.isBehind(false, 0), 10_000), `${wait}: every change rendered`);
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(snapshot.stats()[0].refreshes, before, `${wait}: no version while a batch waits to apply`);
    assert.equal(snapshot.isRefreshing(false), true);
    if (wait === 'applied') urgent = false;
    else now += 50; // URGENT_PUT_OFF_MS
    assert.ok(await eventually(() => snapshot.stats()[0].refreshes > before && !snapshot.isRefreshing(false), 10_000), `${wait}: the version is out`);
    const body = snapshot.latest(false)!;
    assert.notEqual(body, first);
    assert.equal(body.seq, engine.seq);
    assert.equal(rawBody(body).toString('utf8'), referenceText(engine, false));
  }
  control.close();
  snapshot.close();
});
