// Query parameters of the odds routes. Each route
// declares only the parameters it documents: anything else (is_main or scope on
// /odds/updated, scope on the player and team routes, cursor or limit on
// /events/{id}/odds) is an unknown parameter, ignored and named in meta.warnings.
import type { ParamDef } from '../schemas.ts';
import { COMMON_PARAMS } from '../schemas.ts';
import { ODDS_FORMATS } from '../../engine/rowJson.ts';

export const SCOPES = ['event', 'season', 'tournament'] as const;

export const LEAGUE = {
  name: 'league',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description:
    'Comma-separated league codes, at most 20, case-insensitive exact match per token, any-of. A league without an active season (or an unknown one) is not an error: 200 with the rows of the requested leagues that are in season (none if none is) and meta.note naming the requested leagues without an active season and listing the active ones.',
} as const satisfies ParamDef;

export const SPORTSBOOK = {
  name: 'sportsbook',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description: 'Comma-separated source ids (sportsbooks and DFS sources), at most 20, case-insensitive exact match per token, any-of.',
} as const satisfies ParamDef;

export const MARKET = {
  name: 'market',
  kind: 'list',
  case: 'upper',
  maxItems: 20,
  description: 'Comma-separated tokens, at most 20, any-of; each token matches case-insensitive substrings of market OR marketSubtype, e.g. TOTAL matches TOTAL, TEAM_TOTAL and PLAYER_TOTAL_*.',
} as const satisfies ParamDef;

export const EVENT_ID = {
  name: 'event_id',
  kind: 'list',
  maxItems: 20,
  description: 'One event id or a comma list of at most 20, exact match, any-of. Unknown ids match nothing.',
} as const satisfies ParamDef;

export const PLAYER_ID = {
  name: 'player_id',
  kind: 'string',
  maxLength: 200,
  description: 'Resolved player id: rows of player props about that player.',
} as const satisfies ParamDef;

export const TEAM_ID = {
  name: 'team_id',
  kind: 'string',
  maxLength: 200,
  description: 'Team id: game rows of events where the team is home or away. Futures anchors have no home or away team, so futures rows never match.',
} as const satisfies ParamDef;

export const SCOPE = {
  name: 'scope',
  kind: 'enum',
  values: SCOPES,
  description: 'event (ordinary game rows, no marketScope), season (marketScope SEASON) or tournament (marketScope TOURNAMENT); exact match; omitted means all three. Another value answers 400 invalid_parameter with validValues.',
} as const satisfies ParamDef;

export const ODDS_FORMAT = {
  name: 'odds_format',
  kind: 'enum',
  values: ODDS_FORMATS,
  default: 'all',
  description:
    'all (default): priceAmerican and priceDecimal; american or decimal: only that field; probability: priceProbability = 1/priceDecimal rounded to 4 places replaces both. DFS pick\'em rows carry dfsMultiplier and no price field in every format. Not part of the cursor fingerprint: a walk may change format between pages.',
} as const satisfies ParamDef;

export const IS_MAIN = {
  name: 'is_main',
  kind: 'boolean',
  default: false,
  description:
    'true keeps only each market\'s primary line per book: among a book\'s OVER/UNDER lines for the same event + subtype + period + player (player props) or team (team totals), priced on both sides, the line minimizing |p_over - p_under| of its implied probabilities stays (ties: the lower line). Single lines, other markets, one-sided lines and DFS rows pass through.',
} as const satisfies ParamDef;

export const SINCE = {
  name: 'since',
  kind: 'instant',
  required: true,
  description:
    'Required. ISO-8601 instant or epoch milliseconds: rows whose updated is at or after it, tombstones ("removed": true) included. Pass the previous walk\'s meta.updated, or the snapshot\'s syncToken. A since older than the tombstone retention window still answers 200, with meta.note asking to re-bootstrap from /snapshot.',
} as const satisfies ParamDef;

export const LIMIT = COMMON_PARAMS.limit;
export const CURSOR = COMMON_PARAMS.cursor;

export const ODDS_QUERY = [LEAGUE, SPORTSBOOK, MARKET, EVENT_ID, PLAYER_ID, TEAM_ID, SCOPE, ODDS_FORMAT, IS_MAIN, CURSOR, LIMIT] as const;
export const UPDATED_QUERY = [SINCE, LEAGUE, SPORTSBOOK, MARKET, ODDS_FORMAT, CURSOR, LIMIT] as const;
export const EVENT_ODDS_QUERY = [ODDS_FORMAT, IS_MAIN] as const;
export const SUBJECT_ODDS_QUERY = [ODDS_FORMAT, IS_MAIN, CURSOR, LIMIT] as const;
