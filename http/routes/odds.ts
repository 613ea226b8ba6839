// The odds routes: /odds, /odds/updated and the
// event, player and team odds, plus /status. Each is a cached route: the response
// cache keys on the raw path+query, its validity token is the version of the engine
// lists behind the request (oddsPages.ts), and a rebuild is one engine query whose
// rows come from the engine's per-row JSON fragments. A 304 never renders anything.
import type { OddsFilter } from '../../engine/oddsQuery.ts';
import { notFound } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { RouteRequest } from '../request.ts';
import type { QueryOf } from '../schemas.ts';
import type { Services } from './services.ts';
import { EVENT_ODDS_QUERY, ODDS_QUERY, SUBJECT_ODDS_QUERY, UPDATED_QUERY } from './oddsParams.ts';
import { deltaPage, deltaToken, listPage, listToken } from './oddsPages.ts';
import { ListPlans } from './listPlan.ts';
import { oddsPlanSpec } from './oddsPlan.ts';
import { KnownIds } from './knownIds.ts';
import { statusRoute } from './status.ts';
import { ACTIVE_EVENT, BASE_URL, CURSOR_RULES, curlExample, described, ETAG_RULES, KEY_HEADER, KEY_RULES, ODDS_FORMAT_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

const ODDS_PATH = '/api/v1/odds';
const UPDATED_PATH = '/api/v1/odds/updated';
const EVENT_PATH = '/api/v1/events/:eventId/odds';
const PLAYER_PATH = '/api/v1/players/:playerId/odds';
const TEAM_PATH = '/api/v1/teams/:teamId/odds';

const ORDER_TEXT = 'Rows are ordered by sportsbook, then id (plain string order); pages are keyset slices of that order, so a walk never repeats a row and returns every row that exists throughout it.';

function filterOf(parts: Partial<OddsFilter>): OddsFilter {
  return { leagues: null, sportsbooks: null, markets: null, eventIds: null, playerId: null, teamId: null, scope: null, isMain: false, ...parts };
}

export function oddsRoutes(ctx: Services): AnyRoute[] {
  const { engine, persistence } = ctx;
  const players = new KnownIds((id) => persistence.players.get(id) !== null);
  const teams = new KnownIds((id) => persistence.teams.get(id) !== null);

  // What each route asks of the engine, one plan per distinct request (listPlan.ts). The
  // path routes key their plans on the request (path ids are not part of the parsed
  // query) and answer 404 for an unknown id before building one.
  const oddsPlans = new ListPlans(ctx.cursors, (q: QueryOf<typeof ODDS_QUERY>) =>
    oddsPlanSpec({
      route: ODDS_PATH,
      filter: filterOf({
        leagues: q.league ?? null,
        sportsbooks: q.sportsbook ?? null,
        markets: q.market ?? null,
        eventIds: q.event_id ?? null,
        playerId: q.player_id ?? null,
        teamId: q.team_id ?? null,
        scope: q.scope ?? null,
        isMain: q.is_main,
      }),
      format: q.odds_format,
      limit: q.limit,
      cursor: q.cursor,
    }),
  );
  const updatedPlans = new ListPlans(ctx.cursors, (q: QueryOf<typeof UPDATED_QUERY>) =>
    oddsPlanSpec({
      route: UPDATED_PATH,
      filter: filterOf({ leagues: q.league ?? null, sportsbooks: q.sportsbook ?? null, markets: q.market ?? null }),
      format: q.odds_format,
      limit: q.limit,
      cursor: q.cursor,
      since: q.since,
    }),
  );
  const eventPlans = new ListPlans(ctx.cursors, (req: RouteRequest<QueryOf<typeof EVENT_ODDS_QUERY>>) => {
    const id = req.params.eventId!;
    if (!engine.hasEvent(id)) throw notFound(`no event ${id}`, 'eventId');
    return oddsPlanSpec({ route: EVENT_PATH, filter: filterOf({ eventIds: [id], isMain: req.query.is_main }), format: req.query.odds_format, limit: 1, cursor: undefined });
  });
  const playerPlans = new ListPlans(ctx.cursors, (req: RouteRequest<QueryOf<typeof SUBJECT_ODDS_QUERY>>) => {
    const id = req.params.playerId!;
    if (!players.has(id)) throw notFound(`no player ${id}`, 'playerId');
    return oddsPlanSpec({ route: PLAYER_PATH, filter: filterOf({ playerId: id, isMain: req.query.is_main }), format: req.query.odds_format, limit: req.query.limit, cursor: req.query.cursor });
  });
  const teamPlans = new ListPlans(ctx.cursors, (req: RouteRequest<QueryOf<typeof SUBJECT_ODDS_QUERY>>) => {
    const id = req.params.teamId!;
    if (!teams.has(id)) throw notFound(`no team ${id}`, 'teamId');
    return oddsPlanSpec({ route: TEAM_PATH, filter: filterOf({ teamId: id, isMain: req.query.is_main }), format: req.query.odds_format, limit: req.query.limit, cursor: req.query.cursor });
  });

  const odds = defineRoute({
    path: ODDS_PATH,
    auth: 'key',
    response: 'OddsRow',
    query: ODDS_QUERY,
    summary: 'Odds rows, filtered and keyset-paginated.',
    description: described(
      [
        ORDER_TEXT,
        'meta.updated is the latest updated among the page rows; on an empty page, the board\'s as-of time when the page was first found empty (kept while it stays empty, so its ETag holds).',
        CURSOR_RULES, ODDS_FORMAT_RULES, ETAG_RULES, PARAMETER_ERRORS,
        'An out-of-season league answers 200 with [] and meta.note.', KEY_RULES,
      ],
      curlExample(
        `curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=moneyline&odds_format=american&is_main=true&limit=5'`,
        '# the next page: the same filters plus the cursor',
        `CURSOR=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=moneyline&limit=5' | jq -r .nextCursor)`,
        `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/odds?market=moneyline&limit=5&cursor=$CURSOR"`,
      ),
    ),
    cache: {
      validity: (req, now) => listToken(engine, oddsPlans.of(req.query, req.query, now)),
    },
    handle: (req) => listPage(engine, oddsPlans.of(req.query, req.query, req.now)),
  });

  const updated = defineRoute({
    path: UPDATED_PATH,
    auth: 'key',
    response: 'OddsRow',
    query: UPDATED_QUERY,
    summary: 'The delta feed: rows updated at or after since, tombstones included.',
    description: described(
      [
        ORDER_TEXT,
        'Tombstones (selections that left the board) are the row\'s last state plus "removed": true and stay for at least 10 minutes. meta.updated is the board\'s as-of time when the walk\'s first page was read; every page of the walk repeats it (it rides in the cursor) and the next poll passes it as since.',
        'since: ISO-8601 instant or epoch milliseconds; missing: 400 missing_parameter. Sync: load /api/v1/snapshot, then poll with since = its syncToken, then each walk\'s meta.updated, upserting rows by id and deleting tombstones. A since older than the tombstone horizon answers 200 with a meta.note: re-bootstrap from the snapshot; with a tick archive (ARCHIVE_DIR) a since up to REPLAY_WINDOW_HOURS (default 24) old is answered exactly instead, the rows removed since included (docs/archive.md).',
        CURSOR_RULES, ODDS_FORMAT_RULES, ETAG_RULES, PARAMETER_ERRORS, KEY_RULES,
      ],
      curlExample(
        `SINCE=$(curl -s --compressed ${KEY_HEADER} '${BASE_URL}/api/v1/snapshot' | jq -r .syncToken)`,
        `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/odds/updated?since=$SINCE&limit=100"`,
      ),
    ),
    cache: {
      validity: (req, now) => deltaToken(engine, updatedPlans.of(req.query, req.query, now)),
    },
    handle: (req) => deltaPage(engine, updatedPlans.of(req.query, req.query, req.now), ctx.replay),
  });

  const eventOdds = defineRoute({
    path: EVENT_PATH,
    auth: 'key',
    response: 'OddsRow',
    query: EVENT_ODDS_QUERY,
    summary: 'Every book price for one event, in one response.',
    description: described(
      [
        'All rows of the event (futures anchors included: their futures rows), unpaginated: cursor and limit are not parameters of this route and are ignored with a meta.warnings entry. nextCursor is always null. Unknown event: 404 not_found.',
        ORDER_TEXT, ODDS_FORMAT_RULES, ETAG_RULES, PARAMETER_ERRORS, KEY_RULES,
      ],
      curlExample(ACTIVE_EVENT, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/events/$EVENT/odds?odds_format=decimal&is_main=true"`),
    ),
    cache: {
      validity: (req, now) => listToken(engine, eventPlans.of(req, req, now)),
    },
    handle: (req) => listPage(engine, eventPlans.of(req, req, req.now), Math.max(1, engine.liveRows)),
  });

  const playerOdds = defineRoute({
    path: PLAYER_PATH,
    auth: 'key',
    response: 'OddsRow',
    query: SUBJECT_ODDS_QUERY,
    summary: 'Prop prices for markets that reference the player.',
    description: described(
      [
        'Player props (game and season) whose playerId is the player. scope is not a parameter here (ignored with a warning). Unknown player: 404 not_found.',
        ORDER_TEXT, CURSOR_RULES, ODDS_FORMAT_RULES, ETAG_RULES, PARAMETER_ERRORS, KEY_RULES,
      ],
      curlExample(
        `PLAYER=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=player&limit=1' | jq -r '.data[0].playerId')`,
        `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/players/$PLAYER/odds?limit=10"`,
      ),
    ),
    cache: {
      validity: (req, now) => listToken(engine, playerPlans.of(req, req, now)),
    },
    handle: (req) => listPage(engine, playerPlans.of(req, req, req.now)),
  });

  const teamOdds = defineRoute({
    path: TEAM_PATH,
    auth: 'key',
    response: 'OddsRow',
    query: SUBJECT_ODDS_QUERY,
    summary: 'Prices for markets of events where the team is home or away.',
    description: described(
      [
        'Game rows only: futures anchors have no home or away team. scope is not a parameter here (ignored with a warning). Unknown team: 404 not_found.',
        ORDER_TEXT, CURSOR_RULES, ODDS_FORMAT_RULES, ETAG_RULES, PARAMETER_ERRORS, KEY_RULES,
      ],
      curlExample(
        `TEAM=$(curl -s '${BASE_URL}/api/v1/events/active?limit=1' | jq -r '.data[0].homeTeamId')`,
        `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/teams/$TEAM/odds?odds_format=american&limit=10"`,
      ),
    ),
    cache: {
      validity: (req, now) => listToken(engine, teamPlans.of(req, req, now)),
    },
    handle: (req) => listPage(engine, teamPlans.of(req, req, req.now)),
  });

  return [odds, updated, eventOdds, playerOdds, teamOdds, statusRoute(engine)];
}
