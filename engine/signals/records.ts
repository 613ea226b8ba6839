// The derived-signal records as served (the OpenAPI Edge and Arbitrage schemas), plus the config both
// books and the brute-force reference share.

import type { DevigMethod } from './devig.ts';

export type ArbitrageType = 'two_way' | 'three_way';

export interface ArbitrageLeg {
  oddsId: string;
  sportsbook: string;
  side: string;
  selection: string;
  priceAmerican: number;
  priceDecimal: number;
  /** Equal-payout fraction of bankroll: (1/d_i) / impliedSum; legs sum to 1. */
  stake: number;
  /** ISO-8601 with ms. */
  updated: string;
}

/** An /arbitrage record. Legs in outcome order: HOME, AWAY | OVER, UNDER | HOME, DRAW, AWAY. */
export interface ArbitrageRecord {
  /** The market group id (see groupKey.ts): stable while the group exists. */
  id: string;
  type: ArbitrageType;
  eventId: string;
  league: string;
  market: string;
  marketSubtype: string;
  period: string;
  /** The HOME side's line (spreads), the total (over/under), null on moneylines. */
  line: number | null;
  profit: number;
  impliedSum: number;
  legs: ArbitrageLeg[];
  /** 'YYYY-MM-DDTHH:mm' like the odds rows. */
  eventStartTime: string;
  /** Latest leg update (ISO-8601 with ms). */
  updated: string;
  /**
   * Books of this market group whose own prices sum below 1 (a negative margin on their
   * own): a data problem of that book, never an arbitrage; lowest implied sum first.
   */
  flaggedBooks: FlaggedBook[];
}

/** A book quoting a negative margin on its own in one market group. */
export interface FlaggedBook {
  sportsbook: string;
  /** The book's own best prices' implied probabilities summed (below 1). */
  impliedSum: number;
}

/** An /edges record. */
export interface EdgeRecord {
  /** The DFS row's odds id. */
  id: string;
  eventId: string;
  league: string;
  source: string;
  market: string;
  marketSubtype: string;
  period: string;
  playerId: string | null;
  playerName: string | null;
  selection: string;
  side: string;
  line: number | null;
  dfsMultiplier: number;
  breakevenProbability: number;
  fairProbability: number;
  fairPriceAmerican: number;
  edge: number;
  /** The sharp books whose fair value was averaged, in configured order. */
  sharpBooks: string[];
  devig: DevigMethod;
  eventStartTime: string;
  /** Latest of the DFS row's and the used sharp quotes' updates (ISO-8601 with ms). */
  updated: string;
}

export interface SignalsConfig {
  /** Fair value comes from these, averaged (default pinnacle, circa, bookmaker). */
  sharpBooks: readonly string[];
  /** Sharp quotes older than this at evaluation time are ignored (default 10 min). */
  stalenessMs: number;
  /** Per-source 2-pick base leg decimal; sources not listed use defaultBaseLegDecimal. */
  baseLegDecimal: Readonly<Record<string, number>>;
  /** Default base leg decimal: sqrt(3), the 2-pick 3x power play. */
  defaultBaseLegDecimal: number;
}

export const DEFAULT_SIGNALS_CONFIG: SignalsConfig = Object.freeze({
  sharpBooks: Object.freeze(['pinnacle', 'circa', 'bookmaker']),
  stalenessMs: 10 * 60 * 1000,
  baseLegDecimal: Object.freeze({}),
  defaultBaseLegDecimal: Math.sqrt(3),
});

export function signalsConfig(overrides: Partial<SignalsConfig> = {}): SignalsConfig {
  return { ...DEFAULT_SIGNALS_CONFIG, ...overrides };
}

export function baseLegDecimalOf(config: SignalsConfig, source: string): number {
  return config.baseLegDecimal[source] ?? config.defaultBaseLegDecimal;
}
