// Which rows are live changes only when a row is inserted or removed, never on a price
// move; the per-source and per-market-type counts of live rows are functions of that
// alone. BoardMembership follows the engine's changes (whoever builds it subscribes
// it) and keeps a version that moves on every insert or remove and the time of the
// last one (the change's own time, which the engine gives the row: a replica applying
// the writer's logged batch later gets the writer's time, not its own clock's), so what is served from those counts stays cached (and keeps its ETag
// and meta.updated) while prices tick.
import type { ChangeKind, ChangeListener, OddsEngine } from './engine.ts';

export class BoardMembership implements ChangeListener {
  version = 0;
  /** Epoch ms of the last insert or remove; the board's as-of time before any. */
  changedAt: number;

  constructor(private readonly engine: OddsEngine) {
    this.changedAt = engine.asOf();
  }

  rowChanged(slot: number, kind: ChangeKind): void {
    if (kind !== 'insert' && kind !== 'remove') return;
    this.version++;
    const at = this.engine.store.updated[slot]!;
    if (at > this.changedAt) this.changedAt = at;
  }
}
