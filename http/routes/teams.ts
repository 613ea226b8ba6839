// The team routes: /teams (keyset over id), /teams/{id}
// and /teams/{id}/stats, read from SQLite. Validity: the versions of the data sets
// each reads (they only grow, so a sum moves exactly when one of them does).
import { notFound } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import { isIdKey, keysetWalk, nextCursor } from './catalogCursor.ts';
import { BOX_STATS_QUERY, TEAMS_QUERY } from './catalogParams.ts';
import type { Services } from './services.ts';
import { BASE_URL, CURSOR_RULES, curlExample, ETAG_RULES, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

const TEAMS_PATH = '/api/v1/teams';

export function teamRoutes(ctx: Services): AnyRoute[] {
  const { persistence } = ctx;
  const teams = persistence.teams;

  const list = defineRoute({
    path: TEAMS_PATH,
    auth: 'none',
    response: 'Team',
    query: TEAMS_QUERY,
    summary: 'Teams, keyset-paginated over id.',
    description:
      `Ordered by id (plain string order). meta.updated is when the teams data last changed. No key needed. ${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS}` +
      curlExample(
        `curl -s '${BASE_URL}/api/v1/teams?limit=5'`,
        '# revalidate: the same request with the ETag answers 304 while the teams are unchanged',
        `ETAG=$(curl -s -o /dev/null -D - '${BASE_URL}/api/v1/teams?limit=5' | tr -d '\\r' | awk 'tolower($1) == "etag:" { print $2 }')`,
        `curl -s -o /dev/null -w '%{http_code}\\n' -H "If-None-Match: $ETAG" '${BASE_URL}/api/v1/teams?limit=5'`,
      ),
    cache: { validity: () => persistence.version('teams') },
    handle: (req) => {
      const q = req.query;
      const walk = keysetWalk(ctx.cursors, TEAMS_PATH, { league: q.league }, q.cursor, isIdKey);
      const page = teams.list({ league: q.league, after: walk.after, limit: q.limit });
      return {
        kind: 'data',
        data: page.rows,
        nextCursor: page.next === null ? null : nextCursor(ctx.cursors, walk.fingerprint, page.next),
        updated: persistence.changedAt('teams'),
      };
    },
  });

  const one = defineRoute({
    path: '/api/v1/teams/:teamId',
    auth: 'none',
    response: 'Team',
    query: [],
    summary: 'One team.',
    description: `data holds one Team. Unknown id: 404 not_found. No key needed. ${ETAG_RULES}` + curlExample(`TEAM=$(curl -s '${BASE_URL}/api/v1/teams?limit=1' | jq -r '.data[0].id')`, `curl -s "${BASE_URL}/api/v1/teams/$TEAM"`),
    cache: { validity: () => persistence.version('teams') },
    handle: (req) => {
      const team = teams.get(req.params.teamId!);
      if (team === null) throw notFound(`no team ${req.params.teamId}`, 'teamId');
      return { kind: 'data', data: [team], updated: persistence.changedAt('teams') };
    },
  });

  const stats = defineRoute({
    path: '/api/v1/teams/:teamId/stats',
    auth: 'key',
    response: 'TeamBoxRow',
    query: BOX_STATS_QUERY,
    summary: 'The team\'s box stat rows, one per event with a box score, in event order; unpaginated.',
    description:
      `Rows ordered by event start, then event id. season keeps one season year (an integer; another value: 400 invalid_parameter). Unknown team: 404 not_found. ${ETAG_RULES} ${KEY_RULES}` +
      curlExample(`TEAM=$(curl -s '${BASE_URL}/api/v1/teams?limit=1' | jq -r '.data[0].id')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/teams/$TEAM/stats"`),
    cache: { validity: () => persistence.version('teams') + persistence.version('stats') + persistence.version('events') },
    handle: (req) => {
      const rows = teams.stats(req.params.teamId!, req.query.season);
      if (rows === null) throw notFound(`no team ${req.params.teamId}`, 'teamId');
      return { kind: 'data', data: rows, updated: persistence.changedAt('stats') };
    },
  });

  return [list, one, stats];
}
