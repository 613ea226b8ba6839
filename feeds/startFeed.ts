// The feed inside the server process (FEED=the-odds-api plus the ODDS_API_* settings,
// read and checked by service/config.ts): it submits through the service's own Ingest,
// no network hop. Returns null when FEED is unset; stop() ends the polling and resolves
// once the poll in flight has finished (the app closes the write path after it).
import type { Ingest } from '../ingest/ingest.ts';
import type { Registry } from 'prom-client';
import type { Readiness } from '../http/routes/health.ts';
import { registerFeedStatus, type FeedState } from './feedStatus.ts';
import { InProcessSink } from './batchSink.ts';
import { ProviderClient } from './theOddsApi/providerClient.ts';
import { TheOddsApiFeed } from './theOddsApi/theOddsApiFeed.ts';

export interface RunningFeed {
  feed: TheOddsApiFeed;
  state: FeedState;
  stop(): Promise<void>;
}

/**
 * What the in-process feed reads of the service's settings. The feed owns this shape;
 * service/config.ts's Config extends it and fills it (parsed by feedSettings.ts).
 */
export interface FeedConfig {
  /** A feed run inside the process, submitting through its write path; null: none. */
  feed: 'the-odds-api' | null;
  /** The Odds API settings of that feed. */
  oddsApiKey: string | null;
  oddsApiBaseUrl: string;
  oddsApiSports: string[];
  oddsApiRegions: string;
  oddsApiMarkets: string[];
  oddsApiIntervalMs: number;
  oddsApiBudgetPerDay: number;
  oddsApiCreditsPerHour: number;
  /** 0: the same as oddsApiIntervalMs. */
  oddsApiEventIntervalMs: number;
  oddsApiTimeoutMs: number;
}

/** Where the feed's status goes: /metrics and /readyz (service/operations.ts). */
export interface FeedOperations {
  registry: Registry;
  readiness: Readiness;
}

export function startFeed(ingest: Ingest, config: FeedConfig, log: (line: string) => void, operations?: FeedOperations): RunningFeed | null {
  if (config.feed === null) return null;
  if (config.oddsApiKey === null) throw new Error('FEED=the-odds-api needs ODDS_API_KEY');
  const client = new ProviderClient({ baseUrl: config.oddsApiBaseUrl, apiKey: config.oddsApiKey, timeoutMs: config.oddsApiTimeoutMs, log });
  const feed = new TheOddsApiFeed({
    client,
    sink: new InProcessSink(ingest),
    sports: config.oddsApiSports,
    regions: config.oddsApiRegions,
    markets: config.oddsApiMarkets,
    intervalMs: config.oddsApiIntervalMs,
    budgetPerDay: config.oddsApiBudgetPerDay,
    creditsPerHour: config.oddsApiCreditsPerHour,
    eventIntervalMs: config.oddsApiEventIntervalMs > 0 ? config.oddsApiEventIntervalMs : config.oddsApiIntervalMs,
    log,
    progress: (line) => log(line),
  });
  log(`feed the-odds-api: polling ${config.oddsApiBaseUrl} for ${config.oddsApiSports.join(',')} (${config.oddsApiMarkets.join(',')}) every ${config.oddsApiIntervalMs / 1000} s, submitting in process`);
  const state: FeedState = { stoppedBecause: null };
  if (operations !== undefined) registerFeedStatus(feed, state, operations.registry, operations.readiness);
  const running = feed.run().catch((error: unknown) => {
    // a refused key stops the feed, not the service
    state.stoppedBecause = error instanceof Error ? error.message : String(error);
    log(`feed the-odds-api stopped: ${state.stoppedBecause}`);
  });
  return {
    feed,
    state,
    stop: async () => {
      feed.stop();
      await running;
    },
  };
}
