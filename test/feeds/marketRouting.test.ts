// Markets routed by The Odds API's documented rules, against the stub that follows them
// (fixtures/harness/stubProvider.ts): featured markets on the sport endpoint, every other kind
// (3-way, alternates, team totals, period markets, player props) per event; outrights on
// a futures sport key. A 422 on one market drops that market, said once, while the rest
// flows; two fixtures of the same teams keep their own rows and start times; the poll
// plan says what each sport and market costs an hour, and the budget holds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../engine/clock.ts';
import { generateBoard } from '../../fixtures/generateBoard.ts';
import { InProcessSink } from '../../feeds/batchSink.ts';
import { ProviderClient } from '../../feeds/theOddsApi/providerClient.ts';
import { TheOddsApiFeed, type TheOddsApiFeedOptions } from '../../feeds/theOddsApi/theOddsApiFeed.ts';
import { pollPlan, planLines } from '../../feeds/theOddsApi/pollPlan.ts';
import type { ProviderEventOdds, ProviderMarket } from '../../feeds/theOddsApi/providerTypes.ts';
import { openBoard, tempDataDir, type OpenedBoard } from '../ingest/ingest-helpers.ts';
import { NOW } from '../../fixtures/harness/now.ts';
import { filterOf, walkAll } from '../helpers/engine-helpers.ts';
import { FEATURED_MARKETS, STUB_API_KEY, StubProvider } from '../../fixtures/harness/stubProvider.ts';

const board = generateBoard({ seed: 7, size: 'small', now: NOW });
let opened: OpenedBoard;
let clock: ManualClock;

before(async () => {
  clock = new ManualClock(NOW);
  opened = await openBoard(tempDataDir('routing-'), clock, board, { fsync: false });
});
after(async () => opened.close());

const engine = () => opened.durable.engine;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
let ids = 0;
const uid = (prefix: string) => `${prefix}${++ids}x${Math.floor(NOW / 1000) % 100000}`;

function bookmaker(key: string, markets: ProviderMarket[]) {
  return { key, title: key, last_update: iso(NOW), markets };
}
const m = (key: string, outcomes: ProviderMarket['outcomes']): ProviderMarket => ({ key, outcomes });

/** An NBA game with every game-market kind at two books (prices differ by book). */
function nbaGame(id: string, start: number, home = 'Boston Celtics', away = 'New York Knicks'): ProviderEventOdds {
  const markets = (shift: number) => [
    m('h2h', [{ name: home, price: -150 - shift }, { name: away, price: 130 + shift }]),
    m('spreads', [{ name: home, price: -110, point: -3.5 }, { name: away, price: -110 - shift, point: 3.5 }]),
    m('totals', [{ name: 'Over', price: -105, point: 221.5 }, { name: 'Under', price: -115 - shift, point: 221.5 }]),
    m('h2h_3_way', [{ name: home, price: -130 - shift }, { name: away, price: 150 }, { name: 'Draw', price: 1400 }]),
    m('alternate_spreads', [{ name: home, price: 150 + shift, point: -7.5 }, { name: away, price: -180, point: 7.5 }]),
    m('alternate_totals', [{ name: 'Over', price: 200 + shift, point: 230.5 }, { name: 'Under', price: -250, point: 230.5 }]),
    m('team_totals', [{ name: 'Over', price: -110, point: 112.5, description: home }, { name: 'Under', price: -110 - shift, point: 112.5, description: home }]),
    m('h2h_q1', [{ name: home, price: -125 - shift }, { name: away, price: 105 }]),
    m('spreads_h1', [{ name: home, price: -110, point: -2 }, { name: away, price: -110 - shift, point: 2 }]),
    m('totals_q1', [{ name: 'Over', price: -110 - shift, point: 55.5 }, { name: 'Under', price: -110, point: 55.5 }]),
    m('player_points', [{ name: 'Over', description: 'Jayson Tatum', price: -115 - shift, point: 27.5 }, { name: 'Under', description: 'Jayson Tatum', price: -105, point: 27.5 }]),
  ];
  return { id, sport_key: '', commence_time: iso(start), home_team: home, away_team: away, bookmakers: [bookmaker('pinnacle', markets(0)), bookmaker('draftkings', markets(5))] };
}

