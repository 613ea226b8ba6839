// The event routes (service-spec 4.4, 2.9, 2.10; decisions C6, C8, D2, D3): /events,
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
import type { RouteRequest, RowsResult } from '../request.ts';
import type { QueryOf } from '../schemas.ts';
import { keysetWalk, nextCursor } from './catalogCursor.ts';
import { ACTIVE_EVENTS_QUERY, EVENTS_QUERY } from './catalogParams.ts';
import type { AppContext } from './context.ts';
import { EventStarts, WINDOW_MS } from './eventStarts.ts';
import { SeasonCalendar } from './seasonCalendar.ts';
import { TokenMemo } from './tokenMemo.ts';

const EVENTS_PATH = '/api/v1/events';
const ACTIVE_PATH = '/api/v1/events/active';
const DETAIL_PATH = '/api/v1/events/:eventId';
const BOX_PATH = '/api/v1/events/:eventId/stats';

type EventsQuery = QueryOf<typeof EVENTS_QUERY>;

/** What one distinct /events or /events/active request asks, worked out once. */
interface EventsPlan {
  /** Requested leagues cut to the in-season ones; undefined = no league filter. */
  leagues: string[] | undefined;
  /** A league filter was given and none of its leagues is in season. */
  none: boolean;
  note: string | null;
  /** UTC day of the league split; -1 without a league filter. */
  day: number;
  fingerprint: string;
  after: EventKey | undefined;
  /** Which window bounds follow the clock (absent parameters); none on /events/active. */
  lowerDefault: boolean;
  upperDefault: boolean;
  /** The window anchor a continuation cursor carries (the first page's). */
  cursorAnchor: number | undefined;
  memo: TokenMemo;
}

function isEventKey(key: unknown): key is EventKey {
  return Array.isArray(key) && key.length === 2 && typeof key[0] === 'number' && typeof key[1] === 'string';
}

function eventKeyOf(key: unknown): EventKey | undefined {
  return key === undefined ? undefined : { startTime: (key as [number, string])[0], id: (key as [number, string])[1] };
}

const NO_ROWS = Buffer.alloc(0);

export function eventRoutes(ctx: AppContext): AnyRoute[] {
  const { persistence } = ctx;
  const events = persistence.events;
  const calendar = new SeasonCalendar();
  const starts = new EventStarts(() => events.startTimes(), () => persistence.version('events'));
  const plans = new WeakMap<object, EventsPlan>();

  function planOf(route: string, q: Partial<EventsQuery> & { include_futures: boolean; cursor?: string }, now: number): EventsPlan {
    const known = plans.get(q);
    if (known !== undefined && (known.day < 0 || known.day === SeasonCalendar.dayOf(now))) return known;
    const lowerDefault = route === EVENTS_PATH && q.starts_after === undefined;
    const upperDefault = route === EVENTS_PATH && q.starts_before === undefined;
    const walk = keysetWalk(
      route,
      {
        league: q.league,
        team_id: q.team_id,
        status: q.status,
        starts_after: q.starts_after,
        starts_before: q.starts_before,
        include_futures: q.include_futures,
      },
      q.cursor,
      isEventKey,
      lowerDefault || upperDefault,
    );
    let leagues: string[] | undefined;
    let note: string | null = null;
    let day = -1;
    if (q.league !== undefined) {
      const split = calendar.split(q.league, now);
      leagues = split.inSeason;
      note = split.note;
      day = SeasonCalendar.dayOf(now);
    }
    const plan: EventsPlan = {
      leagues,
      none: leagues !== undefined && leagues.length === 0,
      note,
      day,
      fingerprint: walk.fingerprint,
      after: eventKeyOf(walk.after),
      lowerDefault,
      upperDefault,
      cursorAnchor: walk.asOf,
      memo: new TokenMemo(),
    };
    plans.set(q, plan);
    return plan;
  }

  /** The window anchor of a request: the cursor's, or the earliest instant with today's window contents. */
  function anchorOf(plan: EventsPlan, now: number): number | undefined {
    if (!plan.lowerDefault && !plan.upperDefault) return undefined;
    return plan.cursorAnchor ?? starts.anchor(now, plan.lowerDefault, plan.upperDefault);
  }

  function listToken(route: string, req: RouteRequest<Partial<EventsQuery> & { include_futures: boolean }>, now: number): number {
    ctx.syncEvents();
    const plan = planOf(route, req.query, now);
    return plan.memo.of(persistence.version('events'), plan.day, anchorOf(plan, now) ?? 0);
  }

  function listPage(route: string, q: Partial<EventsQuery> & { include_futures: boolean; limit: number }, now: number, hasOdds?: boolean): RowsResult {
    const plan = planOf(route, q, now);
    const anchor = anchorOf(plan, now);
    const updated = Math.max(persistence.changedAt('events'), anchor ?? 0);
    if (plan.none) return { kind: 'rows', rows: NO_ROWS, count: 0, nextCursor: null, updated, note: plan.note };
    const page = events.listJson({
      leagues: plan.leagues,
      teamId: q.team_id,
      status: q.status,
      startsAfter: q.starts_after ?? anchor ?? null,
      startsBefore: q.starts_before ?? (anchor === undefined ? null : anchor + WINDOW_MS),
      includeFutures: q.include_futures,
      hasOdds,
      after: plan.after,
      limit: q.limit,
    });
    const cursor = page.next === null ? null : nextCursor(plan.fingerprint, [page.next.startTime, page.next.id], anchor);
    return { kind: 'rows', rows: Buffer.from(page.json), count: page.count, nextCursor: cursor, updated, note: plan.note };
  }

  const list = defineRoute({
    path: EVENTS_PATH,
    auth: 'none',
    response: 'Event',
    query: EVENTS_QUERY,
    summary: 'Events in a time window, keyset-paginated over (startTime, id).',
    description:
      'Default window: starts_after = now, starts_before = now + 14 days. status and hasOdds are the engine\'s at the time of the request. Futures anchors are left out unless status or include_futures=true asks for them (decisions C8). meta.updated is when the events data last changed, or, for a window that follows the clock, when the window last took in or let go of an event, if later. An out-of-season league answers 200 with [] and meta.note (decisions C6).',
    cache: { validity: (req, now) => listToken(EVENTS_PATH, req, now) },
    handle: (req) => listPage(EVENTS_PATH, req.query, req.now),
  });

  const active = defineRoute({
    path: ACTIVE_PATH,
    auth: 'none',
    response: 'Event',
    query: ACTIVE_EVENTS_QUERY,
    summary: 'Events that currently have live markets, keyset-paginated over (startTime, id).',
    description:
      'Events with at least one live odds row on the board at the time of the request (suspended rows count), any start time. Futures anchors are left out unless include_futures=true (decisions C8). An out-of-season league answers 200 with [] and meta.note.',
    cache: { validity: (req, now) => listToken(ACTIVE_PATH, req, now) },
    handle: (req) => listPage(ACTIVE_PATH, req.query, req.now, true),
  });

  const detail = defineRoute({
    path: DETAIL_PATH,
    auth: 'none',
    response: 'EventDetail',
    query: [],
    summary: 'One event with its matchup context and, once its box score exists, the final score.',
    description:
      'data holds one EventDetail. homeScore and awayScore are present once the box score exists (decisions D2). Futures anchors are real events here (decisions C8). Unknown id: 404 not_found.',
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
      'data holds one object {eventId, league, teams, players} (decisions D3): team rows (home first) and player rows (by playerId). Both arrays are empty until the event has a box score. Unknown id: 404 not_found.',
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
