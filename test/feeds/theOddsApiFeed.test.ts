// The Odds API feed against a stub of the provider (fixtures/harness/stubProvider.ts) serving
// events built from the small fixture board, submitting in process to a durable board:
// first poll, unchanged poll, price tick, pulled outcome, started and finished games,
// and each fault: 401, 429 with Retry-After, 500, a malformed body, the credit budget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { InProcessSink } from '../../feeds/batchSink.ts';
import { ApiKeyRejected, ProviderClient } from '../../feeds/theOddsApi/providerClient.ts';
import { TheOddsApiFeed, type TheOddsApiFeedOptions } from '../../feeds/theOddsApi/theOddsApiFeed.ts';
import { openBoard, tempDataDir, type OpenedBoard } from '../ingest/ingest-helpers.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { filterOf, walkAll } from '../helpers/engine-helpers.ts';
import type { ProviderMarket } from '../../feeds/theOddsApi/providerTypes.ts';
import { STUB_API_KEY, StubProvider, nudged, providerEventsFrom } from '../../fixtures/harness/stubProvider.ts';

const board = generateBoard({ seed: 42, size: 'small', now: NOW });
let opened: OpenedBoard;
let clock: ManualClock;

before(async () => {
  clock = new ManualClock(NOW);
  opened = await openBoard(tempDataDir('feeds-'), clock, board, { fsync: false });
});
after(async () => {
  await opened.close();
});

let stubs = 0;
/** A stub whose events are new to the board (the tests share one board). */
async function withStub(run: (stub: StubProvider) => Promise<void>, sportEvents = 2): Promise<void> {
  const stub = new StubProvider();
  stub.addSport('basketball_nba', providerEventsFrom(board, 'nba', sportEvents, `toa${++stubs}x`));
  await stub.start();
  try {
    await run(stub);
  } finally {
    await stub.close();
  }
}

function feedFor(stub: StubProvider, overrides: Partial<TheOddsApiFeedOptions> & { apiKey?: string; backoffBaseMs?: number } = {}) {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const client = new ProviderClient({ baseUrl: stub.url, apiKey: overrides.apiKey ?? STUB_API_KEY, backoffBaseMs: overrides.backoffBaseMs ?? 20, log, now: overrides.now });
  const feed = new TheOddsApiFeed({
    client,
    sink: new InProcessSink(opened.durable.ingest),
    sports: ['basketball_nba'],
    regions: 'us',
    markets: ['h2h', 'spreads', 'totals', 'team_totals', 'spreads_h1', 'player_points'],
    intervalMs: 1000,
    now: () => clock.now(),
    log,
    ...overrides,
  });
  return { feed, client, lines };
}

const engine = () => opened.durable.engine;
const row = (id: string) => engine().rowObject(engine().slotOf(id), 'american') as Record<string, unknown>;

