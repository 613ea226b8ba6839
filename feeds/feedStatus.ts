// What an operator reads about a feed running inside the server (FEED=the-odds-api):
// its metrics on /metrics (ingest port) and a "feed" entry in /readyz's body. The feed
// does not make the process unready: the board still answers from what it holds, and a
// load balancer pulling the API over a provider problem would make things worse. So the
// check always passes, and its figures say what is wrong:
//
//   odds_feed_polls_total                          counter  polls made
//   odds_feed_changes_sent_total                   counter  changes the write path acknowledged
//   odds_feed_skipped_answers_total                counter  provider answers skipped (malformed, refused)
//   odds_feed_credits_spent_total                  counter  credits spent (sum of x-requests-last)
//   odds_feed_credits_remaining                    gauge    x-requests-remaining of the last answer
//   odds_feed_quota_paused                         gauge    1 while the quota is spent (no paid call)
//   odds_feed_running                              gauge    1 while polling; 0 once stopped (a refused key)
//   odds_feed_markets_dropped                      gauge    markets no longer asked for
//   odds_feed_market_dropped{sport,market,endpoint} gauge   1 per dropped market (sport '*': every sport)
//   odds_feed_plan_credits_per_hour                gauge    what the chosen intervals cost an hour
//   odds_feed_budget_credits_per_hour              gauge    the budget an hour (0: none)
import type { Registry } from 'prom-client';
import { registerLazyMetric, type LazyValue } from '../http/metricsCollector.ts';
import type { Readiness } from '../http/routes/health.ts';
import type { TheOddsApiFeed } from './theOddsApi/theOddsApiFeed.ts';

export interface FeedState {
  /** Null while polling; why it stopped otherwise. */
  stoppedBecause: string | null;
}

/** The "feed" figures of /readyz. */
export function feedReadyInfo(feed: TheOddsApiFeed, state: FeedState): Record<string, unknown> {
  const s = feed.stats;
  const plan = feed.plan();
  return {
    state: state.stoppedBecause !== null ? `stopped: ${state.stoppedBecause}` : s.quotaPaused ? 'paused: the usage quota is spent' : 'polling',
    polls: s.polls,
    changesSent: s.changesSent,
    skippedAnswers: s.skippedAnswers,
    creditsRemaining: s.creditsRemaining,
    droppedMarkets: feed.droppedMarkets().map((d) => ({ sport: d.sport, market: d.market, endpoint: d.endpoint, reason: d.reason, at: new Date(d.at).toISOString() })),
    plan: { creditsPerHour: Math.round(plan.creditsPerHour), budgetPerHour: Math.round(plan.budgetPerHour), stretch: Math.round(plan.stretch * 100) / 100 },
  };
}

export function registerFeedStatus(feed: TheOddsApiFeed, state: FeedState, registry: Registry, readiness: Readiness): void {
  readiness.probe('feed', () => ({ ready: true, reason: '', info: feedReadyInfo(feed, state) }));
  const one = (value: number): LazyValue[] => [{ value, labels: {} }];
  const metric = (name: string, help: string, type: 'counter' | 'gauge', values: () => LazyValue[]) => registerLazyMetric(registry, { name, help, type, values });
  metric('odds_feed_polls_total', 'polls of the provider made by the feed', 'counter', () => one(feed.stats.polls));
  metric('odds_feed_changes_sent_total', 'changes the feed sent that the write path acknowledged', 'counter', () => one(feed.stats.changesSent));
  metric('odds_feed_skipped_answers_total', 'provider answers the feed skipped (malformed or refused)', 'counter', () => one(feed.stats.skippedAnswers));
  metric('odds_feed_credits_spent_total', 'provider credits the feed spent (sum of x-requests-last)', 'counter', () => one(feed.stats.creditsSpent));
  metric('odds_feed_credits_remaining', 'x-requests-remaining of the last provider answer', 'gauge', () => (feed.stats.creditsRemaining === null ? [] : one(feed.stats.creditsRemaining)));
  metric('odds_feed_quota_paused', '1 while the usage quota is spent and the feed makes no paid call', 'gauge', () => one(feed.stats.quotaPaused ? 1 : 0));
  metric('odds_feed_running', '1 while the feed polls; 0 once it stopped (see /readyz feed.state)', 'gauge', () => one(state.stoppedBecause === null ? 1 : 0));
  metric('odds_feed_markets_dropped', 'markets the feed no longer asks for (unmapped keys, 422 from the provider)', 'gauge', () => one(feed.stats.droppedMarkets));
  metric('odds_feed_market_dropped', 'one per dropped market, by sport (* = every sport), market key and endpoint', 'gauge', () =>
    feed.droppedMarkets().map((d) => ({ value: 1, labels: { sport: d.sport, market: d.market, endpoint: d.endpoint } })),
  );
  metric('odds_feed_plan_credits_per_hour', 'credits an hour the chosen intervals cost (per-event markets at the last event counts)', 'gauge', () => one(feed.plan().creditsPerHour));
  metric('odds_feed_budget_credits_per_hour', 'the credit budget an hour (0: none)', 'gauge', () => one(feed.plan().budgetPerHour));
}
