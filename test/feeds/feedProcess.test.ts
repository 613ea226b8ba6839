// `npm run feed` as a child process against the real service (fixtures/harness/service-child.ts:
// `tsx service/main.ts` on a temp DATA_DIR, with its ingest listener and token) fed by the
// stub provider: the board fills with the stub's odds mapped as docs/feeds.md's table says;
// provider faults (429 with Retry-After, 500, a stalled answer, a malformed body), the
// quota running low and out, and the ingest service going down and coming back are each
// handled and logged; batches reach the service's log once each and in order; a bad key
// or token stops the feed with a clear message; `npm run feed -- ndjson` replays a file
// through the ingest listener.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { americanToDecimal } from '../../engine/model.ts';
import { decodeRecord } from '../../ingest/record.ts';
import { FileBatchLog, walDir } from '../../persistence/log/fileBatchLog.ts';
import { listSegments } from '../../persistence/log/segments.ts';
import type { ProviderEventOdds, ProviderMarket } from '../../feeds/theOddsApi/providerTypes.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { httpRequest } from '../helpers/server.ts';
import { tempDataDir } from '../ingest/ingest-helpers.ts';
import { startServiceChild, type ServiceChild } from '../../fixtures/harness/service-child.ts';
import { STUB_API_KEY, StubProvider, nudged, providerEventsFrom } from '../../fixtures/harness/stubProvider.ts';

const TOKEN = 'feed-process-test-token';
const MARKETS = 'h2h,spreads,totals,team_totals,spreads_h1,player_points';
/** Generous: the machine is shared and every step crosses two child processes. */
const WAIT_MS = 60_000;

let stub: StubProvider;
let dataDir: string;
let service: ServiceChild;
let serviceEnv: Record<string, string>;
let feed: FeedChild;
let events: ProviderEventOdds[];
/** The ticks the feed sent, in order: [row id, price]. */
const ticks: [string, number][] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface FeedChild {
  proc: ChildProcess;
  output(): string;
  /** Lines written since `mark` (a length of output()) that match. */
  waitFor(pattern: RegExp, since?: number): Promise<string>;
  exited: Promise<number | string>;
}

/** `npm run feed -- ARGS` (the script is `tsx feeds/cli.ts`; run through node directly so signals reach the feed itself). */
function startFeedChild(args: string[], secrets: { apiKey?: string; token?: string } = {}): FeedChild {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['INGEST_TOKEN', 'INGEST_URL', 'DATA_DIR', 'ODDS_API_KEY', 'ODDS_API_BASE_URL', 'ODDS_API_SPORTS', 'ODDS_API_MARKETS']) delete env[name];
  // secrets through the environment: the command line refuses them
  env.ODDS_API_KEY = secrets.apiKey ?? STUB_API_KEY;
  env.INGEST_TOKEN = secrets.token ?? TOKEN;
  const proc = spawn(process.execPath, ['--import', 'tsx', 'feeds/cli.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // FEED_DEBUG=1 shows what the feed says as it says it (run the file with node --import tsx, not --test)
  if (process.env.FEED_DEBUG) proc.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, signal) => resolve(signal ?? code ?? -1)));
  return {
    proc,
    output: () => out,
    exited,
    async waitFor(pattern, since = 0) {
      let found: string | undefined;
      const ok = await eventually(() => {
        found = out.slice(since).split('\n').find((line) => pattern.test(line));
        return found !== undefined;
      }, WAIT_MS, 50);
      assert.ok(ok, `the feed never logged ${pattern}:\n${out.slice(-4000)}`);
      return found!;
    },
  };
}

function feedArgs(overrides: Record<string, string> = {}): string[] {
  const flags: Record<string, string> = {
    'base-url': stub.url,
    sports: 'basketball_nba',
    markets: MARKETS,
    interval: '0.3',
    timeout: '1',
    'retry-max': '1',
    ingest: `http://127.0.0.1:${service.ingestPort}`,
    ...overrides,
  };
  return ['the-odds-api', ...Object.entries(flags).flatMap(([name, value]) => [`--${name}`, value])];
}

async function getJson(path: string): Promise<any> {
  const reply = await httpRequest(service.port, path);
  assert.equal(reply.status, 200, `${path}: ${reply.body.toString()}`);
  return JSON.parse(reply.body.toString());
}

async function rowsOf(eventId: string): Promise<Map<string, any>> {
  const body = await getJson(`/api/v1/odds?event_id=${eventId}&limit=1000`);
  assert.equal(body.nextCursor, null);
  return new Map((body.data as any[]).map((row) => [row.id, row]));
}

async function priceShows(id: string, eventId: string, price: number): Promise<boolean> {
  return eventually(async () => (await rowsOf(eventId)).get(id)?.priceAmerican === price, WAIT_MS, 100);
}

