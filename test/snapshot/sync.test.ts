// The sync contract with the simulator applying updates: a client that
// loads the snapshot, then pages through the delta feed from syncToken (and then from
// each walk's as-of time), upserting rows by id and deleting tombstones, holds exactly
// the rows of a fresh snapshot, round after round, even when the board moves while it
// walks. Checked on the engine (many rounds, property) and over HTTP (/snapshot and
// /odds/updated on the real app).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ManualClock } from '../../engine/clock.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import { BoardSnapshot, type SnapshotBody } from '../../engine/snapshot/boardSnapshot.ts';
import { Simulator } from '../../fixtures/simulator.ts';
import { startApp } from '../../service/app.ts';
import { httpRequest, loadValidator } from '../helpers/server.ts';
import { filterOf } from '../helpers/engine-helpers.ts';
import { NOW, fixtureEngine, parseBody, type SnapshotDoc } from '../helpers/snapshot-helpers.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

type Rows = Map<string, string>;

function rowsOfDoc(doc: SnapshotDoc): Rows {
  const rows: Rows = new Map();
  for (const event of doc.events) {
    for (const { priceHistory, ...row } of event.odds) {
      assert.ok(priceHistory === null || Array.isArray(priceHistory));
      rows.set(row.id as string, JSON.stringify(row));
    }
  }
  return rows;
}

function rowsOf(body: SnapshotBody): Rows {
  return rowsOfDoc(parseBody(body));
}

/** Upserts by id; a tombstone deletes. */
function applyDelta(client: Rows, rows: Record<string, unknown>[]): number {
  let tombstones = 0;
  for (const row of rows) {
    if (row.removed === true) {
      client.delete(row.id as string);
      tombstones++;
    } else {
      client.set(row.id as string, JSON.stringify(row));
    }
  }
  return tombstones;
}

function assertSameRows(client: Rows, fresh: Rows, label: string): void {
  const missing = [...fresh.keys()].filter((id) => !client.has(id));
  const extra = [...client.keys()].filter((id) => !fresh.has(id));
  assert.deepEqual({ missing: missing.slice(0, 5), extra: extra.slice(0, 5) }, { missing: [], extra: [] }, label);
  for (const [id, row] of fresh) if (client.get(id) !== row) assert.equal(client.get(id), row, `${label}: row ${id}`);
}

/** One walk of the delta feed on the engine; returns the next since (the as-of time at its first page). */
function walkEngine(engine: OddsEngine, client: Rows, since: number, limit: number, between: () => void): { next: number; tombstones: number } {
  const next = engine.asOf();
  let after: string | null = null;
  let tombstones = 0;
  for (let guard = 0; guard < 100_000; guard++) {
    const page = engine.delta(filterOf(), since, after, limit);
    const text = page.count === 0 ? '[]' : `[${engine.odds.render(page, 'all').toString('utf8')}]`;
    tombstones += applyDelta(client, JSON.parse(text) as Record<string, unknown>[]);
    if (!page.hasMore) return { next, tombstones };
    after = page.lastId;
    between();
  }
  throw new Error('walk did not end');
}

test('property (engine): snapshot + delta walks upserted by id equal a fresh snapshot, round after round', () => {
  let tombstonesSeen = 0;
  let statusChanges = 0;
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 50, max: 2000 }), fc.integer({ min: 20, max: 400 }), (seed, perRound, limit) => {
      const { engine, clock } = fixtureEngine(1 + (seed % 3), 3 * 3600_000);
      const sim = new Simulator(engine, clock, { ratePerSecond: 2000, seed });
      const sameMillisecond = new Simulator(engine, clock, { ratePerSecond: 0, seed: seed + 1 }); // does not move the clock
      const snapshot = new BoardSnapshot(engine);
      sim.step(perRound); // asOf is now the clock's time
      const body = snapshot.current(false);
      const client = rowsOf(body);
      let since = Number(body.syncToken);
      assert.equal(since, clock.now());
      for (let round = 0; round < 6; round++) {
        if (round === 0) sameMillisecond.step(perRound); // changes in the very millisecond of syncToken
        else sim.step(perRound);
        if (round % 2 === 1) clock.advance(45 * 60_000); // games start and finish (their rows turn into tombstones)
        // A walk while the board keeps moving, then a quiet one: after it the client is current.
        const moving = walkEngine(engine, client, since, limit, () => sim.step(Math.ceil(perRound / 10)));
        const quiet = walkEngine(engine, client, moving.next, limit, () => {});
        since = quiet.next;
        tombstonesSeen += moving.tombstones + quiet.tombstones;
        assertSameRows(client, rowsOf(snapshot.current(false)), `seed ${seed} round ${round}`);
        if (round === 2) {
          const fresh = new BoardSnapshot(engine);
          assertSameRows(client, rowsOf(fresh.current(false)), `seed ${seed} round ${round}, fresh snapshot`);
          fresh.close();
        }
      }
      statusChanges += sim.stats.statusChanges;
      snapshot.close();
    }),
    { numRuns: 8 },
  );
  assert.ok(tombstonesSeen > 0 && statusChanges > 0, `tombstones ${tombstonesSeen}, status changes ${statusChanges}`);
});

test('HTTP: /snapshot then /odds/updated from syncToken and then meta.updated stays equal to /snapshot', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-sync-'));
  const clock = new ManualClock(NOW);
  const app = await startApp({ clock, board: { seed: 1, size: 'small', now: NOW }, dbPath: join(dir, 'odds.db'), port: 0, log: () => {} });
  try {
    const api = await loadValidator(app.port);
    const get = async (path: string) => {
      const reply = await httpRequest(app.port, path);
      assert.equal(reply.status, 200, `${path}: ${reply.body.toString('utf8').slice(0, 300)}`);
      return api.check(path.startsWith('/api/v1/snapshot') ? '/api/v1/snapshot' : '/api/v1/odds/updated', reply) as Record<string, any>;
    };
    const first = (await get('/api/v1/snapshot')) as SnapshotDoc;
    const client = rowsOfDoc(first);
    let since = first.syncToken;
    let tombstones = 0;
    const sim = new Simulator(app.engine, clock, { ratePerSecond: 2000, seed: 5 });
    for (let round = 0; round < 5; round++) {
      sim.step(800);
      clock.advance(4 * 60_000);
      for (const moving of [true, false]) {
        let cursor: string | null = null;
        let next: string | null = null;
        for (let page = 0; page < 10_000; page++) {
          const query: string = `since=${encodeURIComponent(since)}&limit=250${cursor === null ? '' : `&cursor=${cursor}`}`;
          const body = await get(`/api/v1/odds/updated?${query}`);
          assert.equal(body.meta.note, undefined, 'since is within the retention window');
          next ??= body.meta.updated as string;
          tombstones += applyDelta(client, body.data as Record<string, unknown>[]);
          cursor = body.nextCursor;
          if (cursor === null) break;
          if (moving) sim.step(60);
        }
        since = next!;
      }
      // A poll answers the newest complete version at once, built in the background
      // after the board moved: once the board is still, a version of that state follows.
      let fresh = (await get('/api/v1/snapshot')) as SnapshotDoc;
      const settled = await eventually(async () => {
        fresh = (await get('/api/v1/snapshot')) as SnapshotDoc;
        return fresh.syncToken === String(app.engine.asOf());
      });
      assert.ok(settled, 'a version of the still board is published');
      assertSameRows(client, rowsOfDoc(fresh), `round ${round}`);
      assert.equal(fresh.syncToken, String(app.engine.asOf()));
    }
    assert.ok(tombstones > 0, 'lines were pulled along the way');
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
