// Books quoting a negative margin on their own (their own prices in one market sum
// below 1): never an arbitrage (arbitrage is cross-book), but a data problem of that
// book an operator should see. Read from the signal books at scrape / probe time:
//
//   odds_arbitrage_flagged_groups{sportsbook}   gauge    market groups where that book's
//                                                        own prices sum below 1 now
//   odds_arbitrage_flags_total                  counter  times a book became flagged in a group
//   /readyz "flaggedBooks": {count, books: {sportsbook: groups}, worst: [up to 20, lowest
//                          own implied sum first, with the group, event and market]}
// The /arbitrage and /historical/arbitrage records of a group also carry its
// flaggedBooks. The check always passes: a book's bad prices do not make the service unready.
import type { Registry } from 'prom-client';
import { registerLazyMetric } from '../http/metricsCollector.ts';
import type { Readiness } from '../http/routes/health.ts';
import type { EngineSignals } from '../engine/signals/engineSignals.ts';

/** Entries of the worst list in /readyz. */
const WORST = 20;

export function registerFlaggedBooks(signals: EngineSignals, registry: Registry, readiness: Readiness): void {
  registerLazyMetric(registry, {
    name: 'odds_arbitrage_flagged_groups',
    help: "market groups where the sportsbook's own prices sum below 1 (a negative margin on its own: flagged, never an arbitrage)",
    type: 'gauge',
    values: () => [...signals.flaggedCounts().bySportsbook].map(([sportsbook, groups]) => ({ value: groups, labels: { sportsbook } })),
  });
  registerLazyMetric(registry, {
    name: 'odds_arbitrage_flags_total',
    help: 'times a sportsbook became flagged in a market group (its own prices summing below 1)',
    type: 'counter',
    values: () => [{ value: signals.flaggedCounts().events, labels: {} }],
  });
  readiness.probe('flaggedBooks', () => {
    const list = signals.flaggedBooks();
    return {
      ready: true,
      reason: '',
      info: {
        count: list.length,
        books: Object.fromEntries(signals.flaggedCounts().bySportsbook),
        worst: list.slice(0, WORST),
      },
    };
  });
}