/** The event's status from /events (a window around the system clock, where the stub's games are). */
async function statusOf(eventId: string): Promise<string | undefined> {
  const day = 86_400_000;
  const window = `starts_after=${new Date(Date.now() - 2 * day).toISOString()}&starts_before=${new Date(Date.now() + 2 * day).toISOString()}`;
  const body = await getJson(`/api/v1/events?league=nba&limit=1000&${window}`);
  return (body.data as any[]).find((e) => e.id === eventId)?.status;
}

function marketOf(event: ProviderEventOdds, book: string, key: string): ProviderMarket | undefined {
  return event.bookmakers.find((b) => b.key === book)?.markets.find((m) => m.key === key);
}

/** Moves the pinnacle moneyline home price of the first event; returns the row id and the new price. */
function moveHomePrice(): [string, number] {
  const event = events[0];
  const outcome = marketOf(event, 'pinnacle', 'h2h')!.outcomes.find((o) => o.name === event.home_team)!;
  outcome.price = nudged(outcome.price, ticks.length % 2 === 0 ? 0.02 : -0.02);
  const tick: [string, number] = [`${event.id}:pinnacle:MONEYLINE:FULL-HOME`, outcome.price];
  ticks.push(tick);
  return tick;
}

before(async () => {
  const board = generateBoard({ seed: 42, size: 'small', now: NOW });
  stub = new StubProvider();
  stub.remaining = 1_000_000;
  events = providerEventsFrom(board, 'nba', 2, 'cli');
  // the feed process runs on the system clock: one game starts tomorrow, one started an hour ago
  events[0].commence_time = new Date(Date.now() + 86_400_000).toISOString();
  events[1].commence_time = new Date(Date.now() - 3_600_000).toISOString();
  stub.addSport('basketball_nba', events);
  await stub.start();
  dataDir = tempDataDir('feed-process-');
  // fixed ports, so the service comes back where the feed sends
  serviceEnv = { INGEST_TOKEN: TOKEN, PORT: String(await freePort()), INGEST_PORT: String(await freePort()), METRICS_PORT: 'off', CHECKPOINT_INTERVAL_MS: '0' };
  service = await startServiceChild(dataDir, serviceEnv);
  feed = startFeedChild(feedArgs());
});

after(async () => {
  feed?.proc.kill('SIGTERM');
  await feed?.exited;
  if (service !== undefined && service.proc.exitCode === null && service.proc.signalCode === null) await service.kill();
  await stub?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the feed process fills the board with the stub odds, mapped as the docs/feeds.md table says', async () => {
  const event = events[0];
  const expected = new Map<string, Record<string, unknown>>();
  // a hand-written expectation per market kind, from the table in docs/feeds.md
  const side = (name: string) => (name === event.home_team ? 'HOME' : 'AWAY');
  const line = (point: number) => (point < 0 ? `m${-point}` : String(point));
  const teamId = (name: string) => `nba-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  for (const o of marketOf(event, 'pinnacle', 'h2h')?.outcomes ?? []) {
    expected.set(`${event.id}:pinnacle:MONEYLINE:FULL-${side(o.name)}`, { market: 'MONEYLINE', period: 'FULL', side: side(o.name), teamSide: side(o.name), teamName: o.name, priceAmerican: o.price });
  }
  for (const o of marketOf(event, 'williamhill_us', 'spreads')?.outcomes ?? []) {
    expected.set(`${event.id}:caesars:SPREAD:FULL-${side(o.name)}-${line(o.point!)}`, { sportsbook: 'caesars', market: 'SPREAD', side: side(o.name), line: o.point, priceAmerican: o.price });
  }
  for (const o of marketOf(event, 'draftkings', 'totals')?.outcomes ?? []) {
    expected.set(`${event.id}:draftkings:TOTAL:FULL-${o.name.toUpperCase()}-${o.point}`, { market: 'TOTAL', side: o.name.toUpperCase(), teamSide: 'NONE', line: o.point, priceAmerican: o.price });
  }
  for (const book of ['pinnacle', 'draftkings', 'fanduel']) {
    for (const o of marketOf(event, book, 'team_totals')?.outcomes ?? []) {
      const id = `${event.id}:${book}:TEAM_TOTAL:FULL-${o.name.toUpperCase()}-${o.point}-${teamId(o.description!)}`;
      expected.set(id, { market: 'TEAM_TOTAL', side: o.name.toUpperCase(), teamSide: side(o.description!), teamName: o.description, line: o.point, priceAmerican: o.price });
    }
    for (const o of marketOf(event, book, 'spreads_h1')?.outcomes ?? []) {
      expected.set(`${event.id}:${book}:SPREAD:1H-${side(o.name)}-${line(o.point!)}`, { market: 'SPREAD', period: '1H', side: side(o.name), line: o.point, priceAmerican: o.price });
    }
  }
  for (const o of marketOf(event, 'prizepicks', 'player_points')?.outcomes ?? []) {
    const player = `nba-p-${o.description!.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
    const multiplier = Math.round((americanToDecimal(o.price) / Math.sqrt(3)) * 100) / 100;
    expected.set(`${event.id}:prizepicks:PLAYER_TOTAL_POINTS:FULL-${o.name.toUpperCase()}-${o.point}-${player}`, {
      market: 'PLAYER_TOTAL',
      marketSubtype: 'PLAYER_TOTAL_POINTS',
      side: o.name.toUpperCase(),
      line: o.point,
      playerName: o.description,
      dfsMultiplier: multiplier,
    });
  }
  const kinds = new Set([...expected.keys()].map((id) => id.split(':').slice(2, 4).join(':').replace(/-.*/, '')));
  assert.ok(kinds.size >= 6, `the stub serves every market kind: ${[...kinds].join(', ')}`);

  const outcomes = event.bookmakers.reduce((n, b) => n + b.markets.filter((m) => MARKETS.split(',').includes(m.key)).reduce((k, m) => k + m.outcomes.length, 0), 0);
  assert.ok(await eventually(async () => (await rowsOf(event.id)).size === outcomes, WAIT_MS, 100), `${outcomes} rows on the board:\n${feed.output().slice(-2000)}`);
  const rows = await rowsOf(event.id);
  for (const [id, fields] of expected) {
    const row = rows.get(id);
    assert.ok(row !== undefined, `${id} is on the board`);
    for (const [field, value] of Object.entries(fields)) assert.deepEqual(row[field], value, `${id} ${field}`);
    assert.equal(row.eventId, event.id);
    assert.equal(row.league, 'nba');
  }
  assert.equal(await statusOf(event.id), 'scheduled');
  assert.ok(await eventually(async () => (await statusOf(events[1].id)) === 'in_progress', WAIT_MS, 100), 'the game that started is in progress');
  await feed.waitFor(/poll \d+ · credits left [\d,]+ .*changes sent [\d,]+ in \d+ batches/);

  const [id, price] = moveHomePrice();
  assert.ok(await priceShows(id, event.id, price), 'the moved price arrives as a tick on the same id');
});

