// Turns the board's changes and the signal books into alert events. It is an engine
// change listener whose callbacks only mark (a watched row dirty, an event id changed:
// O(1), no allocation for unwatched rows); everything else runs on its own tick
// (ALERTS_TICK_MS) outside any apply: the marked rows and events are read, the signal
// books are looked at when their version moved, and the events found go to `sink`
// (alerts.ts), which matches them to subscriptions and writes the outbox. The engine,
// ingest and the push stream never wait for any of it.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../engine/clock.ts';
import type { ChangeKind, ChangeListener, OddsEngine } from '../engine/engine.ts';
import type { EngineSignals } from '../engine/signals/engineSignals.ts';
import type { AlertData, AlertEvent, AlertEventType } from './alertEvent.ts';
import type { AlertFilter } from './filters.ts';
import { EventStatusSource } from './sources/eventStatus.ts';
import { LineMoveSource } from './sources/lineMoves.ts';
import { ArbitrageSource, EdgeSource } from './sources/signalSources.ts';

export class AlertProducer implements ChangeListener {
  private readonly lineMoves: LineMoveSource;
  private readonly statuses: EventStatusSource;
  private readonly arbitrage: ArbitrageSource;
  private readonly edges: EdgeSource;
  /** Filters of enabled subscriptions per kind (a source runs while its count is positive). */
  private readonly wanted = { arbitrage: 0, edge: 0, event_status: 0 };

  constructor(
    engine: OddsEngine,
    signals: EngineSignals,
    private readonly clock: Clock,
  ) {
    this.lineMoves = new LineMoveSource(engine);
    this.statuses = new EventStatusSource(engine);
    this.arbitrage = new ArbitrageSource(signals);
    this.edges = new EdgeSource(signals);
  }

  /** The filters of an enabled subscription start (or stop, sign -1) to count: which sources run, which rows are watched. */
  follow(filters: readonly AlertFilter[], sign: 1 | -1): void {
    for (const f of filters) {
      if (f.type === 'line_move') {
        if (sign === 1) this.lineMoves.add(f.oddsIds);
        else this.lineMoves.remove(f.oddsIds);
      } else {
        this.wanted[f.type] += sign;
        // the first subscription wanting a signal book: its records as of now are the
        // starting state (taken now, so a change made right after the subscription is news)
        if (sign === 1 && this.wanted[f.type] === 1) this.startFollowing(f.type);
      }
    }
  }

  private startFollowing(type: 'arbitrage' | 'edge' | 'event_status'): void {
    const ignore = () => {};
    if (type === 'arbitrage') this.arbitrage.poll(this.clock.now(), ignore, true);
    else if (type === 'edge') this.edges.poll(this.clock.now(), ignore, true);
  }

  rowChanged(slot: number, kind: ChangeKind): void {
    this.lineMoves.rowChanged(slot, kind);
  }

  eventChanged(eventId: string): void {
    this.statuses.eventChanged(eventId);
  }

  /** The events since the last call, in the order found. */
  collect(): AlertEvent[] {
    const now = this.clock.now();
    const events: AlertEvent[] = [];
    const emit = (type: AlertEventType, data: AlertData) => events.push({ id: `evt_${randomUUID()}`, type, createdAt: now, data });
    // the engine's statuses are followed always (an event's last status must be known when a subscription starts wanting them)
    this.statuses.drain(this.wanted.event_status > 0 ? emit : () => {});
    this.lineMoves.drain(emit);
    this.arbitrage.poll(now, emit, this.wanted.arbitrage > 0);
    this.edges.poll(now, emit, this.wanted.edge > 0);
    return events;
  }
}