function eplGame(id: string, start: number, home = 'Arsenal', away = 'Chelsea', shift = 0): ProviderEventOdds {
  return {
    id,
    sport_key: '',
    commence_time: iso(start),
    home_team: home,
    away_team: away,
    bookmakers: [
      bookmaker('bet365', [
        m('h2h', [{ name: home, price: 120 + shift }, { name: 'Draw', price: 240 }, { name: away, price: 210 }]),
        m('totals', [{ name: 'Over', price: -120, point: 2.5 }, { name: 'Under', price: 100 + shift, point: 2.5 }]),
      ]),
    ],
  };
}

function nflGame(id: string, start: number): ProviderEventOdds {
  return {
    id,
    sport_key: '',
    commence_time: iso(start),
    home_team: 'Kansas City Chiefs',
    away_team: 'Buffalo Bills',
    bookmakers: [
      bookmaker('fanduel', [
        m('h2h', [{ name: 'Kansas City Chiefs', price: -140 }, { name: 'Buffalo Bills', price: 120 }]),
        m('player_pass_yds', [{ name: 'Over', description: 'Patrick Mahomes', price: -110, point: 265.5 }, { name: 'Under', description: 'Patrick Mahomes', price: -110, point: 265.5 }]),
        m('player_anytime_td', [{ name: 'Yes', description: 'Travis Kelce', price: 140 }, { name: 'No', description: 'Travis Kelce', price: -170 }]),
      ]),
    ],
  };
}

function nbaFutures(id: string): ProviderEventOdds {
  return {
    id,
    sport_key: '',
    commence_time: iso(NOW + 120 * 86_400_000),
    home_team: null,
    away_team: null,
    bookmakers: [bookmaker('fanduel', [m('outrights', [{ name: 'Boston Celtics', price: 350 }, { name: 'Oklahoma City Thunder', price: 300 }, { name: 'Denver Nuggets', price: 900 }])])],
  };
}

async function withStub(run: (stub: StubProvider) => Promise<void>): Promise<void> {
  const stub = new StubProvider();
  await stub.start();
  try {
    await run(stub);
  } finally {
    await stub.close();
  }
}

function feedFor(stub: StubProvider, options: Partial<TheOddsApiFeedOptions> & Pick<TheOddsApiFeedOptions, 'sports' | 'markets'>) {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const client = new ProviderClient({ baseUrl: stub.url, apiKey: STUB_API_KEY, backoffBaseMs: 10, log });
  const feed = new TheOddsApiFeed({ client, sink: new InProcessSink(opened.durable.ingest), regions: 'us', intervalMs: 1000, now: () => clock.now(), log, ...options });
  return { feed, client, lines };
}

function rowsOf(eventId: string): Record<string, unknown>[] {
  return walkAll(engine(), filterOf({ eventIds: [eventId] }), 500).map((slot) => engine().rowObject(slot, 'american') as Record<string, unknown>);
}

/** Outcomes the provider event lists, less the No side of Yes/No props (the board carries the Yes as a milestone). */
function outcomeCount(event: ProviderEventOdds, keys: readonly string[]): number {
  let n = 0;
  for (const b of event.bookmakers) for (const market of b.markets) if (keys.includes(market.key)) n += market.outcomes.filter((o) => o.name !== 'No').length;
  return n;
}

const ALL_MARKETS = ['h2h', 'spreads', 'totals', 'outrights', 'h2h_3_way', 'alternate_spreads', 'alternate_totals', 'team_totals', 'h2h_q1', 'spreads_h1', 'totals_q1', 'player_points', 'player_pass_yds', 'player_anytime_td'];

