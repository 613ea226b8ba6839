// The Odds API answers mapped to our rows: one hand-written provider event per market
// kind, and the rows a reader of docs/feeds.md's mapping table expects from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapEvent, marketKeyMeaning } from '../../feeds/theOddsApi/mapEvent.ts';
import { leagueOfSport } from '../../feeds/theOddsApi/mappingTables.ts';
import { parseOddsList } from '../../feeds/theOddsApi/providerTypes.ts';
import { MalformedResponse } from '../../feeds/theOddsApi/providerTypes.ts';

const NBA = leagueOfSport('basketball_nba')!;
const base = { sport_key: 'basketball_nba', commence_time: '2026-11-22T00:10:00Z', home_team: 'Boston Celtics', away_team: 'New York Knicks' };
const book = (key: string, markets: object[]) => ({ key, title: key, last_update: '2026-11-21T12:00:00Z', markets });

function rowsOf(event: object, sport = 'basketball_nba') {
  const mapping = leagueOfSport(sport)!;
  const mapped = mapEvent(parseOddsList([event])[0], mapping, sport.endsWith('_winner'));
  return { mapped, rows: mapped.rows.map(({ row, marketKey }) => ({ marketKey, ...row })) };
}

test('sport keys map to league codes, the longest prefix winning', () => {
  assert.equal(leagueOfSport('americanfootball_nfl')!.league, 'nfl');
  assert.equal(leagueOfSport('americanfootball_nfl_super_bowl_winner')!.league, 'nfl');
  assert.equal(leagueOfSport('soccer_epl')!.league, 'epl');
  assert.equal(leagueOfSport('golf_masters_tournament_winner')!.league, 'pga');
  assert.equal(leagueOfSport('cricket_ipl'), null);
  assert.equal(NBA.league, 'nba');
});

