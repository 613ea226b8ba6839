// Which quotes compete with each other. A market group is (event, subtype, period,
// line-key, player/team scope); its id doubles as the arbitrage record id:
//   {eventId}:{marketSubtype}:{period}:{lineKey}:{scope}
// lineKey is the HOME side's line for HOME/AWAY markets (an AWAY +3.5 quote joins the
// HOME -3.5 group), the line itself for OVER/UNDER, 'none' without a line; negative
// lines are written 'm3.5' so the id stays URL-safe. Quotes whose lines do not mirror
// (home -3.5 vs away +4.5, a middle) land in different groups and never meet.
// scope is the playerId on player props, the teamSide (HOME/AWAY) on team-scoped
// over/unders (TEAM_TOTAL), 'game' otherwise. teamSide rather than teamId because the
// served odds rows carry no team id, and within one event the two name the same team.

import { outcomeSetOf, OUTCOMES_NONE } from './sides.ts';

/** The fields of an odds row that decide its group (OddsInput and served odds rows both fit). */
export interface GroupKeyInput {
  eventId: string;
  market: string;
  marketSubtype: string;
  period: string;
  side: string;
  teamSide: string;
  line: number | null;
  playerId: string | null;
  marketScope: string | null;
}

const GAME_SCOPE = 'game';

/** The group's line for a quote on `side` at `line` (null for none). */
export function groupLineOf(side: string, line: number | null): number | null {
  if (line === null) return null;
  if (side === 'AWAY') return line === 0 ? 0 : -line;
  return line;
}

export function groupScopeOf(side: string, teamSide: string, playerId: string | null): string {
  if (playerId !== null) return playerId;
  if ((side === 'OVER' || side === 'UNDER') && (teamSide === 'HOME' || teamSide === 'AWAY')) return teamSide;
  return GAME_SCOPE;
}

function encodeLineKey(line: number | null): string {
  if (line === null) return 'none';
  return line < 0 ? `m${-line}` : String(line);
}

export function marketGroupId(eventId: string, marketSubtype: string, period: string, line: number | null, scope: string): string {
  return `${eventId}:${marketSubtype}:${period}:${encodeLineKey(line)}:${scope}`;
}

/** True for rows that can never take part in a signal: futures and sides outside any outcome set (YES). */
export function isExcludedRow(row: GroupKeyInput): boolean {
  return row.marketScope !== null || outcomeSetOf(row.market, row.side) === OUTCOMES_NONE;
}

/** The group id of a row, or null when the row is excluded. */
export function marketGroupIdOf(row: GroupKeyInput): string | null {
  if (isExcludedRow(row)) return null;
  return marketGroupId(
    row.eventId,
    row.marketSubtype,
    row.period,
    groupLineOf(row.side, row.line),
    groupScopeOf(row.side, row.teamSide, row.playerId),
  );
}