test('a poll maps every market kind onto the board; an unchanged poll submits nothing', async () => {
  await withStub(async (stub) => {
    const { feed } = feedFor(stub);
    const sent = await feed.pollOnce();
    assert.ok(sent > 100, `${sent} changes`);
    const event = stub.sports.get('basketball_nba')!.events[0];
    const e = engine().event(event.id)!;
    assert.equal(e.status, 'scheduled');
    assert.equal(e.league, 'nba');
    // every requested market key, and only those, is on the board (as market/period pairs)
    const onBoard = new Set(walkAll(engine(), filterOf({ eventIds: [event.id] }), 500).map((slot) => {
      const r = engine().rowObject(slot, 'american');
      return `${r.marketSubtype}/${r.period}`;
    }));
    assert.deepEqual([...onBoard].sort(), ['MONEYLINE/FULL', 'PLAYER_TOTAL_POINTS/FULL', 'SPREAD/1H', 'SPREAD/FULL', 'TEAM_TOTAL/FULL', 'TOTAL/FULL']);
    // one row per provider outcome, read back from the board
    const h2h = event.bookmakers.find((b) => b.key === 'pinnacle')!.markets.find((m) => m.key === 'h2h')!;
    const home = h2h.outcomes.find((o) => o.name === event.home_team)!;
    assert.equal(row(`${event.id}:pinnacle:MONEYLINE:FULL-HOME`).priceAmerican, home.price);
    const tt = event.bookmakers.flatMap((b) => b.markets.filter((m) => m.key === 'team_totals').map((m) => ({ book: b.key, outcome: m.outcomes[0] })))[0];
    assert.ok(tt !== undefined, 'the stub serves team totals');
    const pp = event.bookmakers.find((b) => b.key === 'prizepicks');
    if (pp !== undefined) {
      const pick = pp.markets[0].outcomes[0];
      const id = `${event.id}:prizepicks:PLAYER_TOTAL_POINTS:FULL-${pick.name.toUpperCase()}-${pick.point}-nba-p-${pick.description!.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
      assert.equal(typeof row(id).dfsMultiplier, 'number');
    }
    const seq = engine().seq;
    assert.equal(await feed.pollOnce(), 0, 'an unchanged poll submits nothing');
    assert.equal(engine().seq, seq);
    assert.match(feed.progressLine(), /poll 2 · credits left [\d,]+/);
  });
});

test('a moved price is a tick on the same id; a pulled outcome becomes a tombstone; games start and finish', async () => {
  await withStub(async (stub) => {
    const { feed } = feedFor(stub);
    await feed.pollOnce();
    const [first, second] = stub.sports.get('basketball_nba')!.events;
    const market = first.bookmakers.find((b) => b.key === 'pinnacle')!.markets.find((m) => m.key === 'totals')!;
    const over = market.outcomes.find((o) => o.name === 'Over')!;
    const id = `${first.id}:pinnacle:TOTAL:FULL-OVER-${over.point}`;
    const slot = engine().slotOf(id);
    const historyBefore = [...engine().history(slot)].length;
    over.price = nudged(over.price, 0.03);
    const under = market.outcomes.find((o) => o.name === 'Under')!;
    market.outcomes.splice(market.outcomes.indexOf(under), 1);
    const underId = `${first.id}:pinnacle:TOTAL:FULL-UNDER-${under.point}`;
    assert.ok(engine().isLive(engine().slotOf(underId)));
    assert.equal(await feed.pollOnce(), 2, 'one tick and one remove');
    assert.equal(engine().slotOf(id), slot, 'the same row');
    assert.equal(row(id).priceAmerican, over.price);
    assert.equal([...engine().history(slot)].length, historyBefore + 1, 'the tick is one more history entry of the same row');
    assert.ok(engine().isTombstone(engine().slotOf(underId)), 'the pulled outcome is a tombstone');

    // the first game starts: a status change, then the scores call finds it finished
    clock.set(Date.parse(first.commence_time) + 60_000);
    await feed.pollOnce();
    assert.equal(engine().event(first.id)!.status, 'in_progress');
    assert.ok(stub.requests.some((r) => r.path.endsWith('/scores') && r.query.get('daysFrom') === '1'));
    stub.scores.set(first.id, { completed: true, scores: [{ name: first.home_team!, score: '101' }, { name: first.away_team!, score: '99' }] });
    await feed.pollOnce();
    assert.equal(engine().event(first.id)!.status, 'final');
    assert.ok(engine().isTombstone(slot), 'a finished game leaves the board');
    assert.notEqual(engine().event(second.id)!.status, 'final');
  });
});

test('401 stops the feed with a clear message', async () => {
  await withStub(async (stub) => {
    const { feed } = feedFor(stub, { apiKey: 'wrong' });
    await assert.rejects(feed.run(), (error: Error) => error instanceof ApiKeyRejected && /refused the API key \(401: API key is not valid\)/.test(error.message));
    assert.equal(stub.requests.length, 1, 'no request after the refusal');
    assert.ok(feed.stopped);
  });
});

test('429 with Retry-After holds back every later call; 500 is retried; a malformed body is skipped without touching the board', async () => {
  await withStub(async (stub) => {
    const { feed, lines } = feedFor(stub);
    stub.fault(/\/events$/, 429, '{"message":"Too many requests"}', { 'retry-after': '1' });
    assert.ok((await feed.pollOnce()) > 0);
    const refused = stub.requests.find((r) => r.status === 429)!;
    const later = stub.requests.slice(stub.requests.indexOf(refused) + 1);
    assert.ok(later.length >= 3, 'the refused call and the per-event calls after it');
    // Retry-After is a floor on the gap, for every call (a few ms of timer slack allowed)
    for (const r of later) assert.ok(r.at - refused.at >= 990, `${r.path} came ${r.at - refused.at} ms after the 429`);
    assert.ok(lines.some((l) => /429 .*every call waits 1 s/.test(l)));

    const [first] = stub.sports.get('basketball_nba')!.events;
    const h2h = first.bookmakers.find((b) => b.key === 'pinnacle')!.markets.find((m) => m.key === 'h2h')!;
    h2h.outcomes[0].price = nudged(h2h.outcomes[0].price, 0.02);
    stub.fault(/\/odds$/, 500, '{"message":"internal"}');
    assert.equal(await feed.pollOnce(), 1, 'the 500 was retried and the tick arrived');
    assert.ok(lines.some((l) => /500 .*retrying in/.test(l)));

    h2h.outcomes[0].price = nudged(h2h.outcomes[0].price, 0.02);
    const seq = engine().seq;
    stub.fault(/basketball_nba\/odds$/, 200, '[{"id": "nofields"}]');
    const skippedBefore = feed.stats.skippedAnswers;
    assert.equal(await feed.pollOnce(), 0);
    assert.equal(engine().seq, seq, 'nothing applied from a malformed answer');
    assert.equal(feed.stats.skippedAnswers, skippedBefore + 1);
    assert.ok(lines.some((l) => /skipped basketball_nba odds: odds\[0\]\.sport_key/.test(l)), lines.join('\n'));
    stub.fault(/basketball_nba\/odds$/, 200, 'not json at all');
    await feed.pollOnce();
    assert.ok(lines.some((l) => /the body is not JSON/.test(l)));
    assert.equal(await feed.pollOnce(), 1, 'the next good answer brings the tick');
  });
});

test('the credit budget spaces the polls: no simulated day spends more than the budget', async () => {
  await withStub(async (stub) => {
    let fakeNow = NOW;
    const budget = 120;
    const { feed, client } = feedFor(stub, {
      markets: ['h2h', 'spreads', 'totals'],
      budgetPerDay: budget,
      intervalMs: 60_000,
      now: () => fakeNow,
      sleep: async (ms) => {
        fakeNow += ms;
        if (fakeNow >= NOW + 86_400_000) feed.stop();
      },
    });
    await feed.run();
    // a poll costs 3 credits (three featured markets, one region), 5 once a game has
    // started (the scores call with daysFrom costs 2)
    assert.ok(feed.stats.polls >= 24 && feed.stats.polls <= 40, `${feed.stats.polls} polls`);
    assert.ok(client.creditsSpent <= budget, `${client.creditsSpent} credits in a day`);
    assert.ok(client.creditsSpent >= budget - 5, `the budget is used, not wasted: ${client.creditsSpent}`);
    assert.equal(feed.nextDelayMs(), Math.ceil((feed.stats.lastPollCost * 86_400_000) / budget));
    assert.equal(stub.used, client.creditsSpent, 'the provider counted what the feed counted');
  });
});

test('a bookmaker that stops quoting an event loses its rows; a book the table does not know arrives as a retail source first', async () => {
  await withStub(async (stub) => {
    const { feed } = feedFor(stub, { markets: ['h2h', 'spreads', 'totals'] });
    await feed.pollOnce();
    const [first] = stub.sports.get('basketball_nba')!.events;
    const dk = first.bookmakers.find((b) => b.key === 'draftkings')!;
    const dkIds = walkAll(engine(), filterOf({ eventIds: [first.id], sportsbooks: ['draftkings'] }), 500).map((slot) => engine().idOf(slot));
    assert.ok(dkIds.length >= 6, `${dkIds.length} draftkings rows`);
    first.bookmakers.splice(first.bookmakers.indexOf(dk), 1);
    // a book new to the board: its source comes first in the same batch, with the default kind
    first.bookmakers.push({
      key: 'novabet_us',
      title: 'NovaBet',
      last_update: dk.last_update,
      markets: [{ key: 'h2h', outcomes: [{ name: first.home_team!, price: -120 }, { name: first.away_team!, price: 105 }] }],
    });
    assert.equal(await feed.pollOnce(), dkIds.length + 3, 'a remove per draftkings row, the source and two rows');
    for (const id of dkIds) assert.ok(engine().isTombstone(engine().slotOf(id)), `${id} is a tombstone`);
    assert.equal(engine().sources.kindOf('novabet_us'), 'retail');
    assert.equal(row(`${first.id}:novabet_us:MONEYLINE:FULL-AWAY`).priceAmerican, 105);
    assert.equal(await feed.pollOnce(), 0, 'nothing more to send');
  });
});

test('the quota: low credits are logged once; at 0 the feed pauses paid calls, checks with the free /v4/sports and resumes when credits return', async () => {
  await withStub(async (stub) => {
    let step = 0;
    const { feed, lines } = feedFor(stub, {
      markets: ['h2h', 'spreads', 'totals'],
      lowQuotaPolls: 5,
      sleep: async () => {
        step++;
        if (step === 1) stub.remaining = 12; // four polls' worth: below five
        if (step === 3) stub.remaining = 4; // one poll, then the provider refuses the next call (401, quota)
        if (step === 7) stub.remaining = 500;
        if (step === 9) feed.stop();
      },
    });
    await feed.run();
    assert.equal(lines.filter((l) => /credits running low/.test(l)).length, 1, lines.join('\n'));
    assert.equal(lines.filter((l) => /no paid calls until it is renewed/.test(l)).length, 1, lines.join('\n'));
    assert.equal(lines.filter((l) => /polling resumes/.test(l)).length, 1, lines.join('\n'));
    // while paused only the free call was made
    const paused = stub.requests.findIndex((r) => r.status === 401);
    const resumed = stub.requests.findIndex((r, i) => i > paused && r.path !== '/v4/sports');
    assert.ok(paused > 0 && resumed > paused + 2, `paused at ${paused}, resumed at ${resumed}`);
    assert.ok(stub.requests.slice(paused + 1, resumed).every((r) => r.path === '/v4/sports'), 'no paid call while the quota is spent');
    assert.ok(stub.requests.slice(resumed).some((r) => r.path.endsWith('/odds') && r.status === 200), 'paid calls again after the credits came back');
    // the provider refused one call only (the one that found the credits spent), and the
    // feed's count of credits left is the provider's own
    assert.equal(stub.requests.filter((r) => r.status === 401).length, 1, 'one refused call');
    assert.equal(feed.stats.creditsRemaining, stub.remaining);
  });
});

test('a provider that does not answer in time is retried; the poll completes', async () => {
  await withStub(async (stub) => {
    const lines: string[] = [];
    const client = new ProviderClient({ baseUrl: stub.url, apiKey: STUB_API_KEY, backoffBaseMs: 20, timeoutMs: 300, log: (l) => lines.push(l) });
    const feed = new TheOddsApiFeed({ client, sink: new InProcessSink(opened.durable.ingest), sports: ['basketball_nba'], regions: 'us', markets: ['h2h'], intervalMs: 1000, now: () => clock.now(), log: (l) => lines.push(l) });
    stub.fault(/\/odds$/, 200, '[]', {}, 3000);
    assert.ok((await feed.pollOnce()) > 0, 'the second attempt brought the rows');
    assert.ok(lines.some((l) => /GET \/v4\/sports\/basketball_nba\/odds: no answer within 0.3 s; retrying in/.test(l)), lines.join('\n'));
  });
});

test('refusals that show the board differs correct the mirror, and a poll does not repeat a refusal', async () => {
  await withStub(async (stub) => {
    const { feed, lines } = feedFor(stub, { markets: ['h2h'] });
    const [first] = stub.sports.get('basketball_nba')!.events;
    // a sharp book on the board whose key the table does not list: the feed would call it retail
    first.bookmakers.push({ key: 'bookmaker', title: 'BookMaker', last_update: first.bookmakers[0].last_update, markets: [{ key: 'h2h', outcomes: [{ name: first.home_team!, price: -110 }, { name: first.away_team!, price: -110 }] }] });
    await feed.pollOnce();
    assert.ok(lines.some((l) => /1 of \d+ changes refused \(#\d+ kind_change source.kind: bookmaker is a sharp source/.test(l)), lines.join('\n'));
    assert.equal(row(`${first.id}:bookmaker:MONEYLINE:FULL-HOME`).priceAmerican, -110, 'its rows are still taken');
    // another writer closes the game on the board
    if (engine().event(first.id)!.status === 'scheduled') await opened.durable.ingest.submit([{ op: 'status', eventId: first.id, status: 'in_progress' }]);
    await opened.durable.ingest.submit([{ op: 'status', eventId: first.id, status: 'final' }]);
    const h2h = first.bookmakers.find((b) => b.key === 'pinnacle')!.markets[0];
    h2h.outcomes[0].price = nudged(h2h.outcomes[0].price, 0.02);
    await feed.pollOnce(); // the tick: unknown_id (the row is a tombstone), so the mirror forgets the row
    await feed.pollOnce(); // the row sent again as new: event_closed
    const refused = feed.stats.refusedChanges;
    const logged = lines.length;
    assert.ok(lines.some((l) => /unknown_id/.test(l)) && lines.some((l) => /event_closed/.test(l)), lines.join('\n'));
    assert.equal(await feed.pollOnce(), 0);
    assert.equal(feed.stats.refusedChanges, refused, 'nothing refused is sent again');
    assert.equal(lines.length, logged, 'and nothing more is logged');
  });
});

test('through the stub onto the board: a three-way moneyline, alternates, a period total, an Over/Under prop, a Yes milestone and outrights, as hand-written rows', async () => {
  const stub = new StubProvider();
  const at = '2027-01-10T18:00:00Z';
  const book = (key: string, markets: ProviderMarket[]) => ({ key, title: key, last_update: at, markets });
  stub.addSport('soccer_epl', [
    { id: 'kinds-epl-1', sport_key: '', commence_time: at, home_team: 'Arsenal', away_team: 'Chelsea', bookmakers: [book('williamhill_us', [{ key: 'h2h', outcomes: [{ name: 'Arsenal', price: 150 }, { name: 'Draw', price: 240 }, { name: 'Chelsea', price: 180 }] }])] },
  ]);
  stub.addSport('americanfootball_nfl', [
    {
      id: 'kinds-nfl-1',
      sport_key: '',
      commence_time: at,
      home_team: 'Buffalo Bills',
      away_team: 'Miami Dolphins',
      bookmakers: [
        book('draftkings', [
          { key: 'alternate_spreads', outcomes: [{ name: 'Buffalo Bills', price: 140, point: -9.5 }, { name: 'Miami Dolphins', price: -170, point: 9.5 }] },
          { key: 'alternate_totals', outcomes: [{ name: 'Over', price: 160, point: 51.5 }] },
          { key: 'totals_h1', outcomes: [{ name: 'Over', price: -105, point: 23.5 }, { name: 'Under', price: -115, point: 23.5 }] },
          { key: 'player_pass_yds', outcomes: [{ name: 'Over', description: 'Josh Allen', price: -115, point: 245.5 }] },
        ]),
        book('fanduel', [{ key: 'player_anytime_td', outcomes: [{ name: 'Yes', description: 'James Cook', price: 110 }, { name: 'No', description: 'James Cook', price: -140 }] }]),
      ],
    },
  ]);
  stub.addSport('americanfootball_nfl_super_bowl_winner', [
    { id: 'kinds-sb-2027', sport_key: '', commence_time: '2027-02-14T23:30:00Z', home_team: null, away_team: null, bookmakers: [book('fanduel', [{ key: 'outrights', outcomes: [{ name: 'Kansas City Chiefs', price: 450 }, { name: 'Buffalo Bills', price: 600 }] }])] },
  ]);
  await stub.start();
  try {
    const { feed, lines } = feedFor(stub, {
      sports: ['soccer_epl', 'americanfootball_nfl', 'americanfootball_nfl_super_bowl_winner'],
      markets: ['h2h', 'alternate_spreads', 'alternate_totals', 'totals_h1', 'player_pass_yds', 'player_anytime_td'],
    });
    await feed.pollOnce();
    assert.equal(feed.stats.refusedChanges, 0, lines.join('\n'));
    const fields = ['market', 'marketSubtype', 'period', 'side', 'teamSide', 'line', 'priceAmerican', 'playerName', 'marketScope'];
    const expected: [string, ...unknown[]][] = [
      ['kinds-epl-1:caesars:MONEYLINE_3_WAY:FULL-HOME', 'MONEYLINE_3_WAY', 'MONEYLINE_3_WAY', 'FULL', 'HOME', 'HOME', null, 150],
      ['kinds-epl-1:caesars:MONEYLINE_3_WAY:FULL-DRAW', 'MONEYLINE_3_WAY', 'MONEYLINE_3_WAY', 'FULL', 'DRAW', 'NONE', null, 240],
      ['kinds-epl-1:caesars:MONEYLINE_3_WAY:FULL-AWAY', 'MONEYLINE_3_WAY', 'MONEYLINE_3_WAY', 'FULL', 'AWAY', 'AWAY', null, 180],
      ['kinds-nfl-1:draftkings:SPREAD:FULL-HOME-m9.5', 'SPREAD', 'SPREAD', 'FULL', 'HOME', 'HOME', -9.5, 140],
      ['kinds-nfl-1:draftkings:SPREAD:FULL-AWAY-9.5', 'SPREAD', 'SPREAD', 'FULL', 'AWAY', 'AWAY', 9.5, -170],
      ['kinds-nfl-1:draftkings:TOTAL:FULL-OVER-51.5', 'TOTAL', 'TOTAL', 'FULL', 'OVER', 'NONE', 51.5, 160],
      ['kinds-nfl-1:draftkings:TOTAL:1H-OVER-23.5', 'TOTAL', 'TOTAL', '1H', 'OVER', 'NONE', 23.5, -105],
      ['kinds-nfl-1:draftkings:TOTAL:1H-UNDER-23.5', 'TOTAL', 'TOTAL', '1H', 'UNDER', 'NONE', 23.5, -115],
      ['kinds-nfl-1:draftkings:PLAYER_TOTAL_PASSING_YARDS:FULL-OVER-245.5-nfl-p-josh-allen', 'PLAYER_TOTAL', 'PLAYER_TOTAL_PASSING_YARDS', 'FULL', 'OVER', 'NONE', 245.5, -115, 'Josh Allen'],
      ['kinds-nfl-1:fanduel:PLAYER_MILESTONE_TOUCHDOWNS:FULL-OVER-0.5-nfl-p-james-cook', 'PLAYER_MILESTONE', 'PLAYER_MILESTONE_TOUCHDOWNS', 'FULL', 'OVER', 'NONE', 0.5, 110, 'James Cook'],
      ['kinds-sb-2027:fanduel:CHAMPIONSHIP_WINNER:FULL-YES-kansas-city-chiefs', 'CATEGORICAL', 'CHAMPIONSHIP_WINNER', 'FULL', 'YES', 'NONE', null, 450, undefined, 'SEASON'],
      ['kinds-sb-2027:fanduel:CHAMPIONSHIP_WINNER:FULL-YES-buffalo-bills', 'CATEGORICAL', 'CHAMPIONSHIP_WINNER', 'FULL', 'YES', 'NONE', null, 600, undefined, 'SEASON'],
    ];
    for (const [id, ...values] of expected) {
      const slot = engine().slotOf(id);
      assert.ok(slot >= 0 && engine().isLive(slot), `${id} is on the board`);
      const r = row(id);
      fields.forEach((field, i) => {
        if (i < values.length && values[i] !== undefined) assert.deepEqual(r[field] ?? null, values[i], `${id} ${field}`);
      });
    }
    // exactly those: the No side of the milestone is not a row
    for (const eventId of ['kinds-epl-1', 'kinds-nfl-1', 'kinds-sb-2027']) {
      const live = walkAll(engine(), filterOf({ eventIds: [eventId] }), 500).map((slot) => engine().idOf(slot));
      assert.deepEqual(live.sort(), expected.map(([id]) => id).filter((id) => id.startsWith(`${eventId}:`)).sort());
    }
    assert.equal(engine().event('kinds-sb-2027')!.isFutures, true);
  } finally {
    await stub.close();
  }
});

test('all-in-season polls the in-season sport keys /v4/sports lists that the table maps, and no other', async () => {
  await withStub(async (stub) => {
    stub.addSport('cricket_ipl', []);
    const { feed, lines } = feedFor(stub, { sports: ['all-in-season'], markets: ['h2h'] });
    assert.ok((await feed.pollOnce()) > 0);
    const paths = new Set(stub.requests.map((r) => r.path));
    assert.ok(paths.has('/v4/sports') && paths.has('/v4/sports/basketball_nba/odds'), [...paths].join());
    assert.ok(![...paths].some((p) => p.includes('cricket')), 'a sport key without a league is not polled');
    assert.deepEqual(lines.filter((l) => /cricket/.test(l)), []);
  });
});
