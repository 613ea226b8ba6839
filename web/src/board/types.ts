// The shapes the page reads. The records the API serves are the generated client types
// (client/schema.ts, from /api/v1/openapi.json by `npm run client:generate`); the rest
// are the parts of envelopes and documents the page uses.
import type { components } from '../../../client/schema.ts';

type Schemas = components['schemas'];
export type OddsRow = Schemas['OddsRow'];
/** One price change: fs/ls first and last seen (epoch seconds), pa American, pd decimal, dm DFS multiplier, su suspended. */
export type PriceHistoryEntry = Schemas['PriceHistoryEntry'];
/** A /historical/price-history row: one book's row of the selection with its history. */
export type SelectionHistoryRow = Schemas['SelectionHistoryRow'];
export type SnapshotRow = Schemas['SnapshotOddsRow'];
export type ArbitrageLeg = Schemas['ArbitrageLeg'];
export type Arbitrage = Schemas['Arbitrage'];
export type Edge = Schemas['Edge'];

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

export interface EventInfo {
  id: string;
  league: string;
  startTime: string;
  status: string;
  homeTeamId: string | null;
  awayTeamId: string | null;
}