test('market keys: base market, period suffix, player props, unknown keys', () => {
  assert.deepEqual(marketKeyMeaning('spreads_h1', false, 'nba'), { market: 'SPREAD', marketSubtype: 'SPREAD', period: '1H', kind: 'game' });
  assert.deepEqual(marketKeyMeaning('totals_1st_5_innings', false, 'mlb'), { market: 'TOTAL', marketSubtype: 'TOTAL', period: '1INN_5INN', kind: 'game' });
  assert.deepEqual(marketKeyMeaning('h2h_p1', false, 'nhl'), { market: 'MONEYLINE', marketSubtype: 'MONEYLINE', period: '1P', kind: 'game' });
  assert.deepEqual(marketKeyMeaning('alternate_totals_q1', false, 'nba'), { market: 'TOTAL', marketSubtype: 'TOTAL', period: '1Q', kind: 'game' });
  assert.deepEqual(marketKeyMeaning('player_pass_yds_alternate', false, 'nfl'), { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_PASSING_YARDS', period: 'FULL', kind: 'player' });
  assert.deepEqual(marketKeyMeaning('player_anytime_td', false, 'nfl'), { market: 'PLAYER_MILESTONE', marketSubtype: 'PLAYER_MILESTONE_TOUCHDOWNS', period: 'FULL', kind: 'milestone', milestoneLine: 0.5 });
  assert.equal(marketKeyMeaning('h2h_lay', false, 'epl'), null);
  assert.equal(marketKeyMeaning('outrights', false, 'nba'), null);
});

test('h2h, spreads (and alternates), totals, team totals and a period market map to hand-written rows', () => {
  const { mapped, rows } = rowsOf({
    id: 'ev1',
    ...base,
    bookmakers: [
      book('pinnacle', [
        { key: 'h2h', outcomes: [{ name: 'Boston Celtics', price: -150 }, { name: 'New York Knicks', price: 130 }] },
        { key: 'spreads', outcomes: [{ name: 'Boston Celtics', price: -110, point: -3.5 }, { name: 'New York Knicks', price: -110, point: 3.5 }] },
        { key: 'alternate_spreads', outcomes: [{ name: 'Boston Celtics', price: 120, point: -6.5 }] },
        { key: 'totals', outcomes: [{ name: 'Over', price: -105, point: 221.5 }, { name: 'Under', price: -115, point: 221.5 }] },
        { key: 'team_totals', outcomes: [{ name: 'Over', price: -110, point: 112.5, description: 'Boston Celtics' }] },
        { key: 'spreads_h1', outcomes: [{ name: 'New York Knicks', price: 100, point: 2 }] },
      ]),
    ],
  });
  assert.deepEqual(mapped.event, {
    id: 'ev1',
    league: 'nba',
    homeTeamId: 'nba-boston-celtics',
    homeTeamName: 'Boston Celtics',
    awayTeamId: 'nba-new-york-knicks',
    awayTeamName: 'New York Knicks',
    startTime: Date.parse('2026-11-22T00:10:00Z'),
    status: 'scheduled',
    seasonYear: 2026,
    isFutures: false,
    context: { source: 'the-odds-api', sportKey: 'basketball_nba' },
  });
  assert.deepEqual(mapped.teams.map((t) => [t.id, t.abbreviation]), [['nba-boston-celtics', 'CEL'], ['nba-new-york-knicks', 'KNI']]);
  assert.deepEqual(mapped.sources, [{ id: 'pinnacle', name: 'Pinnacle', kind: 'sharp' }]);
  const start = Date.parse('2026-11-22T00:10:00Z');
  const game = { eventId: 'ev1', sportsbook: 'pinnacle', league: 'nba', suspended: false, eventStartTime: start };
  assert.deepEqual(rows, [
    { marketKey: 'h2h', id: 'ev1:pinnacle:MONEYLINE:FULL-HOME', ...game, market: 'MONEYLINE', marketSubtype: 'MONEYLINE', period: 'FULL', selection: 'Boston Celtics', side: 'HOME', teamSide: 'HOME', teamName: 'Boston Celtics', line: null, priceAmerican: -150 },
    { marketKey: 'h2h', id: 'ev1:pinnacle:MONEYLINE:FULL-AWAY', ...game, market: 'MONEYLINE', marketSubtype: 'MONEYLINE', period: 'FULL', selection: 'New York Knicks', side: 'AWAY', teamSide: 'AWAY', teamName: 'New York Knicks', line: null, priceAmerican: 130 },
    { marketKey: 'spreads', id: 'ev1:pinnacle:SPREAD:FULL-HOME-m3.5', ...game, market: 'SPREAD', marketSubtype: 'SPREAD', period: 'FULL', selection: 'Boston Celtics -3.5', side: 'HOME', teamSide: 'HOME', teamName: 'Boston Celtics', line: -3.5, priceAmerican: -110 },
    { marketKey: 'spreads', id: 'ev1:pinnacle:SPREAD:FULL-AWAY-3.5', ...game, market: 'SPREAD', marketSubtype: 'SPREAD', period: 'FULL', selection: 'New York Knicks +3.5', side: 'AWAY', teamSide: 'AWAY', teamName: 'New York Knicks', line: 3.5, priceAmerican: -110 },
    { marketKey: 'alternate_spreads', id: 'ev1:pinnacle:SPREAD:FULL-HOME-m6.5', ...game, market: 'SPREAD', marketSubtype: 'SPREAD', period: 'FULL', selection: 'Boston Celtics -6.5', side: 'HOME', teamSide: 'HOME', teamName: 'Boston Celtics', line: -6.5, priceAmerican: 120 },
    { marketKey: 'totals', id: 'ev1:pinnacle:TOTAL:FULL-OVER-221.5', ...game, market: 'TOTAL', marketSubtype: 'TOTAL', period: 'FULL', selection: 'Over 221.5', side: 'OVER', teamSide: 'NONE', teamName: 'New York Knicks @ Boston Celtics', line: 221.5, priceAmerican: -105 },
    { marketKey: 'totals', id: 'ev1:pinnacle:TOTAL:FULL-UNDER-221.5', ...game, market: 'TOTAL', marketSubtype: 'TOTAL', period: 'FULL', selection: 'Under 221.5', side: 'UNDER', teamSide: 'NONE', teamName: 'New York Knicks @ Boston Celtics', line: 221.5, priceAmerican: -115 },
    { marketKey: 'team_totals', id: 'ev1:pinnacle:TEAM_TOTAL:FULL-OVER-112.5-nba-boston-celtics', ...game, market: 'TEAM_TOTAL', marketSubtype: 'TEAM_TOTAL', period: 'FULL', selection: 'Boston Celtics Over 112.5', side: 'OVER', teamSide: 'HOME', teamName: 'Boston Celtics', line: 112.5, priceAmerican: -110 },
    { marketKey: 'spreads_h1', id: 'ev1:pinnacle:SPREAD:1H-AWAY-2', ...game, market: 'SPREAD', marketSubtype: 'SPREAD', period: '1H', selection: 'New York Knicks +2', side: 'AWAY', teamSide: 'AWAY', teamName: 'New York Knicks', line: 2, priceAmerican: 100 },
  ]);
});

test('a draw makes h2h a three-way moneyline; h2h_3_way is one too', () => {
  const outcomes = [{ name: 'Arsenal', price: 150 }, { name: 'Draw', price: 240 }, { name: 'Chelsea', price: 180 }];
  const { rows } = rowsOf(
    { id: 'ev2', sport_key: 'soccer_epl', commence_time: '2026-11-22T15:00:00Z', home_team: 'Arsenal', away_team: 'Chelsea', bookmakers: [book('williamhill_us', [{ key: 'h2h', outcomes }, { key: 'h2h_3_way', outcomes }])] },
    'soccer_epl',
  );
  assert.deepEqual(
    rows.map((r) => [r.id, r.market, r.side, r.teamSide, r.selection]),
    [
      ['ev2:caesars:MONEYLINE_3_WAY:FULL-HOME', 'MONEYLINE_3_WAY', 'HOME', 'HOME', 'Arsenal'],
      ['ev2:caesars:MONEYLINE_3_WAY:FULL-DRAW', 'MONEYLINE_3_WAY', 'DRAW', 'NONE', 'Draw'],
      ['ev2:caesars:MONEYLINE_3_WAY:FULL-AWAY', 'MONEYLINE_3_WAY', 'AWAY', 'AWAY', 'Chelsea'],
      ['ev2:caesars:MONEYLINE_3_WAY:FULL-HOME', 'MONEYLINE_3_WAY', 'HOME', 'HOME', 'Arsenal'],
      ['ev2:caesars:MONEYLINE_3_WAY:FULL-DRAW', 'MONEYLINE_3_WAY', 'DRAW', 'NONE', 'Draw'],
      ['ev2:caesars:MONEYLINE_3_WAY:FULL-AWAY', 'MONEYLINE_3_WAY', 'AWAY', 'AWAY', 'Chelsea'],
    ],
  );
});

test('player props carry the player (a new player, filed under the home team); DFS prices become multipliers; Yes milestones', () => {
  const { mapped, rows } = rowsOf({
    id: 'ev3',
    ...base,
    bookmakers: [
      book('draftkings', [{ key: 'player_points', outcomes: [{ name: 'Over', description: 'Jayson Tatum', price: -120, point: 27.5 }, { name: 'Under', description: 'Jayson Tatum', price: 100, point: 27.5 }] }]),
      book('prizepicks', [{ key: 'player_points', outcomes: [{ name: 'Over', description: 'Jayson Tatum', price: -137, point: 26.5 }] }]),
      book('newbook_xy', [{ key: 'player_points_rebounds_assists', outcomes: [{ name: 'Under', description: 'Jalen Brunson', price: -110, point: 38.5 }] }]),
    ],
  });
  assert.deepEqual(mapped.players, [
    { id: 'nba-p-jayson-tatum', name: 'Jayson Tatum', league: 'nba', teamId: 'nba-boston-celtics', position: '' },
    { id: 'nba-p-jalen-brunson', name: 'Jalen Brunson', league: 'nba', teamId: 'nba-boston-celtics', position: '' },
  ]);
  assert.deepEqual(mapped.sources, [
    { id: 'draftkings', name: 'DraftKings', kind: 'retail' },
    { id: 'prizepicks', name: 'PrizePicks', kind: 'dfs' },
    { id: 'newbook_xy', name: 'newbook_xy', kind: 'retail' },
  ]);
  const pick = (r: (typeof rows)[number]) => [r.id, r.marketSubtype, r.side, r.line, r.playerId, r.playerName, r.priceAmerican ?? null, r.dfsMultiplier ?? null, r.selection];
  assert.deepEqual(rows.map(pick), [
    ['ev3:draftkings:PLAYER_TOTAL_POINTS:FULL-OVER-27.5-nba-p-jayson-tatum', 'PLAYER_TOTAL_POINTS', 'OVER', 27.5, 'nba-p-jayson-tatum', 'Jayson Tatum', -120, null, 'Jayson Tatum Over 27.5 points'],
    ['ev3:draftkings:PLAYER_TOTAL_POINTS:FULL-UNDER-27.5-nba-p-jayson-tatum', 'PLAYER_TOTAL_POINTS', 'UNDER', 27.5, 'nba-p-jayson-tatum', 'Jayson Tatum', 100, null, 'Jayson Tatum Under 27.5 points'],
    // -137 is 1.7299 a leg: the 2-pick 3x power play (sqrt 3 a leg), a 1.0x pick
    ['ev3:prizepicks:PLAYER_TOTAL_POINTS:FULL-OVER-26.5-nba-p-jayson-tatum', 'PLAYER_TOTAL_POINTS', 'OVER', 26.5, 'nba-p-jayson-tatum', 'Jayson Tatum', null, 1, 'Jayson Tatum Over 26.5 points'],
    ['ev3:newbook_xy:PLAYER_TOTAL_PTS_REB_AST:FULL-UNDER-38.5-nba-p-jalen-brunson', 'PLAYER_TOTAL_PTS_REB_AST', 'UNDER', 38.5, 'nba-p-jalen-brunson', 'Jalen Brunson', -110, null, 'Jalen Brunson Under 38.5 pts reb ast'],
  ]);
  const td = rowsOf(
    {
      id: 'ev4',
      sport_key: 'americanfootball_nfl',
      commence_time: '2026-11-22T18:00:00Z',
      home_team: 'Buffalo Bills',
      away_team: 'Miami Dolphins',
      bookmakers: [book('fanduel', [{ key: 'player_anytime_td', outcomes: [{ name: 'Yes', description: 'James Cook', price: 110 }, { name: 'No', description: 'James Cook', price: -140 }] }])],
    },
    'americanfootball_nfl',
  );
  assert.deepEqual(td.rows.map((r) => [r.id, r.market, r.side, r.line, r.selection]), [
    ['ev4:fanduel:PLAYER_MILESTONE_TOUCHDOWNS:FULL-OVER-0.5-nfl-p-james-cook', 'PLAYER_MILESTONE', 'OVER', 0.5, 'James Cook 1+ touchdowns'],
  ]);
  assert.equal(td.mapped.skipped.get('milestone No side'), 1);
});

test('outrights become futures rows on a futures anchor', () => {
  const { mapped, rows } = rowsOf(
    {
      id: 'sb2027',
      sport_key: 'americanfootball_nfl_super_bowl_winner',
      commence_time: '2027-02-14T23:30:00Z',
      home_team: null,
      away_team: null,
      bookmakers: [book('fanduel', [{ key: 'outrights', outcomes: [{ name: 'Kansas City Chiefs', price: 450 }, { name: 'Buffalo Bills', price: 600 }] }])],
    },
    'americanfootball_nfl_super_bowl_winner',
  );
  assert.equal(mapped.event.isFutures, true);
  assert.equal(mapped.event.homeTeamId, null);
  assert.equal(mapped.event.seasonYear, 2026);
  assert.deepEqual(rows.map((r) => [r.id, r.market, r.marketSubtype, r.side, r.marketScope, r.priceAmerican]), [
    ['sb2027:fanduel:CHAMPIONSHIP_WINNER:FULL-YES-kansas-city-chiefs', 'CATEGORICAL', 'CHAMPIONSHIP_WINNER', 'YES', 'SEASON', 450],
    ['sb2027:fanduel:CHAMPIONSHIP_WINNER:FULL-YES-buffalo-bills', 'CATEGORICAL', 'CHAMPIONSHIP_WINNER', 'YES', 'SEASON', 600],
  ]);
});

test('outcomes the board would refuse are skipped with a reason; malformed answers are refused whole', () => {
  const { rows, mapped } = rowsOf({
    id: 'ev5',
    ...base,
    bookmakers: [
      book('pinnacle', [
        { key: 'h2h', outcomes: [{ name: 'Boston Celtics', price: 50 }, { name: 'Somebody Else', price: 120 }] },
        { key: 'totals', outcomes: [{ name: 'Over', price: -110, point: 221.3 }] },
        { key: 'novelty_market', outcomes: [{ name: 'Yes', price: 200 }] },
      ]),
    ],
  });
  assert.equal(rows.length, 0);
  assert.deepEqual(Object.fromEntries(mapped.skipped), {
    'price out of range': 1,
    'moneyline outcome names neither team': 1,
    'line not on a half point': 1,
    'market novelty_market': 1,
  });
  assert.deepEqual(mapped.sources, [], 'a book with no mapped row is not announced');
  assert.throws(() => parseOddsList({ message: 'oops' }), MalformedResponse);
  assert.throws(() => parseOddsList([{ id: 'x', sport_key: 's', commence_time: 'soon', bookmakers: [] }]), /commence_time/);
  assert.throws(() => parseOddsList([{ ...base, id: 'x', bookmakers: [book('a', [{ key: 'h2h', outcomes: [{ name: 'A', price: '150' }] }])] }]), /price/);
});
