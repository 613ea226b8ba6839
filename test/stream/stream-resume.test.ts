// Resume: random disconnects never lose or repeat a change (every delta's prev is the
// clk the client held, and the rows end equal to /odds); a clk older than what the
// service holds, or one it never issued, gets a status resync and a fresh image; and
// a clk survives a restart of a service that restores its board from DATA_DIR.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { decodeEngineState, encodeEngineState } from '../../engine/checkpoint.ts';
import { ManualClock } from '../../engine/clock.ts';
import { startApp } from '../../service/app.ts';
import { NOW, startTestApp, testBoard, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { openBoard, tempDataDir } from '../ingest/ingest-helpers.ts';
import { StreamTestClient, byId, oddsQuery, oddsRows, type Row } from './streamClient.ts';

describe('stream resume', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ size: 'small', simulatorSeed: 11 });
  });
  after(async () => {
    await t.close();
  });

  it('property: random disconnects and resumes never lose or repeat a change', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ league: fc.subarray(['nba', 'nfl', 'nhl', 'mlb', 'epl'], { minLength: 1 }) }, { requiredKeys: [] }),
        fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 2, maxLength: 6 }),
        fc.boolean(),
        async (filter, outages, conflate) => {
          const fields = { filter, conflateMs: conflate ? 100 : 0 };
          let client = await StreamTestClient.open(t.port);
          client.subscribe('r', fields);
          await eventually(() => client.state('r').images === 1, 20_000);
          const held: { rows: Map<string, Row>; clk: string | null } = { rows: client.state('r').rows, clk: client.state('r').clk };
          let deltas = 0;
          for (const ticksWhileAway of outages) {
            t.app.simulator.step(30);
            // Cut the connection at a random moment; changes go on while the client is away.
            await client.sync();
            client.close();
            for (let i = 0; i < ticksWhileAway; i++) t.app.simulator.step(30);
            const state = client.state('r');
            assert.deepEqual(state.breaks, []);
            held.rows = state.rows;
            held.clk = state.clk;
            deltas += state.deltas;
            client = await StreamTestClient.open(t.port);
            client.subscribe('r', { ...fields, clk: held.clk });
            const resumed = client.state('r');
            resumed.rows = held.rows;
            resumed.clk = held.clk;
            // Nothing to catch up: no message at all; otherwise deltas chained from the held clk.
            await client.sync();
            assert.equal(resumed.images, 0, 'a resume within the window gets no image');
          }
          t.app.simulator.step(30);
          assert.ok(await eventually(() => t.app.stream.stats().conflating === 0, 10_000));
          await client.sync();
          const state = client.state('r');
          assert.deepEqual(state.breaks, []);
          assert.equal(state.resyncs, 0);
          deltas += state.deltas;
          assert.ok(deltas > 0);
          assert.deepEqual(byId(state.rows.values()), byId(await oddsRows(t.port, oddsQuery(filter))));
          client.close();
        },
      ),
      { numRuns: 8, seed: 77 },
    );
  });

  it('a clk this board never issued, or one older than the tombstones still held, gets status resync and a fresh image', async () => {
    const client = await StreamTestClient.open(t.port);
    try {
      client.subscribe('a', { filter: { league: ['nba'] } });
      await eventually(() => client.state('a').images === 1, 20_000);
      const clk = client.state('a').clk!;
      const forged = clk.replace(/\.[0-9a-f]+$/, '.000000000000');
      const other = `ffffffffff${clk.slice(10)}`;
      for (const [i, token] of [forged, other, 'garbage'].entries()) {
        const id = `bad${i}`;
        client.subscribe(id, { filter: { league: ['nba'] }, clk: token });
        await eventually(() => client.state(id).images === 1, 20_000);
        assert.equal(client.state(id).resyncs, 1);
        assert.ok(client.messages.some((m) => m.op === 'status' && m.id === id && m.code === 'resync'));
      }
      // Too old: a row removed after the clk, then recycled once its retention passed.
      const slot = t.app.engine.slotOf(client.state('a').rows.keys().next().value!);
      t.app.engine.apply([{ op: 'remove', id: t.app.engine.idOf(slot) }]);
      t.clock.advance(11 * 60 * 1000);
      t.app.simulator.step(5); // an apply recycles the tombstones past retention
      assert.ok(t.app.engine.tombstoneHorizon() > 0);
      client.subscribe('old', { filter: { league: ['nba'] }, clk });
      await eventually(() => client.state('old').images === 1, 20_000);
      assert.equal(client.state('old').resyncs, 1);
      const image = client.messages.filter((m) => m.id === 'old' && m.op === 'image');
      assert.ok(image.every((m) => m.resync === true));
      await client.sync();
      assert.deepEqual(byId(client.state('old').rows.values()), byId(await oddsRows(t.port, 'league=nba')));
    } finally {
      client.close();
    }
  });
});

