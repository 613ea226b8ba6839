// The hot part of each event, indexed by the event's id in the store's events pool:
// league, home/away team, start time, status, futures flag. Cold event data (names,
// venue, context) lives in persistence/.

import { grown } from './columns.ts';
import { EVENT_STATUSES, type EventRecord, type EventStatus } from './model.ts';
import { NONE, type OddsStore } from './oddsStore.ts';

export interface EventInfo {
  id: string;
  league: string;
  homeTeamId: string | null;
  awayTeamId: string | null;
  startTime: number;
  status: EventStatus;
  isFutures: boolean;
}

/** Which status changes are allowed. */
const TRANSITIONS: Record<EventStatus, readonly EventStatus[]> = {
  scheduled: ['in_progress', 'postponed', 'cancelled'],
  in_progress: ['final', 'suspended'],
  suspended: ['in_progress'],
  postponed: ['scheduled', 'cancelled'],
  final: [],
  cancelled: [],
};

export function isAllowedTransition(from: EventStatus, to: EventStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function statusCode(status: EventStatus): number {
  return EVENT_STATUSES.indexOf(status);
}

export const STATUS_FINAL = statusCode('final');
export const STATUS_CANCELLED = statusCode('cancelled');
export const STATUS_IN_PROGRESS = statusCode('in_progress');
export const STATUS_SCHEDULED = statusCode('scheduled');

export class EventTable {
  /** 1 where the event has a record. */
  known = new Uint8Array(0);
  league = new Int32Array(0);
  home = new Int32Array(0);
  away = new Int32Array(0);
  startTime = new Float64Array(0);
  status = new Uint8Array(0);
  futures = new Uint8Array(0);

  constructor(private readonly store: OddsStore) {}

  /** Adds or replaces an event; returns its index (the store's events pool id). */
  upsert(record: Pick<EventRecord, 'id' | 'league' | 'homeTeamId' | 'awayTeamId' | 'startTime' | 'status' | 'isFutures'>): number {
    const s = this.store;
    const ix = s.events.intern(record.id);
    this.ensure(ix);
    this.known[ix] = 1;
    this.league[ix] = s.leagues.intern(record.league);
    this.home[ix] = record.homeTeamId === null ? NONE : s.teams.intern(record.homeTeamId);
    this.away[ix] = record.awayTeamId === null ? NONE : s.teams.intern(record.awayTeamId);
    this.startTime[ix] = record.startTime;
    this.status[ix] = statusCode(record.status);
    this.futures[ix] = record.isFutures ? 1 : 0;
    return ix;
  }

  has(ix: number): boolean {
    return ix >= 0 && ix < this.known.length && this.known[ix] === 1;
  }

  info(ix: number): EventInfo {
    const s = this.store;
    return {
      id: s.events.get(ix),
      league: s.leagues.get(this.league[ix]),
      homeTeamId: this.home[ix] === NONE ? null : s.teams.get(this.home[ix]),
      awayTeamId: this.away[ix] === NONE ? null : s.teams.get(this.away[ix]),
      startTime: this.startTime[ix],
      status: EVENT_STATUSES[this.status[ix]],
      isFutures: this.futures[ix] === 1,
    };
  }

  private ensure(ix: number): void {
    if (ix < this.known.length) return;
    this.known = grown(this.known, ix + 1);
    this.league = grown(this.league, ix + 1);
    this.home = grown(this.home, ix + 1, NONE);
    this.away = grown(this.away, ix + 1, NONE);
    this.startTime = grown(this.startTime, ix + 1);
    this.status = grown(this.status, ix + 1);
    this.futures = grown(this.futures, ix + 1);
  }
}
