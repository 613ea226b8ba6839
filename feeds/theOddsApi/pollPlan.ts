// Which endpoint serves each market key, and what the feed's polling costs in credits.
//
// The Odds API v4 routes markets by kind (https://the-odds-api.com/liveapi/guides/v4/):
//   GET /v4/sports/{sport}/odds                 featured markets only: h2h, spreads,
//                                               totals (outrights on a futures sport key);
//                                               any other key is answered 422 "Markets not
//                                               supported by this endpoint"
//   GET /v4/sports/{sport}/events/{id}/odds     any market, one event per call: 3-way
//                                               (h2h_3_way), alternates, team totals,
//                                               period markets (h2h_q1, spreads_h1, ...),
//                                               player props (player_points, ...)
// Cost (x-requests-last): sport odds = markets x regions per call; event odds = the
// markets the answer holds x regions per call (at most the markets asked for);
// /v4/sports and /events are free; /scores costs 1, 2 with daysFrom.
//
// The plan below says, per sport and market, which endpoint carries it and what it costs
// an hour at the chosen intervals (per-event markets multiply by the sport's events,
// known after the first /events answer), and the polling interval the credit budget
// stretches it to. The feed logs it at start and after each change of the event counts,
// and /readyz shows it.

import { marketKeyMeaning } from './mapEvent.ts';

/** Markets the sport-wide /odds endpoint serves (outrights only on futures sport keys). */
export const FEATURED_MARKETS: ReadonlySet<string> = new Set(['h2h', 'spreads', 'totals', 'outrights']);

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export type MarketRoute = 'sport' | 'event';

/** A market key the feed asked for: where it goes, or why it is not asked for at all. */
export function routeOf(market: string): MarketRoute | null {
  if (FEATURED_MARKETS.has(market)) return 'sport';
  // a key our mapping tables do not carry would only spend credits on outcomes the board cannot take
  return marketKeyMeaning(market, false, 'nba') !== null ? 'event' : null;
}

/** Futures sport keys (…_winner) carry outrights only, on the sport endpoint. */
export function isOutrightSport(sport: string): boolean {
  return sport.endsWith('_winner');
}

export interface PlanInput {
  sports: readonly string[];
  /** Comma-separated region codes; each region multiplies every odds call's cost. */
  regions: string;
  /** The market keys of each sport that are still asked for (a dropped market is not). */
  marketsOf: (sport: string) => { sport: string[]; event: string[] };
  /** Events of a sport the last /events answer listed (null: not known yet). */
  eventsOf: (sport: string) => number | null;
  intervalMs: number;
  eventIntervalMs: number;
  /** 0: no budget. */
  creditsPerHour: number;
  /** 0: no budget. */
  budgetPerDay: number;
}

export interface PlannedMarket {
  sport: string;
  market: string;
  endpoint: MarketRoute;
  /** Calls an hour that carry this market (per-event: one per event per pass). */
  callsPerHour: number;
  /** Credits an hour this market costs at the chosen intervals (an upper bound for per-event markets: a book may not quote one). */
  creditsPerHour: number;
  /** True while the sport's event count is unknown (the cost then counts one event). */
  estimated: boolean;
}

export interface PollPlan {
  markets: PlannedMarket[];
  /** Per sport, the sum of its markets. */
  sports: { sport: string; creditsPerHour: number }[];
  /** At the chosen intervals, before any budget. */
  creditsPerHour: number;
  /** The budget an hour (the stricter of credits-per-hour and budget-per-day / 24); 0: none. */
  budgetPerHour: number;
  /** How much longer than chosen the budget makes every interval (1: as chosen). */
  stretch: number;
  intervalMs: number;
  eventIntervalMs: number;
}

export function regionCount(regions: string): number {
  return regions.split(',').filter((r) => r.trim().length > 0).length;
}

export function pollPlan(input: PlanInput): PollPlan {
  const regions = regionCount(input.regions);
  const markets: PlannedMarket[] = [];
  const sports: { sport: string; creditsPerHour: number }[] = [];
  let total = 0;
  for (const sport of input.sports) {
    const { sport: onSport, event: onEvents } = input.marketsOf(sport);
    const events = input.eventsOf(sport);
    let ofSport = 0;
    const sportCalls = HOUR_MS / input.intervalMs;
    for (const market of onSport) {
      const credits = sportCalls * regions;
      markets.push({ sport, market, endpoint: 'sport', callsPerHour: sportCalls, creditsPerHour: credits, estimated: false });
      ofSport += credits;
    }
    const passes = HOUR_MS / input.eventIntervalMs;
    for (const market of onEvents) {
      const calls = passes * (events ?? 1);
      const credits = calls * regions;
      markets.push({ sport, market, endpoint: 'event', callsPerHour: calls, creditsPerHour: credits, estimated: events === null });
      ofSport += credits;
    }
    sports.push({ sport, creditsPerHour: ofSport });
    total += ofSport;
  }
  const budgets = [input.creditsPerHour, input.budgetPerDay > 0 ? (input.budgetPerDay * HOUR_MS) / DAY_MS : 0].filter((b) => b > 0);
  const budgetPerHour = budgets.length > 0 ? Math.min(...budgets) : 0;
  const stretch = budgetPerHour > 0 && total > budgetPerHour ? total / budgetPerHour : 1;
  return { markets, sports, creditsPerHour: total, budgetPerHour, stretch, intervalMs: input.intervalMs, eventIntervalMs: input.eventIntervalMs };
}

const round = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : String(Math.round(n * 10) / 10));

/** The plan as log lines: one per sport with its markets, then the total against the budget. */
export function planLines(plan: PollPlan): string[] {
  const lines: string[] = [];
  for (const { sport, creditsPerHour } of plan.sports) {
    const parts = plan.markets
      .filter((m) => m.sport === sport)
      .map((m) => `${m.market} ${m.endpoint === 'sport' ? 'sport odds' : 'event odds'} ${round(m.creditsPerHour)}${m.estimated ? '+ (per event)' : ''}`);
    lines.push(`the-odds-api plan: ${sport}: ${round(creditsPerHour)} credits/h (${parts.length > 0 ? parts.join(', ') : 'no markets'})`);
  }
  const budget = plan.budgetPerHour > 0 ? `budget ${round(plan.budgetPerHour)} credits/h` : 'no budget';
  const stretched =
    plan.stretch > 1
      ? `; the budget stretches the intervals ${round(plan.stretch)}x (sport odds every ${round((plan.intervalMs * plan.stretch) / 1000)} s, event odds every ${round((plan.eventIntervalMs * plan.stretch) / 1000)} s)`
      : '';
  lines.push(
    `the-odds-api plan: ${round(plan.creditsPerHour)} credits/h at sport odds every ${round(plan.intervalMs / 1000)} s and event odds every ${round(plan.eventIntervalMs / 1000)} s; ${budget}${stretched}`,
  );
  return lines;
}
