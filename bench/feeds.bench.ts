// Feed adapter benchmarks: mapping throughput (outcomes mapped per second from a
// recorded /odds answer, parsed and checked each time) and the end-to-end time from a
// stub provider's answer to the change being served by /api/v1/odds/updated.
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { InProcessSink } from '../feeds/batchSink.ts';
import { mapEvent } from '../feeds/theOddsApi/mapEvent.ts';
import { leagueOfSport } from '../feeds/theOddsApi/mappingTables.ts';
import { ProviderClient } from '../feeds/theOddsApi/providerClient.ts';
import { parseOddsList } from '../feeds/theOddsApi/providerTypes.ts';
import { TheOddsApiFeed } from '../feeds/theOddsApi/theOddsApiFeed.ts';
import { startApp } from '../service/app.ts';
import { openBoard, tempDataDir } from '../test/ingest/ingest-helpers.ts';
import { STUB_API_KEY, StubProvider, nudged, providerEventsFrom } from '../test/feeds/stubProvider.ts';

export async function benchFeeds(): Promise<Record<string, number | string>> {
  const now = Date.parse('2026-11-21T12:00:00Z');
  const board = generateBoard({ seed: 42, size: 'medium', now });
  const events = providerEventsFrom(board, 'nba', 50);
  for (const e of events) e.sport_key = 'basketball_nba';
  const recorded = JSON.stringify(events);
  const mapping = leagueOfSport('basketball_nba')!;
  let outcomes = 0;
  const started = performance.now();
  let rounds = 0;
  while (performance.now() - started < 2000) {
    for (const event of parseOddsList(JSON.parse(recorded))) outcomes += mapEvent(event, mapping, false).rows.length;
    rounds++;
  }
  const mapSeconds = (performance.now() - started) / 1000;

  const clock = new ManualClock(now);
  const dir = tempDataDir('bench-feeds-');
  const opened = await openBoard(dir, clock, generateBoard({ seed: 42, size: 'small', now }), { fsync: true });
  const app = await startApp({ clock, board: generateBoard({ seed: 42, size: 'small', now }), engine: opened.durable.engine, dbPath: join(dir, 'odds.db'), env: {} });
  const stub = new StubProvider();
  stub.addSport('basketball_nba', providerEventsFrom(board, 'nba', 3));
  await stub.start();
  const feed = new TheOddsApiFeed({
    client: new ProviderClient({ baseUrl: stub.url, apiKey: STUB_API_KEY }),
    sink: new InProcessSink(opened.durable.ingest),
    sports: ['basketball_nba'],
    regions: 'us',
    markets: ['h2h', 'spreads', 'totals'],
    intervalMs: 0,
    now: () => clock.now(),
    log: () => {},
  });
  await feed.pollOnce();
  const outcome = stub.sports.get('basketball_nba')!.events[0].bookmakers[0].markets[0].outcomes[0];
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    outcome.price = nudged(outcome.price, i % 2 === 0 ? 0.01 : -0.01);
    const since = new Date(clock.now()).toISOString();
    clock.advance(1000);
    const t0 = performance.now();
    await feed.pollOnce();
    const body = await (await fetch(`http://127.0.0.1:${app.port}/api/v1/odds/updated?since=${since}`)).text();
    if (!body.includes(String(outcome.price))) throw new Error('the tick is not on /odds/updated');
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  await stub.close();
  await app.close();
  await opened.close();
  return {
    'adapter: outcomes mapped per second (recorded /odds answer)': Math.round(outcomes / mapSeconds),
    'adapter: outcomes per answer': Math.round(outcomes / rounds),
    'end to end: stub answer -> /odds/updated p50 (ms, fsync on)': Math.round(samples[10] * 10) / 10,
    'end to end: stub answer -> /odds/updated max (ms)': Math.round(samples[samples.length - 1] * 10) / 10,
  };
}
