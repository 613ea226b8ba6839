// /stats/players: player box stat rows filtered by any of event, team and
// player, keyset over (eventId, playerId). The route requires at least one filter
// (400 missing_parameter); here no filter simply walks every row.

import { PLAYER_BOX_COLUMNS, toPlayerBoxRow } from './boxRows.ts';
import type { Db } from './database.ts';
import { checkLimit } from './errors.ts';
import type { Page, PlayerBoxKey, PlayerBoxStatRow } from './rows.ts';
import { StatementCache } from './statementCache.ts';

export interface StatsPlayersFilter {
  eventId?: string;
  teamId?: string;
  playerId?: string;
}

const EVENT = 1;
const TEAM = 2;
const PLAYER = 4;

function sqlFor(shape: number): string {
  const where: string[] = [];
  if (shape & EVENT) where.push('event_id = @event');
  if (shape & TEAM) where.push('team_id = @team');
  if (shape & PLAYER) where.push('player_id = @player');
  where.push('(event_id, player_id) > (@afterEvent, @afterPlayer)');
  return `SELECT ${PLAYER_BOX_COLUMNS} FROM player_box WHERE ${where.join(' AND ')} ORDER BY event_id, player_id LIMIT @limit`;
}

export class StatsRepository {
  private readonly pages: StatementCache;

  constructor(db: Db) {
    this.pages = new StatementCache(db, sqlFor);
  }

  players(filter: StatsPlayersFilter, after: PlayerBoxKey | undefined, limit: number): Page<PlayerBoxStatRow, PlayerBoxKey> {
    checkLimit(limit);
    let shape = 0;
    const params: Record<string, string | number> = {
      afterEvent: after ? after.eventId : '',
      afterPlayer: after ? after.playerId : '',
      limit: limit + 1,
    };
    if (filter.eventId !== undefined) {
      shape |= EVENT;
      params.event = filter.eventId;
    }
    if (filter.teamId !== undefined) {
      shape |= TEAM;
      params.team = filter.teamId;
    }
    if (filter.playerId !== undefined) {
      shape |= PLAYER;
      params.player = filter.playerId;
    }
    const raw = this.pages.get(shape).all(params) as unknown[][];
    const more = raw.length > limit;
    const count = more ? limit : raw.length;
    const rows = new Array<PlayerBoxStatRow>(count);
    for (let i = 0; i < count; i++) rows[i] = toPlayerBoxRow(raw[i]!);
    const last = rows[count - 1];
    return { rows, next: more && last ? { eventId: last.eventId, playerId: last.playerId } : null };
  }
}
