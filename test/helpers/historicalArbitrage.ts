// The reference for /historical/arbitrage: arbitrage as it stood at `to`, regrouped
// from strings. quotesAt reads each selection's price in force at `to` out of the
// engine's history rings; evaluateAt keeps a price only if it was last seen at or after
// `from` (staleness window to - from) and groups and evaluates like the live book. A
// leg's `updated` is its last-seen time, capped at `to` (what was known then). The
// engine's ArbitrageReplay answers the same question without building a quote object
// or a group key per selection; tests and the signals bench compare the two.

import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage } from '../../engine/signals/arbitrage.ts';
import { MarketGroups, type GroupRowInput } from '../../engine/signals/marketGroups.ts';
import { QuoteBatch } from '../../engine/signals/quoteBatch.ts';
import type { ArbitrageRecord } from '../../engine/signals/records.ts';
import { sideCode } from '../../engine/signals/sides.ts';
import { SourceTable } from '../../engine/signals/sourceTable.ts';
import type { OddsEngine } from '../../engine/engine.ts';
import { NO_RING } from '../../engine/historyRing.ts';
import { americanToDecimal } from '../../engine/model.ts';
import { groupInputOf } from '../../engine/signals/groupInput.ts';
import { entryInForce, type HistoricalArbitrageQuery } from '../../engine/signals/historicalReplay.ts';

/** One selection's price in force at `to`. Times are epoch ms. */
export interface QuoteAt extends GroupRowInput {
  oddsId: string;
  sportsbook: string;
  selection: string;
  priceAmerican: number | null;
  priceDecimal: number | null;
  dfsMultiplier: number | null;
  suspended: boolean;
  /** First-seen time of the price in force (must be <= to). */
  firstSeen: number;
  /** Last-seen time of that price. */
  lastSeen: number;
}

export interface HistoricalArbitrageOptions {
  /** Epoch ms; defaults to `to` (a snapshot). */
  from?: number;
  to: number;
  /** Default 0.001. */
  minProfit?: number;
  /** Default 500. */
  limit?: number;
}

/** Arbitrage that existed at `to`, sorted by profit desc, id asc. */
export function evaluateAt(quotesAt: Iterable<QuoteAt>, options: HistoricalArbitrageOptions): ArbitrageRecord[] {
  const to = options.to;
  const from = options.from ?? to;
  const minProfit = options.minProfit ?? 0.001;
  const limit = options.limit ?? 500;
  const sources = new SourceTable();
  const groups = new MarketGroups();
  const members: QuoteAt[][] = [];
  for (const quote of quotesAt) {
    if (quote.firstSeen > to || quote.lastSeen < from) continue;
    const g = groups.groupFor(quote);
    if (g < 0) continue;
    (members[g] ??= []).push(quote);
  }
  const batch = new QuoteBatch(sources);
  const scratch = new ArbitrageScratch();
  const found: ArbitrageRecord[] = [];
  for (let g = 0; g < members.length; g++) {
    const quotes = members[g];
    if (quotes === undefined) continue;
    batch.clear();
    for (const q of quotes) {
      const book = sources.intern(q.sportsbook, q.dfsMultiplier !== null ? 'dfs' : 'retail');
      batch.push(
        book,
        sideCode(q.side),
        q.suspended,
        q.priceDecimal ?? NaN,
        q.priceAmerican ?? 0,
        q.dfsMultiplier ?? NaN,
        q.line ?? NaN,
        Math.min(q.lastSeen, to),
        q.oddsId,
        q.selection,
      );
    }
    if (!evaluateArbitrage(batch, groups.outcomes[g], scratch) || scratch.profit < minProfit) continue;
    found.push(arbitrageRecord(groups, g, batch, scratch));
  }
  found.sort((a, b) => b.profit - a.profit || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return found.length > limit ? found.slice(0, limit) : found;
}

/**
 * Arbitrage as it stood at `to`: every non-DFS, non-futures selection's price in
 * force at `to`, kept only if that price was last seen at or after `from` (to the
 * second), grouped and evaluated like the live book.
 */
export function historicalArbitrage(engine: OddsEngine, query: HistoricalArbitrageQuery): ArbitrageRecord[] {
  const quotes = quotesAt(engine, query.from, query.to);
  return evaluateAt(quotes, { from: Math.floor(query.from / 1000) * 1000, to: query.to, minProfit: query.minProfit, limit: query.limit });
}

/** The usable quotes in force at `to` and last seen since `from` (suspended, DFS and futures rows cannot be legs). */
export function quotesAt(engine: OddsEngine, from: number, to: number): QuoteAt[] {
  const s = engine.store;
  const rings = engine.rings;
  const fromSecond = Math.floor(from / 1000);
  const out: QuoteAt[] = [];
  for (let slot = 0; slot < s.size; slot++) {
    if (s.scope[slot] !== 0 || !Number.isNaN(s.dfsMultiplier[slot])) continue;
    const handle = s.ring[slot];
    // ls only grows along a ring: a newest entry seen before from rules out every older one
    if (handle === NO_RING || rings.ls(handle, rings.length(handle) - 1) < fromSecond) continue;
    const i = entryInForce(engine, slot, to);
    if (i < 0) continue;
    const ls = rings.ls(handle, i);
    const pa = rings.pa(handle, i);
    if (ls < fromSecond || rings.su(handle, i) === 1 || pa === 0 || rings.dm(handle, i) !== 0) continue;
    out.push({
      oddsId: s.idOf(slot),
      sportsbook: s.books.get(s.book[slot]),
      selection: s.labels.get(s.selection[slot]),
      priceAmerican: pa,
      priceDecimal: americanToDecimal(pa),
      dfsMultiplier: null,
      suspended: false,
      firstSeen: rings.fs(handle, i) * 1000,
      lastSeen: ls * 1000,
      ...groupInputOf(s, slot),
    });
  }
  return out;
}

