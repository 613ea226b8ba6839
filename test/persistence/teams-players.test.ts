// Teams, players, their box stat rows, /stats/players, and seasons, over a real
// SQLite file loaded with the tiny board.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { openPersistence, type Persistence } from '../../persistence/persistence.ts';
import type { PlayerBoxKey, PlayerBoxStatRow } from '../../persistence/rows.ts';
import type { StatsPlayersFilter } from '../../persistence/statsRepository.ts';
import { NOW, tempDbPath, tinyBoard } from '../../fixtures/harness/persistence-fixture.ts';

const board = tinyBoard();
const tmp = tempDbPath();
let p: Persistence;

before(() => {
  p = openPersistence({ path: tmp.path, flushIntervalMs: 0 });
  p.loadCold(board);
});
after(() => {
  p.close();
  tmp.cleanup();
});

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Walks an id-keyed list page by page. */
function walkIds<R extends { id: string }>(page: (after: string | undefined) => { rows: R[]; next: string | null }): R[] {
  const out: R[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const { rows, next } = page(after);
    out.push(...rows);
    if (next === null) return out;
    after = next;
  }
  throw new Error('walk did not end');
}

describe('teams', () => {
  it('list: Team rows in id order; league filter any-of, case-insensitive', () => {
    const all = p.teams.list({ limit: 1000 }).rows;
    assert.deepEqual(all.map((t) => t.id), board.teams.map((t) => t.id).sort());
    assert.deepEqual(Object.keys(all[0]!), ['id', 'name', 'abbreviation', 'league']);
    assert.deepEqual(all[0], { id: 'nba-bos', name: 'Boston Celtics', abbreviation: 'BOS', league: 'nba' });
    const nfl = p.teams.list({ league: 'NFL', limit: 1000 }).rows;
    assert.deepEqual(nfl.map((t) => t.id), ['nfl-buf', 'nfl-dal', 'nfl-kc', 'nfl-phi']);
    assert.equal(p.teams.list({ league: ['nfl', 'nba'], limit: 1000 }).rows.length, 8);
    assert.deepEqual(p.teams.list({ league: [], limit: 10 }).rows, []);
    assert.deepEqual(p.teams.list({ league: 'mlb', limit: 10 }).rows, []);
  });

  it('list pages walk every team once for any page size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.constantFrom(undefined, 'nba', 'nfl'), (limit, league) => {
        const rows = walkIds((after) => p.teams.list({ league, after, limit }));
        const want = board.teams.filter((t) => league === undefined || t.league === league).map((t) => t.id).sort();
        assert.deepEqual(rows.map((r) => r.id), want);
      }),
    );
  });

  it('get: one team or null', () => {
    assert.deepEqual(p.teams.get('nfl-kc'), { id: 'nfl-kc', name: 'Kansas City Chiefs', abbreviation: 'KC', league: 'nfl' });
    assert.equal(p.teams.get('nfl-xx'), null);
  });

  it('stats: the team\'s box rows (with teamId) in event order, by season, null when unknown', () => {
    const rows = p.teams.stats('nba-bos')!;
    const want = board.teamBox.filter((b) => b.teamId === 'nba-bos');
    assert.equal(rows.length, want.length);
    assert.deepEqual(rows.map((r) => r.eventId), ['nba-20260410-bos-nyk', 'nba-20261118-lal-bos']);
    assert.deepEqual(Object.keys(rows[0]!), ['eventId', 'teamId', 'homeId', 'awayId', 'league', 'homeScore', 'awayScore', 'result', 'stats']);
    assert.ok(rows.every((r) => r.teamId === 'nba-bos'));
    assert.deepEqual(rows[1], { ...want.find((b) => b.eventId === 'nba-20261118-lal-bos')! });
    assert.deepEqual(p.teams.stats('nba-bos', 2025)!.map((r) => r.eventId), ['nba-20260410-bos-nyk']);
    assert.deepEqual(p.teams.stats('nba-bos', 2026)!.map((r) => r.eventId), ['nba-20261118-lal-bos']);
    assert.deepEqual(p.teams.stats('nba-bos', 2019), []);
    assert.deepEqual(p.teams.stats('nfl-phi'), []);
    assert.equal(p.teams.stats('nba-zzz'), null);
  });
});

describe('players', () => {
  it('list: Player rows in id order, by league and by team', () => {
    const all = p.players.list({ limit: 1000 }).rows;
    assert.deepEqual(all, [...board.players].sort(byId).map((x) => ({ ...x })));
    assert.deepEqual(Object.keys(all[0]!), ['id', 'name', 'league', 'teamId', 'position']);
    const kc = p.players.list({ teamId: 'nfl-kc', limit: 1000 }).rows;
    assert.deepEqual(kc.map((x) => x.id), ['nfl-kc-p01', 'nfl-kc-p02', 'nfl-kc-p03']);
    assert.deepEqual(p.players.list({ league: 'nba', teamId: 'nfl-kc', limit: 10 }).rows, []);
    assert.equal(p.players.list({ league: 'nba', limit: 1000 }).rows.length, 12);
  });

  it('list pages walk every player once for any page size and filters', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 11 }),
        fc.constantFrom(undefined, 'nba', 'nfl'),
        fc.constantFrom(undefined, 'nba-bos', 'nfl-dal'),
        (limit, league, teamId) => {
          const rows = walkIds((after) => p.players.list({ league, teamId, after, limit }));
          const want = board.players
            .filter((x) => (league === undefined || x.league === league) && (teamId === undefined || x.teamId === teamId))
            .map((x) => x.id)
            .sort();
          assert.deepEqual(rows.map((r) => r.id), want);
        },
      ),
    );
  });

  it('get and stats (player box rows) with the season filter', () => {
    assert.deepEqual(p.players.get('nba-lal-p02'), { id: 'nba-lal-p02', name: 'LAL Player 2', league: 'nba', teamId: 'nba-lal', position: 'G' });
    assert.equal(p.players.get('nba-lal-p09'), null);
    const rows = p.players.stats('nba-bos-p01')!;
    assert.deepEqual(rows.map((r) => r.eventId), ['nba-20260410-bos-nyk', 'nba-20261118-lal-bos']);
    assert.deepEqual(Object.keys(rows[0]!), ['eventId', 'playerId', 'teamId', 'date', 'data']);
    assert.equal(rows[0]!.date, '2026-04-10');
    assert.deepEqual(rows[1]!.data, board.playerBox.find((b) => b.eventId === 'nba-20261118-lal-bos' && b.playerId === 'nba-bos-p01')!.data);
    assert.deepEqual(p.players.stats('nba-bos-p01', 2026)!.map((r) => r.eventId), ['nba-20261118-lal-bos']);
    assert.equal(p.players.stats('nba-bos-p99'), null);
  });
});

