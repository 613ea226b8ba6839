// What the validator sees of the board: the engine's state, the cold store's records,
// and on top of both the effects of batches that are validated but not applied yet.
// Those are the batches waiting for the log (the group commit keeps several in flight)
// and the earlier changes of the batch being checked, each a PendingEffects layer,
// newest first: an event sent in batch 7 is known to batch 8 while batch 7's fsync runs.

import type { OddsEngine } from '../engine/engine.ts';
import { STATUS_CANCELLED, STATUS_FINAL } from '../engine/eventTable.ts';
import type { EventStatus, SourceKind } from '../engine/model.ts';
import type { ColdWrites } from '../persistence/coldWrites.ts';
import type { TickSlots } from './tickSlots.ts';

export interface EventView {
  league: string;
  homeTeamId: string | null;
  awayTeamId: string | null;
  startTime: number;
  status: EventStatus;
  isFutures: boolean;
}

export interface PlayerView {
  name: string;
  league: string;
  teamId: string;
}

/** The cold look-ups validation needs (persistence/coldWrites.ts implements them over SQLite). */
export type ColdLookup = Pick<ColdWrites, 'team' | 'player' | 'hasLeague' | 'hasVenue'>;

/** Effects of one validated, not yet applied batch. */
export class PendingEffects {
  readonly events = new Map<string, EventView>();
  readonly sources = new Map<string, SourceKind>();
  /** odds id -> live after this batch (false: removed). */
  readonly rows = new Map<string, boolean>();
  readonly teams = new Map<string, { league: string }>();
  readonly players = new Map<string, PlayerView>();

  /** True when the batch changes no row, event or source (a batch of price ticks). */
  get leavesRowsAlone(): boolean {
    return this.rows.size === 0 && this.events.size === 0 && this.sources.size === 0;
  }
}

export class BoardView {
  constructor(
    private readonly engine: OddsEngine,
    private readonly cold: ColdLookup,
    /** Newest first. */
    private readonly layers: readonly PendingEffects[],
    /** Slots of live rows ticks named before (valid while the view is settled). */
    private readonly tickSlots?: TickSlots,
  ) {}

  event(id: string): EventView | undefined {
    for (const layer of this.layers) {
      const found = layer.events.get(id);
      if (found !== undefined) return found;
    }
    return this.engine.event(id);
  }

  sourceKind(id: string): SourceKind | undefined {
    for (const layer of this.layers) {
      const found = layer.sources.get(id);
      if (found !== undefined) return found;
    }
    return this.engine.sources.kindOf(id);
  }

  /** True when the odds id is a live row once the pending batches are applied. */
  rowIsLive(id: string, eventId: string): boolean {
    const status = this.event(eventId)?.status;
    if (status === 'final' || status === 'cancelled') return false; // closing an event tombstones its rows
    for (const layer of this.layers) {
      const found = layer.rows.get(id);
      if (found !== undefined) return found;
    }
    return this.engine.isLive(this.engine.slotOf(id));
  }

  /**
   * True when no pending layer adds, removes or closes a row, or adds a source: then
   * the engine alone says whether a row is live and what its sportsbook is (what
   * settledLiveSlot and settledSourceKind read), with no look-up through the layers.
   */
  get settled(): boolean {
    for (const layer of this.layers) if (!layer.leavesRowsAlone) return false;
    return true;
  }

  /**
   * rowIsLive for a settled view, by slot: the slot of the live row `id` names, or -1
   * (no such row, a tombstone, or its event is final or cancelled). The slot stays the
   * row's until a later batch removes the row: the write path hands it to the engine
   * with the batch so the apply does not look the id up again.
   */
  settledLiveSlot(id: string): number {
    const engine = this.engine;
    const noted = this.tickSlots === undefined ? -1 : this.tickSlots.get(id);
    const slot = noted >= 0 ? noted : engine.slotOf(id);
    if (slot < 0 || !engine.isLive(slot)) return -1;
    const status = engine.eventTable.status[engine.store.event[slot]];
    if (status === STATUS_FINAL || status === STATUS_CANCELLED) return -1;
    if (noted < 0) this.tickSlots?.note(id, slot);
    return slot;
  }

  /** sourceKind of a live slot's sportsbook, for a settled view. */
  settledSourceKind(slot: number): SourceKind | undefined {
    const store = this.engine.store;
    return this.engine.sources.kindOf(store.books.get(store.book[slot]));
  }

  team(id: string): { league: string } | undefined {
    for (const layer of this.layers) {
      const found = layer.teams.get(id);
      if (found !== undefined) return found;
    }
    return this.cold.team(id);
  }

  player(id: string): PlayerView | undefined {
    for (const layer of this.layers) {
      const found = layer.players.get(id);
      if (found !== undefined) return found;
    }
    return this.cold.player(id);
  }

  hasLeague(code: string): boolean {
    return this.cold.hasLeague(code);
  }

  hasVenue(id: string): boolean {
    return this.cold.hasVenue(id);
  }
}
