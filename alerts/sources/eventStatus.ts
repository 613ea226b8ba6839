// Event status changes. eventChanged (the engine calls it after a status change or an
// event upsert) only adds the id to a set; the producer's tick compares each one's
// status with the last it knew (seeded from the event table at start) and reports the
// changes (a new event only becomes known).
import type { OddsEngine } from '../../engine/engine.ts';
import { EVENT_STATUSES, type EventStatus } from '../../engine/model.ts';
import type { Emit } from './signalSources.ts';

export class EventStatusSource {
  private readonly known = new Map<string, EventStatus>();
  private changed = new Set<string>();

  constructor(private readonly engine: OddsEngine) {
    const table = engine.eventTable;
    for (let ev = 0; ev < table.known.length; ev++) {
      if (table.known[ev] === 1) this.known.set(engine.store.events.get(ev), EVENT_STATUSES[table.status[ev]!]!);
    }
  }

  eventChanged(eventId: string): void {
    this.changed.add(eventId);
  }

  drain(emit: Emit): void {
    if (this.changed.size === 0) return;
    const ids = this.changed;
    this.changed = new Set();
    for (const id of ids) {
      const info = this.engine.event(id);
      if (info === undefined) continue;
      const from = this.known.get(id);
      this.known.set(id, info.status);
      // a new event is not a change of status; an event upsert that kept it neither
      if (from === undefined || from === info.status) continue;
      emit('event.status_changed', { eventId: id, league: info.league, from, to: info.status });
    }
  }
}
