// Write-behind of event status from the engine (which owns it hot) to SQLite (which
// serves /events): changes are collected on the apply path and flushed in one
// transaction per interval, never one write per change.
import type { Clock } from '../engine/clock.ts';
import type { ChangeListener, OddsEngine } from '../engine/engine.ts';
import type { Persistence } from '../persistence/persistence.ts';

const FLUSH_INTERVAL_MS = 250;

export class EventStatusWriter implements ChangeListener {
  private readonly pending = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly engine: OddsEngine,
    private readonly persistence: Persistence,
    private readonly clock: Clock,
  ) {
    this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  rowChanged(): void {}

  eventChanged(eventId: string): void {
    this.pending.add(eventId);
  }

  /** Writes every pending event's current status and whether it still has live odds. */
  flush(): void {
    if (this.pending.size === 0) return;
    const live = new Set(this.engine.eventIdsWithLiveRows());
    const changes = [];
    for (const id of this.pending) {
      const event = this.engine.event(id);
      if (event) changes.push({ id, status: event.status, hasOdds: live.has(id) });
    }
    this.pending.clear();
    this.persistence.updateEventStatuses(changes, this.clock.now());
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
