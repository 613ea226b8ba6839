// The alert sources over the signal books (engine/signals): arbitrage and DFS edges.
// Neither adds work to the engine's apply: they look at the books from the producer's
// tick, and only when the book's version moved since the last look (what an
// /arbitrage or /edges read does), then diff the records (recordDiff.ts). The books
// list every arbitrage with a positive profit and every edge >= 0; the subscriptions'
// thresholds are applied per subscription when matching (filters.ts), so lowering a
// threshold never replays old records as new.
import type { EngineSignals } from '../../engine/signals/engineSignals.ts';
import type { ArbitrageRecord, EdgeRecord } from '../../engine/signals/records.ts';
import type { RankCursor, RankedPage } from '../../engine/signals/rankedSet.ts';
import type { AlertData, AlertEventType } from '../alertEvent.ts';
import { RecordDiff } from './recordDiff.ts';

export type Emit = (type: AlertEventType, data: AlertData) => void;

/** A source the producer polls each tick; `wanted` says whether any subscription takes its events. */
export interface PolledSource {
  poll(now: number, emit: Emit, wanted: boolean): void;
}

const PAGE = 1000;

function all<R>(page: (after: RankCursor | null) => RankedPage<R>): R[] {
  const out: R[] = [];
  let after: RankCursor | null = null;
  for (;;) {
    const p = page(after);
    for (const item of p.items) out.push(item);
    if (!p.hasMore || p.last === null) return out;
    after = p.last;
  }
}

const round4 = (x: number): string => x.toFixed(4);

export class ArbitrageSource implements PolledSource {
  private version = -1;
  private following = false;
  private readonly diff = new RecordDiff<ArbitrageRecord>(
    (r) => r.id,
    (r) => r.profit,
    (r) => `${round4(r.profit)}|${r.legs.map((l) => `${l.oddsId}@${l.priceAmerican}`).join(',')}`,
  );

  constructor(private readonly signals: EngineSignals) {}

  poll(_now: number, emit: Emit, wanted: boolean): void {
    if (!wanted) {
      this.following = false;
      this.diff.clear();
      return;
    }
    const version = this.signals.arbitrageVersion();
    if (this.following && version === this.version) return;
    const records = all((after) => this.signals.arbitragePage({ types: null, leagues: null, eventIds: null, minProfit: 0 }, after, PAGE));
    this.version = version;
    if (!this.following) {
      this.following = true;
      return this.diff.seed(records);
    }
    this.diff.diff(records, (kind, arbitrage, previousProfit, peakProfit) => emit(`arbitrage.${kind}`, { arbitrage, previousProfit, peakProfit }));
  }
}

export class EdgeSource implements PolledSource {
  private version = -1;
  private following = false;
  private readonly diff = new RecordDiff<EdgeRecord>(
    (r) => r.id,
    (r) => r.edge,
    (r) => `${round4(r.edge)}|${r.dfsMultiplier}|${r.line}|${r.fairPriceAmerican}`,
  );

  constructor(private readonly signals: EngineSignals) {}

  poll(_now: number, emit: Emit, wanted: boolean): void {
    if (!wanted) {
      this.following = false;
      this.diff.clear();
      return;
    }
    // the edge book re-prices on read at the board's time (staleness moves with the
    // logged changes' time, as /edges does): its version now
    const version = this.signals.edgesVersion('multiplicative');
    if (this.following && version === this.version) return;
    const records = all((after) => this.signals.edgesPage({ leagues: null, sources: null, eventIds: null, minEdge: 0, devig: 'multiplicative' }, after, PAGE));
    this.version = version;
    if (!this.following) {
      this.following = true;
      return this.diff.seed(records);
    }
    this.diff.diff(records, (kind, edge, previousEdge, peakEdge) => emit(`edge.${kind}`, { edge, previousEdge, peakEdge }));
  }
}
