// The records of the trader screens (fair line, best prices, +EV, middles, steam) as
// served (the OpenAPI FairLine, BestPrice, PositiveEv, Middle and SteamMove schemas),
// their queries, and the sharp-book weights setting they share.

import type { DevigMethod } from './devig.ts';

/** A market group's fields every screen record echoes. */
export interface ScreenMarket {
  eventId: string;
  league: string;
  market: string;
  marketSubtype: string;
  period: string;
  playerId: string | null;
  playerName: string | null;
  /** 'YYYY-MM-DDTHH:mm' like the odds rows. */
  eventStartTime: string;
}

export interface FairOutcome {
  side: string;
  fairProbability: number;
  fairPriceDecimal: number;
  fairPriceAmerican: number;
}

export interface WeightedBook {
  sportsbook: string;
  weight: number;
}

/** /fair-lines: the no-vig line of one market group from the sharp books. */
export interface FairLineRecord extends ScreenMarket {
  /** The market group id. */
  id: string;
  /** The HOME side's line (spreads), the total, null on moneylines. */
  line: number | null;
  devig: DevigMethod;
  outcomes: FairOutcome[];
  /** The sharp books whose complete, fresh market was used, with their configured weights, in configured order. */
  sharpBooks: WeightedBook[];
  /** Sharp quotes that formed the line (books used times outcomes). */
  quotes: number;
  /** Age at the read of the oldest and newest quote used (ms). */
  oldestQuoteAgeMs: number;
  newestQuoteAgeMs: number;
  /** The newest quote used (ISO-8601 with ms). */
  updated: string;
}

export interface BestOutcome {
  side: string;
  priceAmerican: number;
  priceDecimal: number;
  /** Every book at that price, alphabetical. */
  sportsbooks: string[];
  /** The odds id of the first of them. */
  oddsId: string;
  updated: string;
}

/** /best-prices: the best price per outcome across the non-DFS books, and the hold of that best-price market. */
export interface BestPriceRecord extends ScreenMarket {
  id: string;
  line: number | null;
  outcomes: BestOutcome[];
  /** sum(1 / best decimal) - 1: the margin of a market made of the best prices (negative: an arbitrage). */
  hold: number;
  updated: string;
}

/** /ev: one book's price against the fair line. */
export interface PositiveEvRecord extends ScreenMarket {
  /** The odds row id. */
  id: string;
  groupId: string;
  sportsbook: string;
  selection: string;
  side: string;
  line: number | null;
  priceAmerican: number;
  priceDecimal: number;
  fairProbability: number;
  fairPriceAmerican: number;
  /** fairProbability * priceDecimal - 1: expected return per unit staked. */
  ev: number;
  devig: DevigMethod;
  sharpBooks: string[];
  updated: string;
}

export interface MiddleLeg {
  oddsId: string;
  sportsbook: string;
  side: string;
  line: number;
  priceAmerican: number;
  priceDecimal: number;
  /** Fraction of the total stake that makes both non-middle outcomes pay the same: (1/d_i) / impliedSum. */
  stake: number;
  updated: string;
}

/** /middles: two opposite sides at different lines that can both win. */
export interface MiddleRecord extends ScreenMarket {
  /** {eventId}:{subtype}:{period}:{scope}:{low line}:{high line}. */
  id: string;
  type: 'spread' | 'total';
  /** How many points of margin (spread) or total win both legs. */
  width: number;
  legs: [MiddleLeg, MiddleLeg];
  impliedSum: number;
  /** 1 - 1/impliedSum: the loss (fraction of the stake) when only one leg wins; negative: an arbitrage. */
  worstCaseCost: number;
  /** 2/impliedSum - 1: the gain when both win. */
  middleProfit: number;
  updated: string;
}

export interface StaleBook {
  sportsbook: string;
  oddsId: string;
  priceAmerican: number;
  priceDecimal: number;
  updated: string;
}

