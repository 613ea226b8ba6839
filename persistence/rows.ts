// The JSON records the repositories return, declared in the field order the OpenAPI description
// lists them, which is the order JSON.stringify will write them.
import type { PlayerBoxRow, PlayerRecord, TeamBoxRow } from '../engine/model.ts';

/** An event list row. Futures anchors have null team fields. */
export interface EventRow {
  id: string;
  homeTeamId: string | null;
  homeTeamName: string | null;
  awayTeamId: string | null;
  awayTeamName: string | null;
  /** 'YYYY-MM-DDTHH:mmZ': minute precision, UTC. */
  startTime: string;
  status: string;
  league: string;
  hasOdds: boolean;
  venueId: string | null;
  seasonYear: number;
  context: Record<string, unknown>;
}

/** The event detail: the event plus final scores, present only once a box score exists. */
export interface EventDetailRow extends EventRow {
  homeScore?: number;
  awayScore?: number;
}

/** A team. */
export interface TeamRow {
  id: string;
  name: string;
  abbreviation: string;
  league: string;
}

/** The player record as stored. */
export type PlayerRow = PlayerRecord;

/** A team box stat row plus teamId (whose row it is). */
export type TeamBoxStatRow = TeamBoxRow;

/** A player box stat row. */
export type PlayerBoxStatRow = PlayerBoxRow;

/** The one object /events/{id}/stats returns in its data array. */
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
