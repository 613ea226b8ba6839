// A tiny hand-made Board for the persistence tests: few enough rows that every
// expected answer can be worked out by reading this file, and shaped to hit the edges
// (an event starting exactly at NOW, one exactly at NOW + 14 days, several sharing a
// start time, futures anchors, every status). Also helpers for temp databases.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leagueCatalog, seasonsForYear } from '../../engine/calendar.ts';
import {
  createHistoryBuffer,
  SOURCES,
  type Board,
  type EventRecord,
  type EventStatus,
  type OddsInput,
  type PlayerBoxRow,
  type PlayerRecord,
  type TeamBoxRow,
  type TeamRecord,
  type VenueRecord,
} from '../../engine/model.ts';

import { NOW } from './now.ts';
export { NOW };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const TEAM_DATA: [string, string, string, string][] = [
  ['nba', 'bos', 'Boston Celtics', 'BOS'],
  ['nba', 'lal', 'Los Angeles Lakers', 'LAL'],
  ['nba', 'nyk', 'New York Knicks', 'NYK'],
  ['nba', 'mia', 'Miami Heat', 'MIA'],
  ['nfl', 'kc', 'Kansas City Chiefs', 'KC'],
  ['nfl', 'buf', 'Buffalo Bills', 'BUF'],
  ['nfl', 'phi', 'Philadelphia Eagles', 'PHI'],
  ['nfl', 'dal', 'Dallas Cowboys', 'DAL'],
];

function team(id: string): TeamRecord {
  const t = TEAM_DATA.find(([l, a]) => `${l}-${a}` === id);
  if (!t) throw new Error(`no team ${id}`);
  return { id, name: t[2], abbreviation: t[3], league: t[0], conference: null, division: null, venueId: `v-${t[1]}` };
}

export interface TinyBoardOptions {
  seed?: number;
  now?: number;
}

