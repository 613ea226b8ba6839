// Leagues rotate with the calendar (out of season is not an error): a league filter
// keeps only the requested leagues that have a season in progress, and names the
// others in meta.note with the list of active leagues. Seasons start and end on UTC
// day boundaries, so the active set is computed once per UTC day.
import { activeLeagues } from '../../engine/calendar.ts';

const DAY_MS = 86_400_000;

export interface LeagueSplit {
  /** Requested leagues with an active season, in request order. */
  inSeason: string[];
  /** meta.note, or null when every requested league is in season. */
  note: string | null;
}

export class SeasonCalendar {
  private day = Number.NaN;
  private active: ReadonlySet<string> = new Set();
  private activeText = '';

  /** UTC day number of an instant: the unit in which the active set can change. */
  static dayOf(now: number): number {
    return Math.floor(now / DAY_MS);
  }

  split(requested: readonly string[], now: number): LeagueSplit {
    this.refresh(now);
    const inSeason: string[] = [];
    const missing: string[] = [];
    for (const league of requested) (this.active.has(league) ? inSeason : missing).push(league);
    if (missing.length === 0) return { inSeason, note: null };
    const names = missing.join(', ');
    const verb = missing.length === 1 ? 'has' : 'have';
    return { inSeason, note: `${names} ${verb} no active season; active leagues: ${this.activeText}.` };
  }

  private refresh(now: number): void {
    const day = SeasonCalendar.dayOf(now);
    if (day === this.day) return;
    const leagues = activeLeagues(now);
    this.day = day;
    this.active = new Set(leagues);
    this.activeText = leagues.length === 0 ? 'none' : leagues.join(', ');
  }
}
