// Keyset walks under a moving board: with the simulator applying thousands of
// updates per second of (ManualClock) time -- price moves, suspensions, lines added
// and pulled, games going final -- a cursor walk in (sportsbook, id) order never
// returns a row twice, never goes backwards, and returns every row that existed
// throughout the walk. The delta feed's as-of time (meta.updated, the next since) hands over to the next poll
// without losing a change.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { boardRows, compareRows, type Row } from '../helpers/oddsReference.ts';

let t: TestApp;

interface Walk {
  rows: Row[];
  pages: number;
  first: any;
  /** meta.updated of every page. */
  updated: string[];
}

/** Walks path page by page; between pages the simulator's timer runs and `between` applies more. */
async function walk(route: string, path: string, between: () => void): Promise<Walk> {
  const rows: Row[] = [];
  let first: any = null;
  const updated: string[] = [];
  let url = path;
  for (let pages = 1; pages < 5000; pages++) {
    const { reply, body } = await t.call(route, url);
    assert.equal(reply.status, 200, reply.body.toString());
    first ??= body;
    rows.push(...body.data);
    updated.push(body.meta.updated);
    if (body.nextCursor === null) return { rows, pages, first, updated };
    between();
    url = `${path}&cursor=${body.nextCursor}`;
  }
  throw new Error('walk did not end');
}

/** Ids removed at any moment from now on (a removed-then-revived row did not exist throughout). */
function trackRemovals(): { removed: Set<string>; stop: () => void } {
  const engine = t.app.engine;
  const removed = new Set<string>();
  const stop = engine.subscribe({
    rowChanged(slot, kind) {
      if (kind === 'remove') removed.add(engine.idOf(slot));
    },
  });
  return { removed, stop };
}

function assertOrderedOnce(rows: Row[], label: string): void {
  const seen = new Set<string>();
  for (let i = 0; i < rows.length; i++) {
    assert.ok(!seen.has(rows[i]!.id), `${label}: ${rows[i]!.id} returned twice`);
    seen.add(rows[i]!.id);
    if (i > 0) assert.ok(compareRows(rows[i - 1]!, rows[i]!) < 0, `${label}: order broken at ${rows[i]!.id}`);
  }
}

function liveIds(filter: (row: Row) => boolean): Set<string> {
  return new Set(boardRows(t.app.engine, 'all').filter(filter).map((row) => row.id));
}

async function checkWalk(route: string, path: string, filter: (row: Row) => boolean): Promise<Walk> {
  const engine = t.app.engine;
  const seqBefore = engine.seq;
  const atStart = liveIds(filter);
  const removals = trackRemovals();
  let result: Walk;
  try {
    result = await walk(route, path, () => t.app.simulator.step(150));
  } finally {
    removals.stop();
  }
  const atEnd = liveIds(filter);
  assertOrderedOnce(result.rows, path);
  const returned = new Set(result.rows.map((row) => row.id));
  let throughout = 0;
  for (const id of atStart) {
    if (!atEnd.has(id) || removals.removed.has(id)) continue;
    throughout++;
    assert.ok(returned.has(id), `${path}: ${id} existed throughout the walk but was not returned`);
  }
  for (const row of result.rows) assert.ok(filter(row), `${path}: ${row.id} does not match the filter`);
  const applied = engine.seq - seqBefore;
  assert.ok(applied > 20 * result.pages, `${path}: only ${applied} changes during ${result.pages} pages`);
  assert.ok(removals.removed.size > 0, `${path}: nothing was removed during the walk`);
  assert.ok(throughout > result.rows.length * 0.5, `${path}: ${throughout} rows existed throughout, of ${result.rows.length}`);
  return result;
}

describe('cursor walks while the simulator runs at 5,000 updates/s', () => {
  before(async () => {
    t = await startTestApp({ simulatorRate: 5000, simulatorSeed: 7 });
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('/odds unfiltered, 40 rows a page', async () => {
    const result = await checkWalk('/api/v1/odds', '/api/v1/odds?limit=40', () => true);
    assert.ok(result.pages > 100, `${result.pages} pages`);
  });

  it('/odds?league=nba,nfl&market=total, 13 rows a page (merged league lists)', async () => {
    const wanted = (row: Row) => (row.league === 'nba' || row.league === 'nfl') && (row.market.includes('TOTAL') || row.marketSubtype.includes('TOTAL'));
    await checkWalk('/api/v1/odds', '/api/v1/odds?league=nba,nfl&market=total&limit=13', wanted);
  });

  it('/odds?sportsbook=pinnacle,draftkings&scope=event, 25 rows a page', async () => {
    const wanted = (row: Row) => (row.sportsbook === 'pinnacle' || row.sportsbook === 'draftkings') && row.marketScope === undefined;
    await checkWalk('/api/v1/odds', '/api/v1/odds?sportsbook=pinnacle,draftkings&scope=event&limit=25', wanted);
  });

  it('/teams/{id}/odds, 9 rows a page', async () => {
    const engine = t.app.engine;
    const counts = new Map<string, number>();
    for (const row of boardRows(engine, 'all')) {
      const event = engine.event(row.eventId)!;
      if (event.isFutures || row.marketScope !== undefined || event.status !== 'scheduled') continue;
      for (const team of [event.homeTeamId, event.awayTeamId]) if (team !== null) counts.set(team, (counts.get(team) ?? 0) + 1);
    }
    const team = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
    const wanted = (row: Row) => {
      const event = engine.event(row.eventId)!;
      return row.marketScope === undefined && !event.isFutures && (event.homeTeamId === team || event.awayTeamId === team);
    };
    await checkWalk('/api/v1/teams/:teamId/odds', `/api/v1/teams/${team}/odds?limit=9`, wanted);
  });

  it('/odds/updated: ordered, once each, every row updated at or after since; the next poll from meta.updated misses no change', async () => {
    const engine = t.app.engine;
    t.app.simulator.step(500);
    const since = t.clock.now() - 200;
    const atStart = new Set(boardRows(engine, 'all', true).filter((row) => Date.parse(row.updated) >= since).map((row) => row.id));
    const changedAfterFirstPage = new Set<string>();
    let firstPageRead = false;
    const stop = engine.subscribe({
      rowChanged(slot) {
        if (firstPageRead) changedAfterFirstPage.add(engine.idOf(slot));
      },
    });
    let result: Walk;
    try {
      result = await walk('/api/v1/odds/updated', `/api/v1/odds/updated?since=${since}&limit=20`, () => {
        firstPageRead = true;
        t.app.simulator.step(100);
      });
    } finally {
      stop();
    }
    assertOrderedOnce(result.rows, '/odds/updated');
    const returned = new Set(result.rows.map((row) => row.id));
    for (const id of atStart) assert.ok(returned.has(id), `${id} was updated after since but not returned`);
    assert.ok(result.rows.some((row) => row.removed === true), 'tombstones are part of the feed');
    assert.ok(result.pages > 10, `${result.pages} pages`);
    // Every page of the walk repeated the first page's as-of; the next poll starts there.
    assert.deepEqual(new Set(result.updated), new Set([result.first.meta.updated]));
    const next = await walk('/api/v1/odds/updated', `/api/v1/odds/updated?since=${encodeURIComponent(result.first.meta.updated)}&limit=1000`, () => {});
    const polled = new Set(next.rows.map((row) => row.id));
    assert.ok(changedAfterFirstPage.size > 100);
    for (const id of changedAfterFirstPage) assert.ok(polled.has(id), `${id} changed during the walk but the next poll missed it`);
  });
});
