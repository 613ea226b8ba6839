// /events, /events/active, /events/{id}, /events/{id}/stats (out-of-season notes,
// futures anchors, scores, box scores, statuses) over the real app and its SQLite file, against
// an oracle built from the board and the engine; every reply validated against the
// served OpenAPI document.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { activeLeagues } from '../../engine/calendar.ts';
import { startTestApp, NOW, testBoard, type TestApp } from '../helpers/app.ts';
import { byStartThenId, expectedEventRow, expectedEvents, expectError, ids, walk, WINDOW_MS, type Json } from '../helpers/catalog-helpers.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';

const EVENTS = '/api/v1/events';
const ACTIVE = '/api/v1/events/active';
const DETAIL = '/api/v1/events/:eventId';
const BOX = '/api/v1/events/:eventId/stats';

let t: TestApp;

const iso = (ms: number) => new Date(ms).toISOString();

describe('/events', () => {
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    assert.deepEqual(t.logs, []);
    await t.close();
  });

  it('defaults to the window now .. now+14 days, futures anchors left out, keyset over (startTime, id)', async () => {
    const now = t.clock.now();
    const expected = expectedEvents(t.app.board, t.app.engine, { from: now, to: now + WINDOW_MS });
    assert.ok(expected.length >= 10, 'the small board has events in the default window');
    const { rows, pages } = await walk(t, EVENTS, `${EVENTS}?limit=4`);
    assert.deepEqual(rows, expected);
    assert.equal(pages.length, Math.ceil(expected.length / 4));
    const everything = await walk(t, EVENTS, `${EVENTS}?limit=1000`);
    assert.deepEqual(everything.rows, expected, 'page size does not change the walk');
    assert.equal(everything.pages.length, 1);
  });

  it('explicit windows (ISO-8601 and epoch millis), one bound defaulted, empty and inverted windows', async () => {
    const now = t.clock.now();
    const from = now - 7 * 86_400_000;
    const to = now + 3 * 86_400_000;
    const both = await walk(t, EVENTS, `${EVENTS}?starts_after=${iso(from)}&starts_before=${to}&limit=3`);
    assert.deepEqual(both.rows, expectedEvents(t.app.board, t.app.engine, { from, to }));
    assert.ok(both.rows.some((r) => Date.parse(r.startTime) < now), 'past events come back when asked for');
    const onlyAfter = await walk(t, EVENTS, `${EVENTS}?starts_after=${from}`);
    assert.deepEqual(onlyAfter.rows, expectedEvents(t.app.board, t.app.engine, { from, to: now + WINDOW_MS }));
    const onlyBefore = await walk(t, EVENTS, `${EVENTS}?starts_before=${iso(to)}`);
    assert.deepEqual(onlyBefore.rows, expectedEvents(t.app.board, t.app.engine, { from: now, to }));
    const inverted = await t.call(EVENTS, `${EVENTS}?starts_after=${to}&starts_before=${from}`);
    assert.deepEqual(inverted.body.data, []);
    const bounds = expectedEvents(t.app.board, t.app.engine, { from, to })[0]!;
    const start = Date.parse(bounds.startTime);
    const inclusive = await t.call(EVENTS, `${EVENTS}?starts_after=${start}&starts_before=${start + 1}`);
    assert.ok(ids(inclusive.body.data).includes(bounds.id), 'starts_after is inclusive');
    const exclusive = await t.call(EVENTS, `${EVENTS}?starts_after=${start - 60_000}&starts_before=${start}`);
    assert.ok(!ids(exclusive.body.data).includes(bounds.id), 'starts_before is exclusive');
    await expectError(t, EVENTS, `${EVENTS}?starts_after=yesterday`, 400, 'invalid_parameter', 'starts_after');
    await expectError(t, EVENTS, `${EVENTS}?starts_before=2026-02-30T00:00:00Z`, 400, 'invalid_parameter', 'starts_before');
  });

  it('league (case-insensitive, any-of), team_id (home or away), status, include_futures', async () => {
    const now = t.clock.now();
    const window = { from: now, to: now + WINDOW_MS };
    const nba = await walk(t, EVENTS, `${EVENTS}?league=NBA&limit=5`);
    assert.deepEqual(nba.rows, expectedEvents(t.app.board, t.app.engine, { ...window, leagues: ['nba'] }));
    assert.ok(nba.rows.length > 5);
    const two = await walk(t, EVENTS, `${EVENTS}?league=nfl,epl`);
    assert.deepEqual(two.rows, expectedEvents(t.app.board, t.app.engine, { ...window, leagues: ['nfl', 'epl'] }));
    assert.equal(two.pages[0]!.meta.note, undefined);

    const homes = new Set(t.app.board.events.map((e) => e.homeTeamId));
    const team = t.app.board.events.find((e) => e.awayTeamId !== null && homes.has(e.awayTeamId))!.awayTeamId!;
    const byTeam = await walk(t, EVENTS, `${EVENTS}?team_id=${team}&starts_after=0`);
    const expectedTeam = expectedEvents(t.app.board, t.app.engine, { teamId: team, from: 0, to: now + WINDOW_MS });
    assert.deepEqual(byTeam.rows, expectedTeam);
    assert.ok(byTeam.rows.some((r) => r.homeTeamId === team) && byTeam.rows.some((r) => r.awayTeamId === team), 'home and away games both match');

    const scheduled = await walk(t, EVENTS, `${EVENTS}?status=scheduled`);
    assert.deepEqual(scheduled.rows, expectedEvents(t.app.board, t.app.engine, { ...window, status: 'scheduled' }));
    const inProgress = await walk(t, EVENTS, `${EVENTS}?status=in_progress&starts_after=0&starts_before=${now + 400 * 86_400_000}`);
    const expectedInProgress = expectedEvents(t.app.board, t.app.engine, { status: 'in_progress', from: 0, to: now + 400 * 86_400_000 });
    assert.deepEqual(inProgress.rows, expectedInProgress);
    assert.ok(inProgress.rows.some((r) => r.homeTeamId === null), 'status lets futures anchors in');
    await expectError(t, EVENTS, `${EVENTS}?status=live`, 400, 'invalid_parameter', 'status');
    const bad = await t.call(EVENTS, `${EVENTS}?status=live`);
    assert.deepEqual(bad.body.validValues, ['scheduled', 'in_progress', 'final', 'postponed', 'cancelled', 'suspended']);

    const wide = { from: 0, to: now + 400 * 86_400_000 };
    const futures = await walk(t, EVENTS, `${EVENTS}?include_futures=true&starts_after=0&starts_before=${wide.to}`);
    assert.deepEqual(futures.rows, expectedEvents(t.app.board, t.app.engine, { ...wide, includeFutures: true }));
    const anchors = futures.rows.filter((r) => r.homeTeamId === null);
    assert.ok(anchors.length > 0);
    const without = await walk(t, EVENTS, `${EVENTS}?starts_after=0&starts_before=${wide.to}`);
    assert.deepEqual(without.rows, futures.rows.filter((r) => r.homeTeamId !== null));
    const anchorTeams = await walk(t, EVENTS, `${EVENTS}?include_futures=1&team_id=${team}&starts_after=0&starts_before=${wide.to}`);
    assert.ok(anchorTeams.rows.every((r) => r.homeTeamId === team || r.awayTeamId === team), 'team_id never matches an anchor');
  });

  it('an out-of-season league answers 200, [] and a note; a mixed list keeps the in-season rows', async () => {
    const now = t.clock.now();
    const active = activeLeagues(now).join(', ');
    const mlb = await t.call(EVENTS, `${EVENTS}?league=mlb`);
    assert.equal(mlb.reply.status, 200);
    assert.deepEqual(mlb.body.data, []);
    assert.equal(mlb.body.nextCursor, null);
    assert.equal(mlb.body.meta.note, `mlb has no active season; active leagues: ${active}.`);
    const mixed = await walk(t, EVENTS, `${EVENTS}?league=mlb,nba,xfl&limit=4`);
    assert.deepEqual(mixed.rows, expectedEvents(t.app.board, t.app.engine, { leagues: ['nba'], from: now, to: now + WINDOW_MS }));
    for (const page of mixed.pages) assert.equal(page.meta.note, `mlb, xfl have no active season; active leagues: ${active}.`);
  });

  it('cursor and limit errors: undecodable, tampered, other filters, another list; limit outside 1..1000', async () => {
    const first = await t.call(EVENTS, `${EVENTS}?league=nba&limit=2`);
    const cursor: string = first.body.nextCursor;
    assert.ok(cursor);
    await expectError(t, EVENTS, `${EVENTS}?league=nba&limit=2&cursor=not*a*cursor`, 400, 'invalid_cursor', 'cursor');
    const flipped = cursor.slice(0, -2) + (cursor.endsWith('A') ? 'B' : 'A') + cursor.slice(-1);
    await expectError(t, EVENTS, `${EVENTS}?league=nba&limit=2&cursor=${flipped}`, 400, 'invalid_cursor');
    await expectError(t, EVENTS, `${EVENTS}?league=nfl&limit=2&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(t, EVENTS, `${EVENTS}?league=nba&status=scheduled&cursor=${cursor}`, 400, 'invalid_cursor');
    await expectError(t, ACTIVE, `${ACTIVE}?league=nba&cursor=${cursor}`, 400, 'invalid_cursor');
    const teams = await t.call('/api/v1/teams', '/api/v1/teams?limit=1');
    await expectError(t, EVENTS, `${EVENTS}?cursor=${teams.body.nextCursor}`, 400, 'invalid_cursor');
    const sameWalk = await t.call(EVENTS, `${EVENTS}?league=nba&limit=7&cursor=${cursor}`);
    assert.equal(sameWalk.reply.status, 200, 'limit is not part of the walk: it may change between pages');
    for (const limit of ['0', '1001', '-1', 'ten', '2.5']) {
      await expectError(t, EVENTS, `${EVENTS}?limit=${limit}`, 400, 'invalid_parameter', 'limit');
    }
    const max = await t.call(EVENTS, `${EVENTS}?limit=1000&starts_after=0&include_futures=true&starts_before=${NOW + 400 * 86_400_000}`);
    assert.equal(max.reply.status, 200);
    const unknown = await t.call(EVENTS, `${EVENTS}?leauge=nba&limit=1`);
    assert.deepEqual(unknown.body.meta.warnings, ["unknown query parameter 'leauge' ignored"]);
  });

  it('a walk keeps its first page\'s window while the clock moves on', async () => {
    const path = `${EVENTS}?limit=3`;
    const expected = expectedEvents(t.app.board, t.app.engine, { from: t.clock.now(), to: t.clock.now() + WINDOW_MS });
    const rows: Json[] = [];
    let url = path;
    for (;;) {
      const { body } = await t.call(EVENTS, url);
      rows.push(...body.data);
      if (body.nextCursor === null) break;
      t.clock.advance(2 * 3_600_000);
      url = `${path}&cursor=${body.nextCursor}`;
    }
    assert.deepEqual(rows, expected);
    const fresh = await walk(t, EVENTS, path);
    assert.deepEqual(fresh.rows, expectedEvents(t.app.board, t.app.engine, { from: t.clock.now(), to: t.clock.now() + WINDOW_MS }));
    assert.notDeepEqual(fresh.rows, expected, 'a new walk sees the moved window');
  });

  it('the default window follows the clock: 304 while it holds the same events, a new body when one leaves or enters', async () => {
    const now = t.clock.now();
    const first = await t.call(EVENTS, EVENTS);
    const etag = first.reply.headers.etag!;
    // Every start counts (anchors too): the window's contents change when a bound crosses one.
    const starts = t.app.board.events.map((e) => e.startTime).sort((a, b) => a - b);
    const nextStart = starts.find((s) => s >= now)!;
    const nextEntry = starts.find((s) => s >= now + WINDOW_MS);
    const quietUntil = Math.min(nextStart, nextEntry === undefined ? Infinity : nextEntry - WINDOW_MS);
    assert.ok(quietUntil > now);
    t.clock.set(quietUntil);
    const still = await t.call(EVENTS, EVENTS, { headers: { 'If-None-Match': etag } });
    assert.equal(still.reply.status, 304, 'nothing left or entered the window: same body, same ETag');
    const again = await t.call(EVENTS, EVENTS);
    assert.deepEqual(again.reply.body, first.reply.body, 'the same bytes at another instant of the same window');
    const nextGame = t.app.board.events.filter((e) => !e.isFutures && e.startTime >= now).sort((a, b) => a.startTime - b.startTime)[0]!;
    assert.ok(ids(first.body.data).includes(nextGame.id));
    t.clock.set(nextGame.startTime + 1);
    const moved = await t.call(EVENTS, EVENTS, { headers: { 'If-None-Match': etag } });
    assert.equal(moved.reply.status, 200);
    const movedNow = t.clock.now();
    assert.deepEqual(moved.body.data, expectedEvents(t.app.board, t.app.engine, { from: movedNow, to: movedNow + WINDOW_MS }));
    assert.ok(!ids(moved.body.data).includes(nextGame.id), 'the game that started left the window');
    assert.ok(Date.parse(moved.body.meta.updated) >= nextGame.startTime + 1, 'meta.updated says when the window last changed');
    assert.ok(Date.parse(moved.body.meta.updated) <= movedNow);
  });

  it('shows the engine\'s event status and live markets at once (no wait for the write-behind)', async () => {
    const engine = t.app.engine;
    const now = t.clock.now() + 1000;
    const scheduled = expectedEvents(t.app.board, engine, { from: now, to: now + WINDOW_MS, status: 'scheduled' }).find((r) => r.hasOdds)!;
    assert.ok(scheduled);
    const before = await t.call(EVENTS, `${EVENTS}?status=in_progress`);
    assert.ok(!ids(before.body.data).includes(scheduled.id));
    const etag = before.reply.headers.etag!;
    t.clock.advance(1000);
    engine.apply([{ op: 'status', eventId: scheduled.id, status: 'in_progress' }]);
    const afterStart = await t.call(EVENTS, `${EVENTS}?status=in_progress`, { headers: { 'If-None-Match': etag } });
    assert.equal(afterStart.reply.status, 200);
    const row = afterStart.body.data.find((r: Json) => r.id === scheduled.id);
    assert.equal(row?.status, 'in_progress');
    assert.deepEqual(afterStart.body.data, expectedEvents(t.app.board, engine, { from: now, to: now + WINDOW_MS, status: 'in_progress' }));
    const detail = await t.call(DETAIL, `${EVENTS}/${scheduled.id}`);
    assert.equal(detail.body.data[0].status, 'in_progress');

    t.clock.advance(1000);
    engine.apply([{ op: 'status', eventId: scheduled.id, status: 'final' }]);
    const final = await t.call(DETAIL, `${EVENTS}/${scheduled.id}`);
    assert.equal(final.body.data[0].status, 'final');
    assert.equal(final.body.data[0].hasOdds, false, 'a final event drops its rows: no live markets');
    const active = await walk(t, ACTIVE, ACTIVE);
    assert.ok(!ids(active.rows).includes(scheduled.id));
    assert.deepEqual(active.rows, expectedEvents(t.app.board, engine, { activeOnly: true }));
  });

  it('/events/active: events with live rows on the board, any start, anchors only with include_futures; rows pulled make it drop an event', async () => {
    const engine = t.app.engine;
    const expected = expectedEvents(t.app.board, engine, { activeOnly: true });
    assert.ok(expected.length > 3);
    const { rows } = await walk(t, ACTIVE, `${ACTIVE}?limit=2`);
    assert.deepEqual(rows, expected);
    assert.ok(rows.every((r) => r.hasOdds));
    const withFutures = await walk(t, ACTIVE, `${ACTIVE}?include_futures=true&limit=3`);
    assert.deepEqual(withFutures.rows, expectedEvents(t.app.board, engine, { activeOnly: true, includeFutures: true }));
    assert.ok(withFutures.rows.length > rows.length);
    const nba = await walk(t, ACTIVE, `${ACTIVE}?league=nba`);
    assert.deepEqual(nba.rows, expectedEvents(t.app.board, engine, { activeOnly: true, leagues: ['nba'] }));
    const mlb = await t.call(ACTIVE, `${ACTIVE}?league=mlb`);
    assert.deepEqual(mlb.body.data, []);
    assert.match(mlb.body.meta.note, /^mlb has no active season/);

    // Pull every row of one event (no status change): it must leave the active list.
    const victim = rows[rows.length - 1]!.id;
    const victimRows = engine.odds.page({ leagues: null, sportsbooks: null, markets: null, eventIds: [victim], playerId: null, teamId: null, scope: null, isMain: false }, null, 100_000);
    const slots = Array.from(victimRows.slots.subarray(0, victimRows.count));
    const victimIds = slots.map((slot) => engine.idOf(slot));
    const etag = (await t.call(ACTIVE, ACTIVE)).reply.headers.etag!;
    t.clock.advance(1000);
    engine.apply(victimIds.map((id) => ({ op: 'remove' as const, id })));
    const after = await t.call(ACTIVE, ACTIVE, { headers: { 'If-None-Match': etag } });
    assert.equal(after.reply.status, 200);
    assert.ok(!ids(after.body.data).includes(victim));
    assert.deepEqual(after.body.data, expectedEvents(t.app.board, engine, { activeOnly: true }));
    const detail = await t.call(DETAIL, `${EVENTS}/${victim}`);
    assert.equal(detail.body.data[0].hasOdds, false);
  });

  it('the write-behind alone (no request) brings has_odds into SQLite when an event\'s last row goes or its first comes back', async () => {
    const engine = t.app.engine;
    const hasOdds = t.app.persistence.db.prepare('SELECT has_odds FROM events WHERE id = ?').pluck();
    const victim = expectedEvents(t.app.board, engine, { activeOnly: true })[0]!.id;
    const page = engine.odds.page({ leagues: null, sportsbooks: null, markets: null, eventIds: [victim], playerId: null, teamId: null, scope: null, isMain: false }, null, 100_000);
    const slots = Array.from(page.slots.subarray(0, page.count));
    const rows = slots.map((slot) => engine.store.rowInput(slot));
    const rowIds = slots.map((slot) => engine.idOf(slot));
    assert.equal(hasOdds.get(victim), 1);
    t.clock.advance(1000);
    assert.equal(engine.apply(rowIds.map((id) => ({ op: 'remove' as const, id }))).applied, rowIds.length);
    assert.ok(await eventually(() => hasOdds.get(victim) === 0), 'the write-behind clears has_odds');
    t.clock.advance(1000);
    engine.apply([{ op: 'upsert', row: rows[0]! }]);
    assert.ok(await eventually(() => hasOdds.get(victim) === 1), 'the write-behind sets has_odds again');
  });

  it('/events/{id}: the event detail with context, final scores once a box score exists; anchors too; 404 otherwise', async () => {
    const engine = t.app.engine;
    const board = t.app.board;
    const live = new Set(engine.eventIdsWithLiveRows());
    let withScore = 0;
    for (const e of board.events) {
      const { reply, body } = await t.call(DETAIL, `${EVENTS}/${encodeURIComponent(e.id)}`);
      assert.equal(reply.status, 200);
      assert.equal(body.data.length, 1);
      const home = board.teamBox.find((b) => b.eventId === e.id && b.teamId === e.homeTeamId);
      const expected = expectedEventRow(engine, e, live);
      if (home !== undefined) {
        expected.homeScore = home.homeScore;
        expected.awayScore = home.awayScore;
        withScore++;
      }
      assert.deepEqual(body.data[0], expected, e.id);
    }
    assert.ok(withScore > 0, 'some events have final scores');
    assert.ok(board.events.some((e) => e.isFutures));
    await expectError(t, DETAIL, `${EVENTS}/no-such-event`, 404, 'not_found', 'eventId');
    await expectError(t, DETAIL, `${EVENTS}/nba-2026-futures-x`, 404, 'not_found');
  });

  it('/events/{id}/stats: the whole box score {eventId, league, teams (home first), players (by id)}, unpaginated', async () => {
    const board = t.app.board;
    const final = board.events.filter((e) => board.teamBox.some((b) => b.eventId === e.id));
    assert.ok(final.length > 0);
    for (const e of final) {
      const { body } = await t.call(BOX, `${EVENTS}/${e.id}/stats`);
      assert.equal(body.data.length, 1);
      const box = body.data[0];
      assert.deepEqual(Object.keys(box).sort(), ['eventId', 'league', 'players', 'teams']);
      assert.equal(box.eventId, e.id);
      assert.equal(box.league, e.league);
      const teams = board.teamBox.filter((b) => b.eventId === e.id);
      assert.equal(box.teams.length, teams.length);
      assert.equal(box.teams[0].teamId, e.homeTeamId, 'home team row first');
      assert.deepEqual(
        [...box.teams].sort((a: Json, b: Json) => (a.teamId < b.teamId ? -1 : 1)),
        teams.map((b) => ({ eventId: b.eventId, teamId: b.teamId, homeId: b.homeId, awayId: b.awayId, league: b.league, homeScore: b.homeScore, awayScore: b.awayScore, result: b.result, stats: b.stats })).sort((a, b) => (a.teamId < b.teamId ? -1 : 1)),
      );
      const players = board.playerBox
        .filter((b) => b.eventId === e.id)
        .map((b) => ({ eventId: b.eventId, playerId: b.playerId, teamId: b.teamId, date: b.date, data: b.data }))
        .sort((a, b) => (a.playerId < b.playerId ? -1 : 1));
      assert.deepEqual(box.players, players);
      assert.equal(body.nextCursor, null);
    }
    const upcoming = board.events.find((e) => !e.isFutures && !board.teamBox.some((b) => b.eventId === e.id))!;
    const empty = await t.call(BOX, `${EVENTS}/${upcoming.id}/stats`);
    assert.deepEqual(empty.body.data, [{ eventId: upcoming.id, league: upcoming.league, teams: [], players: [] }]);
    await expectError(t, BOX, `${EVENTS}/no-such-event/stats`, 404, 'not_found', 'eventId');
  });

  it('property: any mix of filters, window and page size walks exactly the oracle\'s events', async () => {
    const board = t.app.board;
    const leagues = ['nba', 'nfl', 'epl', 'pga', 'mlb', 'NHL'];
    const teams = [...new Set(board.events.flatMap((e) => [e.homeTeamId, e.awayTeamId]).filter((id): id is string => id !== null))].slice(0, 12);
    const statuses = ['scheduled', 'in_progress', 'final', 'postponed'];
    const starts = board.events.map((e) => e.startTime);
    const edge = fc.oneof(fc.constantFrom(...starts), fc.constantFrom(...starts).map((s) => s + 1), fc.integer({ min: Math.min(...starts) - 86_400_000, max: Math.max(...starts) + 86_400_000 }));
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            league: fc.subarray(leagues, { minLength: 1, maxLength: 3 }),
            team: fc.constantFrom(...teams),
            status: fc.constantFrom(...statuses),
            after: edge,
            before: edge,
            futures: fc.boolean(),
          },
          { requiredKeys: [] },
        ),
        fc.integer({ min: 1, max: 12 }),
        async (f, limit) => {
          const now = t.clock.now();
          const query = [`limit=${limit}`];
          if (f.league) query.push(`league=${f.league.join(',')}`);
          if (f.team) query.push(`team_id=${f.team}`);
          if (f.status) query.push(`status=${f.status}`);
          if (f.after !== undefined) query.push(`starts_after=${f.after}`);
          if (f.before !== undefined) query.push(`starts_before=${new Date(f.before).toISOString()}`);
          if (f.futures) query.push('include_futures=true');
          const inSeason = f.league?.map((l) => l.toLowerCase()).filter((l) => activeLeagues(now).includes(l));
          const expected = expectedEvents(board, t.app.engine, {
            leagues: inSeason,
            teamId: f.team,
            status: f.status,
            from: f.after ?? now,
            to: f.before ?? now + WINDOW_MS,
            includeFutures: f.futures,
          });
          const { rows } = await walk(t, EVENTS, `${EVENTS}?${query.join('&')}`);
          assert.deepEqual(rows, expected, query.join('&'));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('under the live simulator (games starting and finishing, lines added and pulled) every read matches the engine', async () => {
    const sim = t.app.simulator;
    const before = sim.stats.statusChanges;
    const wide = `starts_after=0&starts_before=${t.clock.now() + 400 * 86_400_000}`;
    for (let round = 0; round < 12; round++) {
      t.clock.advance(30 * 60_000);
      sim.step(400);
      const active = await walk(t, ACTIVE, `${ACTIVE}?limit=7`);
      assert.deepEqual(active.rows, expectedEvents(t.app.board, t.app.engine, { activeOnly: true }), `round ${round}`);
      const now = t.clock.now();
      const window = await walk(t, EVENTS, `${EVENTS}?limit=9`);
      assert.deepEqual(window.rows, expectedEvents(t.app.board, t.app.engine, { from: now, to: now + WINDOW_MS }), `round ${round}`);
      for (const status of ['in_progress', 'final']) {
        const { rows } = await walk(t, EVENTS, `${EVENTS}?status=${status}&${wide}`);
        assert.deepEqual(rows, expectedEvents(t.app.board, t.app.engine, { status, from: 0, to: Infinity }), `round ${round} ${status}`);
      }
    }
    assert.ok(sim.stats.statusChanges - before >= 3, `games started or finished meanwhile (${sim.stats.statusChanges - before})`);
  });

  it('rows are in (startTime, id) order on every list and page boundaries never repeat or skip', async () => {
    const wideTo = NOW + 400 * 86_400_000;
    for (const limit of [1, 2, 5]) {
      const { rows } = await walk(t, EVENTS, `${EVENTS}?include_futures=true&starts_after=0&starts_before=${wideTo}&limit=${limit}`);
      const keyed = rows.map((r) => ({ startTime: Date.parse(r.startTime), id: r.id }));
      assert.deepEqual(keyed, [...keyed].sort(byStartThenId));
      assert.equal(new Set(ids(rows)).size, rows.length);
      assert.equal(rows.length, t.app.board.events.length);
    }
  });
});

describe('/events ordering among events that start at the same minute', () => {
  let tie: TestApp;
  let tied: string[];
  before(async () => {
    // The small board has no two events at the same start; make three share one.
    const board = testBoard();
    const games = board.events.filter((e) => !e.isFutures && e.startTime > NOW).slice(0, 3);
    tied = games.map((e) => e.id).sort();
    const at = games[0]!.startTime;
    // Stored in descending id order, so insertion order cannot pass for id order.
    const moved = games.map((e) => ({ ...e, startTime: at })).sort((a, b) => (a.id < b.id ? 1 : -1));
    const events = [...board.events.filter((e) => !games.includes(e)), ...moved];
    tie = await startTestApp({ board: { ...board, events } });
  });
  after(async () => {
    assert.deepEqual(tie.logs, []);
    await tie.close();
  });

  it('orders them by id, and a page boundary between them neither repeats nor skips one', async () => {
    const now = tie.clock.now();
    const expected = expectedEvents(tie.app.board, tie.app.engine, { from: now, to: now + WINDOW_MS });
    const sameStart = expected.filter((r) => tied.includes(r.id));
    assert.deepEqual(ids(sameStart), tied);
    assert.equal(new Set(sameStart.map((r) => r.startTime)).size, 1);
    for (const limit of [1, 2]) {
      const { rows } = await walk(tie, EVENTS, `${EVENTS}?limit=${limit}`);
      assert.deepEqual(rows, expected);
    }
  });
});
