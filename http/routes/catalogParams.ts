// Query parameters of the cold-data routes. Each
// route declares only the parameters it documents (plus include_futures on the event
// lists); anything else is ignored and named in meta.warnings.
import { EVENT_STATUSES } from '../../engine/model.ts';
import type { ParamDef } from '../schemas.ts';
import { COMMON_PARAMS } from '../schemas.ts';

export const LIMIT = COMMON_PARAMS.limit;
export const CURSOR = COMMON_PARAMS.cursor;

export const EVENT_LEAGUE = {
  name: 'league',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description:
    'Comma-separated league codes, at most 20, case-insensitive exact match per token, any-of. A league without an active season today (or an unknown one) is not an error: 200 with the events of the requested leagues that are in season (none if none is) and meta.note naming the others and listing the active leagues.',
} as const satisfies ParamDef;

export const CATALOG_LEAGUE = {
  name: 'league',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description:
    'Comma-separated league codes, at most 20, case-insensitive exact match per token, any-of. Teams and players are listed whether or not their league is in season; an unknown league matches nothing.',
} as const satisfies ParamDef;

const ID_TEXT = { kind: 'string', maxLength: 200 } as const;

export const EVENT_TEAM_ID = {
  name: 'team_id',
  ...ID_TEXT,
  description: 'Events where this team is home or away. Futures anchors have no teams, so they never match.',
} as const satisfies ParamDef;

export const STATUS = {
  name: 'status',
  kind: 'enum',
  values: EVENT_STATUSES,
  description:
    'Only events in this status, as the engine holds it at the time of the request. Giving a status also lets futures anchors in.',
} as const satisfies ParamDef;

export const STARTS_AFTER = {
  name: 'starts_after',
  kind: 'instant',
  description:
    'Events starting at or after this instant (ISO-8601 or epoch milliseconds). Default: now. A walk that relies on a default keeps the window of its first page (the cursor carries it).',
} as const satisfies ParamDef;

export const STARTS_BEFORE = {
  name: 'starts_before',
  kind: 'instant',
  description:
    'Events starting before this instant (exclusive; ISO-8601 or epoch milliseconds). Default: now + 14 days. A window whose end is not after its start is simply empty.',
} as const satisfies ParamDef;

export const INCLUDE_FUTURES = {
  name: 'include_futures',
  kind: 'boolean',
  default: false,
  description: 'true lists the synthetic season/tournament events that anchor futures; by default they are left out unless status is given.',
} as const satisfies ParamDef;

export const SEASON = {
  name: 'season',
  kind: 'integer',
  minimum: 1900,
  maximum: 2200,
  description: 'Only events of this season year (the year the season starts in, e.g. 2026 for NBA 2026-27).',
} as const satisfies ParamDef;

export const YEAR = {
  name: 'year',
  kind: 'integer',
  minimum: 1900,
  maximum: 2200,
  required: true,
  description: 'Required. Calendar year: every league season overlapping it (a season spanning New Year appears under both years).',
} as const satisfies ParamDef;

export const PLAYER_TEAM = {
  name: 'team',
  ...ID_TEXT,
  description: 'Alias of team_id. When both are given, team_id wins.',
} as const satisfies ParamDef;

export const PLAYER_TEAM_ID = {
  name: 'team_id',
  ...ID_TEXT,
  description: 'Players of this team. Wins over team when both are given.',
} as const satisfies ParamDef;

export const STATS_EVENT_ID = { name: 'event_id', ...ID_TEXT, description: 'Rows of this event.' } as const satisfies ParamDef;
export const STATS_TEAM_ID = { name: 'team_id', ...ID_TEXT, description: 'Rows of players of this team.' } as const satisfies ParamDef;
export const STATS_PLAYER_ID = { name: 'player_id', ...ID_TEXT, description: 'Rows of this player.' } as const satisfies ParamDef;

export const EVENTS_QUERY = [EVENT_LEAGUE, EVENT_TEAM_ID, STATUS, STARTS_AFTER, STARTS_BEFORE, INCLUDE_FUTURES, CURSOR, LIMIT] as const;
export const ACTIVE_EVENTS_QUERY = [EVENT_LEAGUE, INCLUDE_FUTURES, CURSOR, LIMIT] as const;
export const TEAMS_QUERY = [CATALOG_LEAGUE, CURSOR, LIMIT] as const;
export const PLAYERS_QUERY = [CATALOG_LEAGUE, PLAYER_TEAM, PLAYER_TEAM_ID, CURSOR, LIMIT] as const;
export const BOX_STATS_QUERY = [SEASON] as const;
export const STATS_PLAYERS_QUERY = [STATS_EVENT_ID, STATS_TEAM_ID, STATS_PLAYER_ID, CURSOR, LIMIT] as const;
export const SEASONS_QUERY = [YEAR] as const;
