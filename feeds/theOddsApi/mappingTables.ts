// The editable tables that say how The Odds API's vocabulary maps onto ours: sport keys
// to league codes, bookmaker keys to sportsbook ids and kinds, market keys to our
// market / marketSubtype, period suffixes to periods, and player stat names to subtype
// suffixes. docs/feeds.md shows the same tables; change both together.

import type { MarketScope, SourceKind } from '../../engine/model.ts';

export interface LeagueMapping {
  league: string;
  /** Futures markets of this sport key settle over a season or one tournament. */
  outrightScope: MarketScope;
  /** Seasons that cross New Year are named by the year they start in. */
  seasonCrossesYear: boolean;
}

/** Sport key prefixes (longest match wins: `americanfootball_nfl_super_bowl_winner` is nfl). */
export const SPORT_LEAGUES: Readonly<Record<string, LeagueMapping>> = {
  americanfootball_nfl: { league: 'nfl', outrightScope: 'SEASON', seasonCrossesYear: true },
  americanfootball_ncaaf: { league: 'ncaaf', outrightScope: 'SEASON', seasonCrossesYear: true },
  basketball_nba: { league: 'nba', outrightScope: 'SEASON', seasonCrossesYear: true },
  basketball_ncaab: { league: 'ncaab', outrightScope: 'SEASON', seasonCrossesYear: true },
  basketball_wnba: { league: 'wnba', outrightScope: 'SEASON', seasonCrossesYear: false },
  icehockey_nhl: { league: 'nhl', outrightScope: 'SEASON', seasonCrossesYear: true },
  baseball_mlb: { league: 'mlb', outrightScope: 'SEASON', seasonCrossesYear: false },
  soccer_epl: { league: 'epl', outrightScope: 'SEASON', seasonCrossesYear: true },
  soccer_uefa_champs_league: { league: 'ucl', outrightScope: 'SEASON', seasonCrossesYear: true },
  soccer_usa_mls: { league: 'mls', outrightScope: 'SEASON', seasonCrossesYear: false },
  golf: { league: 'pga', outrightScope: 'TOURNAMENT', seasonCrossesYear: false },
};

export function leagueOfSport(sportKey: string): LeagueMapping | null {
  let best: string | null = null;
  for (const prefix of Object.keys(SPORT_LEAGUES)) {
    if ((sportKey === prefix || sportKey.startsWith(`${prefix}_`)) && (best === null || prefix.length > best.length)) best = prefix;
  }
  return best === null ? null : SPORT_LEAGUES[best];
}

export interface BookMapping {
  id: string;
  name: string;
  kind: SourceKind;
}

/**
 * Bookmaker keys whose id or kind is not the default (id = the key, kind retail).
 * Sharp: books that take big limits and move first (their no-vig price is the fair
 * value edges are measured against); exchanges count as sharp. DFS: pick'em apps,
 * priced per pick (the provider quotes them as odds per leg).
 */
export const BOOKMAKERS: Readonly<Record<string, BookMapping>> = {
  pinnacle: { id: 'pinnacle', name: 'Pinnacle', kind: 'sharp' },
  circasports: { id: 'circa', name: 'Circa Sports', kind: 'sharp' },
  betfair_ex_us: { id: 'betfair_ex_us', name: 'Betfair Exchange', kind: 'sharp' },
  betfair_ex_uk: { id: 'betfair_ex_uk', name: 'Betfair Exchange', kind: 'sharp' },
  betfair_ex_eu: { id: 'betfair_ex_eu', name: 'Betfair Exchange', kind: 'sharp' },
  matchbook: { id: 'matchbook', name: 'Matchbook', kind: 'sharp' },
  lowvig: { id: 'lowvig', name: 'LowVig.ag', kind: 'sharp' },
  draftkings: { id: 'draftkings', name: 'DraftKings', kind: 'retail' },
  fanduel: { id: 'fanduel', name: 'FanDuel', kind: 'retail' },
  betmgm: { id: 'betmgm', name: 'BetMGM', kind: 'retail' },
  williamhill_us: { id: 'caesars', name: 'Caesars', kind: 'retail' },
  espnbet: { id: 'espnbet', name: 'ESPN BET', kind: 'retail' },
  fanatics: { id: 'fanatics', name: 'Fanatics', kind: 'retail' },
  betrivers: { id: 'betrivers', name: 'BetRivers', kind: 'retail' },
  hardrockbet: { id: 'hardrockbet', name: 'Hard Rock Bet', kind: 'retail' },
  bet365: { id: 'bet365', name: 'bet365', kind: 'retail' },
  prizepicks: { id: 'prizepicks', name: 'PrizePicks', kind: 'dfs' },
  underdog: { id: 'underdog', name: 'Underdog', kind: 'dfs' },
  pick6: { id: 'pick6', name: 'DraftKings Pick6', kind: 'dfs' },
  betr_us_dfs: { id: 'betr', name: 'Betr', kind: 'dfs' },
  sleeper: { id: 'sleeper', name: 'Sleeper', kind: 'dfs' },
  dabble_au: { id: 'dabble', name: 'Dabble', kind: 'dfs' },
};

