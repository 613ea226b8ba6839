// Derived and historical routes:
// /edges, /arbitrage, /historical/odds, /historical/price-history, /historical/arbitrage.
//
// The signal books (engine/signals/engineSignals.ts) are built and closed by the
// composition root (service/app.ts); these routes only read them. /edges and
// /arbitrage read a page of a kept, sorted result; their cache validity is the book version (for /edges at the
// board's time, engine.asOf(): the edge book first re-prices ticked groups and expires
// sharp quotes older than the staleness window, so a page cached before an expiry is
// never served after it), kept in the request's list plan (listPlan.ts); a plan with a
// league filter is rebuilt when the UTC day turns (league notes follow the calendar),
// so its token moves exactly when either does.
// The historical routes replay the price rings per request and are not cached.
import { historicalOdds, withArchivedPrices } from '../../engine/signals/historicalReplay.ts';
import { pricePaths, type PricePoint } from '../../engine/signals/tickHistory.ts';
import { idsShortOf } from '../../engine/signals/arbitrageReplay.ts';
import { oddsIdParts, selectionHistory } from '../../engine/signals/selectionHistory.ts';
import { DEVIG_METHODS } from '../../engine/signals/devig.ts';
import type { RankCursor } from '../../engine/signals/rankedSet.ts';
import type { EdgeQuery } from '../../engine/signals/edgeBook.ts';
import type { ArbitrageQuery } from '../../engine/signals/arbitrageBook.ts';
import { invalidParameter, notFound } from '../errors.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { DataResult, RouteResult } from '../request.ts';
import { COMMON_PARAMS, type ParamDef, type QueryOf } from '../schemas.ts';
import type { Services } from './services.ts';
import { EVENT_ID, LEAGUE } from './oddsParams.ts';
import { ListPlans, type ListPlanSpec } from './listPlan.ts';
import { ACTIVE_EVENT, BASE_URL, CURSOR_RULES, curlExample, ETAG_RULES, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

const EDGES_PATH = '/api/v1/edges';
const ARBITRAGE_PATH = '/api/v1/arbitrage';
const HISTORICAL_ODDS_PATH = '/api/v1/historical/odds';
const HISTORICAL_ARBITRAGE_PATH = '/api/v1/historical/arbitrage';
const PRICE_HISTORY_PATH = '/api/v1/historical/price-history';

const SOURCE = {
  name: 'source',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description: 'Comma-separated DFS source ids (e.g. prizepicks), at most 20, any-of.',
} as const satisfies ParamDef;

const MIN_EDGE = {
  name: 'min_edge',
  kind: 'number',
  minimum: 0,
  maximum: 1,
  default: 0.02,
  description: 'Smallest edge (fairProbability - breakevenProbability) returned, in [0, 1] (default 0.02). Outside: 400 invalid_parameter.',
} as const satisfies ParamDef;

const DEVIG = {
  name: 'devig',
  kind: 'enum',
  values: DEVIG_METHODS,
  default: 'multiplicative',
  description: 'How the sharp books\' vig is removed: multiplicative (default, p_i = q_i / sum q), additive, power, shin, worst, odds_ratio, wpo, balanced_book or jensen_shannon (formulas in docs/signals.md). Echoed in each row. Another value: 400 invalid_parameter with validValues.',
} as const satisfies ParamDef;

const ARB_TYPE = {
  name: 'type',
  kind: 'enum',
  values: ['two_way', 'three_way'],
  description: 'two_way (HOME/AWAY, OVER/UNDER) or three_way (HOME/DRAW/AWAY); omitted: both. Middles are never reported.',
} as const satisfies ParamDef;

const MIN_PROFIT = {
  name: 'min_profit',
  kind: 'number',
  minimum: 0,
  default: 0.001,
  description: 'Smallest profit (1/impliedSum - 1, a fraction of bankroll) returned (default 0.001, at least 0).',
} as const satisfies ParamDef;

const EDGES_QUERY = [LEAGUE, SOURCE, EVENT_ID, MIN_EDGE, DEVIG, COMMON_PARAMS.cursor, COMMON_PARAMS.limit] as const;
const ARBITRAGE_QUERY = [ARB_TYPE, LEAGUE, EVENT_ID, MIN_PROFIT, COMMON_PARAMS.cursor, COMMON_PARAMS.limit] as const;

const HISTORICAL_ODDS_QUERY = [
  { name: 'event_id', kind: 'string', required: true, maxLength: 200, description: 'Required: the event whose selections are replayed. Missing: 400 missing_parameter; an event id never seen: 404 not_found.' },
  { name: 'date', kind: 'instant', description: 'As-of time (ISO-8601 or epoch ms); default now. Resolution: one second (price history times are whole seconds).' },
] as const satisfies readonly ParamDef[];

const PRICE_HISTORY_QUERY = [
  { name: 'id', kind: 'string', required: true, maxLength: 400, pattern: '^[^:]+:[^:]+:[^:]+:[^:]+$', patternText: 'an odds id: {eventId}:{sportsbook}:{marketSubtype}:{selectionId}, four non-empty parts', description: 'Required: an odds id ({eventId}:{sportsbook}:{marketSubtype}:{selectionId}) of any book quoting the selection; every book\'s row of that selection is returned. Missing: 400 missing_parameter; not four parts: 400 invalid_parameter; an event never seen, or no book with that selection: 404 not_found.' },
] as const satisfies readonly ParamDef[];

const HISTORICAL_ARBITRAGE_QUERY = [
  { name: 'from', kind: 'instant', description: 'Start of the staleness window (ISO-8601 or epoch ms); default: to, or now when to is absent too.' },
  { name: 'to', kind: 'instant', description: 'The instant evaluated (default from, or now). Must not be before from.' },
  MIN_PROFIT,
  { name: 'limit', kind: 'integer', minimum: 1, maximum: 1000, default: 500, description: 'Records returned at most, 1..1000 (default 500). Not paginated.' },
] as const satisfies readonly ParamDef[];

/** The wire form of a ranked list's cursor key: [score, id]. */
type RankKey = [number, string];

function isRankKey(key: unknown): key is RankKey {
  return Array.isArray(key) && key.length === 2 && typeof key[0] === 'number' && typeof key[1] === 'string';
}

function afterOf(key: RankKey | undefined): RankCursor | null {
  return key === undefined ? null : { score: key[0], id: key[1] };
}

function latestUpdated(items: readonly { updated: string }[], fallback: number): number {
  let latest = 0;
  for (const item of items) {
    const t = Date.parse(item.updated);
    if (t > latest) latest = t;
  }
  return items.length === 0 ? fallback : latest;
}

/**
 * The board's as-of time (the time of the last logged change applied, never this
 * node's clock) when a version was first seen: meta.updated of empty pages, stable
 * while the version holds, and the same on a replica that reads the version at the
 * same board sequence as the writer.
 */
class VersionClock {
  private version = Number.NaN;
  private at = 0;
  seen(version: number, now: number): number {
    if (version !== this.version) {
      this.version = version;
      this.at = now;
    }
    return this.at;
  }
}

export function signalRoutes(ctx: Services): AnyRoute[] {
  const { engine, signals } = ctx;
  const edgesSeen = new VersionClock();
  const arbitrageSeen = new VersionClock();
  const edgePlans = new ListPlans(ctx.cursors, (q: QueryOf<typeof EDGES_QUERY>): ListPlanSpec<RankKey, EdgeQuery> => ({
    route: EDGES_PATH,
    filters: { league: q.league, source: q.source, event_id: q.event_id, min_edge: q.min_edge, devig: q.devig },
    leagues: q.league,
    cursor: q.cursor,
    isKey: isRankKey,
    query: (leagues) => ({ leagues, sources: q.source ?? null, eventIds: q.event_id ?? null, minEdge: q.min_edge, devig: q.devig }),
  }));
  const arbitragePlans = new ListPlans(ctx.cursors, (q: QueryOf<typeof ARBITRAGE_QUERY>): ListPlanSpec<RankKey, ArbitrageQuery> => ({
    route: ARBITRAGE_PATH,
    filters: { type: q.type, league: q.league, event_id: q.event_id, min_profit: q.min_profit },
    leagues: q.league,
    cursor: q.cursor,
    isKey: isRankKey,
    query: (leagues) => ({ types: q.type === undefined ? null : [q.type], leagues, eventIds: q.event_id ?? null, minProfit: q.min_profit }),
  }));

  const edges = defineRoute({
    path: EDGES_PATH,
    auth: 'key',
    response: 'Edge',
    query: EDGES_QUERY,
    summary: 'DFS pick\'em lines against the no-vig fair value of the sharp books.',
    description:
      'Each DFS row (matched on event, player, subtype, period, side and identical line) against the mean no-vig probability of the sharp books (pinnacle, circa, bookmaker) quoting both sides; suspended sharp quotes and sharp quotes older than 10 minutes of board time (the time of the last logged change, the same on every node at the same X-Board-Seq) never count. Sorted by edge descending, then id; keyset cursor bound to the filters. Maintained incrementally: a price change re-evaluates only its market group; sharp quotes expire with the clock. An out-of-season league: 200, [] and meta.note. meta.updated: latest updated among the page rows (empty page: when the result last changed). ' +
      `${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/edges?min_edge=0.01&devig=power&limit=5'`),
    // Sharp quotes age on board time (EngineSignals.boardTime: the writer's clock at the
    // last logged change), not on this node's clock: the quote that ages out does so at
    // the same board sequence on the writer and on every replica.
    cache: { validity: (req, now) => edgePlans.of(req.query, req.query, now).tokenOf(signals.edgesVersion(req.query.devig)) },
    handle: (req): DataResult => {
      const q = req.query;
      const plan = edgePlans.of(q, q, req.now);
      const emptyAt = edgesSeen.seen(signals.edgesVersion(q.devig), engine.asOf());
      if (plan.none) return { kind: 'data', data: [], nextCursor: null, updated: emptyAt, note: plan.note };
      const page = signals.edgesPage(plan.query, afterOf(plan.after), q.limit);
      const next = page.hasMore && page.last !== null ? plan.nextCursor([page.last.score, page.last.id]) : null;
      return { kind: 'data', data: page.items, nextCursor: next, updated: latestUpdated(page.items, emptyAt), note: plan.note };
    },
  });

  const arbitrage = defineRoute({
    path: ARBITRAGE_PATH,
    auth: 'key',
    response: 'Arbitrage',
    query: ARBITRAGE_QUERY,
    summary: 'Cross-book arbitrage (two-way and three-way), best price per side.',
    description:
      'Per (event, subtype, period, line, player/team scope): the best non-suspended price per side across non-DFS books; listed when the implied probabilities sum below 1. Middles, futures, DFS rows and suspended legs never appear. Legs carry equal-payout stakes summing to 1. Sorted by profit descending, then id; keyset cursor bound to the filters. Maintained incrementally per market group. An out-of-season league: 200, [] and meta.note. ' +
      `${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/arbitrage?type=two_way&min_profit=0.001&limit=5'`),
    cache: { validity: (req, now) => arbitragePlans.of(req.query, req.query, now).tokenOf(signals.arbitrageVersion()) },
    handle: (req): DataResult => {
      const q = req.query;
      const plan = arbitragePlans.of(q, q, req.now);
      const emptyAt = arbitrageSeen.seen(signals.arbitrageVersion(), engine.asOf());
      if (plan.none) return { kind: 'data', data: [], nextCursor: null, updated: emptyAt, note: plan.note };
      const page = signals.arbitragePage(plan.query, afterOf(plan.after), q.limit);
      const next = page.hasMore && page.last !== null ? plan.nextCursor([page.last.score, page.last.id]) : null;
      return { kind: 'data', data: page.items, nextCursor: next, updated: latestUpdated(page.items, emptyAt), note: plan.note };
    },
  });

  const oddsAt = defineRoute({
    path: HISTORICAL_ODDS_PATH,
    auth: 'key',
    response: 'HistoricalOddsRow',
    query: HISTORICAL_ODDS_QUERY,
    notFoundParam: 'event_id',
    summary: 'Each selection of an event with its American price in force at date (default now), from price history.',
    description:
      'Rebuilt from each selection\'s price history (the last 50 price changes): the newest entry first seen at or before date, to the second; with the tick archive (ARCHIVE_DIR, docs/archive.md), a selection whose last 50 changes all came after date gets its price then from the archive (asOf: the time of the archived change in force). Removed selections are included for dates before their removal while their history is kept (at least 10 minutes after removal); a selection with no history at or before date is left out. No player attribution. asOf is the first-seen time of the price in force. Rows in /odds order (sportsbook, id), unpaginated. An event id never seen: 404 not_found. meta.updated: the latest asOf. ' +
      `${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(ACTIVE_EVENT, '# the prices in force a minute ago (date: ISO-8601 or epoch milliseconds)', `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/historical/odds?event_id=$EVENT&date=$(( ($(date +%s) - 60) * 1000 ))"`),
    handle: (req): RouteResult => {
      const at = req.query.date ?? req.now;
      const result = historicalOdds(engine, req.query.event_id, at);
      if (result === null) throw notFound(`no event ${req.query.event_id}`, 'event_id');
      const archive = ctx.archive;
      if (archive === null) return { kind: 'data', data: result.rows, updated: result.updated };
      // selections whose last 50 changes all came after `at`: their price then, from the tick archive
      return {
        kind: 'pending',
        body: archive.rowsOfEvent(req.query.event_id, at).then((archived): DataResult => {
          const merged = withArchivedPrices(engine, result, pricePaths(archived.rows), at);
          return { kind: 'data', data: merged.rows, updated: merged.updated };
        }),
      };
    },
  });

  // The line-movement chart of the board page needs one selection's history across
  // books; /historical/odds answers one instant per call and the snapshot carries the
  // whole board, so this route reads one event's rows and answers only that selection.
  const priceHistory = defineRoute({
    path: PRICE_HISTORY_PATH,
    auth: 'key',
    response: 'SelectionHistoryRow',
    query: PRICE_HISTORY_QUERY,
    notFoundParam: 'id',
    summary: 'One selection\'s price history at every book that quotes it (for line-movement charts).',
    description:
      'The rows whose odds id equals id except for the sportsbook part, each with its priceHistory exactly as in the snapshot with include_history=true (the last 50 price changes, oldest first, {fs, ls, pa, pd, dm, su}, fs/ls epoch seconds). Removed selections are included with removed: true while their history is kept (at least 10 minutes after removal). Rows in /odds order (sportsbook, id), unpaginated. meta.updated: the latest ls among the entries. ' +
      `${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample(`ID=$(curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/odds?market=total&limit=1' | jq -r '.data[0].id')`, `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/historical/price-history?id=$ID"`),
    handle: (req): DataResult => {
      const id = req.query.id;
      if (oddsIdParts(id) === null) throw invalidParameter('id', 'id must be an odds id: {eventId}:{sportsbook}:{marketSubtype}:{selectionId}');
      const result = selectionHistory(engine, id);
      if (result === null) throw notFound(`no event ${id.slice(0, id.indexOf(':'))}`, 'id');
      if (result.rows.length === 0) throw notFound(`no book quotes the selection of ${id}`, 'id');
      return { kind: 'data', data: result.rows, updated: result.updated };
    },
  });

  const arbitrageAt = defineRoute({
    path: HISTORICAL_ARBITRAGE_PATH,
    auth: 'key',
    response: 'Arbitrage',
    query: HISTORICAL_ARBITRAGE_QUERY,
    summary: 'Arbitrage as it stood at to, replayed from price history.',
    description:
      'Each selection\'s price in force at to, counted only if that price was last seen at or after from (staleness window to - from), grouped and evaluated like /arbitrage. Times resolve to the second. With from = to (the default when only one is given) the answer is a snapshot: every price in force at to counts, whenever it was last seen (a single to gives a snapshot); an earlier from applies the staleness window. A leg\'s updated is its last-seen time capped at to. Sorted by profit descending, then id; at most limit records (default 500, 1..1000), not paginated. With the tick archive (ARCHIVE_DIR, docs/archive.md), a selection whose last 50 changes all came after to gets its leg from the archive (the archived change in force at to, seen at its time). from after to: 400 invalid_parameter. ' +
      `${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}` +
      curlExample('# the board as it stood at one instant (to alone: every price in force then counts)', `curl -s ${KEY_HEADER} "${BASE_URL}/api/v1/historical/arbitrage?to=$(date -u +%Y-%m-%dT%H:%M:%SZ)&min_profit=0.001&limit=10"`),
    handle: (req): RouteResult => {
      const q = req.query;
      const from = q.from ?? q.to ?? req.now;
      const to = q.to ?? from;
      if (from > to) throw invalidParameter('from', 'from must be at or before to');
      // A single `to` gives a snapshot (OpenAPI description of /historical/arbitrage): a zero-width window is the board
      // as it stood at `to` (every price in force), not only prices confirmed in that second.
      const windowStart = from === to ? -Infinity : from;
      const query = { from: windowStart, to, minProfit: q.min_profit, limit: q.limit };
      const archive = ctx.archive;
      // rows whose last 50 changes all came after `to`: their leg then, from the tick archive
      const short = archive === null ? [] : idsShortOf(engine, to);
      if (archive === null || short.length === 0) {
        const records = signals.arbitrageAt(query);
        return { kind: 'data', data: records, updated: latestUpdated(records, to) };
      }
      return {
        kind: 'pending',
        body: archive.rowsOfIds(short, to).then((archived): DataResult => {
          const paths = new Map<string, PricePoint[]>();
          for (const point of pricePaths(archived.rows)) {
            let path = paths.get(point.id);
            if (path === undefined) paths.set(point.id, (path = []));
            path.push(point);
          }
          const records = signals.arbitrageAt(query, paths);
          return { kind: 'data', data: records, updated: latestUpdated(records, to) };
        }),
      };
    },
  });

  return [edges, arbitrage, oddsAt, priceHistory, arbitrageAt];
}
