// Upserts of cold records arriving through the write path (teams, players, seasons,
// events, box scores), and the look-ups the write path's validator needs to keep the
// foreign keys of the schema true before anything is written. Every write is an
// upsert keyed on the record's id (box rows on (event, team) and (event, player)), so
// replaying a logged batch twice leaves the same rows.

import type { Statement } from 'better-sqlite3';
import type { EventRecord, PlayerBoxRow, PlayerRecord, SeasonRecord, TeamBoxRow, TeamRecord } from '../engine/model.ts';
import type { Db } from './database.ts';
import type { DataSet } from './dataVersion.ts';

export type ColdRecordChange =
  | { op: 'team'; team: TeamRecord }
  | { op: 'player'; player: PlayerRecord }
  | { op: 'season'; season: SeasonRecord }
  | { op: 'event'; event: EventRecord }
  | { op: 'boxscore'; eventId: string; teams: TeamBoxRow[]; players: PlayerBoxRow[] };

export class ColdWrites {
  private readonly upsertTeam: Statement;
  private readonly upsertPlayer: Statement;
  private readonly upsertSeason: Statement;
  private readonly upsertEvent: Statement;
  private readonly upsertTeamBox: Statement;
  private readonly upsertPlayerBox: Statement;
  private readonly findTeam: Statement;
  private readonly findPlayer: Statement;
  private readonly findLeague: Statement;
  private readonly findVenue: Statement;
  private readonly findEvent: Statement;

  constructor(private readonly db: Db) {
    this.upsertTeam = db.prepare(`INSERT INTO teams (id, name, abbreviation, league, conference, division, venue_id)
      VALUES (@id, @name, @abbreviation, @league, @conference, @division, @venueId)
      ON CONFLICT(id) DO UPDATE SET name = excluded.name, abbreviation = excluded.abbreviation, league = excluded.league,
        conference = excluded.conference, division = excluded.division, venue_id = excluded.venue_id`);
    this.upsertPlayer = db.prepare(`INSERT INTO players (id, name, league, team_id, position)
      VALUES (@id, @name, @league, @teamId, @position)
      ON CONFLICT(id) DO UPDATE SET name = excluded.name, league = excluded.league, team_id = excluded.team_id, position = excluded.position`);
    this.upsertSeason = db.prepare(`INSERT INTO seasons (id, league, year, name, start_date, end_date, status, futures_event_id)
      VALUES (@id, @league, @year, @name, @startDate, @endDate, @status, @futuresEventId)
      ON CONFLICT(id) DO UPDATE SET league = excluded.league, year = excluded.year, name = excluded.name,
        start_date = excluded.start_date, end_date = excluded.end_date, status = excluded.status, futures_event_id = excluded.futures_event_id`);
    // has_odds is the engine's to say (written behind from its live rows): a new event starts without odds
    this.upsertEvent = db.prepare(`INSERT INTO events (id, league, home_team_id, home_team_name, away_team_id, away_team_name,
        start_time, status, has_odds, venue_id, season_year, context, is_futures)
      VALUES (@id, @league, @homeTeamId, @homeTeamName, @awayTeamId, @awayTeamName, @startTime, @status, 0, @venueId,
        @seasonYear, @context, @isFutures)
      ON CONFLICT(id) DO UPDATE SET league = excluded.league, home_team_id = excluded.home_team_id,
        home_team_name = excluded.home_team_name, away_team_id = excluded.away_team_id, away_team_name = excluded.away_team_name,
        start_time = excluded.start_time, status = excluded.status, venue_id = excluded.venue_id,
        season_year = excluded.season_year, context = excluded.context, is_futures = excluded.is_futures`);
    this.upsertTeamBox = db.prepare(`INSERT INTO team_box (event_id, team_id, home_id, away_id, league, home_score, away_score, result, stats)
      VALUES (@eventId, @teamId, @homeId, @awayId, @league, @homeScore, @awayScore, @result, @stats)
      ON CONFLICT(event_id, team_id) DO UPDATE SET home_id = excluded.home_id, away_id = excluded.away_id, league = excluded.league,
        home_score = excluded.home_score, away_score = excluded.away_score, result = excluded.result, stats = excluded.stats`);
    this.upsertPlayerBox = db.prepare(`INSERT INTO player_box (event_id, player_id, team_id, date, data)
      VALUES (@eventId, @playerId, @teamId, @date, @data)
      ON CONFLICT(event_id, player_id) DO UPDATE SET team_id = excluded.team_id, date = excluded.date, data = excluded.data`);
    this.findTeam = db.prepare('SELECT id, league FROM teams WHERE id = ?');
    this.findPlayer = db.prepare('SELECT id, name, league, team_id AS teamId FROM players WHERE id = ?');
    this.findLeague = db.prepare('SELECT 1 FROM leagues WHERE code = ?').pluck();
    this.findVenue = db.prepare('SELECT 1 FROM venues WHERE id = ?').pluck();
    this.findEvent = db.prepare('SELECT 1 FROM events WHERE id = ?').pluck();
  }

  team(id: string): { id: string; league: string } | undefined {
    return this.findTeam.get(id) as { id: string; league: string } | undefined;
  }

  player(id: string): { id: string; name: string; league: string; teamId: string } | undefined {
    return this.findPlayer.get(id) as { id: string; name: string; league: string; teamId: string } | undefined;
  }

  hasLeague(code: string): boolean {
    return this.findLeague.get(code) !== undefined;
  }

  hasVenue(id: string): boolean {
    return this.findVenue.get(id) !== undefined;
  }

  hasEvent(id: string): boolean {
    return this.findEvent.get(id) !== undefined;
  }

  /** Writes the changes in one transaction; returns the data sets it touched. */
  apply(changes: readonly ColdRecordChange[]): DataSet[] {
    const touched = new Set<DataSet>();
    this.db.transaction(() => {
      for (const change of changes) {
        switch (change.op) {
          case 'team':
            this.upsertTeam.run({ ...change.team });
            touched.add('teams');
            break;
          case 'player':
            this.upsertPlayer.run({ ...change.player });
            touched.add('players');
            break;
          case 'season':
            this.upsertSeason.run({ ...change.season });
            touched.add('seasons');
            break;
          case 'event': {
            const e = change.event;
            this.upsertEvent.run({ ...e, context: JSON.stringify(e.context), isFutures: e.isFutures ? 1 : 0 });
            touched.add('events');
            break;
          }
          case 'boxscore':
            for (const row of change.teams) this.upsertTeamBox.run({ ...row, stats: JSON.stringify(row.stats) });
            for (const row of change.players) this.upsertPlayerBox.run({ ...row, data: JSON.stringify(row.data) });
            touched.add('stats');
            touched.add('events'); // event detail shows the final score from the box score
            break;
        }
      }
    })();
    return [...touched];
  }
}
