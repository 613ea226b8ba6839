// What the validator sees of the board: the engine's state, the cold store's records,
// and on top of both the effects of batches that are validated but not applied yet.
// Those are the batches waiting for the log (the group commit keeps several in flight)
// and the earlier changes of the batch being checked, each a PendingEffects layer,
// newest first: an event sent in batch 7 is known to batch 8 while batch 7's fsync runs.

import type { OddsEngine } from '../engine/engine.ts';
import type { EventStatus, SourceKind } from '../engine/model.ts';
import type { ColdWrites } from '../persistence/coldWrites.ts';

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
}

export class BoardView {
  constructor(
    private readonly engine: OddsEngine,
    private readonly cold: ColdLookup,
    /** Newest first. */
    private readonly layers: readonly PendingEffects[],
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