test('provider faults: 429 with Retry-After, 500, a stalled answer and a malformed body are logged and the feed goes on', async () => {
  const mark = feed.output().length;
  stub.fault(/basketball_nba\/odds$/, 429, '{"message":"Too many requests"}', { 'retry-after': '1' });
  stub.fault(/\/events$/, 500, '{"message":"internal"}');
  stub.fault(/\/events\/[^/]+\/odds$/, 200, '{}', {}, 5000);
  stub.fault(/basketball_nba\/odds$/, 200, '{"message":"not a list"}');
  await feed.waitFor(/429 on \/v4\/sports\/basketball_nba\/odds \(Too many requests\); every call waits 1 s/, mark);
  await feed.waitFor(/GET \/v4\/sports\/basketball_nba\/events: 500 internal; retrying in/, mark);
  await feed.waitFor(/\/events\/[^/]+\/odds: no answer within 1 s; retrying in/, mark);
  await feed.waitFor(/skipped basketball_nba odds: odds: expected an array, got object/, mark);
  const [id, price] = moveHomePrice();
  assert.ok(await priceShows(id, events[0].id, price), 'the feed goes on after each fault');
});

test('the quota running low is logged; spent, the feed makes only the free call until credits return', async () => {
  const mark = feed.output().length;
  stub.remaining = 40;
  await feed.waitFor(/credits running low: \d+ left/, mark);
  const paused = await feed.waitFor(/the usage quota is spent .*no paid calls until it is renewed/, mark);
  assert.ok(paused.length > 0);
  const from = stub.requests.length;
  assert.ok(await eventually(() => stub.requests.slice(from).filter((r) => r.path === '/v4/sports').length >= 2, WAIT_MS, 50), 'the free call checks the quota');
  assert.deepEqual([...new Set(stub.requests.slice(from).map((r) => r.path))], ['/v4/sports'], 'no paid call while the quota is spent');
  const [id, price] = moveHomePrice();
  stub.remaining = 1_000_000;
  await feed.waitFor(/credits again \([\d,]+ left\); polling resumes/, mark);
  assert.ok(await priceShows(id, events[0].id, price));
});

