// Seasons come from the league calendar (engine/calendar.ts), which
// computes them for any year with their status at `now`; the database only decides
// futuresEventId: it is kept where that synthetic anchor event exists and set to null
// where it does not (a past season, or a league the board has no futures for), so it
// never names an event /events/{id} would answer 404 for.

import type { Statement } from 'better-sqlite3';
import { seasonsForYear } from '../engine/calendar.ts';
import type { SeasonRecord } from '../engine/model.ts';
import type { Db } from './database.ts';

export class SeasonsRepository {
  private readonly eventExists: Statement;

  constructor(db: Db) {
    this.eventExists = db.prepare('SELECT 1 FROM events WHERE id = ?').pluck();
  }

  /** Every league's seasons overlapping calendar year `year`, sorted by league then year. */
  forYear(year: number, now: number): SeasonRecord[] {
    const seasons = seasonsForYear(year, now).map((s): SeasonRecord => ({
      id: s.id,
      league: s.league,
      year: s.year,
      name: s.name,
      startDate: s.startDate,
      endDate: s.endDate,
      status: s.status,
      futuresEventId: s.futuresEventId !== null && this.eventExists.get(s.futuresEventId) !== undefined ? s.futuresEventId : null,
    }));
    return seasons.sort((a, b) => (a.league < b.league ? -1 : a.league > b.league ? 1 : a.year - b.year));
  }
}