test('every featured and additional market kind reaches the board, each through the endpoint the provider serves it on', async () => {
  await withStub(async (stub) => {
    const start = NOW + 6 * 3_600_000;
    const nba = nbaGame(uid('nba'), start);
    const epl = eplGame(uid('epl'), start);
    const nfl = nflGame(uid('nfl'), start);
    const futures = nbaFutures(uid('fut'));
    stub.addSport('basketball_nba', [nba]);
    stub.addSport('soccer_epl', [epl]);
    stub.addSport('americanfootball_nfl', [nfl]);
    stub.addSport('basketball_nba_championship_winner', [futures]);
    const { feed, client } = feedFor(stub, { sports: [...stub.sports.keys()], markets: ALL_MARKETS });
    await feed.pollOnce();
    assert.deepEqual(feed.droppedMarkets(), [], 'no market refused');
    assert.ok(stub.requests.every((r) => r.status === 200), stub.requests.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.path}`).join(', '));
    // the sport endpoint was asked for featured markets only, the event endpoint for the others
    for (const r of stub.requests.filter((q) => /^\/v4\/sports\/[^/]+\/odds$/.test(q.path))) {
      for (const key of r.query.get('markets')!.split(',')) assert.ok((FEATURED_MARKETS as readonly string[]).includes(key), `${key} asked on ${r.path}`);
    }
    const eventCalls = stub.requests.filter((q) => /\/events\/[^/]+\/odds$/.test(q.path));
    for (const r of eventCalls) for (const key of r.query.get('markets')!.split(',')) assert.ok(!(FEATURED_MARKETS as readonly string[]).includes(key), `${key} asked per event`);
    assert.equal(eventCalls.length, 3, 'one event odds call per game event, none for the futures key');

    const kinds = (id: string) => new Set(rowsOf(id).map((r) => `${r.marketSubtype}/${r.period}`));
    assert.deepEqual(
      [...kinds(nba.id)].sort(),
      ['MONEYLINE/1Q', 'MONEYLINE/FULL', 'MONEYLINE_3_WAY/FULL', 'PLAYER_TOTAL_POINTS/FULL', 'SPREAD/1H', 'SPREAD/FULL', 'TEAM_TOTAL/FULL', 'TOTAL/1Q', 'TOTAL/FULL'],
    );
    assert.deepEqual([...kinds(epl.id)].sort(), ['MONEYLINE_3_WAY/FULL', 'TOTAL/FULL']);
    assert.deepEqual([...kinds(nfl.id)].sort(), ['MONEYLINE/FULL', 'PLAYER_MILESTONE_TOUCHDOWNS/FULL', 'PLAYER_TOTAL_PASSING_YARDS/FULL']);
    assert.deepEqual([...kinds(futures.id)], ['CHAMPIONSHIP_WINNER/FULL']);
    // one row per outcome, nothing lost
    assert.equal(rowsOf(nba.id).length, outcomeCount(nba, ALL_MARKETS));
    assert.equal(rowsOf(epl.id).length, outcomeCount(epl, ALL_MARKETS));
    assert.equal(rowsOf(nfl.id).length, outcomeCount(nfl, ALL_MARKETS));
    assert.equal(rowsOf(futures.id).length, outcomeCount(futures, ALL_MARKETS));
    // alternates and the 3-way draw are rows of their own, with their lines
    const nbaRows = rowsOf(nba.id);
    assert.ok(nbaRows.some((r) => r.market === 'SPREAD' && r.line === -7.5 && r.sportsbook === 'pinnacle'));
    assert.ok(nbaRows.some((r) => r.market === 'TOTAL' && r.line === 230.5 && r.side === 'OVER'));
    assert.ok(nbaRows.some((r) => r.market === 'MONEYLINE_3_WAY' && r.side === 'DRAW' && r.priceAmerican === 1400));
    assert.ok(rowsOf(epl.id).some((r) => r.side === 'DRAW' && r.priceAmerican === 240));

    // the cost rule: sport odds = markets x regions (nba, epl, nfl: 3 featured; futures: 1),
    // event odds = markets returned x regions (nba 8, nfl 2: player_points is not quoted there;
    // epl returns none of the per-event markets)
    assert.equal(client.creditsSpent, 3 + 3 + 3 + 1 + 8 + 2 + 0);
    assert.equal(stub.used, client.creditsSpent, 'the provider counted what the feed counted');
  });
});

test('a 422 on one market drops that market for that sport, said once (log, stats); every other market and sport flows', async () => {
  await withStub(async (stub) => {
    const start = NOW + 6 * 3_600_000;
    const nba = nbaGame(uid('nba'), start);
    const epl = eplGame(uid('epl'), start);
    stub.addSport('basketball_nba', [nba]);
    stub.addSport('soccer_epl', [epl]);
    // this provider features no totals on the sport endpoint, and does not know team totals
    stub.featured = new Set(['h2h', 'spreads', 'outrights']);
    stub.unknownMarkets.add('team_totals');
    const { feed, lines } = feedFor(stub, { sports: ['basketball_nba', 'soccer_epl'], markets: ['h2h', 'spreads', 'totals', 'h2h_3_way', 'team_totals'] });
    await feed.pollOnce();
    const refused = stub.requests.filter((r) => r.status === 422);
    assert.ok(refused.length >= 3, 'the combined calls and the single-market calls that found the culprits');
    assert.deepEqual(
      feed.droppedMarkets().map((d) => `${d.sport}/${d.market}/${d.endpoint}`).sort(),
      ['basketball_nba/team_totals/event', 'basketball_nba/totals/sport', 'soccer_epl/team_totals/event', 'soccer_epl/totals/sport'],
    );
    assert.match(feed.droppedMarkets().find((d) => d.market === 'totals')!.reason, /Markets not supported by this endpoint/);
    assert.equal(feed.stats.droppedMarkets, 4);
    // everything else is on the board, in this very poll
    const kinds = (id: string) => [...new Set(rowsOf(id).map((r) => `${r.marketSubtype}/${r.period}`))].sort();
    assert.deepEqual(kinds(nba.id), ['MONEYLINE/FULL', 'MONEYLINE_3_WAY/FULL', 'SPREAD/FULL']);
    assert.deepEqual(kinds(epl.id), ['MONEYLINE_3_WAY/FULL']);
    assert.equal(rowsOf(nba.id).length, outcomeCount(nba, ['h2h', 'spreads', 'h2h_3_way']));

    // later polls do not ask for the dropped markets and say nothing more about them
    const before = stub.requests.length;
    await feed.pollOnce();
    await feed.pollOnce();
    const later = stub.requests.slice(before);
    assert.ok(later.every((r) => r.status === 200), 'no 422 after the first poll');
    assert.ok(later.every((r) => !/(^|,)(totals|team_totals)(,|$)/.test(r.query.get('markets') ?? '')), 'dropped markets are not asked for');
    const said = lines.filter((l) => /dropped market/.test(l));
    assert.equal(said.length, 4, said.join('\n'));
    assert.ok(said.some((l) => /dropped market totals for basketball_nba: the provider refused it on the sport odds endpoint/.test(l)));
    assert.match(feed.progressLine(), /markets dropped 4/);
  });
});

test('a market key the mapping does not carry is never asked for: dropped at start, said once', async () => {
  await withStub(async (stub) => {
    stub.addSport('basketball_nba', [nbaGame(uid('nba'), NOW + 3_600_000)]);
    const { feed, lines } = feedFor(stub, { sports: ['basketball_nba'], markets: ['h2h', 'btts', 'h2h_lay'] });
    await feed.pollOnce();
    assert.deepEqual(feed.droppedMarkets().map((d) => `${d.sport}/${d.market}/${d.endpoint}`), ['*/btts/none', '*/h2h_lay/none']);
    assert.ok(stub.requests.every((r) => !/btts|h2h_lay/.test(r.query.get('markets') ?? '')));
    assert.equal(lines.filter((l) => /dropped market btts:/.test(l)).length, 1);
  });
});

test('two fixtures of the same teams never share rows; each keeps its own commence_time, also when the provider moves one', async () => {
  await withStub(async (stub) => {
    const first = NOW + 26 * 3_600_000 + 34 * 60_000;
    const second = NOW + 59 * 3_600_000 + 48 * 60_000;
    const reverse = NOW + 4 * 86_400_000;
    const a = eplGame(uid('epl'), first, 'Arsenal', 'Chelsea', 0);
    const b = eplGame(uid('epl'), second, 'Arsenal', 'Chelsea', 15);
    const c = eplGame(uid('epl'), reverse, 'Chelsea', 'Arsenal', 30);
    stub.addSport('soccer_epl', [a, b, c]);
    const { feed } = feedFor(stub, { sports: ['soccer_epl'], markets: ['h2h', 'totals'] });
    await feed.pollOnce();
    const minutes = (ms: number) => iso(ms).slice(0, 16);
    for (const [event, start] of [[a, first], [b, second], [c, reverse]] as const) {
      const rows = rowsOf(event.id);
      assert.equal(rows.length, outcomeCount(event, ['h2h', 'totals']), `${event.id}: its own rows`);
      assert.ok(rows.every((r) => r.eventId === event.id && r.eventStartTime === minutes(start)), `${event.id}: ${[...new Set(rows.map((r) => r.eventStartTime))].join(', ')}`);
      assert.equal(engine().event(event.id)!.startTime, start);
    }
    // prices are each fixture's own
    const homeOf = (id: string) => rowsOf(id).find((r) => r.market === 'MONEYLINE_3_WAY' && r.side === 'HOME')!.priceAmerican;
    assert.deepEqual([homeOf(a.id), homeOf(b.id), homeOf(c.id)], [120, 135, 150]);

    // the provider moves the first fixture by a day: its event follows, the other two stay
    const moved = first + 86_400_000;
    a.commence_time = iso(moved);
    a.bookmakers[0].markets[1].outcomes.push({ name: 'Over', price: 250, point: 3.5 });
    await feed.pollOnce();
    assert.equal(engine().event(a.id)!.startTime, moved);
    assert.equal(engine().event(b.id)!.startTime, second);
    const added = rowsOf(a.id).find((r) => r.line === 3.5)!;
    assert.equal(added.eventStartTime, minutes(moved), 'a new row of the moved fixture carries its new start');
    assert.equal(feed.stats.refusedChanges, 0, 'nothing refused for a start mismatch');
  });
});

test('the poll plan says what each sport and market costs an hour; a credits-per-hour budget stretches the polls to fit', async () => {
  const plan = pollPlan({
    sports: ['basketball_nba', 'soccer_epl'],
    regions: 'us,uk',
    marketsOf: (sport) => (sport === 'soccer_epl' ? { sport: ['h2h'], event: [] } : { sport: ['h2h', 'spreads'], event: ['player_points', 'alternate_spreads'] }),
    eventsOf: (sport) => (sport === 'basketball_nba' ? 5 : null),
    intervalMs: 60_000,
    eventIntervalMs: 300_000,
    creditsPerHour: 500,
    budgetPerDay: 0,
  });
  // sport odds: 60 calls an hour x 2 regions per market; event odds: 12 passes x 5 events x 2 regions per market
  assert.deepEqual(
    plan.markets.map((p) => `${p.sport} ${p.market} ${p.endpoint} ${p.creditsPerHour}`),
    ['basketball_nba h2h sport 120', 'basketball_nba spreads sport 120', 'basketball_nba player_points event 120', 'basketball_nba alternate_spreads event 120', 'soccer_epl h2h sport 120'],
  );
  assert.equal(plan.creditsPerHour, 600);
  assert.equal(plan.stretch, 600 / 500);
  const text = planLines(plan).join('\n');
  assert.match(text, /basketball_nba: 480 credits\/h \(h2h sport odds 120, spreads sport odds 120, player_points event odds 120, alternate_spreads event odds 120\)/);
  assert.match(text, /600 credits\/h at sport odds every 60 s and event odds every 300 s; budget 500 credits\/h; the budget stretches the intervals 1.2x/);

  // the feed under a budget of 30 credits an hour, in simulated time: no hour spends more
  await withStub(async (stub) => {
    stub.addSport('basketball_nba', [nbaGame(uid('nba'), NOW + 10 * 86_400_000), nbaGame(uid('nba'), NOW + 11 * 86_400_000)]);
    let fakeNow = NOW;
    const spentAt: { at: number; spent: number }[] = [];
    const { feed, client, lines } = feedFor(stub, {
      sports: ['basketball_nba'],
      markets: ['h2h', 'spreads', 'player_points'],
      intervalMs: 60_000,
      eventIntervalMs: 600_000,
      creditsPerHour: 30,
      now: () => fakeNow,
      sleep: async (ms) => {
        fakeNow += ms;
        spentAt.push({ at: fakeNow, spent: client.creditsSpent });
        if (fakeNow >= NOW + 6 * 3_600_000) feed.stop();
      },
    });
    await feed.run();
    assert.ok(client.creditsSpent > 0);
    // every window of an hour, measured at poll starts, spends at most the budget plus one poll
    for (const from of spentAt) {
      const within = spentAt.filter((s) => s.at > from.at && s.at <= from.at + 3_600_000);
      if (within.length === 0) continue;
      const spent = within[within.length - 1].spent - from.spent;
      assert.ok(spent <= 30, `${spent} credits in the hour after ${new Date(from.at).toISOString()}`);
    }
    assert.ok(client.creditsSpent >= 6 * 30 * 0.7, `the budget is used, not wasted: ${client.creditsSpent} in 6 h`);
    assert.ok(lines.some((l) => /the-odds-api plan: basketball_nba: .*player_points event odds/.test(l)), lines.join('\n'));
    const known = feed.plan();
    assert.equal(known.markets.find((p) => p.market === 'player_points')!.estimated, false, 'the event count is known after the first /events answer');
  });
});
