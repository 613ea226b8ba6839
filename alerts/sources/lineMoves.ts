// Line moves on watched odds ids. On the engine's apply path it costs one byte read per
// changed row: rowChanged checks the slot's watch flag and, for a watched row, marks it
// dirty once (a flag and a push onto a list as long as the watched rows at most). The
// producer's tick reads the dirty rows' columns and reports each that moved since its
// last report, from and to: the moves of one tick coalesce into one event.
// An id not on the board yet is resolved (engine.slotOf, a hash lookup) at a tick after
// any row was inserted; a slot reused by another row (a tombstone recycled after its
// retention) is caught by comparing ids at the tick.
import type { ChangeKind, OddsEngine } from '../../engine/engine.ts';
import { grown } from '../../engine/columns.ts';
import type { LineMoveAlert, QuoteState } from '../alertEvent.ts';
import type { Emit } from './signalSources.ts';

interface Watch {
  slot: number;
  state: QuoteState | null;
}

export class LineMoveSource {
  private readonly watches = new Map<string, Watch>();
  /** Per slot: the watched id there (undefined: not watched). */
  private readonly idAt = new Map<number, string>();
  private watchedSlot = new Uint8Array(1024);
  private dirtySlot = new Uint8Array(1024);
  private dirty: number[] = [];
  /** Watched ids with no slot yet. */
  private readonly unresolved = new Set<string>();
  private insertsSeen = false;

  constructor(private readonly engine: OddsEngine) {}

  /** How many filters name each watched id. */
  private readonly refs = new Map<string, number>();

  /** A filter naming these ids was added (O(ids)). */
  add(ids: readonly string[]): void {
    let added = false;
    for (const id of ids) {
      const n = this.refs.get(id) ?? 0;
      this.refs.set(id, n + 1);
      if (n === 0) {
        this.watches.set(id, { slot: -1, state: null });
        this.unresolved.add(id);
        added = true;
      }
    }
    if (added) this.resolve(false);
  }

  /** A filter naming these ids was removed. */
  remove(ids: readonly string[]): void {
    for (const id of ids) {
      const n = this.refs.get(id) ?? 0;
      if (n > 1) {
        this.refs.set(id, n - 1);
        continue;
      }
      this.refs.delete(id);
      const w = this.watches.get(id);
      if (w === undefined) continue;
      if (w.slot >= 0) {
        this.watchedSlot[w.slot] = 0;
        this.idAt.delete(w.slot);
      } else this.unresolved.delete(id);
      this.watches.delete(id);
    }
  }

  rowChanged(slot: number, kind: ChangeKind): void {
    if (slot < this.watchedSlot.length && this.watchedSlot[slot] === 1) this.markDirty(slot);
    else if (kind === 'insert' && this.unresolved.size > 0) this.insertsSeen = true;
  }

  private markDirty(slot: number): void {
    if (this.dirtySlot[slot] === 1) return;
    this.dirtySlot[slot] = 1;
    this.dirty.push(slot);
  }

  /** Emits the moves since the last tick. */
  drain(emit: Emit): void {
    if (this.insertsSeen) {
      this.insertsSeen = false;
      this.resolve(true);
    }
    const dirty = this.dirty;
    this.dirty = [];
    for (const slot of dirty) {
      this.dirtySlot[slot] = 0;
      const id = this.idAt.get(slot);
      if (id === undefined) continue;
      const w = this.watches.get(id)!;
      if (this.engine.idOf(slot) !== id) {
        // the slot was recycled for another row: the watched id is off the board
        this.unwatchSlot(id, w);
        continue;
      }
      this.report(id, w, emit);
    }
  }

  /** Looks the unresolved ids up (a hash lookup each). */
  private resolve(emitAppeared: boolean): void {
    for (const id of this.unresolved) {
      const slot = this.engine.slotOf(id);
      if (slot < 0) continue;
      this.unresolved.delete(id);
      const w = this.watches.get(id)!;
      w.slot = slot;
      if (slot >= this.watchedSlot.length) {
        this.watchedSlot = grown(this.watchedSlot, slot + 1);
        this.dirtySlot = grown(this.dirtySlot, slot + 1);
      }
      this.watchedSlot[slot] = 1;
      this.idAt.set(slot, id);
      // a watch set up now starts from the row as it is; one that waited reports the row appearing
      if (emitAppeared && this.engine.isLive(slot)) this.markDirty(slot);
      else w.state = this.stateOf(slot);
    }
  }

  private unwatchSlot(id: string, w: Watch): void {
    this.watchedSlot[w.slot] = 0;
    this.idAt.delete(w.slot);
    w.slot = -1;
    w.state = null;
    this.unresolved.add(id);
  }

  private stateOf(slot: number): QuoteState {
    const row = this.engine.rowObject(slot, 'all');
    return {
      priceAmerican: (row.priceAmerican as number | undefined) ?? null,
      priceDecimal: (row.priceDecimal as number | undefined) ?? null,
      dfsMultiplier: (row.dfsMultiplier as number | undefined) ?? null,
      line: (row.line as number | undefined) ?? null,
      suspended: row.suspended === true,
      live: row.removed !== true,
    };
  }

  private report(id: string, w: Watch, emit: Emit): void {
    const row = this.engine.rowObject(w.slot, 'all');
    const to = this.stateOf(w.slot);
    const from = w.state;
    if (from !== null && from.priceAmerican === to.priceAmerican && from.dfsMultiplier === to.dfsMultiplier && from.line === to.line && from.suspended === to.suspended && from.live === to.live) return;
    w.state = to;
    const data: LineMoveAlert = { oddsId: id, eventId: row.eventId as string, league: row.league as string, sportsbook: row.sportsbook as string, from, to, updated: row.updated as string };
    emit('line.moved', data);
  }
}