test('the ingest service down and back: the feed resends the same batch with back-off, makes no provider call meanwhile, and the board gets it', async () => {
  await service.stop();
  const mark = feed.output().length;
  const [id, price] = moveHomePrice();
  await feed.waitFor(/did not take a batch of 1 changes \(ingest_unreachable: .*ECONNREFUSED.*\); sending the same batch again in [\d.]+ s \(resend 1\)/, mark);
  const calls = stub.requests.length;
  await feed.waitFor(/\(resend 3\), no provider call meanwhile/, mark);
  assert.equal(stub.requests.length, calls, 'no provider call while a batch waits');
  service = await startServiceChild(dataDir, serviceEnv);
  await feed.waitFor(/took the batch of 1 changes after \d+ resends/, mark);
  assert.ok(await priceShows(id, events[0].id, price), 'the batch made while the service was down is on the board');
  const [next, nextPrice] = moveHomePrice();
  assert.ok(await priceShows(next, events[0].id, nextPrice), 'and the feed goes on');
});

test('a game finishing: the scores call sees it completed, its status becomes final and its rows leave the board', async () => {
  const event = events[1];
  assert.ok((await rowsOf(event.id)).size > 0);
  stub.scores.set(event.id, { completed: true, scores: [{ name: event.home_team!, score: '101' }, { name: event.away_team!, score: '99' }] });
  assert.ok(await eventually(async () => (await statusOf(event.id)) === 'final', WAIT_MS, 100), 'the game is final');
  assert.equal((await rowsOf(event.id)).size, 0, 'every row of the game is gone');
  assert.ok(stub.requests.some((r) => r.path === '/v4/sports/basketball_nba/scores' && r.query.get('daysFrom') === '1'));
});

test('a refused API key or ingest token stops the feed with a clear message', async () => {
  const badKey = startFeedChild(feedArgs(), { apiKey: 'wrong' });
  assert.equal(await badKey.exited, 1);
  assert.match(badKey.output(), /feed: The Odds API refused the API key \(401: API key is not valid\); check --api-key-file \/ ODDS_API_KEY \(the key from ODDS_API_KEY\)/);
  const badToken = startFeedChild(feedArgs(), { token: 'wrong' });
  assert.equal(await badToken.exited, 1);
  assert.match(badToken.output(), /feed: the ingest listener at http:\/\/127\.0\.0\.1:\d+ \(from --ingest\) refused the token from INGEST_TOKEN: .*It is not that server's token/);
});

test('npm run feed -- ndjson replays a file through the ingest listener', async () => {
  // rows of the fixture board, not the feed's
  const listed = await getJson('/api/v1/odds?limit=100');
  const rows = (listed.data as any[]).filter((r) => typeof r.priceAmerican === 'number' && !r.id.startsWith('cli')).slice(0, 5);
  assert.ok(rows.length >= 3, JSON.stringify(listed).slice(0, 500));
  const file = join(dataDir, 'replay.ndjson');
  const changes = rows.map((r: any, i: number) => ({ op: 'price', id: r.id, priceAmerican: r.priceAmerican === 250 + i ? 260 + i : 250 + i }));
  writeFileSync(file, changes.map((c: unknown) => JSON.stringify(c)).join('\n') + '\n');
  const replay = spawn('npm', ['run', '--silent', 'feed', '--', 'ndjson', file, '--batch', '2', '--ingest', `http://127.0.0.1:${service.ingestPort}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, INGEST_TOKEN: TOKEN },
  });
  let out = '';
  replay.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => replay.on('exit', resolve));
  assert.equal(code, 0, out);
  assert.match(out, new RegExp(`ndjson: done, ${changes.length} changes in ${Math.ceil(changes.length / 2)} batches \\(last line ${changes.length}\\)`));
  const after = new Map(((await getJson('/api/v1/odds?limit=100')).data as any[]).map((r) => [r.id, r.priceAmerican]));
  for (const c of changes) assert.equal(after.get(c.id), c.priceAmerican);
});

test('the service log holds each of the feed ticks once, in the order the feed made them', async () => {
  // the last tick arrived; stop the feed, then the service without a checkpoint so its log stays whole
  feed.proc.kill('SIGTERM');
  assert.equal(await feed.exited, 0);
  await service.kill();
  const { log } = FileBatchLog.open(walDir(dataDir));
  const logged: [string, number][] = [];
  log.replay(listSegments(walDir(dataDir))[0].firstIndex, (record) => {
    for (const change of decodeRecord(record.payload).changes) {
      if (change.op === 'priceById' && ticks.some(([id]) => id === change.id) && change.priceAmerican !== undefined) logged.push([change.id, change.priceAmerican as number]);
    }
  });
  await log.close();
  // the log may start after the first ticks (a checkpoint lets it drop what it covers): the ticks from its start on
  const since = ticks.length - logged.length;
  assert.ok(logged.length >= 2, `${logged.length} ticks in the log`);
  assert.deepEqual(logged, ticks.slice(since), 'each tick once, in order');
});