describe('stats.players (keyset over eventId, playerId)', () => {
  function walk(filter: StatsPlayersFilter, limit: number): PlayerBoxStatRow[] {
    const out: PlayerBoxStatRow[] = [];
    let after: PlayerBoxKey | undefined;
    for (let guard = 0; guard < 1000; guard++) {
      const page = p.stats.players(filter, after, limit);
      out.push(...page.rows);
      if (page.next === null) return out;
      after = page.next;
    }
    throw new Error('walk did not end');
  }
  const expected = (f: StatsPlayersFilter) =>
    board.playerBox
      .filter((b) => (f.eventId === undefined || b.eventId === f.eventId) && (f.teamId === undefined || b.teamId === f.teamId) && (f.playerId === undefined || b.playerId === f.playerId))
      .sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : a.playerId < b.playerId ? -1 : a.playerId > b.playerId ? 1 : 0))
      .map((b) => ({ ...b }));

  it('each filter alone and combined', () => {
    assert.deepEqual(p.stats.players({ eventId: 'nfl-20261119-kc-buf' }, undefined, 1000).rows, expected({ eventId: 'nfl-20261119-kc-buf' }));
    assert.equal(p.stats.players({ eventId: 'nfl-20261119-kc-buf' }, undefined, 1000).rows.length, 6);
    assert.deepEqual(p.stats.players({ teamId: 'nba-bos' }, undefined, 1000).rows, expected({ teamId: 'nba-bos' }));
    assert.deepEqual(p.stats.players({ playerId: 'nba-nyk-p03' }, undefined, 1000).rows, expected({ playerId: 'nba-nyk-p03' }));
    const both = { eventId: 'nba-20261118-lal-bos', teamId: 'nba-lal' };
    assert.deepEqual(p.stats.players(both, undefined, 1000).rows.map((r) => r.playerId), ['nba-lal-p01', 'nba-lal-p02', 'nba-lal-p03']);
    assert.deepEqual(p.stats.players({ eventId: 'nba-20261118-lal-bos', playerId: 'nfl-kc-p01' }, undefined, 10).rows, []);
  });

  it('page walks return every row once in (eventId, playerId) order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(undefined, 'nba-20261118-lal-bos', 'nfl-20261119-kc-buf'),
        fc.constantFrom(undefined, 'nba-bos', 'nfl-buf', 'nba-nyk'),
        fc.constantFrom(undefined, 'nba-bos-p02', 'nfl-kc-p01'),
        (limit, eventId, teamId, playerId) => {
          const f = { eventId, teamId, playerId };
          assert.deepEqual(walk(f, limit), expected(f));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('seasons (from the league calendar)', () => {
  it('every league\'s seasons overlapping the year, sorted by league then year, with status at now', () => {
    const seasons = p.seasons.forYear(2026, NOW);
    assert.deepEqual(Object.keys(seasons[0]!), ['id', 'league', 'year', 'name', 'startDate', 'endDate', 'status', 'futuresEventId']);
    const nba = seasons.filter((s) => s.league === 'nba');
    assert.deepEqual(nba.map((s) => [s.id, s.status]), [['nba-2025', 'completed'], ['nba-2026', 'in_progress']]);
    assert.equal(seasons.find((s) => s.id === 'mlb-2026')!.status, 'completed');
    const leagues = seasons.map((s) => s.league);
    assert.deepEqual(leagues, [...leagues].sort());
    assert.ok(leagues.includes('pga') && leagues.includes('epl'));
    const later = p.seasons.forYear(2027, NOW).find((s) => s.id === 'mlb-2027')!;
    assert.equal(later.status, 'upcoming');
    assert.equal(later.startDate.slice(0, 4), '2027');
  });

  it('futuresEventId names the anchor event only where it exists', () => {
    const seasons = p.seasons.forYear(2026, NOW);
    assert.equal(seasons.find((s) => s.id === 'nba-2026')!.futuresEventId, 'nba-2026-futures');
    assert.equal(seasons.find((s) => s.id === 'nfl-2026')!.futuresEventId, 'nfl-2026-futures');
    assert.equal(seasons.find((s) => s.id === 'nba-2025')!.futuresEventId, null);
    assert.equal(seasons.find((s) => s.id === 'mlb-2026')!.futuresEventId, null);
    for (const s of seasons) if (s.futuresEventId) assert.ok(p.events.detail(s.futuresEventId), s.id);
  });
});
