// Events: keyset pages over (startTime, id), single-event detail,
// the full box score, and the status writes the engine flushes in batches.

import type { Statement } from 'better-sqlite3';
import { EVENT_STATUSES, type EventStatus } from '../engine/model.ts';
import type { Db } from './database.ts';
import type { DataVersions } from './dataVersion.ts';
import { checkLimit, PersistenceError } from './errors.ts';
import type { EventBoxScore, EventDetailRow, EventKey, EventRow, Page } from './rows.ts';
import { EventStatusUpdate } from './eventStatusUpdate.ts';
import { StatementCache } from './statementCache.ts';
import { isoMinutesZ } from '../engine/timeFormat.ts';
import { PLAYER_BOX_COLUMNS, TEAM_BOX_COLUMNS, toPlayerBoxRow, toTeamBoxRow } from './boxRows.ts';

export interface EventListQuery {
  /** Lower-case league codes, any-of. An empty array matches nothing; omit it for all leagues. */
  leagues?: readonly string[];
  /** Home or away team. */
  teamId?: string;
  status?: string;
  /** Epoch ms, inclusive; null for no lower bound. The route defaults it to now. */
  startsAfter: number | null;
  /** Epoch ms, exclusive; null for no upper bound. The route defaults it to now + 14 days. */
  startsBefore: number | null;
  /** Futures anchors are left out unless this is true or status is given. */
  includeFutures?: boolean;
  /** true: only events with live markets (/events/active); false: only those without. */
  hasOdds?: boolean;
  after?: EventKey;
  limit: number;
}

export interface EventStatusChange {
  id: string;
  status?: EventStatus;
  hasOdds?: boolean;
}

export const DEFAULT_EVENT_WINDOW_MS = 14 * 24 * 60 * 60 * 1000;

/** The /events window when starts_after and starts_before are absent: now to now + 14 days. */
export function defaultEventWindow(now: number): { startsAfter: number; startsBefore: number } {
  return { startsAfter: now, startsBefore: now + DEFAULT_EVENT_WINDOW_MS };
}

const EVENT_COLUMNS = `id, home_team_id, home_team_name, away_team_id, away_team_name, start_time,
  status, league, has_odds, venue_id, season_year, context`;

// Shape bits of the list query: which optional filters are present, and (JSON) whether
// SQLite renders each row's JSON itself.
const ONE_LEAGUE = 1;
const MANY_LEAGUES = 2;
const TEAM = 4;
const STATUS = 8;
const NO_FUTURES = 16;
const HAS_ODDS = 32;
const JSON_ROWS = 64;

// The event list row as SQLite JSON, field for field what JSON.stringify(toEventRow(...))
// writes: context is stored minified by JSON.stringify, and json() passes it through.
const EVENT_JSON = `json_object('id', id, 'homeTeamId', home_team_id, 'homeTeamName', home_team_name,
  'awayTeamId', away_team_id, 'awayTeamName', away_team_name,
  'startTime', strftime('%Y-%m-%dT%H:%MZ', start_time / 1000, 'unixepoch'), 'status', status, 'league', league,
  'hasOdds', json(CASE has_odds WHEN 1 THEN 'true' ELSE 'false' END), 'venueId', venue_id,
  'seasonYear', season_year, 'context', json(context)), start_time, id`;

function listSql(shape: number): string {
  const where: string[] = [];
  if (shape & ONE_LEAGUE) where.push('league = @league');
  if (shape & MANY_LEAGUES) where.push('league IN (SELECT value FROM json_each(@leagues))');
  if (shape & TEAM) where.push('(home_team_id = @team OR away_team_id = @team)');
  if (shape & STATUS) where.push('status = @status');
  if (shape & NO_FUTURES) where.push('is_futures = 0');
  if (shape & HAS_ODDS) where.push('has_odds = @hasOdds');
  where.push('start_time >= @from AND start_time < @to');
  where.push('(start_time, id) > (@afterTime, @afterId)');
  const columns = shape & JSON_ROWS ? EVENT_JSON : EVENT_COLUMNS;
  return `SELECT ${columns} FROM events WHERE ${where.join(' AND ')} ORDER BY start_time, id LIMIT @limit`;
}

// Unbounded ends of the window and the position before the first row; every event
// start is a real date, far inside these.
const MIN_TIME = Number.MIN_SAFE_INTEGER;
const MAX_TIME = Number.MAX_SAFE_INTEGER;

type RawEvent = [string, string | null, string | null, string | null, string | null, number, string, string, number, string | null, number, string];

function toEventRow(r: RawEvent): EventRow {
  return {
    id: r[0],
    homeTeamId: r[1],
    homeTeamName: r[2],
    awayTeamId: r[3],
    awayTeamName: r[4],
    startTime: isoMinutesZ(r[5]),
    status: r[6],
    league: r[7],
    hasOdds: r[8] === 1,
    venueId: r[9],
    seasonYear: r[10],
    context: JSON.parse(r[11]) as Record<string, unknown>,
  };
}

export class EventsRepository {
  private readonly lists: StatementCache;
  private readonly detailStatement: Statement;
  private readonly leagueOfStatement: Statement;
  private readonly teamBoxStatement: Statement;
  private readonly playerBoxStatement: Statement;
  private readonly startTimesStatement: Statement;
  private readonly statusUpdate: EventStatusUpdate;

