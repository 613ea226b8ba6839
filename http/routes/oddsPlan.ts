// What one odds request asks of the engine: the odds routes' part of a list plan
// (listPlan.ts). The plan machinery cuts the league filter to the in-season leagues,
// decodes the cursor (a row id) and remembers the plan; this module says which filters
// make up the walk's fingerprint and what the engine is asked.
import type { OddsFilter } from '../../engine/oddsQuery.ts';
import type { OddsFormat } from '../../engine/rowJson.ts';
import { isIdKey } from './catalogCursor.ts';
import type { ListPlan, ListPlanSpec } from './listPlan.ts';

/** An odds route's engine query: the filter (leagues cut to the in-season ones) and how to page and render. */
export interface OddsQuery {
  filter: OddsFilter;
  format: OddsFormat;
  limit: number;
  /** /odds/updated only; null elsewhere. */
  since: number | null;
}

export type OddsPlan = ListPlan<string, OddsQuery>;

export interface OddsRequest {
  /** Route path template: part of the fingerprint. */
  route: string;
  /** The filter as requested (leagues not yet cut to the in-season ones). */
  filter: OddsFilter;
  format: OddsFormat;
  limit: number;
  cursor: string | undefined;
  /** /odds/updated only: its cursors carry the walk's as-of time. */
  since?: number;
}

export function oddsPlanSpec(request: OddsRequest): ListPlanSpec<string, OddsQuery> {
  const { filter, format, limit, since } = request;
  return {
    route: request.route,
    filters: fingerprintFields(filter, since),
    leagues: filter.leagues,
    cursor: request.cursor,
    isKey: isIdKey,
    needsAsOf: since !== undefined,
    query: (leagues) => ({ filter: leagues === null ? filter : { ...filter, leagues }, format, limit, since: since ?? null }),
  };
}

/** Every filter of the walk (a cursor replayed with other filters is invalid_cursor); odds_format, cursor and limit do not change the walk. */
function fingerprintFields(f: OddsFilter, since: number | undefined): Record<string, unknown> {
  return {
    league: f.leagues,
    sportsbook: f.sportsbooks,
    market: f.markets,
    event_id: f.eventIds,
    player_id: f.playerId,
    team_id: f.teamId,
    scope: f.scope,
    is_main: f.isMain,
    since,
  };
}
