// Write-behind of event status and liveness from the engine (which owns them hot) to
// SQLite (which serves /events): changes are collected on the apply path and flushed
// in one transaction per interval, never one write per change. Liveness (has_odds)
// changes without any event change when an event's last row is pulled or its first
// row is added, so row inserts/removes mark it for re-checking too. Reads that filter
// or render on these columns call flush() first (a no-op when nothing is pending), so
// they see the engine's state at the time of the read, not up to one interval late.
// The time a flush records (the events' meta.updated) is the newest change's own time
// (a row's update time, the board's as-of time for a status change), not the clock at
// the flush: a replica applying the writer's logged batches records the writer's times.
import type { Clock } from '../engine/clock.ts';
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine/engine.ts';
import type { Persistence } from '../persistence/persistence.ts';
import type { EventStatusChange } from '../persistence/eventsRepository.ts';

const FLUSH_INTERVAL_MS = 250;

export class EventStatusWriter implements ChangeListener {
  private readonly pending = new Set<string>();
  /** A row was inserted or removed since the last flush: liveness may have changed. */
  private membershipChanged = false;
  /** Events with live rows as of the last flush (what SQLite's has_odds says). */
  private live: Set<string>;
  private readonly timer: NodeJS.Timeout;
  /** Time of the newest change pending (0: none). */
  private pendingAt = 0;

  constructor(
    private readonly engine: OddsEngine,
    private readonly persistence: Persistence,
    private readonly clock: Clock,
  ) {
    this.live = new Set(engine.eventIdsWithLiveRows());
    this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  rowChanged(slot: number, kind: ChangeKind): void {
    if (kind !== 'insert' && kind !== 'remove') return;
    this.membershipChanged = true;
    const at = this.engine.store.updated[slot]!;
    if (at > this.pendingAt) this.pendingAt = at;
  }

  eventChanged(eventId: string): void {
    this.pending.add(eventId);
    const at = this.engine.asOf();
    if (at > this.pendingAt) this.pendingAt = at;
  }

  /** True when the engine has changes SQLite does not show yet. */
  get dirty(): boolean {
    return this.membershipChanged || this.pending.size > 0;
  }

  /** Writes every pending event's current status and whether it has live odds. */
  flush(): void {
    if (!this.dirty) return;
    if (this.membershipChanged) {
      this.membershipChanged = false;
      const live = new Set(this.engine.eventIdsWithLiveRows());
      for (const id of live) if (!this.live.has(id)) this.pending.add(id);
      for (const id of this.live) if (!live.has(id)) this.pending.add(id);
      this.live = live;
    }
    const changes: EventStatusChange[] = [];
    for (const id of this.pending) {
      const event = this.engine.event(id);
      if (event) changes.push({ id, status: event.status, hasOdds: this.live.has(id) });
    }
    this.pending.clear();
    // the board's time, from the log, when no change carried one (never this node's clock: replicas must agree)
    const at = this.pendingAt > 0 ? this.pendingAt : this.engine.asOf();
    this.pendingAt = 0;
    if (changes.length > 0) this.persistence.updateEventStatuses(changes, at);
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
