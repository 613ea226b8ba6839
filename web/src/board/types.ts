// The shapes the page reads, as /api/v1/openapi.json describes them (only the fields used).

export interface OddsRow {
  id: string;
  sportsbook: string;
  league: string;
  eventId: string;
  market: string;
  marketSubtype: string;
  period: string;
  selection: string;
  side: string;
  teamName: string;
  priceAmerican?: number;
  priceDecimal?: number;
  dfsMultiplier?: number;
  line?: number;
  playerName?: string;
  suspended: boolean;
  eventStartTime: string;
  updated: string;
  removed?: true;
}

/** One price change: fs/ls first and last seen (epoch seconds), pa American, pd decimal, dm DFS multiplier, su suspended. */
export interface PriceHistoryEntry {
  fs: number;
  ls: number;
  pa?: number;
  pd?: number;
  dm?: number;
  su?: true;
}

/** A /historical/price-history row: one book's row of the selection with its history. */
export interface SelectionHistoryRow {
  id: string;
  sportsbook: string;
  eventStartTime: string;
  removed?: true;
  priceHistory: PriceHistoryEntry[];
}

export interface SnapshotRow extends OddsRow {
  priceHistory: PriceHistoryEntry[] | null;
}

export interface SnapshotEvent {
  id: string;
  league: string;
  startTime: string;
  status: string;
  homeTeamId: string | null;
  awayTeamId: string | null;
  odds: SnapshotRow[];
}

export interface Snapshot {
  updated: string;
  syncToken: string;
  count: number;
  events: SnapshotEvent[];
}

export interface Envelope<T> {
  success: true;
  data: T[];
  nextCursor: string | null;
  meta: { count: number; updated: string };
}

export interface ArbitrageLeg {
  oddsId: string;
  sportsbook: string;
  side: string;
  selection: string;
  priceAmerican: number;
  priceDecimal: number;
  stake: number;
}

export interface Arbitrage {
  id: string;
  type: string;
  eventId: string;
  league: string;
  marketSubtype: string;
  period: string;
  line: number | null;
  profit: number;
  legs: ArbitrageLeg[];
}

export interface Edge {
  id: string;
  eventId: string;
  league: string;
  source: string;
  marketSubtype: string;
  selection: string;
  playerName: string | null;
  dfsMultiplier: number;
  fairPriceAmerican: number;
  edge: number;
}

export interface EventInfo {
  id: string;
  league: string;
  startTime: string;
  status: string;
  homeTeamId: string | null;
  awayTeamId: string | null;
}
