// The player routes: /players (keyset over id, team and
// team_id aliases with team_id winning), /players/{id}, /players/{id}/stats and
// /stats/players (keyset over (eventId, playerId)), read from SQLite.
import { HttpError, notFound } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { PlayerBoxKey } from '../../persistence/rows.ts';
import { isIdKey, keysetWalk, nextCursor } from './catalogCursor.ts';
import { BOX_STATS_QUERY, PLAYERS_QUERY, STATS_PLAYERS_QUERY } from './catalogParams.ts';
import type { Services } from './services.ts';
import { BASE_URL, CURSOR_RULES, curlExample, ETAG_RULES, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

const PLAYERS_PATH = '/api/v1/players';
const STATS_PLAYERS_PATH = '/api/v1/stats/players';

function isBoxKey(key: unknown): key is [string, string] {
  return Array.isArray(key) && key.length === 2 && typeof key[0] === 'string' && typeof key[1] === 'string';
}

export function playerRoutes(ctx: Services): AnyRoute[] {
  const { persistence } = ctx;
  const players = persistence.players;

  const list = defineRoute({
    path: PLAYERS_PATH,
    auth: 'none',
    response: 'Player',
    query: PLAYERS_QUERY,
    summary: 'Players, keyset-paginated over id.',
    description:
      `Ordered by id (plain string order). team and team_id are aliases; when both are given, team_id wins (the cursor is bound to the team that won, so a walk may switch spelling). meta.updated is when the players data last changed. No key needed. ${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS}` +
      curlExample(`TEAM=$(curl -s '${BASE_URL}/api/v1/teams?limit=1' | jq -r '.data[0].id')`, `curl -s "${BASE_URL}/api/v1/players?team_id=$TEAM&limit=5"`),
    cache: { validity: () => persistence.version('players') },
    handle: (req) => {
      const q = req.query;
      const teamId = q.team_id ?? q.team;
      const walk = keysetWalk(ctx.cursors, PLAYERS_PATH, { league: q.league, team_id: teamId }, q.cursor, isIdKey);
      const page = players.list({ league: q.league, teamId, after: walk.after, limit: q.limit });
      return {
        kind: 'data',
        data: page.rows,
        nextCursor: page.next === null ? null : nextCursor(ctx.cursors, walk.fingerprint, page.next),
        updated: persistence.changedAt('players'),
      };
    },
  });

  const one = defineRoute({
    path: '/api/v1/players/:playerId',
    auth: 'none',
    response: 'Player',
    query: [],
    summary: 'One player.',
    description: `data holds one Player. Unknown id: 404 not_found. No key needed. ${ETAG_RULES}` + curlExample(`PLAYER=$(curl -s '${BASE_URL}/api/v1/players?limit=1' | jq -r '.data[0].id')`, `curl -s "${BASE_URL}/api/v1/players/$PLAYER"`),
    cache: { validity: () => persistence.version('players') },
    handle: (req) => {
      const player = players.get(req.params.playerId!);
      if (player === null) throw notFound(`no player ${req.params.playerId}`, 'playerId');
      return { kind: 'data', data: [player], updated: persistence.changedAt('players') };
    },
  });

  const stats = defineRoute({
    path: '/api/v1/players/:playerId/stats',
    auth: 'key',
    response: 'PlayerBoxRow',
    query: BOX_STATS_QUERY,
    summary: 'The player\'s box stat rows, one per event played, in event order; unpaginated.',
    description:
      `Rows ordered by event start, then event id. season keeps one season year (an integer; another value: 400 invalid_parameter). Unknown player: 404 not_found. ${ETAG_RULES} ${KEY_RULES}` +
      curlExample(`PLAYER=$(curl -s '${BASE_URL}/api/v1/players?limit=1' | jq -r '.data[0].id')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/players/$PLAYER/stats"`),
    cache: { validity: () => persistence.version('players') + persistence.version('stats') + persistence.version('events') },
    handle: (req) => {
      const rows = players.stats(req.params.playerId!, req.query.season);
      if (rows === null) throw notFound(`no player ${req.params.playerId}`, 'playerId');
      return { kind: 'data', data: rows, updated: persistence.changedAt('stats') };
    },
  });

  const statsPlayers = defineRoute({
    path: STATS_PLAYERS_PATH,
    auth: 'key',
    response: 'PlayerBoxRow',
    query: STATS_PLAYERS_QUERY,
    summary: 'Player box stat rows filtered by event, team and/or player, keyset-paginated over (eventId, playerId).',
    description:
      `At least one of event_id, team_id and player_id is required: without any, 400 missing_parameter (param null, the detail names all three). Several filters combine with AND. Unknown ids simply match nothing. ${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`TEAM=$(curl -s '${BASE_URL}/api/v1/teams?limit=1' | jq -r '.data[0].id')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/stats/players?team_id=$TEAM&limit=5"`),
    cache: { validity: () => persistence.version('stats') },
    handle: (req) => {
      const q = req.query;
      if (q.event_id === undefined && q.team_id === undefined && q.player_id === undefined) {
        throw new HttpError('missing_parameter', 'at least one of event_id, team_id or player_id is required', null);
      }
      const filter = { eventId: q.event_id, teamId: q.team_id, playerId: q.player_id };
      const walk = keysetWalk(ctx.cursors, STATS_PLAYERS_PATH, { event_id: q.event_id, team_id: q.team_id, player_id: q.player_id }, q.cursor, isBoxKey);
      const after: PlayerBoxKey | undefined = walk.after && { eventId: walk.after[0], playerId: walk.after[1] };
      const page = persistence.stats.players(filter, after, q.limit);
      return {
        kind: 'data',
        data: page.rows,
        nextCursor: page.next === null ? null : nextCursor(ctx.cursors, walk.fingerprint, [page.next.eventId, page.next.playerId]),
        updated: persistence.changedAt('stats'),
      };
    },
  });

  return [list, one, stats, statsPlayers];
}
