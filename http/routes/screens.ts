// The trader screens: /fair-lines, /best-prices, /ev, /middles and /steam. Each reads
// one query of the signal books (engine/signals/screenBook.ts, steamDetector.ts): a
// tick only marks its market group, and a read re-reads just the marked groups before
// evaluating, so a read costs the groups its filters select. Unpaginated: at most limit
// records in serving order (1..1000, default 100); narrow with the filters.
// The same records are pushed on the signal stream (http/routes/signalStream.ts).
import { DEVIG_METHODS } from '../../engine/signals/devig.ts';
import { defineRoute, type AnyRoute } from '../router.ts';
import type { DataResult } from '../request.ts';
import type { ParamDef } from '../schemas.ts';
import type { Services } from './services.ts';
import { EVENT_ID } from './oddsParams.ts';
import { BASE_URL, curlExample, ETAG_RULES, KEY_HEADER, KEY_RULES, PARAMETER_ERRORS } from './routeDocs.ts';

export const LEAGUE = {
  name: 'league',
  kind: 'list',
  case: 'lower',
  maxItems: 20,
  description: 'Comma-separated league codes, at most 20, case-insensitive, any-of. Unknown leagues match nothing.',
} as const satisfies ParamDef;

export const SCREEN_LIMIT = {
  name: 'limit',
  kind: 'integer',
  minimum: 1,
  maximum: 1000,
  default: 100,
  description: 'Records returned at most, 1..1000 (default 100), in serving order. Not paginated: narrow with the filters.',
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

const FAIR_QUERY = [LEAGUE, EVENT_ID, SCREEN_DEVIG, SCREEN_LIMIT] as const;
const BEST_QUERY = [LEAGUE, EVENT_ID, MAX_HOLD, SCREEN_LIMIT] as const;
const EV_QUERY = [LEAGUE, EVENT_ID, SPORTSBOOK, MIN_EV, SCREEN_DEVIG, SCREEN_LIMIT] as const;
const MIDDLE_QUERY = [LEAGUE, EVENT_ID, MIN_WIDTH, MAX_COST, SCREEN_LIMIT] as const;
const STEAM_QUERY = [LEAGUE, EVENT_ID, SPORTSBOOK, MIN_POINTS, MIN_CENTS, SINCE, SCREEN_LIMIT] as const;

const COMMON = `${ETAG_RULES} ${PARAMETER_ERRORS} ${KEY_RULES}`;

function latestUpdated(items: readonly { updated?: string; at?: string }[], fallback: number): number {
  let latest = 0;
  for (const item of items) {
    const t = Date.parse(item.updated ?? item.at ?? '');
    if (t > latest) latest = t;
  }
  return items.length === 0 ? fallback : latest;
}

export function screenRoutes(ctx: Services): AnyRoute[] {
  const { engine, signals } = ctx;
  const filter = (q: { league?: string[]; event_id?: string[] }) => ({ leagues: q.league ?? null, eventIds: q.event_id ?? null });

  const fairLines = defineRoute({
    path: '/api/v1/fair-lines',
    auth: 'key',
    response: 'FairLine',
    query: FAIR_QUERY,
    summary: 'The fair (no-vig) line of each market from the sharp books, with how many sharp quotes formed it and their age.',
    description:
      'Per market group (event, subtype, period, line, player/team scope): each fair-line book (setting FAIR_LINE_BOOKS, with weights) whose every outcome is quoted, unsuspended and younger than 10 minutes is devigged with the requested method; the line is the weighted mean. Sorted by id. ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/fair-lines?devig=power&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const data = signals.fairLines({ ...filter(q), devig: q.devig }, engine.asOf(), q.limit);
      return { kind: 'data', data, updated: latestUpdated(data, engine.asOf()) };
    },
  });

  const bestPrices = defineRoute({
    path: '/api/v1/best-prices',
    auth: 'key',
    response: 'BestPrice',
    query: BEST_QUERY,
    summary: 'The best price per outcome across the books, and the hold of that best-price market (the low-hold screen).',
    description:
      'Per market group with every outcome priced somewhere: the best unsuspended non-DFS price per outcome (every book at it listed) and hold = sum(1/best decimal) - 1. Lowest hold first, then id. ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/best-prices?max_hold=0.02&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const data = signals.bestPrices({ ...filter(q), maxHold: q.max_hold }, q.limit);
      return { kind: 'data', data, updated: latestUpdated(data, engine.asOf()) };
    },
  });

  const ev = defineRoute({
    path: '/api/v1/ev',
    auth: 'key',
    response: 'PositiveEv',
    query: EV_QUERY,
    summary: '+EV on every book: each non-DFS price against the fair line.',
    description:
      'Every unsuspended non-DFS price of a market that has a fair line (see /fair-lines), with ev = fairProbability * priceDecimal - 1; sharp books included (filter with sportsbook). /edges stays the DFS pick\'em view. Highest ev first, then id. ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/ev?min_ev=0.02&devig=shin&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const data = signals.positiveEv({ ...filter(q), sportsbooks: q.sportsbook ?? null, minEv: q.min_ev, devig: q.devig }, engine.asOf(), q.limit);
      return { kind: 'data', data, updated: latestUpdated(data, engine.asOf()) };
    },
  });

  const middles = defineRoute({
    path: '/api/v1/middles',
    auth: 'key',
    response: 'Middle',
    query: MIDDLE_QUERY,
    summary: 'Middles: opposite sides at different lines (spreads and totals) where both can win.',
    description:
      'Within one event, subtype, period and scope: the best OVER at a total a against the best UNDER at b > a (both win on a total strictly between), and the best HOME at home line h1 against the best AWAY at home line h2 < h1 (both win on a home margin strictly between -h1 and -h2). width, impliedSum, worstCaseCost = 1 - 1/impliedSum (the loss when one leg wins, stakes as in legs) and middleProfit = 2/impliedSum - 1. Lowest worst-case cost first, then id. ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/middles?min_width=1&max_cost=0.05&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const data = signals.middles({ ...filter(q), minWidth: q.min_width, maxCost: q.max_cost }, q.limit);
      return { kind: 'data', data, updated: latestUpdated(data, engine.asOf()) };
    },
  });

  const steam = defineRoute({
    path: '/api/v1/steam',
    auth: 'key',
    response: 'SteamMove',
    query: STEAM_QUERY,
    summary: 'Steam moves: a sharp book\'s price shortening past the threshold within the window, with the books that had not followed.',
    description:
      'A fair-line book\'s price on one side shortening by at least STEAM_THRESHOLD (implied percentage points, e.g. 2pp, or American cents, e.g. 15c) from the price in force STEAM_WINDOW_MS earlier; one move per starting price. staleBooks: the non-DFS books quoting that side above the sharp book\'s new price when the move was seen. The last 5,000 moves are kept; newest first. Also pushed on the signal stream (topic steam). ' + COMMON +
      curlExample(`curl -s ${KEY_HEADER} '${BASE_URL}/api/v1/steam?min_points=2&limit=5'`),
    handle: (req): DataResult => {
      const q = req.query;
      const data = signals.steamMoves({ ...filter(q), sportsbooks: q.sportsbook ?? null, minPoints: q.min_points, minCents: q.min_cents, since: q.since ?? 0 }, q.limit);
      return { kind: 'data', data, updated: latestUpdated(data, engine.asOf()) };
    },
  });

  return [fairLines, bestPrices, ev, middles, steam];
}
