// Historical arbitrage as a pure function: the caller (the history rings, in a
// later wave) supplies each selection's price in force at `to` with that entry's
// first/last-seen times; a price counts only if it was last seen at or after `from`
// (staleness window to - from). Grouping and evaluation are the live book's own.
// A leg's `updated` is its last-seen time, capped at `to` (what was known then).

import { arbitrageRecord, ArbitrageScratch, evaluateArbitrage } from './arbitrage.ts';
import { MarketGroups, type GroupRowInput } from './marketGroups.ts';
import { QuoteBatch } from './quoteBatch.ts';
import type { ArbitrageRecord } from './records.ts';
import { sideCode } from './sides.ts';
import { SourceTable } from './sourceTable.ts';

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