/** /steam and the steam stream topic: a sharp book's price shortening past the threshold within the window. */
export interface SteamRecord extends ScreenMarket {
  /** {oddsId}@{epoch ms of the move}. */
  id: string;
  oddsId: string;
  groupId: string;
  sportsbook: string;
  selection: string;
  side: string;
  line: number | null;
  fromPriceAmerican: number;
  toPriceAmerican: number;
  fromPriceDecimal: number;
  toPriceDecimal: number;
  /** Implied probability gained, in percentage points. */
  movePoints: number;
  /** The move in American cents (-110 -> -125: 15; -105 -> +105: 10). */
  moveCents: number;
  /** When the price the move is measured from was first quoted, and the move (ISO-8601 with ms). */
  from: string;
  at: string;
  /** Non-DFS books quoting that side at a price above the sharp book's new one, when the move was seen. */
  staleBooks: StaleBook[];
}

export interface ScreenFilter {
  leagues: readonly string[] | null;
  eventIds: readonly string[] | null;
}

export interface FairLineQuery extends ScreenFilter {
  devig: DevigMethod;
}

export interface BestPriceQuery extends ScreenFilter {
  /** Only markets whose best-price hold is at most this. */
  maxHold: number;
}

export interface PositiveEvQuery extends ScreenFilter {
  devig: DevigMethod;
  minEv: number;
  /** Books whose prices are screened; null: every non-DFS book. */
  sportsbooks: readonly string[] | null;
}

export interface MiddleQuery extends ScreenFilter {
  minWidth: number;
  maxCost: number;
}

export interface SteamQuery extends ScreenFilter {
  sportsbooks: readonly string[] | null;
  minPoints: number;
  minCents: number;
  /** Epoch ms: moves at or after. */
  since: number;
}

/** How steam is detected (settings STEAM_THRESHOLD, STEAM_WINDOW_MS). */
export interface SteamConfig {
  /** 'points': implied percentage points; 'cents': American cents. */
  unit: 'points' | 'cents';
  threshold: number;
  windowMs: number;
  /** Moves kept for /steam. */
  keep: number;
}

export const DEFAULT_STEAM_CONFIG: SteamConfig = Object.freeze({ unit: 'points', threshold: 2, windowMs: 60_000, keep: 5_000 });

/** The sharp books of the fair line and their weights (setting FAIR_LINE_BOOKS). */
export interface ScreenConfig {
  sharpBooks: readonly WeightedBook[];
  /** Sharp quotes older than this at the read are not used (the edge book's staleness window). */
  stalenessMs: number;
  steam: SteamConfig;
}

/** 'pinnacle:2,circa,bookmaker:0.5' -> books and weights (a missing weight is 1); null when not that shape. */
export function parseWeightedBooks(text: string): WeightedBook[] | null {
  const books: WeightedBook[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*([a-z0-9_]+)\s*(?::\s*(\d+(?:\.\d+)?)\s*)?$/.exec(part.toLowerCase());
    if (match === null) return null;
    const weight = match[2] === undefined ? 1 : Number(match[2]);
    if (!(weight > 0) || books.some((b) => b.sportsbook === match[1])) return null;
    books.push({ sportsbook: match[1]!, weight });
  }
  return books.length > 0 && books.length <= 16 ? books : null;
}

/** '2pp' (implied percentage points) or '15c' (American cents) -> unit and threshold; null otherwise. */
export function parseSteamThreshold(text: string): { unit: 'points' | 'cents'; threshold: number } | null {
  const match = /^(\d+(?:\.\d+)?)(pp|c)$/.exec(text.trim().toLowerCase());
  if (match === null) return null;
  const threshold = Number(match[1]);
  if (!(threshold > 0)) return null;
  return { unit: match[2] === 'pp' ? 'points' : 'cents', threshold };
}

/** American cents between two American prices: the distance on the line that skips (-100, 100). */
export function americanCents(from: number, to: number): number {
  return Math.abs(centsScale(to) - centsScale(from));
}

/** An American price on the cents line (-100 and +100 one point). A module function, not a closure: americanCents runs on the steam tick path. */
function centsScale(american: number): number {
  return american < 0 ? american + 100 : american - 100;
}