describe('stream resume across a restart', () => {
  it('a clk issued before a restart resumes on the board restored from DATA_DIR, with only the changes after it', async () => {
    const dir = tempDataDir('stream-restart-');
    const clock = new ManualClock(NOW);
    const board = testBoard('small');
    try {
      let opened = await openBoard(dir, clock, board);
      let app = await startApp({ clock, board, engine: opened.durable.engine, dbPath: join(dir, 'odds.db'), port: 0, env: {}, log: () => {} });
      const filter = { league: ['nba'] };
      let client = await StreamTestClient.open(app.port);
      client.subscribe('s', { filter });
      await eventually(() => client.state('s').images === 1, 20_000);
      const ids = [...client.state('s').rows.keys()].slice(0, 3);
      clock.advance(1000);
      await opened.durable.ingest.submit([{ op: 'price', id: ids[0], priceAmerican: 333 }]);
      await client.sync();
      assert.equal(client.state('s').deltas, 1);
      const held = client.state('s');
      client.close();
      // Changes the client does not see: one before a checkpoint, one only in the log.
      clock.advance(1000);
      await opened.durable.ingest.submit([{ op: 'price', id: ids[1], priceAmerican: 444 }]);
      await opened.durable.checkpointNow();
      clock.advance(1000);
      await opened.durable.ingest.submit([{ op: 'remove', id: ids[2] }]);
      await app.close();
      await opened.close();

      opened = await openBoard(dir, clock, board);
      assert.equal(opened.durable.fresh, false);
      app = await startApp({ clock, board, engine: opened.durable.engine, dbPath: join(dir, 'odds.db'), port: 0, env: {}, log: () => {} });
      try {
        client = await StreamTestClient.open(app.port);
        client.subscribe('s', { filter, clk: held.clk });
        const resumed = client.state('s');
        resumed.rows = held.rows;
        resumed.clk = held.clk;
        await client.next((m) => m.op === 'delta');
        await client.sync();
        assert.equal(resumed.images, 0, 'no image: resumed');
        assert.deepEqual(resumed.breaks, []);
        const delta = client.messages.filter((m) => m.op === 'delta');
        assert.deepEqual(delta.flatMap((m) => m.rows.map((row: Row) => row.id)), [ids[1], ids[2]], 'exactly the two changes after the clk, in change order');
        assert.equal(delta.flatMap((m) => m.rows).find((row: Row) => row.id === ids[2]).removed, true);
        assert.deepEqual(byId(resumed.rows.values()), byId(await oddsRows(app.port, 'league=nba')));
        client.close();
      } finally {
        await app.close();
        await opened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a clk from a board generated afresh (not restored) is refused with a resync after a restart', async () => {
    const first = await startTestApp({ size: 'small' });
    let clk: string;
    try {
      const client = await StreamTestClient.open(first.port);
      client.subscribe('s', {});
      await eventually(() => client.state('s').images === 1, 20_000);
      clk = client.state('s').clk!;
      client.close();
    } finally {
      await first.close();
    }
    const second = await startTestApp({ size: 'small' });
    try {
      const client = await StreamTestClient.open(second.port);
      client.subscribe('s', { clk });
      await eventually(() => client.state('s').images === 1, 20_000);
      assert.equal(client.state('s').resyncs, 1);
      client.close();
    } finally {
      await second.close();
    }
  });
});

describe('stream resume from a clk ahead of the board (a replica behind the node that issued it)', () => {
  /** Two apps on one history: B's engine is a checkpoint copy of A's (what a replica restores from), so both read each other's clk. */
  async function twoNodes(env: NodeJS.ProcessEnv) {
    const a = await startTestApp({ size: 'small', env });
    const b = await startApp({
      clock: a.clock,
      board: testBoard('small'),
      engine: decodeEngineState(encodeEngineState(a.app.engine), a.clock),
      dbPath: join(tempDataDir('ahead-'), 'odds.db'),
      port: 0,
      env,
      log: () => {},
    });
    assert.equal(b.engine.historyId, a.app.engine.historyId);
    return { a, b, async close() { await b.close(); await a.close(); } };
  }

  it('waits for the board to reach the clk, then resumes with the changes after it', async () => {
    const nodes = await twoNodes({});
    try {
      const onA = await StreamTestClient.open(nodes.a.port);
      onA.subscribe('s', { filter: { league: ['nba'] } });
      await eventually(() => onA.state('s').images === 1, 20_000);
      const ids = [...onA.state('s').rows.keys()].slice(0, 3);
      const first = [{ op: 'price' as const, slot: nodes.a.app.engine.slotOf(ids[0]!), priceAmerican: 777, suspended: false }];
      nodes.a.app.engine.apply(first);
      await onA.next((m) => m.op === 'delta');
      const held = onA.state('s');
      onA.close();

      const onB = await StreamTestClient.open(nodes.b.port);
      onB.subscribe('s', { filter: { league: ['nba'] }, clk: held.clk });
      const state = onB.state('s');
      state.rows = held.rows;
      state.clk = held.clk;
      await onB.sync();
      assert.deepEqual(onB.messages.filter((m) => m.op !== 'heartbeat'), [], 'nothing yet: B has not reached the clk');
      // B catches up (the same batch, as a replica applies the writer's record), then moves on
      nodes.b.engine.apply(first);
      nodes.b.engine.apply([{ op: 'remove', id: ids[1]! }]);
      const delta = await onB.next((m) => m.op === 'delta');
      await onB.sync();
      assert.equal(delta.prev, held.clk);
      assert.deepEqual(delta.rows.map((row: Row) => row.id), [ids[1]]);
      assert.equal(state.images, 0);
      assert.deepEqual(state.breaks, []);
      assert.deepEqual(byId(state.rows.values()), byId(await oddsRows(nodes.b.port, 'league=nba')));
      onB.close();
    } finally {
      await nodes.close();
    }
  });

  it('a clk the board does not reach within STREAM_RESUME_WAIT_MS gets a resync and a fresh image', async () => {
    const nodes = await twoNodes({ STREAM_RESUME_WAIT_MS: '300' });
    try {
      nodes.a.app.simulator.step(10);
      const clk = nodes.a.app.stream.currentClk();
      const onB = await StreamTestClient.open(nodes.b.port);
      onB.subscribe('s', { filter: { league: ['nba'] }, clk });
      await eventually(() => onB.state('s').images === 1, 10_000);
      assert.equal(onB.state('s').resyncs, 1);
      assert.match(onB.messages.find((m) => m.op === 'status')!.detail, /ahead of this service's board/);
      onB.close();
    } finally {
      await nodes.close();
    }
  });
});
