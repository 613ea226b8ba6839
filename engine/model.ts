// The shared vocabulary of the board: what fixtures/ generates, what the engine
// holds hot, and what persistence/ stores cold. Plain data only: no behaviour here
// beyond tiny pure helpers that every part must agree on.

export type Sport = 'football' | 'basketball' | 'hockey' | 'baseball' | 'soccer' | 'golf';

/** Event statuses (transitions are in eventTable.ts). */
export const EVENT_STATUSES = ['scheduled', 'in_progress', 'final', 'postponed', 'cancelled', 'suspended'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** A row's side; the order is the side column's code (engine/oddsStore.ts). */
export const SIDES = ['HOME', 'AWAY', 'DRAW', 'OVER', 'UNDER', 'YES'] as const;
export type Side = (typeof SIDES)[number];
/** The sides a priced leg of an edge or an arbitrage can take: every side but YES. */
export const LEG_SIDES: readonly Exclude<Side, 'YES'>[] = SIDES.filter((side): side is Exclude<Side, 'YES'> => side !== 'YES');
/** Which team a row's selection is on; the order is the teamSide column's code. */
export const TEAM_SIDES = ['HOME', 'AWAY', 'NONE'] as const;
export type TeamSide = (typeof TEAM_SIDES)[number];
/** What a futures row is scoped to (event rows have none). */
export const MARKET_SCOPES = ['SEASON', 'TOURNAMENT'] as const;
export type MarketScope = (typeof MARKET_SCOPES)[number];

export type SourceKind = 'sharp' | 'retail' | 'dfs';
export interface SourceRecord {
  id: string;
  name: string;
  kind: SourceKind;
}

/** About 20 sources. Order here is not the /odds order: that is by id. */
export const SOURCES: readonly SourceRecord[] = [
  { id: 'pinnacle', name: 'Pinnacle', kind: 'sharp' },
  { id: 'circa', name: 'Circa Sports', kind: 'sharp' },
  { id: 'bookmaker', name: 'BookMaker', kind: 'sharp' },
  { id: 'draftkings', name: 'DraftKings', kind: 'retail' },
  { id: 'fanduel', name: 'FanDuel', kind: 'retail' },
  { id: 'betmgm', name: 'BetMGM', kind: 'retail' },
  { id: 'caesars', name: 'Caesars', kind: 'retail' },
  { id: 'espnbet', name: 'ESPN BET', kind: 'retail' },
  { id: 'fanatics', name: 'Fanatics', kind: 'retail' },
  { id: 'betrivers', name: 'BetRivers', kind: 'retail' },
  { id: 'hardrockbet', name: 'Hard Rock Bet', kind: 'retail' },
  { id: 'bet365', name: 'bet365', kind: 'retail' },
  { id: 'prizepicks', name: 'PrizePicks', kind: 'dfs' },
  { id: 'underdog', name: 'Underdog', kind: 'dfs' },
  { id: 'sleeper', name: 'Sleeper', kind: 'dfs' },
  { id: 'betr', name: 'Betr', kind: 'dfs' },
  { id: 'dabble', name: 'Dabble', kind: 'dfs' },
];

export interface LeagueRecord {
  code: string; // lower case, like every league and sportsbook code
  name: string;
  sport: Sport;
}

/** A league season. Dates are 'YYYY-MM-DD' (UTC). */
export interface SeasonRecord {
  id: string;
  league: string;
  year: number;
  name: string;
  startDate: string;
  endDate: string;
  status: 'upcoming' | 'in_progress' | 'completed';
  futuresEventId: string | null;
}

export interface TeamRecord {
  id: string;
  name: string;
  abbreviation: string;
  league: string;
  conference: string | null;
  division: string | null;
  venueId: string | null;
}

export interface PlayerRecord {
  id: string;
  name: string;
  league: string;
  teamId: string;
  position: string;
}

export interface VenueRecord {
  id: string;
  name: string;
  city: string;
  indoor: boolean;
}

/**
 * An event (the OpenAPI Event and EventDetail records). Futures anchors (synthetic season events and golf
 * tournaments) have isFutures true and null home/away.
 */
export interface EventRecord {
  id: string;
  league: string;
  homeTeamId: string | null;
  homeTeamName: string | null;
  awayTeamId: string | null;
  awayTeamName: string | null;
  /** Epoch ms, minute aligned. For a futures anchor: its settlement date, never a kickoff. */
  startTime: number;
  status: EventStatus;
  venueId: string | null;
  seasonYear: number;
  context: Record<string, unknown>;
  isFutures: boolean;
}

/**
 * Team box stat row, one per team per final event. `teamId` (beside homeId/awayId,
 * documented in OpenAPI) says whose row it is; `result` is from that team's view:
 * 1 win, 0 draw/tie, -1 loss.
 */
export interface TeamBoxRow {
  eventId: string;
  teamId: string;
  homeId: string;
  awayId: string;
  league: string;
  homeScore: number;
  awayScore: number;
  result: number;
  stats: Record<string, unknown>;
}

/** Player box stat row. `date` is 'YYYY-MM-DD' of the event. */
export interface PlayerBoxRow {
  eventId: string;
  playerId: string;
  teamId: string;
  date: string;
  data: Record<string, unknown>;
}

/**
 * One odds row as ingested (the OpenAPI OddsRow record). The engine interns every string once.
 * id = `${eventId}:${sportsbook}:${marketSubtype}:${selectionId}` (no ':' inside a part);
 * selectionId encodes period, side, line and the player/team it is about.
 */
export interface OddsInput {
  eventId: string;
  sportsbook: string;
  league: string;
  market: string;
  marketSubtype: string;
  period: string;
  selectionId: string;
  selection: string;
  side: Side;
  teamSide: TeamSide;
  teamName: string;
  /** null on DFS pick'em rows, which carry dfsMultiplier instead. */
  priceAmerican: number | null;
  dfsMultiplier: number | null;
  /** null on pure moneylines and categorical futures. */
  line: number | null;
  playerId: string | null;
  playerName: string | null;
  /** The team this selection is about (team-side picks, team totals, a player's team). Internal: not a row field. */
  teamId: string | null;
  suspended: boolean;
  /** Epoch ms. For futures: the anchor's settlement date. */
  eventStartTime: number;
  /** Epoch ms. */
  updated: number;
  marketScope: MarketScope | null;
  segment: string | null;
}

export function oddsId(row: Pick<OddsInput, 'eventId' | 'sportsbook' | 'marketSubtype' | 'selectionId'>): string {
  return `${row.eventId}:${row.sportsbook}:${row.marketSubtype}:${row.selectionId}`;
}

/**
 * A selection's past prices, oldest first (the snapshot's priceHistory), in a reusable columnar buffer so
 * that generating a million rows allocates no per-entry objects. fs/ls are epoch
 * seconds; pa is 0 where absent (DFS rows); dm is 0 where absent (book rows);
 * su is 1 for a suspended span.
 */
export interface HistoryBuffer {
  length: number;
  fs: Float64Array;
  ls: Float64Array;
  pa: Int32Array;
  dm: Float64Array;
  su: Uint8Array;
}

export function createHistoryBuffer(capacity = 64): HistoryBuffer {
  return {
    length: 0,
    fs: new Float64Array(capacity),
    ls: new Float64Array(capacity),
    pa: new Int32Array(capacity),
    dm: new Float64Array(capacity),
    su: new Uint8Array(capacity),
  };
}

export type BoardSize = 'small' | 'medium' | 'large';

export interface BoardOptions {
  seed: number;
  size: BoardSize;
  /** Epoch ms: the board's NOW (the instant the clock is frozen at). */
  now: number;
}

/** A generated fixture board: cold data as plain arrays, odds as a deterministic replayable stream. */
export interface Board {
  options: BoardOptions;
  leagues: LeagueRecord[];
  seasons: SeasonRecord[];
  sources: readonly SourceRecord[];
  venues: VenueRecord[];
  teams: TeamRecord[];
  players: PlayerRecord[];
  events: EventRecord[];
  teamBox: TeamBoxRow[];
  playerBox: PlayerBoxRow[];
  /** Exactly how many rows forEachOdds emits. */
  oddsCount: number;
  /**
   * Emits every odds row with its history, deterministically (calling it twice emits
   * identical data). The row and history objects are reused between calls of visit:
   * copy what you keep.
   */
  forEachOdds(visit: (row: OddsInput, history: HistoryBuffer) => void): void;
}

/** Exact American -> decimal conversion, rounded to 4 places (what books display). */
export function americanToDecimal(american: number): number {
  const d = american > 0 ? 1 + american / 100 : 1 + 100 / -american;
  return Math.round(d * 10000) / 10000;
}

/** Decimal -> American, rounded to the nearest integer, never in (-100, 100). */
export function decimalToAmerican(decimal: number): number {
  if (decimal >= 2) return Math.round((decimal - 1) * 100);
  return Math.round(-100 / (decimal - 1));
}
