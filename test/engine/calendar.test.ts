import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  activeLeagues,
  activeSeason,
  activeSeasons,
  futuresEventId,
  leagueCatalog,
  seasonEndMs,
  seasonStartMs,
  seasonsForYear,
} from '../../engine/calendar.ts';

const NOV_21 = Date.parse('2026-11-21T12:00:00Z');

describe('league calendar', () => {
  it('catalogs the required leagues with lower-case codes and sports', () => {
    const codes = leagueCatalog().map((l) => l.code);
    for (const code of ['nfl', 'ncaaf', 'nba', 'ncaab', 'nhl', 'mlb', 'wnba', 'epl', 'ucl', 'mls', 'pga']) {
      assert.ok(codes.includes(code), code);
    }
    for (const l of leagueCatalog()) assert.equal(l.code, l.code.toLowerCase());
    assert.equal(leagueCatalog().find((l) => l.code === 'pga')?.sport, 'golf');
  });

  it('on 2026-11-21 the autumn leagues are in season and mlb/wnba are not', () => {
    const active = activeLeagues(NOV_21);
    for (const code of ['nfl', 'ncaaf', 'nba', 'ncaab', 'nhl', 'epl', 'ucl']) assert.ok(active.includes(code), code);
    assert.ok(!active.includes('mlb'));
    assert.ok(!active.includes('wnba'));
    assert.deepEqual(active, [...active].sort());
  });

  it('in July 2027 mlb is in season and nfl is out', () => {
    const active = activeLeagues(Date.parse('2027-07-15T18:00:00Z'));
    assert.ok(active.includes('mlb'));
    assert.ok(active.includes('wnba'));
    assert.ok(!active.includes('nfl'));
    assert.ok(!active.includes('nba'));
  });

  it('a season that spans New Year belongs to the year it starts', () => {
    const nba = activeSeason('nba', Date.parse('2027-02-01T00:00:00Z'));
    assert.ok(nba);
    assert.equal(nba.id, 'nba-2026');
    assert.equal(nba.year, 2026);
    assert.equal(nba.futuresEventId, 'nba-2026-futures');
    assert.equal(nba.futuresEventId, futuresEventId('nba', 2026));
    assert.ok(nba.startDate.startsWith('2026-10'));
    assert.ok(nba.endDate.startsWith('2027-06'));
    assert.equal(nba.name, 'NBA 2026-27');
  });

  it('seasonsForYear lists every season overlapping the year, with status against now', () => {
    const seasons = seasonsForYear(2026, NOV_21);
    const ids = seasons.map((s) => s.id);
    assert.ok(ids.includes('nba-2025') && ids.includes('nba-2026'));
    assert.ok(ids.includes('mlb-2026') && !ids.includes('mlb-2025'));
    assert.equal(seasons.find((s) => s.id === 'nba-2025')?.status, 'completed');
    assert.equal(seasons.find((s) => s.id === 'nba-2026')?.status, 'in_progress');
    assert.equal(seasons.find((s) => s.id === 'mlb-2026')?.status, 'completed');
    assert.equal(seasonsForYear(2026, Date.parse('2026-01-01T00:00:00Z')).find((s) => s.id === 'nba-2026')?.status, 'upcoming');
    for (const s of seasons) {
      const start = seasonStartMs(s);
      const end = seasonEndMs(s);
      assert.ok(start < end);
      assert.ok(start < Date.UTC(2027, 0, 1) && end > Date.UTC(2026, 0, 1), `${s.id} overlaps 2026`);
    }
    // golf futures live on tournament events, not a season anchor
    assert.equal(seasons.find((s) => s.id === 'pga-2026')?.futuresEventId, null);
  });

  it('activeSeasons agrees with the status computed for the same instant, at any time', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }), (now) => {
        const active = activeSeasons(now);
        const leagues = active.map((s) => s.league);
        assert.equal(new Set(leagues).size, leagues.length, 'one season per league at a time');
        for (const s of active) {
          assert.equal(s.status, 'in_progress');
          assert.ok(seasonStartMs(s) <= now && now < seasonEndMs(s));
        }
        assert.deepEqual(activeLeagues(now), [...leagues].sort());
      }),
      { numRuns: 300 },
    );
  });
});
