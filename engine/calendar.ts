// League season calendars: real month/day windows, computed for any year. A season
// that spans New Year belongs to the year it starts (NBA 2026-27 is 'nba-2026').
// Pure functions: "now" is always passed in (it comes from the one clock, engine/clock.ts).

import type { LeagueRecord, SeasonRecord, Sport } from './model.ts';

interface SeasonRule {
  code: string;
  name: string;
  sport: Sport;
  /** 'MM-DD' of the first day and of the settlement (last) day, both inclusive. */
  start: string;
  end: string;
  /** Leagues whose futures hang off a synthetic season event (golf uses tournament events instead). */
  seasonFutures: boolean;
}

const RULES: readonly SeasonRule[] = [
  { code: 'nfl', name: 'NFL', sport: 'football', start: '09-03', end: '02-15', seasonFutures: true },
  { code: 'ncaaf', name: 'NCAA Football', sport: 'football', start: '08-22', end: '01-20', seasonFutures: true },
  { code: 'nba', name: 'NBA', sport: 'basketball', start: '10-20', end: '06-20', seasonFutures: true },
  { code: 'ncaab', name: 'NCAA Basketball', sport: 'basketball', start: '11-02', end: '04-07', seasonFutures: true },
  { code: 'wnba', name: 'WNBA', sport: 'basketball', start: '05-15', end: '10-20', seasonFutures: true },
  { code: 'nhl', name: 'NHL', sport: 'hockey', start: '10-06', end: '06-20', seasonFutures: true },
  { code: 'mlb', name: 'MLB', sport: 'baseball', start: '03-25', end: '11-02', seasonFutures: true },
  { code: 'epl', name: 'English Premier League', sport: 'soccer', start: '08-14', end: '05-25', seasonFutures: true },
  { code: 'ucl', name: 'UEFA Champions League', sport: 'soccer', start: '09-15', end: '06-05', seasonFutures: true },
  { code: 'mls', name: 'Major League Soccer', sport: 'soccer', start: '02-20', end: '12-08', seasonFutures: true },
  { code: 'pga', name: 'PGA Tour', sport: 'golf', start: '01-05', end: '11-30', seasonFutures: false },
];

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/**
 * How long a game lasts from its start to its final whistle, per league: the fixture
 * schedule marks games in progress and final by it, and the simulator ends live games
 * after it, so both agree on when a game is over.
 */
const GAME_DURATION_MS: Record<string, number> = {
  nfl: 210 * MINUTE_MS,
  ncaaf: 220 * MINUTE_MS,
  nba: 150 * MINUTE_MS,
  ncaab: 120 * MINUTE_MS,
  wnba: 120 * MINUTE_MS,
  nhl: 165 * MINUTE_MS,
  mlb: 180 * MINUTE_MS,
  epl: 115 * MINUTE_MS,
  ucl: 115 * MINUTE_MS,
  mls: 115 * MINUTE_MS,
};

export function gameDurationMs(league: string): number {
  return GAME_DURATION_MS[league] ?? 180 * MINUTE_MS;
}

export function leagueCatalog(): LeagueRecord[] {
  return RULES.map((r) => ({ code: r.code, name: r.name, sport: r.sport }));
}

export function leagueSport(code: string): Sport | null {
  const rule = RULES.find((r) => r.code === code);
  return rule ? rule.sport : null;
}

function spansNewYear(rule: SeasonRule): boolean {
  return rule.end < rule.start;
}

export function futuresEventId(league: string, year: number): string {
  return `${league}-${year}-futures`;
}

function seasonName(rule: SeasonRule, year: number): string {
  if (!spansNewYear(rule)) return `${rule.name} ${year}`;
  return `${rule.name} ${year}-${String((year + 1) % 100).padStart(2, '0')}`;
}

/** First instant of the season (its startDate at 00:00 UTC). */
export function seasonStartMs(season: Pick<SeasonRecord, 'startDate'>): number {
  return Date.parse(`${season.startDate}T00:00:00Z`);
}

/** The instant after the season's last day: the season is in progress while now < this. */
export function seasonEndMs(season: Pick<SeasonRecord, 'endDate'>): number {
  return Date.parse(`${season.endDate}T00:00:00Z`) + DAY_MS;
}

/** Futures settle on the season's last day; the anchor event's startTime and futures rows' eventStartTime. */
export function seasonSettlementMs(season: Pick<SeasonRecord, 'endDate'>): number {
  return Date.parse(`${season.endDate}T00:00:00Z`);
}

function buildSeason(rule: SeasonRule, year: number, now: number): SeasonRecord {
  const endYear = spansNewYear(rule) ? year + 1 : year;
  const startDate = `${year}-${rule.start}`;
  const endDate = `${endYear}-${rule.end}`;
  const startMs = Date.parse(`${startDate}T00:00:00Z`);
  const endMs = Date.parse(`${endDate}T00:00:00Z`) + DAY_MS;
  const status = now < startMs ? 'upcoming' : now >= endMs ? 'completed' : 'in_progress';
  return {
    id: `${rule.code}-${year}`,
    league: rule.code,
    year,
    name: seasonName(rule, year),
    startDate,
    endDate,
    status,
    futuresEventId: rule.seasonFutures ? futuresEventId(rule.code, year) : null,
  };
}

/** Seasons of every league that overlap calendar year `year`, ordered by league then year. */
export function seasonsForYear(year: number, now: number): SeasonRecord[] {
  const out: SeasonRecord[] = [];
  for (const rule of RULES) {
    if (spansNewYear(rule)) out.push(buildSeason(rule, year - 1, now));
    out.push(buildSeason(rule, year, now));
  }
  return out;
}

export function activeSeasons(now: number): SeasonRecord[] {
  const year = new Date(now).getUTCFullYear();
  return seasonsForYear(year, now).filter((s) => s.status === 'in_progress');
}

/** Sorted league codes with a season in progress at `now`. */
export function activeLeagues(now: number): string[] {
  return activeSeasons(now)
    .map((s) => s.league)
    .sort();
}

/** The in-progress season of one league at `now`, or null when out of season. */
export function activeSeason(league: string, now: number): SeasonRecord | null {
  return activeSeasons(now).find((s) => s.league === league) ?? null;
}
