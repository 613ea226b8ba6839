// Feed adapter benchmarks (`npm run bench -- feeds`):
// - adapter throughput: outcomes mapped per second from a recorded /odds answer (50
//   events of the medium board with every featured market, as JSON text): each round
//   parses it, checks its shape and maps every outcome, as a poll does;
// - end to end: the time from the stub provider serving a moved price to the change
//   being visible on /api/v1/odds/updated, through the write path with fsync on: once
//   with the feed in the server process (in-process sink, FEED=the-odds-api) and once
//   with the feed submitting to the ingest listener over HTTP (npm run feed). Each sample
//   is one poll (provider calls, mapping, diff, a one-change batch logged and applied)
//   plus the /odds/updated requests until the new price is in the answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../engine/clock.ts';
import { generateBoard } from '../fixtures/generateBoard.ts';
import { HttpBatchSink, InProcessSink, type BatchSink } from '../feeds/batchSink.ts';
import { mapEvent } from '../feeds/theOddsApi/mapEvent.ts';
import { leagueOfSport } from '../feeds/theOddsApi/mappingTables.ts';
import { ProviderClient } from '../feeds/theOddsApi/providerClient.ts';
import { parseOddsList } from '../feeds/theOddsApi/providerTypes.ts';
import { TheOddsApiFeed } from '../feeds/theOddsApi/theOddsApiFeed.ts';
import { startApp, type App } from '../service/app.ts';
import { STUB_API_KEY, StubProvider, nudged, providerEventsFrom } from '../fixtures/harness/stubProvider.ts';

const SAMPLES = 30;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const round = (n: number) => Math.round(n * 100) / 100;

/** Milliseconds per sample from a moved stub price to /odds/updated showing it. */
async function endToEnd(app: App, clock: ManualClock, sink: BatchSink, prefix: string): Promise<number[]> {
  const board = generateBoard({ seed: 42, size: 'small', now: clock.now() });
  const stub = new StubProvider();
  stub.addSport('basketball_nba', providerEventsFrom(board, 'nba', 3, prefix));
  await stub.start();
  const feed = new TheOddsApiFeed({
    client: new ProviderClient({ baseUrl: stub.url, apiKey: STUB_API_KEY }),
    sink,
    sports: ['basketball_nba'],
    regions: 'us',
    markets: ['h2h', 'spreads', 'totals'],
    intervalMs: 0,
    // the app's clock: the fixture games are in its future (no status changes, no scores calls)
    now: () => clock.now(),
    log: () => {},
  });
  try {
    await feed.pollOnce();
    const event = stub.sports.get('basketball_nba')!.events[0];
    const pinnacle = event.bookmakers.find((b) => b.key === 'pinnacle')!;
    const outcome = pinnacle.markets.find((m) => m.key === 'h2h')!.outcomes.find((o) => o.name === event.home_team)!;
    const id = `${event.id}:pinnacle:MONEYLINE:FULL-HOME`;
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      outcome.price = nudged(outcome.price, i % 2 === 0 ? 0.01 : -0.01);
      const since = new Date(clock.now()).toISOString();
      clock.advance(1000);
      const t0 = performance.now();
      await feed.pollOnce();
      for (let tries = 0; ; tries++) {
        const body = (await (await fetch(`http://127.0.0.1:${app.port}/api/v1/odds/updated?since=${since}&event_id=${event.id}`)).json()) as { data: { id: string; priceAmerican?: number }[] };
        if (body.data.some((row) => row.id === id && row.priceAmerican === outcome.price)) break;
        if (tries > 1000) throw new Error(`${id} at ${outcome.price} never showed on /odds/updated`);
      }
      samples.push(performance.now() - t0);
    }
    return samples.sort((a, b) => a - b);
  } finally {
    await stub.close();
  }
}

export async function benchFeeds(): Promise<Record<string, number | string>> {
  const now = Date.parse('2026-11-21T12:00:00Z');
  const out: Record<string, number | string> = {};

  const events = providerEventsFrom(generateBoard({ seed: 42, size: 'medium', now }), 'nba', 50);
  for (const e of events) e.sport_key = 'basketball_nba';
  const recorded = JSON.stringify(events);
  const mapping = leagueOfSport('basketball_nba')!;
  let outcomes = 0;
  let rounds = 0;
  const started = performance.now();
  while (performance.now() - started < 2000) {
    for (const event of parseOddsList(JSON.parse(recorded))) outcomes += mapEvent(event, mapping, false).rows.length;
    rounds++;
  }
  const mapSeconds = (performance.now() - started) / 1000;
  out['adapter: outcomes mapped per second (recorded /odds answer: parse, check, map)'] = Math.round(outcomes / mapSeconds);
  out['adapter: outcomes per answer'] = Math.round(outcomes / rounds);
  out['adapter: answer size (KiB)'] = Math.round(recorded.length / 1024);

  const clock = new ManualClock(now);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-feeds-'));
  const app = await startApp({ clock, board: { size: 'small', seed: 42, now }, dataDir, ingestPort: 0, env: { LOG_LEVEL: 'warn' } });
  try {
    const inProcess = await endToEnd(app, clock, new InProcessSink(app.durable!.durable.ingest), 'inproc');
    out['end to end, feed in process: stub answer -> /odds/updated p50 (ms, fsync on)'] = round(percentile(inProcess, 50));
    out['end to end, feed in process: p99 (ms)'] = round(percentile(inProcess, 99));
    const listener = await app.durable!.listen();
    const overHttp = await endToEnd(app, clock, new HttpBatchSink({ url: `http://127.0.0.1:${listener.port}`, token: app.durable!.token.token }), 'http');
    out['end to end, feed over the ingest listener: stub answer -> /odds/updated p50 (ms, fsync on)'] = round(percentile(overHttp, 50));
    out['end to end, feed over the ingest listener: p99 (ms)'] = round(percentile(overHttp, 99));
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return out;
}
