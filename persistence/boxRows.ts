// Column lists and row mappers for box-score rows, shared by every repository that
// returns them so the JSON shape (TeamBoxRow with teamId, PlayerBoxRow) is defined once.

import type { PlayerBoxStatRow, TeamBoxStatRow } from './rows.ts';

export const TEAM_BOX_COLUMNS = 'event_id, team_id, home_id, away_id, league, home_score, away_score, result, stats';
export const PLAYER_BOX_COLUMNS = 'event_id, player_id, team_id, date, data';

export function toTeamBoxRow(r: unknown[]): TeamBoxStatRow {
  return {
    eventId: r[0] as string,
    teamId: r[1] as string,
    homeId: r[2] as string,
    awayId: r[3] as string,
    league: r[4] as string,
    homeScore: r[5] as number,
    awayScore: r[6] as number,
    result: r[7] as number,
    stats: JSON.parse(r[8] as string) as Record<string, unknown>,
  };
}

export function toPlayerBoxRow(r: unknown[]): PlayerBoxStatRow {
  return {
    eventId: r[0] as string,
    playerId: r[1] as string,
    teamId: r[2] as string,
    date: r[3] as string,
    data: JSON.parse(r[4] as string) as Record<string, unknown>,
  };
}
