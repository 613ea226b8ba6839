// The client's two live copies of the board against the real app: client.sync() (the
// delta feed, polled) loads the snapshot again by itself when the feed answers with the
// re-bootstrap note and says so (onRebootstrap, WalkResult, follow()'s onWalk), and
// client.streamSync() (the push stream) resumes after a dropped connection and takes a
// fresh image, saying so, when its clk cannot be resumed. Property: after any sequence of
// price moves, removals, retention-long clock jumps and dropped connections, both copies
// hold exactly the rows /odds serves.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { OddsClient, asksRebootstrap, type OddsRow } from '../../client/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { liveSlots } from '../helpers/engine-helpers.ts';
import { oddsRows } from '../stream/streamClient.ts';

const RETENTION_MS = 10 * 60_000;

/** Rows by id as JSON text, for comparing a copy with /odds. */
function asText(rows: Iterable<{ id: string }>): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of rows) {
    const row = item;
    out.set(row.id, JSON.stringify(row));
  }
  return out;
}

async function assertEqualsOdds(t: TestApp, copy: Map<string, OddsRow>, who: string): Promise<void> {
  const served = asText(await oddsRows(t.port, ''));
  const held = asText(copy.values());
  assert.deepEqual([...served.keys()].filter((id) => !held.has(id)).slice(0, 5), [], `${who}: rows missing from the copy`);
  assert.deepEqual([...held.keys()].filter((id) => !served.has(id)).slice(0, 5), [], `${who}: rows the service removed`);
  for (const [id, row] of served) assert.equal(held.get(id), row, `${who}: ${id}`);
}

/** Removes `count` live rows and recycles their tombstones: a since from before this is past the delta feed's horizon. */
function removeAndForget(t: TestApp, count: number, seed: number): void {
  const live = liveSlots(t.app.engine);
  const ids = Array.from({ length: count }, (_, i) => t.app.engine.idOf(live[(seed * 7919 + i * 104729) % live.length]!));
  t.app.engine.apply([...new Set(ids)].map((id) => ({ op: 'remove' as const, id })));
  t.clock.advance(RETENTION_MS + 60_000);
  t.app.simulator.step(20); // an apply recycles the tombstones past retention
}

describe('client.sync() across a forced re-bootstrap', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 4 });
  });
  after(() => t.close());

  it('walk() loads the snapshot again on the note, says so, and ends equal to /odds', async () => {
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const notes: string[] = [];
    const board = await client.sync({ pageSize: 500, onRebootstrap: (note) => notes.push(note) });
    t.app.simulator.step(200);
    removeAndForget(t, 40, 1);
    t.app.simulator.step(200);
    const result = await board.walk();
    assert.ok(asksRebootstrap(result.note), `the feed's note: ${result.note}`);
    assert.equal(result.rebootstrapped, true);
    assert.equal(notes.length, 1);
    assert.equal(board.totals.rebootstraps, 1);
    await assertEqualsOdds(t, board.rows, 'sync()');
    // the next walk is an ordinary one again
    t.app.simulator.step(50);
    const next = await board.walk();
    assert.equal(next.note, null);
    assert.equal(next.rebootstrapped, false);
    await assertEqualsOdds(t, board.rows, 'sync() after');
  });

  it('follow() passes each walk (and its note) to onWalk and re-bootstraps by itself', async () => {
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const walks: { note: string | null; rebootstrapped: boolean }[] = [];
    const board = await client.sync({ intervalMs: 20, onWalk: (walk) => walks.push({ note: walk.note, rebootstrapped: walk.rebootstrapped }) });
    board.follow();
    try {
      assert.ok(await eventually(() => walks.length > 0, 10_000));
      removeAndForget(t, 30, 2);
      assert.ok(await eventually(() => walks.some((walk) => walk.rebootstrapped), 10_000), `walks: ${JSON.stringify(walks.slice(-3))}`);
      assert.ok(walks.some((walk) => asksRebootstrap(walk.note)));
    } finally {
      await board.stop();
    }
    await board.walk();
    await assertEqualsOdds(t, board.rows, 'follow()');
  });

  it('with rebootstrap: false the note is reported and the copy left as it is', async () => {
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const board = await client.sync({ rebootstrap: false });
    removeAndForget(t, 10, 3);
    const result = await board.walk();
    assert.ok(asksRebootstrap(result.note));
    assert.equal(result.rebootstrapped, false);
    assert.equal(board.totals.rebootstraps, 0);
  });
});

