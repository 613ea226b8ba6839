// The generated small board (fixtures/generateBoard.ts) through SQLite: it loads
// with every foreign key holding, and each repository gives back exactly what the
// board holds. Skipped while the generator has not landed.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Board } from '../../engine/model.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { defaultEventWindow } from '../../persistence/eventsRepository.ts';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';
import type { EventKey, EventRow, PlayerBoxKey, PlayerBoxStatRow, PlayerRow, TeamRow } from '../../persistence/rows.ts';
import { startMs, tempDbPath } from '../../fixtures/harness/persistence-fixture.ts';
import { NOW } from '../../fixtures/harness/now.ts';

describe('generated small board in SQLite', () => {
  const tmp = tempDbPath();
  let board: Board;
  let p: Persistence;
  let loadedCounts: Record<string, number>;

  before(async () => {
    board = generateBoard({ seed: 42, size: 'small', now: NOW });
    p = openPersistence({ path: tmp.path, env: {}, flushIntervalMs: 0 });
    loadedCounts = p.loadCold(board).counts;
  });
  after(() => {
    p?.close();
    tmp.cleanup();
  });

  it('loads every cold array (foreign keys hold)', () => {
    assert.deepEqual(loadedCounts, {
      leagues: board.leagues.length, seasons: board.seasons.length, venues: board.venues.length, teams: board.teams.length,
      players: board.players.length, events: board.events.length, teamBox: board.teamBox.length, playerBox: board.playerBox.length,
    });
    assert.ok(board.events.length > 0 && board.playerBox.length > 0);
  });

  it('a walk over all events gives back every board event, with hasOdds from the odds stream', () => {
    const priced = new Set<string>();
    board.forEachOdds((row) => priced.add(row.eventId));
    const rows: EventRow[] = [];
    let afterKey: EventKey | undefined;
    do {
      const page = p.events.list({ startsAfter: null, startsBefore: null, includeFutures: true, after: afterKey, limit: 97 });
      rows.push(...page.rows);
      afterKey = page.next ?? undefined;
    } while (afterKey);
    assert.equal(rows.length, board.events.length);
    const byId = new Map(board.events.map((e) => [e.id, e]));
    for (const row of rows) {
      const e = byId.get(row.id)!;
      assert.ok(e, row.id);
      assert.equal(startMs(row.startTime), e.startTime);
      assert.equal(row.status, e.status);
      assert.equal(row.hasOdds, priced.has(e.id));
      assert.deepEqual(row.context, e.context);
    }
  });

  it('listJson renders the generated events exactly as JSON.stringify does', () => {
    let afterKey: EventKey | undefined;
    let pages = 0;
    do {
      const q = { startsAfter: null, startsBefore: null, includeFutures: true, after: afterKey, limit: 7 };
      const page = p.events.list(q);
      const json = p.events.listJson(q);
      assert.equal(json.json, page.rows.map((r) => JSON.stringify(r)).join(','));
      assert.deepEqual(json.next, page.next);
      afterKey = page.next ?? undefined;
      pages++;
    } while (afterKey);
    assert.ok(pages > 2);
  });

  it('the default window holds exactly the board events starting in [now, now + 14 d), futures left out', () => {
    const window = defaultEventWindow(NOW);
    const ids = p.events.list({ ...window, limit: 1000 }).rows.map((r) => r.id).sort();
    const want = board.events.filter((e) => !e.isFutures && e.startTime >= window.startsAfter && e.startTime < window.startsBefore).map((e) => e.id).sort();
    assert.deepEqual(ids, want);
  });

  it('final events with box scores carry their scores; box scores are complete', () => {
    const finals = board.events.filter((e) => board.teamBox.some((b) => b.eventId === e.id)).slice(0, 20);
    assert.ok(finals.length > 0);
    for (const e of finals) {
      const d = p.events.detail(e.id)!;
      const box = board.teamBox.find((b) => b.eventId === e.id)!;
      assert.equal(d.homeScore, box.homeScore);
      assert.equal(d.awayScore, box.awayScore);
      const full = p.events.boxScore(e.id)!;
      assert.equal(full.teams.length, board.teamBox.filter((b) => b.eventId === e.id).length);
      assert.equal(full.players.length, board.playerBox.filter((b) => b.eventId === e.id).length);
    }
  });

  it('teams, players and player box rows walk back complete', () => {
    const teams: TeamRow[] = [];
    let t: string | undefined;
    do {
      const page = p.teams.list({ after: t, limit: 50 });
      teams.push(...page.rows);
      t = page.next ?? undefined;
    } while (t);
    assert.deepEqual(teams.map((x) => x.id), board.teams.map((x) => x.id).sort());

    const players: PlayerRow[] = [];
    let pl: string | undefined;
    do {
      const page = p.players.list({ after: pl, limit: 500 });
      players.push(...page.rows);
      pl = page.next ?? undefined;
    } while (pl);
    assert.equal(players.length, board.players.length);

    const teamId = board.playerBox[0]!.teamId;
    const rows: PlayerBoxStatRow[] = [];
    let k: PlayerBoxKey | undefined;
    do {
      const page = p.stats.players({ teamId }, k, 37);
      rows.push(...page.rows);
      k = page.next ?? undefined;
    } while (k);
    assert.equal(rows.length, board.playerBox.filter((b) => b.teamId === teamId).length);
  });

  it('every futures anchor on the board is named by its season', () => {
    const anchors = board.events.filter((e) => e.isFutures && board.seasons.some((s) => s.futuresEventId === e.id));
    for (const anchor of anchors) {
      const season = board.seasons.find((s) => s.futuresEventId === anchor.id)!;
      const listed = p.seasons.forYear(season.year, NOW).find((s) => s.id === season.id);
      assert.equal(listed?.futuresEventId, anchor.id, season.id);
    }
  });
});
