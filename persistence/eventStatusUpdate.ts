// The one write of an event's hot columns: its status and whether it has live odds
// (has_odds), both owned by the engine and copied here for /events. Used by the
// write-behind of the engine's changes (EventsRepository.updateStatuses) and when a
// reused database is brought back to a restarted board's statuses (loadCold). A
// column is written only where it differs, so the count of changed events says
// whether the events data moved.
import type { Statement } from 'better-sqlite3';
import type { EventStatus } from '../engine/model.ts';
import type { Db } from './database.ts';

export class EventStatusUpdate {
  private readonly setStatus: Statement;
  private readonly setHasOdds: Statement;

  constructor(db: Db) {
    this.setStatus = db.prepare('UPDATE events SET status = ? WHERE id = ? AND status <> ?');
    this.setHasOdds = db.prepare('UPDATE events SET has_odds = ? WHERE id = ? AND has_odds <> ?');
  }

  /**
   * Writes the given columns of event id (undefined: left as is); true when one
   * changed. An unknown id changes nothing. Runs in the caller's transaction.
   */
  run(id: string, status: EventStatus | undefined, hasOdds: boolean | undefined): boolean {
    let touched = 0;
    if (status !== undefined) touched += this.setStatus.run(status, id, status).changes;
    if (hasOdds !== undefined) {
      const has = hasOdds ? 1 : 0;
      touched += this.setHasOdds.run(has, id, has).changes;
    }
    return touched > 0;
  }
}
