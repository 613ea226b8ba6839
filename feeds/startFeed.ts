// The feed inside the server process (FEED=the-odds-api plus the ODDS_API_* settings
// of feedSettings.ts): it submits through the service's own Ingest, no network hop.
// Returns null when FEED is unset; stop() ends the polling.
import type { Ingest } from '../ingest/ingest.ts';
import { InProcessSink } from './batchSink.ts';
import { theOddsApiSettings } from './feedSettings.ts';
import { ApiKeyRejected, ProviderClient } from './theOddsApi/providerClient.ts';
import { TheOddsApiFeed } from './theOddsApi/theOddsApiFeed.ts';

export interface RunningFeed {
  feed: TheOddsApiFeed;
  stop(): void;
}

export function startFeedFromEnv(ingest: Ingest, env: NodeJS.ProcessEnv, log: (line: string) => void): RunningFeed | null {
  const name = env.FEED;
  if (name === undefined || name === '') return null;
  if (name !== 'the-odds-api') throw new Error(`FEED must be the-odds-api, got ${name}`);
  const settings = theOddsApiSettings(new Map(), env);
  const client = new ProviderClient({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, log });
  const feed = new TheOddsApiFeed({
    client,
    sink: new InProcessSink(ingest),
    sports: settings.sports,
    regions: settings.regions,
    markets: settings.markets,
    intervalMs: settings.intervalMs,
    budgetPerDay: settings.budgetPerDay,
    log,
    progress: (line) => log(line),
  });
  feed.run().catch((error: unknown) => {
    // a refused key stops the feed, not the service
    log(error instanceof ApiKeyRejected ? `feed stopped: ${error.message}` : `feed stopped: ${String(error)}`);
  });
  return { feed, stop: () => feed.stop() };
}