  constructor(
    private readonly db: Db,
    private readonly versions: DataVersions,
  ) {
    this.lists = new StatementCache(db, listSql);
    this.detailStatement = db
      .prepare(
        `SELECT ${EVENT_COLUMNS}, b.home_score, b.away_score FROM events
         LEFT JOIN (SELECT home_score, away_score FROM team_box WHERE event_id = @id LIMIT 1) AS b
         WHERE id = @id`,
      )
      .raw(true);
    this.leagueOfStatement = db.prepare('SELECT league FROM events WHERE id = ?').pluck();
    this.teamBoxStatement = db
      .prepare(`SELECT ${TEAM_BOX_COLUMNS} FROM team_box WHERE event_id = ? ORDER BY team_id = home_id DESC, team_id`)
      .raw(true);
    this.playerBoxStatement = db
      .prepare(`SELECT ${PLAYER_BOX_COLUMNS} FROM player_box WHERE event_id = ? ORDER BY player_id`)
      .raw(true);
    this.startTimesStatement = db.prepare('SELECT start_time FROM events ORDER BY start_time').pluck();
    this.statusUpdate = new EventStatusUpdate(db);
  }

  list(q: EventListQuery): Page<EventRow, EventKey> {
    const raw = this.query(q, 0);
    const more = raw.length > q.limit;
    const count = more ? q.limit : raw.length;
    const rows = new Array<EventRow>(count);
    for (let i = 0; i < count; i++) rows[i] = toEventRow(raw[i] as RawEvent);
    const last = raw[count - 1] as RawEvent | undefined;
    return { rows, next: more && last ? { startTime: last[5], id: last[0] } : null };
  }

  /**
   * The same page as list(), already serialized: the rows' JSON objects joined by ','
   * (no brackets), byte for byte JSON.stringify of list()'s rows, rendered by SQLite
   * without building row objects (what the envelope writer takes as its rows buffer).
   */
  listJson(q: EventListQuery): { json: string; count: number; next: EventKey | null } {
    const raw = this.query(q, JSON_ROWS) as [string, number, string][];
    const more = raw.length > q.limit;
    const count = more ? q.limit : raw.length;
    let json = '';
    for (let i = 0; i < count; i++) json += i === 0 ? raw[i]![0] : ',' + raw[i]![0];
    const last = raw[count - 1];
    return { json, count, next: more && last ? { startTime: last[1], id: last[2] } : null };
  }

  /** Runs the list query of q's shape; returns up to limit + 1 raw rows. */
  private query(q: EventListQuery, render: number): unknown[][] {
    checkLimit(q.limit);
    if (q.leagues !== undefined && q.leagues.length === 0) return [];
    let shape = render;
    const params: Record<string, string | number> = {
      from: q.startsAfter ?? MIN_TIME,
      to: q.startsBefore ?? MAX_TIME,
      afterTime: q.after ? q.after.startTime : MIN_TIME,
      afterId: q.after ? q.after.id : '',
      limit: q.limit + 1,
    };
    if (q.leagues !== undefined) {
      if (q.leagues.length === 1) {
        shape |= ONE_LEAGUE;
        params.league = q.leagues[0]!.toLowerCase();
      } else {
        shape |= MANY_LEAGUES;
        params.leagues = JSON.stringify(q.leagues.map((l) => l.toLowerCase()));
      }
    }
    if (q.teamId !== undefined) {
      shape |= TEAM;
      params.team = q.teamId;
    }
    if (q.status !== undefined) {
      shape |= STATUS;
      params.status = q.status;
    } else if (q.includeFutures !== true) {
      shape |= NO_FUTURES;
    }
    if (q.hasOdds !== undefined) {
      shape |= HAS_ODDS;
      params.hasOdds = q.hasOdds ? 1 : 0;
    }
    return this.lists.get(shape).all(params) as unknown[][];
  }

  /**
   * Every event's start (epoch ms, futures anchors included), ascending: which events a
   * time window holds is decided by where its bounds fall among these, so a window
   * that moves with the clock can tell when its result changes (http/routes/eventStarts.ts).
   */
  startTimes(): Float64Array {
    return Float64Array.from(this.startTimesStatement.all() as number[]);
  }

  /** The event detail (scores once a box score exists), or null for an unknown id. Futures anchors are real events here. */
  detail(id: string): EventDetailRow | null {
    const r = this.detailStatement.get({ id }) as [...RawEvent, number | null, number | null] | undefined;
    if (r === undefined) return null;
    const row: EventDetailRow = toEventRow(r as unknown as RawEvent);
    if (r[12] !== null && r[13] !== null) {
      row.homeScore = r[12];
      row.awayScore = r[13];
    }
    return row;
  }

  /** The whole box score (home team row first), or null for an unknown event. */
  boxScore(id: string): EventBoxScore | null {
    const league = this.leagueOfStatement.get(id) as string | undefined;
    if (league === undefined) return null;
    return {
      eventId: id,
      league,
      teams: (this.teamBoxStatement.all(id) as unknown[][]).map(toTeamBoxRow),
      players: (this.playerBoxStatement.all(id) as unknown[][]).map(toPlayerBoxRow),
    };
  }

  /**
   * Writes the engine's status (and live-market) changes in one transaction. Unknown
   * ids are skipped. Returns how many events changed; the events version moves only
   * if one did.
   */
  updateStatuses(changes: readonly EventStatusChange[], now: number): number {
    for (const c of changes) {
      if (c.status !== undefined && !(EVENT_STATUSES as readonly string[]).includes(c.status)) {
        throw new PersistenceError('invalid_status', `unknown event status '${c.status}' for ${c.id}`);
      }
    }
    const changed = this.db.transaction(() => {
      let n = 0;
      for (const c of changes) if (this.statusUpdate.run(c.id, c.status, c.hasOdds)) n++;
      return n;
    })();
    if (changed > 0) this.versions.bump(['events'], now);
    return changed;
  }
}