describe('client.streamSync()', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 5 });
  });
  after(() => t.close());

  it('resumes after a dropped connection with deltas only; a clk past retention gets a fresh image, reported by onResync', async () => {
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const resyncs: string[] = [];
    let resumes = 0;
    const live = await client.streamSync({ reconnectMs: 20, onResync: (why) => resyncs.push(why), onResume: () => resumes++ });
    try {
      await assertEqualsOdds(t, live.rows, 'image');
      t.app.simulator.step(100);
      await live.settle();
      await assertEqualsOdds(t, live.rows, 'deltas');
      // dropped while the board moves: the reconnect resumes from the clk held
      live.dropConnection();
      t.app.simulator.step(100);
      assert.ok(await eventually(() => live.totals.reconnects === 1 && live.totals.deltas > 0 && resumes === 1, 10_000), JSON.stringify(live.totals));
      await live.settle();
      assert.equal(live.totals.images, 1, 'resumed: no second image');
      await assertEqualsOdds(t, live.rows, 'resumed');
      // dropped while rows are removed and their tombstones recycled: a fresh image, said so
      const images = live.totals.images;
      live.dropConnection();
      removeAndForget(t, 25, 4);
      assert.ok(await eventually(() => live.totals.images === images + 1, 10_000), JSON.stringify(live.totals));
      await live.settle();
      assert.equal(resyncs.length, 1);
      await assertEqualsOdds(t, live.rows, 'after the resync');
    } finally {
      live.close();
    }
  });

  it('property: after any moves, removals, retention-long jumps and drops, sync() and streamSync() both hold what /odds holds', async () => {
    const client = new OddsClient({ baseUrl: `http://127.0.0.1:${t.port}` });
    const step = fc.oneof(
      fc.record({ kind: fc.constant('ticks' as const), n: fc.integer({ min: 1, max: 150 }) }),
      fc.record({ kind: fc.constant('remove' as const), n: fc.integer({ min: 1, max: 20 }) }),
      fc.record({ kind: fc.constant('forget' as const), n: fc.integer({ min: 1, max: 20 }) }),
      fc.record({ kind: fc.constant('drop' as const) }),
      fc.record({ kind: fc.constant('walk' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 1000 }), async (steps, seed) => {
        const board = await client.sync({ pageSize: 1000 });
        const live = await client.streamSync({ reconnectMs: 10 });
        try {
          for (const [i, s] of steps.entries()) {
            if (s.kind === 'ticks') t.app.simulator.step(s.n);
            else if (s.kind === 'remove') {
              const slots = liveSlots(t.app.engine);
              t.app.engine.apply([...new Set(Array.from({ length: s.n }, (_, j) => t.app.engine.idOf(slots[(seed + i * 31 + j * 97) % slots.length]!)))].map((id) => ({ op: 'remove' as const, id })));
            } else if (s.kind === 'forget') removeAndForget(t, s.n, seed + i);
            else if (s.kind === 'drop') live.dropConnection();
            else await board.walk();
            await new Promise((resolve) => setImmediate(resolve));
          }
          await board.walk();
          await eventually(() => live.totals.images > 0 && live.clk !== null, 10_000);
          await live.settle();
          await assertEqualsOdds(t, board.rows, 'sync()');
          await assertEqualsOdds(t, live.rows, 'streamSync()');
        } finally {
          live.close();
          await board.stop();
        }
      }),
      { numRuns: 8, seed: 2828 },
    );
  });
});
