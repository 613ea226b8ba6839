// Players: keyset pages over id, one player, and the player's box stat rows.
// The route resolves the team/team_id alias; this takes teamId only.

import type { Statement } from 'better-sqlite3';
import { PLAYER_BOX_COLUMNS, toPlayerBoxRow } from './boxRows.ts';
import type { Db } from './database.ts';
import { checkLimit } from './errors.ts';
import { applyLeagueFilter, leagueClause } from './leagueFilter.ts';
import { pageOf } from './page.ts';
import type { Page, PlayerBoxStatRow, PlayerRow } from './rows.ts';
import { StatementCache } from './statementCache.ts';

export interface PlayerListQuery {
  league?: string | readonly string[];
  teamId?: string;
  after?: string;
  limit: number;
}

type RawPlayer = [string, string, string, string, string];

function toPlayerRow(r: RawPlayer): PlayerRow {
  return { id: r[0], name: r[1], league: r[2], teamId: r[3], position: r[4] };
}

const TEAM = 4;

function listSql(shape: number): string {
  const where = [leagueClause(shape), shape & TEAM ? 'team_id = @team' : null, 'id > @after'].filter((c) => c !== null);
  return `SELECT id, name, league, team_id, position FROM players WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`;
}

const STATS_SQL = `SELECT ${PLAYER_BOX_COLUMNS.split(', ').map((c) => 'b.' + c).join(', ')}
  FROM player_box AS b JOIN events AS e ON e.id = b.event_id
  WHERE b.player_id = @id AND (@season IS NULL OR e.season_year = @season)
  ORDER BY e.start_time, e.id`;

export class PlayersRepository {
  private readonly lists: StatementCache;
  private readonly getStatement: Statement;
  private readonly statsStatement: Statement;

  constructor(db: Db) {
    this.lists = new StatementCache(db, listSql);
    this.getStatement = db.prepare('SELECT id, name, league, team_id, position FROM players WHERE id = ?').raw(true);
    this.statsStatement = db.prepare(STATS_SQL).raw(true);
  }

  list(q: PlayerListQuery): Page<PlayerRow, string> {
    checkLimit(q.limit);
    const params: Record<string, string | number> = { after: q.after ?? '', limit: q.limit + 1 };
    let { shape, matchesNothing } = applyLeagueFilter(q.league, params);
    if (matchesNothing) return { rows: [], next: null };
    if (q.teamId !== undefined) {
      shape |= TEAM;
      params.team = q.teamId;
    }
    return pageOf(this.lists.get(shape).all(params) as RawPlayer[], q.limit, toPlayerRow);
  }

  get(id: string): PlayerRow | null {
    const r = this.getStatement.get(id) as RawPlayer | undefined;
    return r === undefined ? null : toPlayerRow(r);
  }

  /** The player's rows in event order, optionally for one season year; null for an unknown player. */
  stats(id: string, season?: number): PlayerBoxStatRow[] | null {
    if (this.getStatement.get(id) === undefined) return null;
    return (this.statsStatement.all({ id, season: season ?? null }) as unknown[][]).map(toPlayerBoxRow);
  }
}
