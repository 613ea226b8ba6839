// The event routes: /events,
// /events/active, /events/{id} and /events/{id}/stats, read from SQLite.
//
// Status and "has live markets" are hot in the engine and written behind to SQLite;
// every route here first calls ctx.syncEvents(), which writes whatever the engine
// changed since the last write (nothing, almost always), so the rows, the status
// filter and the has-odds filter of /events/active all show the engine's state at the
// time of the request. The cache validity is then the events data version (plus the
// UTC day for league notes, and the window anchor for clock-relative windows).
import type { EventKey } from '../../persistence/rows.ts';
import { notFound } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { RowsResult } from '../request.ts';
import type { QueryOf } from '../schemas.ts';
import { ACTIVE_EVENTS_QUERY, EVENTS_QUERY } from './catalogParams.ts';
import type { Services } from './services.ts';
import { EventStarts, WINDOW_MS } from './eventStarts.ts';
import { ListPlans, type ListPlan, type ListPlanSpec } from './listPlan.ts';
import { ACTIVE_EVENT, BASE_URL, CURSOR_RULES, curlExample, ETAG_RULES, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

const EVENTS_PATH = '/api/v1/events';
const ACTIVE_PATH = '/api/v1/events/active';
const DETAIL_PATH = '/api/v1/events/:eventId';
const BOX_PATH = '/api/v1/events/:eventId/stats';

/** The query of /events (every field) or /events/active (league, include_futures, cursor, limit). */
type ListQuery = Partial<QueryOf<typeof EVENTS_QUERY>> & { include_futures: boolean; limit: number };

/** The wire form of an event list's cursor key: [startTime, id]. */
type EventKeyWire = [number, string];

/** What one /events or /events/active request asks of the events repository, beside the page position. */
interface EventsQuery {
  /** Requested leagues cut to the in-season ones; undefined = no league filter. */
  leagues: string[] | undefined;
  teamId: string | undefined;
  status: string | undefined;
  startsAfter: number | undefined;
  startsBefore: number | undefined;
  includeFutures: boolean;
  /** true on /events/active. */
  hasOdds: boolean | undefined;
  /** Which window bounds follow the clock (absent parameters); none on /events/active. */
  lowerDefault: boolean;
  upperDefault: boolean;
}

type EventsPlan = ListPlan<EventKeyWire, EventsQuery>;

function isEventKey(key: unknown): key is EventKeyWire {
  return Array.isArray(key) && key.length === 2 && typeof key[0] === 'number' && typeof key[1] === 'string';
}

function eventKeyOf(key: EventKeyWire | undefined): EventKey | undefined {
  return key === undefined ? undefined : { startTime: key[0], id: key[1] };
}

/** The event lists' part of a list plan: a window that follows the clock makes the cursor carry its anchor. */
function eventsPlanSpec(route: string, q: ListQuery, hasOdds: boolean | undefined): ListPlanSpec<EventKeyWire, EventsQuery> {
  const lowerDefault = route === EVENTS_PATH && q.starts_after === undefined;
  const upperDefault = route === EVENTS_PATH && q.starts_before === undefined;
  return {
    route,
    filters: {
      league: q.league,
      team_id: q.team_id,
      status: q.status,
      starts_after: q.starts_after,
      starts_before: q.starts_before,
      include_futures: q.include_futures,
    },
    leagues: q.league,
    cursor: q.cursor,
    isKey: isEventKey,
    needsAsOf: lowerDefault || upperDefault,
    query: (leagues) => ({
      leagues: leagues ?? undefined,
      teamId: q.team_id,
      status: q.status,
      startsAfter: q.starts_after,
      startsBefore: q.starts_before,
      includeFutures: q.include_futures,
      hasOdds,
      lowerDefault,
      upperDefault,
    }),
  };
}

const NO_ROWS = Buffer.alloc(0);

export function eventRoutes(ctx: Services): AnyRoute[] {
  const { persistence } = ctx;
  const events = persistence.events;
  const starts = new EventStarts(() => events.startTimes(), () => persistence.version('events'));
  const listPlans = new ListPlans(ctx.cursors, (q: ListQuery) => eventsPlanSpec(EVENTS_PATH, q, undefined));
  const activePlans = new ListPlans(ctx.cursors, (q: ListQuery) => eventsPlanSpec(ACTIVE_PATH, q, true));

  /** The window anchor of a request: the cursor's, or the earliest instant with today's window contents. */
  function anchorOf(plan: EventsPlan, now: number): number | undefined {
    const { lowerDefault, upperDefault } = plan.query;
    if (!lowerDefault && !upperDefault) return undefined;
    return plan.asOf ?? starts.anchor(now, lowerDefault, upperDefault);
  }

  function listToken(plans: ListPlans<ListQuery, EventKeyWire, EventsQuery>, q: ListQuery, now: number): number {
    ctx.syncEvents();
    const plan = plans.of(q, q, now);
    return plan.tokenOf(persistence.version('events'), anchorOf(plan, now) ?? 0);
  }

  function listPage(plans: ListPlans<ListQuery, EventKeyWire, EventsQuery>, q: ListQuery, now: number): RowsResult {
    const plan = plans.of(q, q, now);
    const anchor = anchorOf(plan, now);
    const updated = Math.max(persistence.changedAt('events'), anchor ?? 0);
    if (plan.none) return { kind: 'rows', rows: NO_ROWS, count: 0, nextCursor: null, updated, note: plan.note };
    const w = plan.query;
    const page = events.listJson({
      leagues: w.leagues,
      teamId: w.teamId,
      status: w.status,
      startsAfter: w.startsAfter ?? anchor ?? null,
      startsBefore: w.startsBefore ?? (anchor === undefined ? null : anchor + WINDOW_MS),
      includeFutures: w.includeFutures,
      hasOdds: w.hasOdds,
      after: eventKeyOf(plan.after),
      limit: q.limit,
    });
    const cursor = page.next === null ? null : plan.nextCursor([page.next.startTime, page.next.id], anchor);
    return { kind: 'rows', rows: Buffer.from(page.json), count: page.count, nextCursor: cursor, updated, note: plan.note };
  }

  const list = defineRoute({
    path: EVENTS_PATH,
    auth: 'none',
    response: 'Event',
    query: EVENTS_QUERY,
    summary: 'Events in a time window, keyset-paginated over (startTime, id).',
    description:
      `Default window: starts_after = now, starts_before = now + 14 days (ISO-8601 instants or epoch milliseconds). status and hasOdds are the engine's at the time of the request. Futures anchors are left out unless status or include_futures=true asks for them. meta.updated is when the events data last changed, or, for a window that follows the clock, when the window last took in or let go of an event, if later. An out-of-season league answers 200 with [] and meta.note. startTime is minute precision ending in Z. No key needed. ${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/events?limit=5'`, '# finished events of the last days (a box score exists once final)', `curl -s '${BASE_URL}/api/v1/events?status=final&starts_after=2000-01-01T00:00:00Z&limit=5'`),
    cache: { validity: (req, now) => listToken(listPlans, req.query, now) },
    handle: (req) => listPage(listPlans, req.query, req.now),
  });

  const active = defineRoute({
    path: ACTIVE_PATH,
    auth: 'none',
    response: 'Event',
    query: ACTIVE_EVENTS_QUERY,
    summary: 'Events that currently have live markets, keyset-paginated over (startTime, id).',
    description:
      `Events with at least one live odds row on the board at the time of the request (suspended rows count), any start time. Futures anchors are left out unless include_futures=true. An out-of-season league answers 200 with [] and meta.note. No key needed. ${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS}` +
      curlExample(`curl -s '${BASE_URL}/api/v1/events/active?include_futures=true&limit=5'`),
    cache: { validity: (req, now) => listToken(activePlans, req.query, now) },
    handle: (req) => listPage(activePlans, req.query, req.now),
  });

  const detail = defineRoute({
    path: DETAIL_PATH,
    auth: 'none',
    response: 'EventDetail',
    query: [],
    summary: 'One event with its matchup context and, once its box score exists, the final score.',
    description:
      `data holds one EventDetail. homeScore and awayScore are present once the box score exists. Futures anchors are real events here. Unknown id: 404 not_found. No key needed. ${ETAG_RULES}` +
      curlExample(ACTIVE_EVENT, `curl -s "${BASE_URL}/api/v1/events/$EVENT"`),
    cache: { validity: () => eventsAndStatsVersion() },
    handle: (req) => {
      const row = events.detail(req.params.eventId!);
      if (row === null) throw notFound(`no event ${req.params.eventId}`, 'eventId');
      return { kind: 'data', data: [row], updated: eventsAndStatsChangedAt() };
    },
  });

  const box = defineRoute({
    path: BOX_PATH,
    auth: 'key',
    response: 'EventBoxScore',
    query: [],
    summary: 'The whole box score of one event, unpaginated.',
    description:
      `data holds one object {eventId, league, teams, players}: team rows (home first) and player rows (by playerId). Both arrays are empty until the event has a box score. Unknown id: 404 not_found. ${ETAG_RULES} ${KEY_RULES}` +
      curlExample(
        `FINAL=$(curl -s '${BASE_URL}/api/v1/events?status=final&starts_after=2000-01-01T00:00:00Z&limit=1' | jq -r '.data[0].id')`,
        `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/events/$FINAL/stats"`,
      ),
    cache: { validity: () => eventsAndStatsVersion() },
    handle: (req) => {
      const score = events.boxScore(req.params.eventId!);
      if (score === null) throw notFound(`no event ${req.params.eventId}`, 'eventId');
      return { kind: 'data', data: [score], updated: eventsAndStatsChangedAt() };
    },
  });

  // Both versions only grow, so their sum moves exactly when either does.
  function eventsAndStatsVersion(): number {
    ctx.syncEvents();
    return persistence.version('events') + persistence.version('stats');
  }
  function eventsAndStatsChangedAt(): number {
    return Math.max(persistence.changedAt('events'), persistence.changedAt('stats'));
  }

  return [list, active, detail, box];
}
