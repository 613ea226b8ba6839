// Which rows are live changes only when a row is inserted or removed, never on a price
// move; the catalog counts (/sportsbooks, /markets, /markets/active) are
// functions of that alone. BoardMembership listens to the engine and keeps a version
// that moves on every insert or remove and the clock time of the last one, so those
// routes stay cached (and keep their ETag and meta.updated) while prices tick.
import type { Clock } from '../../engine/clock.ts';
import type { ChangeKind, ChangeListener, OddsEngine } from '../../engine/engine.ts';

export class BoardMembership implements ChangeListener {
  version = 0;
  /** Epoch ms of the last insert or remove; the board's as-of time before any. */
  changedAt: number;
  readonly unsubscribe: () => void;

  constructor(
    engine: OddsEngine,
    private readonly clock: Clock,
  ) {
    this.changedAt = engine.asOf();
    this.unsubscribe = engine.subscribe(this);
  }

  rowChanged(_slot: number, kind: ChangeKind): void {
    if (kind !== 'insert' && kind !== 'remove') return;
    this.version++;
    const now = this.clock.now();
    if (now > this.changedAt) this.changedAt = now;
  }
}
