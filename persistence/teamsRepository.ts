// Teams: keyset pages over id, one team, and its box stat rows (with teamId).

import type { Statement } from 'better-sqlite3';
import { TEAM_BOX_COLUMNS, toTeamBoxRow } from './boxRows.ts';
import type { Db } from './database.ts';
import { checkLimit } from './errors.ts';
import { applyLeagueFilter, leagueClause } from './leagueFilter.ts';
import { pageOf } from './page.ts';
import type { Page, TeamBoxStatRow, TeamRow } from './rows.ts';
import { StatementCache } from './statementCache.ts';

export interface TeamListQuery {
  league?: string | readonly string[];
  after?: string;
  limit: number;
}

type RawTeam = [string, string, string, string];

function toTeamRow(r: RawTeam): TeamRow {
  return { id: r[0], name: r[1], abbreviation: r[2], league: r[3] };
}

function listSql(shape: number): string {
  const where = [leagueClause(shape), 'id > @after'].filter((c) => c !== null);
  return `SELECT id, name, abbreviation, league FROM teams WHERE ${where.join(' AND ')} ORDER BY id LIMIT @limit`;
}

// Box rows ordered by event start so a team's season reads in order.
const STATS_SQL = `SELECT ${TEAM_BOX_COLUMNS.split(', ').map((c) => 'b.' + c).join(', ')}
  FROM team_box AS b JOIN events AS e ON e.id = b.event_id
  WHERE b.team_id = @id AND (@season IS NULL OR e.season_year = @season)
  ORDER BY e.start_time, e.id`;

export class TeamsRepository {
  private readonly lists: StatementCache;
  private readonly getStatement: Statement;
  private readonly statsStatement: Statement;

  constructor(db: Db) {
    this.lists = new StatementCache(db, listSql);
    this.getStatement = db.prepare('SELECT id, name, abbreviation, league FROM teams WHERE id = ?').raw(true);
    this.statsStatement = db.prepare(STATS_SQL).raw(true);
  }

  list(q: TeamListQuery): Page<TeamRow, string> {
    checkLimit(q.limit);
    const params: Record<string, string | number> = { after: q.after ?? '', limit: q.limit + 1 };
    const { shape, matchesNothing } = applyLeagueFilter(q.league, params);
    if (matchesNothing) return { rows: [], next: null };
    const raw = this.lists.get(shape).all(params) as RawTeam[];
    return pageOf(raw, q.limit, toTeamRow);
  }

  get(id: string): TeamRow | null {
    const r = this.getStatement.get(id) as RawTeam | undefined;
    return r === undefined ? null : toTeamRow(r);
  }

  /** The team's rows, one per final event, optionally for one season year; null for an unknown team. */
  stats(id: string, season?: number): TeamBoxStatRow[] | null {
    if (this.getStatement.get(id) === undefined) return null;
    return (this.statsStatement.all({ id, season: season ?? null }) as unknown[][]).map(toTeamBoxRow);
  }
}
