// Puts a board's cold data (leagues, seasons, venues, teams, players, events, box
// scores) into SQLite in one transaction. `npm start` reuses an existing database: a
// board with the same (seed, size, day of NOW) as the one recorded in meta is not
// loaded again; only the event statuses (hot data the engine owns) are brought back
// to the board's, because the engine restarts from the board.

import type { Board, EventRecord } from '../engine/model.ts';
import { BatchInserter } from './batchInsert.ts';
import type { Db } from './database.ts';
import { EventStatusUpdate } from './eventStatusUpdate.ts';

export interface LoadColdOptions {
  /**
   * Ids of events that have odds on the board. The engine knows them after ingest;
   * without this set loadCold finds them by replaying board.forEachOdds, which on
   * the large board costs as much as generating it.
   */
  eventsWithOdds?: ReadonlySet<string>;
}

export interface LoadColdResult {
  /** false when the database already held this board. */
  loaded: boolean;
  boardKey: string;
  counts: Record<string, number>;
  /** Events whose status or hasOdds were reset to the board's on a reused database. */
  reconciled: number;
}

/** What identifies a board for reuse: seed, size and the UTC day of its NOW. */
export function boardKey(board: Pick<Board, 'options'>): string {
  const { seed, size, now } = board.options;
  return `${seed}:${size}:${new Date(now).toISOString().slice(0, 10)}`;
}

export function loadedBoardKey(db: Db): string | null {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get('cold_board') as string | undefined;
  return row ?? null;
}

/** Epoch ms NOW of the loaded board (when its data was made), or null before any load. */
export function loadedAt(db: Db): number | null {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get('cold_loaded_at') as string | undefined;
  return row === undefined ? null : Number(row);
}

export function loadCold(db: Db, board: Board, options: LoadColdOptions = {}): LoadColdResult {
  const key = boardKey(board);
  if (loadedBoardKey(db) === key) {
    const withOdds = options.eventsWithOdds;
    const reconciled = db.transaction(() => reconcileEvents(db, board.events, withOdds))();
    return { loaded: false, boardKey: key, counts: {}, reconciled };
  }
  const withOdds = options.eventsWithOdds ?? eventsWithOddsOf(board);
  const counts = db.transaction(() => {
    clearCold(db);
    const written = insertCold(db, board, withOdds);
    const setMeta = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
    setMeta.run('cold_board', key);
    setMeta.run('cold_loaded_at', String(board.options.now));
    setMeta.run('cold_counts', JSON.stringify(written));
    return written;
  }).immediate();
  return { loaded: true, boardKey: key, counts, reconciled: 0 };
}

function eventsWithOddsOf(board: Board): Set<string> {
  const ids = new Set<string>();
  board.forEachOdds((row) => {
    ids.add(row.eventId);
  });
  return ids;
}

// Children before parents, so foreign keys hold at every step.
const COLD_TABLES = ['player_box', 'team_box', 'events', 'players', 'teams', 'seasons', 'venues', 'leagues'];

function clearCold(db: Db): void {
  for (const table of COLD_TABLES) db.prepare(`DELETE FROM ${table}`).run();
}

function insertCold(db: Db, board: Board, withOdds: ReadonlySet<string>): Record<string, number> {
  // Each table is finished (its queued tail written) before the next begins, so every
  // parent row is in place before a child row refers to it.
  const counts: Record<string, number> = {};

  const leagues = new BatchInserter(db, 'leagues', ['code', 'name', 'sport']);
  for (const l of board.leagues) leagues.add(l.code, l.name, l.sport);
  counts.leagues = leagues.finish();

  const seasons = new BatchInserter(db, 'seasons', [
    'id', 'league', 'year', 'name', 'start_date', 'end_date', 'status', 'futures_event_id',
  ]);
  for (const s of board.seasons) {
    seasons.add(s.id, s.league, s.year, s.name, s.startDate, s.endDate, s.status, s.futuresEventId);
  }
  counts.seasons = seasons.finish();

  const venues = new BatchInserter(db, 'venues', ['id', 'name', 'city', 'indoor']);
  for (const v of board.venues) venues.add(v.id, v.name, v.city, v.indoor ? 1 : 0);
  counts.venues = venues.finish();

  const teams = new BatchInserter(db, 'teams', [
    'id', 'name', 'abbreviation', 'league', 'conference', 'division', 'venue_id',
  ]);
  for (const t of board.teams) teams.add(t.id, t.name, t.abbreviation, t.league, t.conference, t.division, t.venueId);
  counts.teams = teams.finish();

  const players = new BatchInserter(db, 'players', ['id', 'name', 'league', 'team_id', 'position']);
  for (const p of board.players) players.add(p.id, p.name, p.league, p.teamId, p.position);
  counts.players = players.finish();

  const events = new BatchInserter(db, 'events', [
    'id', 'league', 'home_team_id', 'home_team_name', 'away_team_id', 'away_team_name', 'start_time',
    'status', 'has_odds', 'venue_id', 'season_year', 'context', 'is_futures',
  ]);
  for (const e of board.events) {
    events.add(
      e.id, e.league, e.homeTeamId, e.homeTeamName, e.awayTeamId, e.awayTeamName, e.startTime,
      e.status, withOdds.has(e.id) ? 1 : 0, e.venueId, e.seasonYear, JSON.stringify(e.context), e.isFutures ? 1 : 0,
    );
  }
  counts.events = events.finish();

  const teamBox = new BatchInserter(db, 'team_box', [
    'event_id', 'team_id', 'home_id', 'away_id', 'league', 'home_score', 'away_score', 'result', 'stats',
  ]);
  for (const b of board.teamBox) {
    teamBox.add(b.eventId, b.teamId, b.homeId, b.awayId, b.league, b.homeScore, b.awayScore, b.result, JSON.stringify(b.stats));
  }
  counts.teamBox = teamBox.finish();

  const playerBox = new BatchInserter(db, 'player_box', ['event_id', 'player_id', 'team_id', 'date', 'data']);
  for (const b of board.playerBox) playerBox.add(b.eventId, b.playerId, b.teamId, b.date, JSON.stringify(b.data));
  counts.playerBox = playerBox.finish();

  return counts;
}

function reconcileEvents(db: Db, events: readonly EventRecord[], withOdds: ReadonlySet<string> | undefined): number {
  const update = new EventStatusUpdate(db);
  let changed = 0;
  for (const e of events) if (update.run(e.id, e.status, withOdds?.has(e.id))) changed++;
  return changed;
}