export function tinyBoard(opts: TinyBoardOptions = {}): Board {
  const now = opts.now ?? NOW;
  const venues: VenueRecord[] = TEAM_DATA.map(([, a]) => ({ id: `v-${a}`, name: `${a.toUpperCase()} Arena`, city: a, indoor: true }));
  const teams = TEAM_DATA.map(([l, a]) => team(`${l}-${a}`));
  const players: PlayerRecord[] = [];
  for (const t of teams) {
    for (let i = 1; i <= 3; i++) {
      players.push({ id: `${t.id}-p0${i}`, name: `${t.abbreviation} Player ${i}`, league: t.league, teamId: t.id, position: t.league === 'nba' ? 'G' : 'QB' });
    }
  }
  const events: EventRecord[] = [];
  const game = (league: string, away: string, home: string, startTime: number, status: EventStatus): EventRecord => {
    const day = new Date(startTime).toISOString().slice(0, 10).replaceAll('-', '');
    const h = team(`${league}-${home}`);
    const a = team(`${league}-${away}`);
    const e: EventRecord = {
      id: `${league}-${day}-${away}-${home}`,
      league,
      homeTeamId: h.id,
      homeTeamName: h.name,
      awayTeamId: a.id,
      awayTeamName: a.name,
      startTime,
      status,
      venueId: h.venueId,
      seasonYear: 2026,
      context: league === 'nba' ? { officials: ['Ref A', 'Ref B'] } : { weather: { tempF: 41, wind: 'NW 8' } },
      isFutures: false,
    };
    events.push(e);
    return e;
  };
  const anchor = (league: string, settlement: string): void => {
    events.push({
      id: `${league}-2026-futures`, league, homeTeamId: null, homeTeamName: null, awayTeamId: null, awayTeamName: null,
      startTime: Date.parse(settlement), status: 'in_progress', venueId: null, seasonYear: 2026, context: {}, isFutures: true,
    });
  };
  const midnight = Date.parse('2026-11-21T00:00:00Z');
  // NBA
  const f1 = game('nba', 'lal', 'bos', midnight - 3 * DAY, 'final');
  const f2 = game('nba', 'nyk', 'mia', midnight - 1 * DAY + HOUR / 2, 'final');
  // A last-season game, for season filters on stats.
  const f0 = game('nba', 'bos', 'nyk', Date.parse('2026-04-10T23:00:00Z'), 'final');
  f0.seasonYear = 2025;
  game('nba', 'bos', 'nyk', now - HOUR, 'in_progress');
  // Context text that JSON renderers disagree on if any of them gets escaping or numbers wrong.
  game('nba', 'mia', 'lal', now, 'scheduled').context = {
    officials: ['Ref "A"', 'Zoë\\Ångström', 'line\nbreak\ttab\u0001', '😀 ⚽', '</script>'],
    weather: { tempF: 0.1, tiny: 1e-7, huge: 1e21, negative: -2.5, big: 9007199254740993 },
    lineups: null,
    flags: [true, false, {}, []],
  };
  game('nba', 'bos', 'lal', midnight + DAY, 'scheduled');
  game('nba', 'nyk', 'mia', midnight + DAY, 'scheduled');
  game('nba', 'mia', 'bos', midnight + 2 * DAY, 'scheduled');
  game('nba', 'lal', 'nyk', midnight + 3 * DAY, 'postponed');
  game('nba', 'lal', 'mia', now + 14 * DAY - 60_000, 'scheduled');
  game('nba', 'bos', 'mia', now + 14 * DAY, 'scheduled');
  game('nba', 'nyk', 'bos', now + 20 * DAY, 'scheduled');
  anchor('nba', '2027-06-20T00:00:00Z');
  // NFL
  const f3 = game('nfl', 'kc', 'buf', midnight - 2 * DAY + 18 * HOUR, 'final');
  game('nfl', 'phi', 'dal', midnight + DAY, 'scheduled');
  game('nfl', 'dal', 'kc', midnight + 2 * DAY + 18 * HOUR, 'scheduled');
  game('nfl', 'buf', 'phi', midnight + 4 * DAY, 'cancelled');
  anchor('nfl', '2027-02-15T00:00:00Z');

  const teamBox: TeamBoxRow[] = [];
  const playerBox: PlayerBoxRow[] = [];
  let points = 100;
  for (const e of [f0, f1, f2, f3]) {
    const homeScore = points++;
    const awayScore = points++ - 7;
    for (const teamId of [e.homeTeamId!, e.awayTeamId!]) {
      const home = teamId === e.homeTeamId;
      const own = home ? homeScore : awayScore;
      const other = home ? awayScore : homeScore;
      teamBox.push({
        eventId: e.id, teamId, homeId: e.homeTeamId!, awayId: e.awayTeamId!, league: e.league,
        homeScore, awayScore, result: own > other ? 1 : own < other ? -1 : 0, stats: { fieldGoals: own % 40, turnovers: 12 },
      });
      for (const p of players.filter((x) => x.teamId === teamId)) {
        playerBox.push({ eventId: e.id, playerId: p.id, teamId, date: new Date(e.startTime).toISOString().slice(0, 10), data: { points: (own + p.id.length) % 30 } });
      }
    }
  }

  const priced = events.filter((e) => e.status === 'scheduled' || e.status === 'in_progress');
  const seed = opts.seed ?? 7;
  return {
    options: { seed, size: 'small', now },
    leagues: leagueCatalog().filter((l) => ['nba', 'nfl', 'mlb'].includes(l.code)),
    seasons: seasonsForYear(2026, now).filter((s) => ['nba', 'nfl', 'mlb'].includes(s.league)),
    sources: SOURCES,
    venues,
    teams,
    players,
    events,
    teamBox,
    playerBox,
    oddsCount: priced.length,
    forEachOdds(visit) {
      const history = createHistoryBuffer();
      for (const e of priced) {
        const row: OddsInput = {
          eventId: e.id, sportsbook: 'pinnacle', league: e.league, market: 'MONEYLINE', marketSubtype: 'MONEYLINE', period: 'FULL',
          selectionId: 'FULL-HOME', selection: e.homeTeamName ?? 'Field', side: 'HOME', teamSide: 'HOME', teamName: e.homeTeamName ?? '',
          priceAmerican: -110, dfsMultiplier: null, line: null, playerId: null, playerName: null, teamId: e.homeTeamId, suspended: false,
          eventStartTime: e.startTime, updated: now, marketScope: null, segment: null,
        };
        visit(row, history);
      }
    },
  };
}

/** A fresh temp folder holding the test's database file; removed by cleanup(). */
export function tempDbPath(name = 'odds.db'): { path: string; dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'persistence-test-'));
  return { path: join(dir, 'nested', name), dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Epoch ms of an event row's 'YYYY-MM-DDTHH:mmZ' startTime. */
export function startMs(startTime: string): number {
  return Date.parse(startTime.replace('Z', ':00Z'));
}