/** A book the table does not list: its key as the id (made a valid code), retail. */
export function bookOf(key: string, title: string): BookMapping {
  const known = BOOKMAKERS[key];
  if (known !== undefined) return known;
  const id = key.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 50);
  return { id, name: title.length > 0 ? title.slice(0, 200) : id, kind: 'retail' };
}

/** Market keys without their period suffix. */
export const BASE_MARKETS: Readonly<Record<string, { market: string; withLine: boolean }>> = {
  h2h: { market: 'MONEYLINE', withLine: false },
  h2h_3_way: { market: 'MONEYLINE_3_WAY', withLine: false },
  spreads: { market: 'SPREAD', withLine: true },
  alternate_spreads: { market: 'SPREAD', withLine: true },
  totals: { market: 'TOTAL', withLine: true },
  alternate_totals: { market: 'TOTAL', withLine: true },
  team_totals: { market: 'TEAM_TOTAL', withLine: true },
  alternate_team_totals: { market: 'TEAM_TOTAL', withLine: true },
  outrights: { market: 'CATEGORICAL', withLine: false },
};

/** Period suffixes of market keys (`totals_q1`, `h2h_1st_5_innings`); no suffix is the full game. */
export const PERIOD_SUFFIXES: Readonly<Record<string, string>> = {
  q1: '1Q',
  q2: '2Q',
  q3: '3Q',
  q4: '4Q',
  h1: '1H',
  h2: '2H',
  p1: '1P',
  p2: '2P',
  p3: '3P',
  '1st_1_innings': '1INN',
  '1st_3_innings': '1INN_3INN',
  '1st_5_innings': '1INN_5INN',
  '1st_7_innings': '1INN_7INN',
};

/**
 * Player prop stat names (the key after `player_`, `batter_` or `pitcher_`, without
 * `_alternate`) whose subtype suffix is not simply the name in upper case; these match
 * the fixture board's subtypes so provider rows and generated rows share groups.
 */
export const PLAYER_STATS: Readonly<Record<string, string>> = {
  points_rebounds_assists: 'PTS_REB_AST',
  pass_yds: 'PASSING_YARDS',
  pass_tds: 'PASSING_TDS',
  pass_completions: 'PASSING_COMPLETIONS',
  pass_attempts: 'PASSING_ATTEMPTS',
  pass_interceptions: 'INTERCEPTIONS',
  rush_yds: 'RUSHING_YARDS',
  rush_attempts: 'RUSHING_ATTEMPTS',
  reception_yds: 'RECEIVING_YARDS',
  receptions: 'RECEPTIONS',
  shots_on_goal: 'SHOTS_ON_GOAL',
  shots_on_target: 'SHOTS_ON_TARGET',
  strikeouts: 'STRIKEOUTS',
  total_bases: 'TOTAL_BASES',
};

/** Yes/No player props that are a milestone (Yes = at least one): the stat and line they stand for. */
export const YES_NO_MILESTONES: Readonly<Record<string, { stat: string; line: number }>> = {
  anytime_td: { stat: 'TOUCHDOWNS', line: 0.5 },
  goal_scorer_anytime: { stat: 'GOALS', line: 0.5 },
  goals_scorer_anytime: { stat: 'GOALS', line: 0.5 },
  home_runs: { stat: 'HOME_RUNS', line: 0.5 },
};
