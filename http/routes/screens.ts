// The trader screens: /fair-lines, /best-prices, /ev, /middles and /steam. Each reads
// one query of the signal books (engine/signals/screenBook.ts, steamDetector.ts): a
// tick only marks its market group, and a read re-reads just the marked groups before
// evaluating, so a read costs the groups its filters select. Pages of limit records in
// serving order with a keyset cursor, as /odds: the position of the page's last record
// in that order (fair lines: the id; best prices, +EV, middles: the score it is sorted
// by, then the id; steam: the move's number, newest first), signed and bound to the
// filters (http/cursor.ts, listPlan.ts). ETags are the body's digest, as on every route,
// except on /fair-lines, whose records carry their quotes' ages at the read: its ETag is
// weak, the digest of the page without the ages, so an unchanged page answers 304 while
// the board moves elsewhere. An empty page keeps the meta.updated it was first found
// empty at, as /odds does.
// The same records are pushed on the signal stream (http/routes/signalStream.ts).
import { DEVIG_METHODS } from '../../engine/signals/devig.ts';
import type { ScreenCursor } from '../../engine/signals/screenBook.ts';
import type { BestPriceQuery, FairLineQuery, MiddleQuery, PositiveEvQuery, SteamQuery } from '../../engine/signals/screenRecords.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { DataResult } from '../request.ts';
import { COMMON_PARAMS, type ParamDef, type QueryOf } from '../schemas.ts';
import type { Services } from './services.ts';
import { EVENT_ID } from './oddsParams.ts';
import { isIdKey } from './catalogCursor.ts';
import { ListPlans, type ListPlan, type ListPlanSpec } from './listPlan.ts';
import { BASE_URL, CURSOR_RULES, curlExample, ETAG_RULES, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

export const LEAGUE = {
  name: 'league',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description: 'Comma-separated league codes, at most 20, case-insensitive, any-of. Unknown leagues match nothing.',
} as const satisfies ParamDef;

export const SCREEN_DEVIG = {
  name: 'devig',
  kind: 'enum',
  values: DEVIG_METHODS,
  default: 'multiplicative',
  description: 'How each sharp book\'s margin is removed before the weighted mean: multiplicative (default), additive, power, shin, worst, odds_ratio, wpo, balanced_book or jensen_shannon (formulas in docs/signals.md). Echoed in each record.',
} as const satisfies ParamDef;

export const SPORTSBOOK = {
  name: 'sportsbook',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description: 'Comma-separated sportsbook ids, any-of (at most 20).',
} as const satisfies ParamDef;

export const MIN_EV = { name: 'min_ev', kind: 'number', minimum: -1, maximum: 10, default: 0.01, description: 'Smallest ev (fairProbability * priceDecimal - 1) returned, -1..10 (default 0.01).' } as const satisfies ParamDef;
export const MAX_HOLD = { name: 'max_hold', kind: 'number', minimum: -1, maximum: 1, default: 1, description: 'Largest hold of the best-price market returned, -1..1 (default 1: every complete market). 0.02: the low-hold screen; below 0: arbitrage.' } as const satisfies ParamDef;
export const MIN_WIDTH = { name: 'min_width', kind: 'number', minimum: 0, maximum: 100, default: 0, description: 'Smallest middle width in points, 0..100 (default 0).' } as const satisfies ParamDef;
export const MAX_COST = { name: 'max_cost', kind: 'number', minimum: -1, maximum: 1, default: 0.05, description: 'Largest worst-case cost (1 - 1/impliedSum, the loss when only one leg wins, a fraction of the stake), -1..1 (default 0.05).' } as const satisfies ParamDef;
export const MIN_POINTS = { name: 'min_points', kind: 'number', minimum: 0, maximum: 100, default: 0, description: 'Smallest move in implied percentage points (default 0: every reported move).' } as const satisfies ParamDef;
export const MIN_CENTS = { name: 'min_cents', kind: 'number', minimum: 0, maximum: 100000, default: 0, description: 'Smallest move in American cents (default 0).' } as const satisfies ParamDef;
export const SINCE = { name: 'since', kind: 'instant', description: 'Only moves at or after this instant (ISO-8601 or epoch ms).' } as const satisfies ParamDef;

const PAGE = [COMMON_PARAMS.cursor, COMMON_PARAMS.limit] as const;
const FAIR_QUERY = [LEAGUE, EVENT_ID, SCREEN_DEVIG, ...PAGE] as const;
const BEST_QUERY = [LEAGUE, EVENT_ID, MAX_HOLD, ...PAGE] as const;
const EV_QUERY = [LEAGUE, EVENT_ID, SPORTSBOOK, MIN_EV, SCREEN_DEVIG, ...PAGE] as const;
const MIDDLE_QUERY = [LEAGUE, EVENT_ID, MIN_WIDTH, MAX_COST, ...PAGE] as const;
const STEAM_QUERY = [LEAGUE, EVENT_ID, SPORTSBOOK, MIN_POINTS, MIN_CENTS, SINCE, ...PAGE] as const;

const COMMON = `${CURSOR_RULES} ${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}`;
/** What a walk over a list sorted by a number promises (best prices, +EV, middles). */
const SCORE_WALK =
  'A walk returns each record that stays the same throughout it exactly once, in order; a record whose score changes during the walk may move across the cursor (seen at both places, or at neither).';

function latestUpdated(items: readonly { updated?: string; at?: string }[], fallback: number): number {
  let latest = 0;
  for (const item of items) {
    const t = Date.parse(item.updated ?? item.at ?? '');
    if (t > latest) latest = t;
  }
  return items.length === 0 ? fallback : latest;
}

/** A cursor key of a list sorted by a number: [score, id]. */
type ScoreKey = [number, string];

function isScoreKey(key: unknown): key is ScoreKey {
  return Array.isArray(key) && key.length === 2 && typeof key[0] === 'number' && Number.isFinite(key[0]) && typeof key[1] === 'string';
}

/** A steam cursor key: [the move's number, its id]. */
function isMoveKey(key: unknown): key is ScoreKey {
  return isScoreKey(key) && Number.isInteger(key[0]) && key[0] >= 0;
}

function afterOf(key: ScoreKey | undefined): ScreenCursor | null {
  return key === undefined ? null : { score: key[0], id: key[1] };
}

/**
 * A page as the envelope carries it: nextCursor from the last record's key while more
 * follow; an empty page's meta.updated is the board's time when the plan first found
 * it empty, kept while it stays empty (a stable body and ETag, as /odds).
 */
function pageResult<K>(plan: ListPlan<K, unknown>, items: readonly { updated?: string; at?: string }[], hasMore: boolean, lastKey: K | null, asOf: number): DataResult {
  if (items.length === 0) {
    plan.emptyUpdated ??= asOf;
    return { kind: 'data', data: [], nextCursor: null, updated: plan.emptyUpdated };
  }
  plan.emptyUpdated = null;
  return { kind: 'data', data: items, nextCursor: hasMore && lastKey !== null ? plan.nextCursor(lastKey) : null, updated: latestUpdated(items, asOf) };
}

export function screenRoutes(ctx: Services): AnyRoute[] {
  const { engine, signals } = ctx;
  const filter = (q: { league?: string[]; event_id?: string[] }) => ({ leagues: q.league ?? null, eventIds: q.event_id ?? null });
  /** The plans of a screen route: no season cut (a screen lists what the board holds), the cursor decoded and bound to the filters. */
  const plans = <Q extends { cursor?: string }, K, E>(route: string, isKey: (key: unknown) => key is K, filters: (q: Q) => Record<string, unknown>, query: (q: Q) => E) =>
    new ListPlans(ctx.cursors, (q: Q): ListPlanSpec<K, E> => ({ route, filters: filters(q), leagues: null, cursor: q.cursor, isKey, query: () => query(q) }));

  const fairPlans = plans('/api/v1/fair-lines', isIdKey, (q: QueryOf<typeof FAIR_QUERY>) => ({ league: q.league, event_id: q.event_id, devig: q.devig }), (q): FairLineQuery => ({ ...filter(q), devig: q.devig }));
  const bestPlans = plans('/api/v1/best-prices', isScoreKey, (q: QueryOf<typeof BEST_QUERY>) => ({ league: q.league, event_id: q.event_id, max_hold: q.max_hold }), (q): BestPriceQuery => ({ ...filter(q), maxHold: q.max_hold }));
  const evPlans = plans('/api/v1/ev', isScoreKey, (q: QueryOf<typeof EV_QUERY>) => ({ league: q.league, event_id: q.event_id, sportsbook: q.sportsbook, min_ev: q.min_ev, devig: q.devig }), (q): PositiveEvQuery => ({ ...filter(q), sportsbooks: q.sportsbook ?? null, minEv: q.min_ev, devig: q.devig }));
  const middlePlans = plans('/api/v1/middles', isScoreKey, (q: QueryOf<typeof MIDDLE_QUERY>) => ({ league: q.league, event_id: q.event_id, min_width: q.min_width, max_cost: q.max_cost }), (q): MiddleQuery => ({ ...filter(q), minWidth: q.min_width, maxCost: q.max_cost }));
  const steamPlans = plans('/api/v1/steam', isMoveKey, (q: QueryOf<typeof STEAM_QUERY>) => ({ league: q.league, event_id: q.event_id, sportsbook: q.sportsbook, min_points: q.min_points, min_cents: q.min_cents, since: q.since }), (q): SteamQuery => ({ ...filter(q), sportsbooks: q.sportsbook ?? null, minPoints: q.min_points, minCents: q.min_cents, since: q.since ?? 0 }));

  const fairLines = defineRoute({
    path: '/api/v1/fair-lines',
    auth: 'key',
    response: 'FairLine',
    query: FAIR_QUERY,
    summary: 'The fair (no-vig) line of each market from the sharp books, with how many sharp quotes formed it and their age.',
    description:
      'Per market group (event, subtype, period, line, player/team scope): each fair-line book (setting FAIR_LINE_BOOKS, with weights) whose every outcome is quoted, unsuspended and younger than 10 minutes is devigged with the requested method; the line is the weighted mean. Sorted by id; keyset cursor on the id (a walk returns each line once). The ETag is weak (W/): it leaves out the quote ages, so a page whose lines are the same answers 304 (the ages you hold are those of your read). ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/fair-lines?devig=power&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const plan = fairPlans.of(q, q, req.now);
      const page = signals.fairLinesPage(plan.query, engine.asOf(), plan.after ?? null, q.limit);
      const result = pageResult(plan, page.items, page.hasMore, page.items.at(-1)?.id ?? null, engine.asOf());
      // the ages move with the board's time alone: compared without them
      result.validatorData = page.items.map(({ oldestQuoteAgeMs: _oldest, newestQuoteAgeMs: _newest, ...line }) => line);
      return result;
    },
  });

  const bestPrices = defineRoute({
    path: '/api/v1/best-prices',
    auth: 'key',
    response: 'BestPrice',
    query: BEST_QUERY,
    summary: 'The best price per outcome across the books, and the hold of that best-price market (the low-hold screen).',
    description:
      'Per market group with every outcome priced somewhere: the best unsuspended non-DFS price per outcome (every book at it listed) and hold = sum(1/best decimal) - 1. Lowest hold first, then id; keyset cursor on (hold, id). ' + SCORE_WALK + ' ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/best-prices?max_hold=0.02&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const plan = bestPlans.of(q, q, req.now);
      const page = signals.bestPricesPage(plan.query, afterOf(plan.after), q.limit);
      const last = page.items.at(-1);
      return pageResult(plan, page.items, page.hasMore, last === undefined ? null : [last.hold, last.id], engine.asOf());
    },
  });

  const ev = defineRoute({
    path: '/api/v1/ev',
    auth: 'key',
    response: 'PositiveEv',
    query: EV_QUERY,
    summary: '+EV on every book: each non-DFS price against the fair line.',
    description:
      'Every unsuspended non-DFS price of a market that has a fair line (see /fair-lines), with ev = fairProbability * priceDecimal - 1; sharp books included (filter with sportsbook). /edges stays the DFS pick\'em view. Highest ev first, then id; keyset cursor on (ev, id). ' + SCORE_WALK + ' ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/ev?min_ev=0.02&devig=shin&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const plan = evPlans.of(q, q, req.now);
      const page = signals.positiveEvPage(plan.query, engine.asOf(), afterOf(plan.after), q.limit);
      const last = page.items.at(-1);
      return pageResult(plan, page.items, page.hasMore, last === undefined ? null : [last.ev, last.id], engine.asOf());
    },
  });

  const middles = defineRoute({
    path: '/api/v1/middles',
    auth: 'key',
    response: 'Middle',
    query: MIDDLE_QUERY,
    summary: 'Middles: opposite sides at different lines (spreads and totals) where both can win.',
    description:
      'Within one event, subtype, period and scope: the best OVER at a total a against the best UNDER at b > a (both win on a total strictly between), and the best HOME at home line h1 against the best AWAY at home line h2 < h1 (both win on a home margin strictly between -h1 and -h2). width, impliedSum, worstCaseCost = 1 - 1/impliedSum (the loss when one leg wins, stakes as in legs) and middleProfit = 2/impliedSum - 1. Lowest worst-case cost first, then id; keyset cursor on (worstCaseCost, id). ' + SCORE_WALK + ' ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/middles?min_width=1&max_cost=0.05&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const plan = middlePlans.of(q, q, req.now);
      const page = signals.middlesPage(plan.query, afterOf(plan.after), q.limit);
      const last = page.items.at(-1);
      return pageResult(plan, page.items, page.hasMore, last === undefined ? null : [last.worstCaseCost, last.id], engine.asOf());
    },
  });

  const steam = defineRoute({
    path: '/api/v1/steam',
    auth: 'key',
    response: 'SteamMove',
    query: STEAM_QUERY,
    summary: 'Steam moves: a sharp book\'s price shortening past the threshold within the window, with the books that had not followed.',
    description:
      'A fair-line book\'s price on one side shortening by at least STEAM_THRESHOLD (implied percentage points, e.g. 2pp, or American cents, e.g. 15c) from the price in force STEAM_WINDOW_MS earlier; one move per starting price. staleBooks: the non-DFS books quoting that side above the sharp book\'s new price when the move was seen. The last 5,000 moves are kept; newest first, keyset cursor on the place of the move in that order (a walk returns each move once; moves seen during it are before its first page). Also pushed on the signal stream (topic steam). ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/steam?min_points=2&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const plan = steamPlans.of(q, q, req.now);
      const page = signals.steamPage(plan.query, plan.after === undefined ? null : plan.after[0], q.limit);
      const last = page.items.at(-1);
      return pageResult(plan, page.items, page.hasMore, last === undefined ? null : [page.last, last.id], engine.asOf());
    },
  });

  return [fairLines, bestPrices, ev, middles, steam];
}
