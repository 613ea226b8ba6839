// The JSON records the repositories return, declared in the field order the spec
// lists them, which is the order JSON.stringify will write them.
import type { PlayerBoxRow, PlayerRecord, TeamBoxRow } from '../engine/model.ts';

/** 2.9: an event list row. Futures anchors have null team fields (D10). */
export interface EventRow {
  id: string;
  homeTeamId: string | null;
  homeTeamName: string | null;
  awayTeamId: string | null;
  awayTeamName: string | null;
  /** 'YYYY-MM-DDTHH:mmZ' (decisions A1). */
  startTime: string;
  status: string;
  league: string;
  hasOdds: boolean;
  venueId: string | null;
  seasonYear: number;
  context: Record<string, unknown>;
}

/** 2.10 + D2: the event plus final scores, present only once a box score exists. */
export interface EventDetailRow extends EventRow {
  homeScore?: number;
  awayScore?: number;
}

/** 2.2 */
export interface TeamRow {
  id: string;
  name: string;
  abbreviation: string;
  league: string;
}

/** 2.3: the player record as stored. */
export type PlayerRow = PlayerRecord;

/** 2.11 plus teamId (whose row it is). */
export type TeamBoxStatRow = TeamBoxRow;

/** 2.12 */
export type PlayerBoxStatRow = PlayerBoxRow;

/** D3: the one object /events/{id}/stats returns in its data array. */
export interface EventBoxScore {
  eventId: string;
  league: string;
  teams: TeamBoxStatRow[];
  players: PlayerBoxStatRow[];
}

/** One page of a keyset walk: `next` is the key to pass as `after`, null on the last page. */
export interface Page<Row, Key> {
  rows: Row[];
  next: Key | null;
}

export interface EventKey {
  /** Epoch ms of the event start (the row's startTime, unformatted). */
  startTime: number;
  id: string;
}

export interface PlayerBoxKey {
  eventId: string;
  playerId: string;
}
