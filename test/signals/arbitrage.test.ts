// Arbitrage on small hand-built markets: the math, the grouping rules (middles,
// suspensions, DFS, futures), the live book's upkeep, and historical evaluateAt.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { americanToDecimal, oddsId, type OddsInput } from '../../engine/model.ts';
import { bruteForceArbitrage } from '../helpers/bruteForce.ts';
import { evaluateAt, type QuoteAt } from '../../fixtures/harness/historicalArbitrage.ts';
import { NOW, row, SignalBoard } from '../helpers/signals-harness.ts';

const EVENT = 'nba-20261121-lal-bos';
const ML_ID = `${EVENT}:MONEYLINE:FULL:none:game`;

const near = (actual: number, expected: number, tolerance = 1e-12): void =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} vs ${expected}`);

/** Books arbitrage must agree with the brute-force reference on the same rows. */
function assertMatchesReference(board: SignalBoard): void {
  assert.deepEqual(board.books.arbitrage.all(), bruteForceArbitrage(board.json()));
}

function moneyline(board: SignalBoard, book: string, home: number, away: number, extra: Partial<OddsInput> = {}): void {
  board.upsert(row({ sportsbook: book, side: 'HOME', priceAmerican: home, ...extra }));
  board.upsert(row({ sportsbook: book, side: 'AWAY', priceAmerican: away, ...extra }));
}

test('two-way moneyline arb: best price per side across books, profit, stakes, record shape', () => {
  const board = new SignalBoard();
  moneyline(board, 'pinnacle', -110, -110);
  moneyline(board, 'draftkings', 110, -130);
  moneyline(board, 'fanduel', -140, 105);
  const records = board.books.arbitrage.all();
  assert.equal(records.length, 1);
  const arb = records[0];
  assert.equal(arb.id, ML_ID);
  assert.equal(arb.type, 'two_way');
  assert.equal(arb.eventId, EVENT);
  assert.equal(arb.league, 'nba');
  assert.equal(arb.market, 'MONEYLINE');
  assert.equal(arb.marketSubtype, 'MONEYLINE');
  assert.equal(arb.period, 'FULL');
  assert.equal(arb.line, null);
  near(arb.impliedSum, 0.9639953542392568);
  near(arb.profit, 0.03734939759036138);
  assert.deepEqual(arb.legs.map((l) => [l.side, l.sportsbook, l.priceAmerican, l.priceDecimal]), [
    ['HOME', 'draftkings', 110, 2.1],
    ['AWAY', 'fanduel', 105, 2.05],
  ]);
  near(arb.legs[0].stake, 0.49397590361445776);
  near(arb.legs[1].stake, 0.5060240963855421);
  near(arb.legs[0].stake + arb.legs[1].stake, 1);
  assert.equal(arb.legs[0].oddsId, oddsId(row({ sportsbook: 'draftkings', side: 'HOME' })));
  assert.equal(arb.legs[0].updated, new Date(NOW - 60_000).toISOString());
  assert.equal(arb.eventStartTime, '2026-11-21T15:00');
  assert.equal(arb.updated, new Date(NOW - 60_000).toISOString());
  assertMatchesReference(board);
});

test('no arb when the best prices imply 100% or more', () => {
  const board = new SignalBoard();
  moneyline(board, 'pinnacle', -110, -110);
  moneyline(board, 'draftkings', 100, -120); // 0.5 + 0.5238 > 1
  moneyline(board, 'fanduel', -105, -105);
  assert.equal(board.books.arbitrage.size, 0);
  assertMatchesReference(board);
});

test('spreads: home -3.5 and away +3.5 are one group whose line is the home line', () => {
  const board = new SignalBoard();
  const spread = (book: string, side: 'HOME' | 'AWAY', line: number, price: number) =>
    board.upsert(row({ sportsbook: book, side, market: 'SPREAD', line, priceAmerican: price }));
  spread('draftkings', 'HOME', -3.5, 105);
  spread('draftkings', 'AWAY', 3.5, -125);
  spread('fanduel', 'HOME', -3.5, -125);
  spread('fanduel', 'AWAY', 3.5, 110);
  const [arb] = board.books.arbitrage.all();
  assert.equal(arb.id, `${EVENT}:SPREAD:FULL:m3.5:game`);
  assert.equal(arb.line, -3.5);
  assert.deepEqual(arb.legs.map((l) => [l.sportsbook, l.side]), [['draftkings', 'HOME'], ['fanduel', 'AWAY']]);
  assertMatchesReference(board);
});

test('a middle (home -3.5 vs away +4.5) is never reported', () => {
  const board = new SignalBoard();
  const spread = (book: string, side: 'HOME' | 'AWAY', line: number, price: number) =>
    board.upsert(row({ sportsbook: book, side, market: 'SPREAD', line, priceAmerican: price }));
  // across lines the best prices imply 0.488 + 0.488 < 1, but no single line arbs
  spread('draftkings', 'HOME', -3.5, 105);
  spread('draftkings', 'AWAY', 3.5, -130);
  spread('fanduel', 'HOME', -4.5, -150);
  spread('fanduel', 'AWAY', 4.5, 105);
  assert.equal(board.books.arbitrage.size, 0);
  assertMatchesReference(board);
  // the same prices on one line do arb
  spread('fanduel', 'AWAY', 3.5, 105);
  assert.equal(board.books.arbitrage.all()[0]?.id, `${EVENT}:SPREAD:FULL:m3.5:game`);
  assertMatchesReference(board);
});

test('suspended quotes are excluded: the next best price takes over or the arb goes', () => {
  const board = new SignalBoard();
  moneyline(board, 'pinnacle', -110, -110);
  moneyline(board, 'draftkings', 110, -130);
  moneyline(board, 'fanduel', -140, 105);
  moneyline(board, 'betmgm', 108, -135);
  const dkHome = oddsId(row({ sportsbook: 'draftkings', side: 'HOME' }));
  board.change(dkHome, { suspended: true });
  const [arb] = board.books.arbitrage.all();
  assert.equal(arb.legs[0].sportsbook, 'betmgm');
  assertMatchesReference(board);
  board.change(oddsId(row({ sportsbook: 'betmgm', side: 'HOME' })), { suspended: true });
  assert.equal(board.books.arbitrage.size, 0);
  assertMatchesReference(board);
  board.change(dkHome, { suspended: false });
  assert.equal(board.books.arbitrage.all()[0].legs[0].sportsbook, 'draftkings');
  assertMatchesReference(board);
});

test('DFS sources never enter arbitrage, even if a DFS row carried a price', () => {
  const board = new SignalBoard();
  const prop = { market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', line: 24.5, playerId: 'nba-bos-jtatum', teamSide: 'HOME' as const };
  board.upsert(row({ sportsbook: 'pinnacle', side: 'OVER', priceAmerican: -110, ...prop }));
  board.upsert(row({ sportsbook: 'pinnacle', side: 'UNDER', priceAmerican: -110, ...prop }));
  board.upsert(row({ sportsbook: 'prizepicks', side: 'OVER', dfsMultiplier: 1, ...prop }));
  board.upsert(row({ sportsbook: 'underdog', side: 'UNDER', dfsMultiplier: 1, priceAmerican: 300, ...prop }));
  assert.equal(board.books.arbitrage.size, 0);
  assertMatchesReference(board);
});

test('futures never enter arbitrage', () => {
  const board = new SignalBoard();
  const season = { eventId: 'nba-2026-futures', marketScope: 'SEASON' as const, period: 'REG_SEASON' };
  const seasonProp = { ...season, market: 'PLAYER_TOTAL', marketSubtype: 'PLAYER_TOTAL_POINTS', line: 2000.5, playerId: 'nba-bos-jtatum', teamSide: 'HOME' as const };
  board.upsert(row({ sportsbook: 'draftkings', side: 'OVER', priceAmerican: 150, ...seasonProp }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'UNDER', priceAmerican: 150, ...seasonProp }));
  const champion = { ...season, period: 'FULL', market: 'CATEGORICAL', marketSubtype: 'CHAMPIONSHIP_WINNER', teamSide: 'NONE' as const };
  board.upsert(row({ sportsbook: 'draftkings', side: 'YES', priceAmerican: 400, selectionId: 'FULL-YES-bos', ...champion }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'YES', priceAmerican: 450, selectionId: 'FULL-YES-lal', ...champion }));
  assert.equal(board.books.groups.liveCount, 0, 'futures rows are not even grouped');
  assert.equal(board.books.arbitrage.size, 0);
  assertMatchesReference(board);
});

test('three-way soccer market: HOME/DRAW/AWAY arb, never two-way when DRAW is unavailable', () => {
  const board = new SignalBoard();
  const soccer = { eventId: 'epl-20261121-ars-che', league: 'epl', market: 'MONEYLINE_3_WAY' };
  const book = (name: string, home: number, draw: number, away: number) => {
    board.upsert(row({ sportsbook: name, side: 'HOME', priceAmerican: home, ...soccer }));
    board.upsert(row({ sportsbook: name, side: 'DRAW', priceAmerican: draw, teamSide: 'NONE', ...soccer }));
    board.upsert(row({ sportsbook: name, side: 'AWAY', priceAmerican: away, ...soccer }));
  };
  book('pinnacle', 150, 230, 180);
  book('draftkings', 190, 220, 170);
  book('fanduel', 140, 260, 175);
  book('betmgm', 145, 225, 290);
  const [arb] = board.books.arbitrage.all();
  assert.equal(arb.type, 'three_way');
  assert.equal(arb.id, 'epl-20261121-ars-che:MONEYLINE_3_WAY:FULL:none:game');
  assert.deepEqual(arb.legs.map((l) => [l.side, l.sportsbook, l.priceDecimal]), [
    ['HOME', 'draftkings', 2.9], ['DRAW', 'fanduel', 3.6], ['AWAY', 'betmgm', 3.9],
  ]);
  near(arb.impliedSum, 0.8790156203949309);
  near(arb.profit, 0.1376362112321876);
  near(arb.legs[0].stake, 0.39228834870075435);
  near(arb.legs[1].stake, 0.31601005867560766);
  near(arb.legs[2].stake, 0.2917015926236379);
  assertMatchesReference(board);
  for (const name of ['pinnacle', 'draftkings', 'fanduel', 'betmgm']) {
    board.change(oddsId(row({ sportsbook: name, side: 'DRAW', teamSide: 'NONE', ...soccer })), { suspended: true });
  }
  assert.equal(board.books.arbitrage.size, 0, 'HOME + AWAY alone must not read as a two-way arb');
  assertMatchesReference(board);
});

test('team totals of the two teams are different groups', () => {
  const board = new SignalBoard();
  const teamTotal = { market: 'TEAM_TOTAL', line: 112.5 };
  board.upsert(row({ sportsbook: 'draftkings', side: 'OVER', teamSide: 'HOME', priceAmerican: 120, ...teamTotal }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'UNDER', teamSide: 'AWAY', priceAmerican: 120, ...teamTotal }));
  assert.equal(board.books.arbitrage.size, 0);
  board.upsert(row({ sportsbook: 'fanduel', side: 'UNDER', teamSide: 'HOME', priceAmerican: 110, ...teamTotal }));
  const [arb] = board.books.arbitrage.all();
  assert.equal(arb.id, `${EVENT}:TEAM_TOTAL:FULL:112.5:HOME`);
  assert.equal(arb.line, 112.5);
  assertMatchesReference(board);
});

test('price ties go to the alphabetically first sportsbook', () => {
  const board = new SignalBoard();
  moneyline(board, 'fanduel', 110, -150);
  moneyline(board, 'betmgm', 110, -150);
  moneyline(board, 'caesars', -150, 110);
  assert.equal(board.books.arbitrage.all()[0].legs[0].sportsbook, 'betmgm');
  assertMatchesReference(board);
  // ties reached by a tick: a later book matching the best does not take the leg ...
  board.change(oddsId(row({ sportsbook: 'caesars', side: 'HOME' })), { priceAmerican: 110 });
  assert.equal(board.books.arbitrage.all()[0].legs[0].sportsbook, 'betmgm');
  // ... an earlier one does
  board.change(oddsId(row({ sportsbook: 'betmgm', side: 'HOME' })), { priceAmerican: 105 });
  board.change(oddsId(row({ sportsbook: 'betmgm', side: 'HOME' })), { priceAmerican: 110 });
  assert.equal(board.books.arbitrage.all()[0].legs[0].sportsbook, 'betmgm');
  assertMatchesReference(board);
});

test('ties on a group that does not arb yet: the alphabetically first book holds the best price', () => {
  const board = new SignalBoard();
  moneyline(board, 'fanduel', 110, -150);
  moneyline(board, 'caesars', 100, -150);
  moneyline(board, 'draftkings', -150, -150);
  // caesars ties fanduel on HOME by a tick, then a third book's AWAY improves into an arb
  board.change(oddsId(row({ sportsbook: 'caesars', side: 'HOME' })), { priceAmerican: 110 });
  board.change(oddsId(row({ sportsbook: 'draftkings', side: 'AWAY' })), { priceAmerican: 110 });
  const [arb] = board.books.arbitrage.all();
  assert.deepEqual(arb.legs.map((leg) => leg.sportsbook), ['caesars', 'draftkings']);
  assert.deepEqual(arb.flaggedBooks, []);
  assertMatchesReference(board);
});

test('one book quoting a negative margin on its own is flagged, never an arbitrage; the legs are on two books', () => {
  const board = new SignalBoard();
  moneyline(board, 'betrivers', -110, -110);
  moneyline(board, 'pinnacle', -105, -115);
  // betrivers' own two sides drift to a negative margin (-5348 would be the issue's; +150/+150 here)
  board.change(oddsId(row({ sportsbook: 'betrivers', side: 'HOME' })), { priceAmerican: 150 });
  board.change(oddsId(row({ sportsbook: 'betrivers', side: 'AWAY' })), { priceAmerican: 150 });
  const arbs = board.books.arbitrage.all();
  assert.equal(arbs.length, 1, 'the cross-book pair still arbs');
  const [arb] = arbs;
  assert.notEqual(arb.legs[0].sportsbook, arb.legs[1].sportsbook, 'never two legs on one book');
  // the best pair on two books: pinnacle HOME -105 with betrivers AWAY +150 (0.912) beats
  // betrivers HOME +150 with pinnacle AWAY -115 (0.935)
  assert.deepEqual(arb.legs.map((leg) => `${leg.sportsbook} ${leg.side} ${leg.priceAmerican}`), ['pinnacle HOME -105', 'betrivers AWAY 150']);
  assert.deepEqual(arb.flaggedBooks, [{ sportsbook: 'betrivers', impliedSum: 0.8 }]);
  assert.deepEqual(board.books.arbitrage.flaggedBooks().map((f) => `${f.sportsbook} ${f.market}`), ['betrivers MONEYLINE']);
  assert.equal(board.books.arbitrage.flaggedCounts().get('betrivers'), 1);
  assertMatchesReference(board);
  // the other book goes: one book alone never makes an arbitrage, it stays flagged
  board.remove(oddsId(row({ sportsbook: 'pinnacle', side: 'AWAY' })));
  board.remove(oddsId(row({ sportsbook: 'pinnacle', side: 'HOME' })));
  assert.equal(board.books.arbitrage.all().length, 0);
  assert.equal(board.books.arbitrage.flaggedBooks().length, 1);
  assertMatchesReference(board);
  // its margin turns positive again: the flag goes
  board.change(oddsId(row({ sportsbook: 'betrivers', side: 'AWAY' })), { priceAmerican: -200 });
  assert.equal(board.books.arbitrage.flaggedBooks().length, 0);
  assert.equal(board.books.arbitrage.flaggedCounts().size, 0);
  assertMatchesReference(board);
});

test('the live book follows changes: id stable, profit moves, removal and re-entry, version bumps', () => {
  const board = new SignalBoard();
  moneyline(board, 'draftkings', 110, -130);
  moneyline(board, 'fanduel', -140, 105);
  const arbs = board.books.arbitrage;
  const v1 = arbs.version;
  const first = arbs.all()[0];
  board.change(oddsId(row({ sportsbook: 'draftkings', side: 'HOME' })), { priceAmerican: 120 });
  assert.ok(arbs.version > v1);
  const second = arbs.all()[0];
  assert.equal(second.id, first.id);
  assert.ok(second.profit > first.profit);
  // an update that does not touch the best prices leaves the record alone
  const v2 = arbs.version;
  board.change(oddsId(row({ sportsbook: 'draftkings', side: 'AWAY' })), { priceAmerican: -135 });
  assert.equal(arbs.version, v2);
  assert.equal(arbs.all()[0], second);
  board.remove(oddsId(row({ sportsbook: 'fanduel', side: 'AWAY' })));
  assert.equal(arbs.size, 0);
  assertMatchesReference(board);
  board.upsert(row({ sportsbook: 'fanduel', side: 'AWAY', priceAmerican: 105 }));
  assert.equal(arbs.all()[0].id, first.id);
  // removing every row frees the group
  for (const r of board.rows()) board.remove(oddsId(r));
  assert.equal(arbs.size, 0);
  assert.equal(board.books.groups.liveCount, 0);
});

test('pages: serving order, filters (type, league, event, min profit) and keyset cursor', () => {
  const board = new SignalBoard();
  const events = ['nba-e1', 'nba-e2', 'nba-e3', 'nhl-e4'];
  events.forEach((eventId, i) => {
    const league = eventId.slice(0, 3);
    board.upsert(row({ eventId, league, sportsbook: 'draftkings', side: 'HOME', priceAmerican: 110 + 10 * i }));
    board.upsert(row({ eventId, league, sportsbook: 'fanduel', side: 'AWAY', priceAmerican: 105 }));
  });
  const soccer = { eventId: 'epl-e5', league: 'epl', market: 'MONEYLINE_3_WAY' };
  board.upsert(row({ sportsbook: 'draftkings', side: 'HOME', priceAmerican: 190, ...soccer }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'DRAW', priceAmerican: 260, teamSide: 'NONE', ...soccer }));
  board.upsert(row({ sportsbook: 'betmgm', side: 'AWAY', priceAmerican: 290, ...soccer }));
  const arbs = board.books.arbitrage;
  const all = arbs.all();
  assert.deepEqual(all.map((a) => a.eventId), ['epl-e5', 'nhl-e4', 'nba-e3', 'nba-e2', 'nba-e1']);
  const query = { types: null, leagues: null, eventIds: null, minProfit: 0.001 };
  assert.deepEqual(arbs.page({ ...query, types: ['two_way'] }, null, 10).items.map((a) => a.eventId), ['nhl-e4', 'nba-e3', 'nba-e2', 'nba-e1']);
  assert.deepEqual(arbs.page({ ...query, types: ['three_way'] }, null, 10).items.map((a) => a.eventId), ['epl-e5']);
  assert.deepEqual(arbs.page({ ...query, leagues: ['nba'] }, null, 10).items.map((a) => a.eventId), ['nba-e3', 'nba-e2', 'nba-e1']);
  assert.deepEqual(arbs.page({ ...query, eventIds: ['nba-e2', 'epl-e5'] }, null, 10).items.map((a) => a.eventId), ['epl-e5', 'nba-e2']);
  const minProfit = all[2].profit;
  assert.deepEqual(arbs.page({ ...query, minProfit }, null, 10).items.map((a) => a.eventId), ['epl-e5', 'nhl-e4', 'nba-e3']);
  const first = arbs.page(query, null, 2);
  assert.equal(first.hasMore, true);
  const second = arbs.page(query, first.last, 2);
  const third = arbs.page(query, second.last, 2);
  assert.deepEqual([...first.items, ...second.items, ...third.items], all);
  assert.equal(third.hasMore, false);
  assertMatchesReference(board);
});

function quoteAt(fields: Partial<QuoteAt> & Pick<QuoteAt, 'sportsbook' | 'side' | 'priceAmerican' | 'firstSeen' | 'lastSeen'>): QuoteAt {
  const input = row({ sportsbook: fields.sportsbook, side: fields.side as OddsInput['side'], priceAmerican: fields.priceAmerican });
  return {
    ...input,
    oddsId: oddsId(input),
    priceDecimal: fields.priceAmerican === null ? null : americanToDecimal(fields.priceAmerican),
    ...fields,
  };
}

test('historical evaluateAt: price in force at `to`, last seen at or after `from`', () => {
  const to = NOW;
  const quotes = [
    quoteAt({ sportsbook: 'draftkings', side: 'HOME', priceAmerican: 110, firstSeen: to - 600_000, lastSeen: to - 30_000 }),
    quoteAt({ sportsbook: 'fanduel', side: 'AWAY', priceAmerican: 105, firstSeen: to - 900_000, lastSeen: to + 60_000 }),
    quoteAt({ sportsbook: 'pinnacle', side: 'HOME', priceAmerican: -110, firstSeen: to - 900_000, lastSeen: to }),
    quoteAt({ sportsbook: 'pinnacle', side: 'AWAY', priceAmerican: -110, firstSeen: to - 900_000, lastSeen: to }),
  ];
  // a one-minute window keeps draftkings (last seen 30 s before `to`)
  const [arb] = evaluateAt(quotes, { from: to - 60_000, to });
  assert.equal(arb.id, ML_ID);
  near(arb.profit, 0.03734939759036138);
  assert.deepEqual(arb.legs.map((l) => l.sportsbook), ['draftkings', 'fanduel']);
  // fanduel was last seen after `to`: its leg time is capped at `to`
  assert.equal(arb.legs[1].updated, new Date(to).toISOString());
  assert.equal(arb.updated, new Date(to).toISOString());
  // a 10-second window drops draftkings: pinnacle's -110 cannot arb with +105
  assert.deepEqual(evaluateAt(quotes, { from: to - 10_000, to }), []);
  // a snapshot (from = to) keeps only prices seen at or after `to`
  assert.deepEqual(evaluateAt(quotes, { to }), []);
  // min_profit above the arb's profit filters it out; limit caps the list
  assert.deepEqual(evaluateAt(quotes, { from: to - 60_000, to, minProfit: 0.04 }), []);
  assert.equal(evaluateAt(quotes, { from: to - 60_000, to, limit: 0 }).length, 0);
  // a price that only came into force after `to` is not in force at `to`
  const later = quotes.map((q) => (q.sportsbook === 'draftkings' ? { ...q, firstSeen: to + 1 } : q));
  assert.deepEqual(evaluateAt(later, { from: to - 60_000, to }), []);
});

test('historical evaluateAt agrees with the live book on the same prices', () => {
  const board = new SignalBoard();
  moneyline(board, 'draftkings', 110, -130);
  moneyline(board, 'fanduel', -140, 105);
  board.upsert(row({ sportsbook: 'draftkings', side: 'OVER', market: 'TOTAL', line: 221.5, priceAmerican: 105 }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'UNDER', market: 'TOTAL', line: 221.5, priceAmerican: 102 }));
  const quotes: QuoteAt[] = board.rows().map((r) => ({
    ...r,
    oddsId: oddsId(r),
    priceDecimal: r.priceAmerican === null ? null : americanToDecimal(r.priceAmerican),
    firstSeen: r.updated,
    lastSeen: r.updated,
  }));
  const live = board.books.arbitrage.all();
  assert.equal(live.length, 2);
  assert.deepEqual(evaluateAt(quotes, { from: NOW - 3_600_000, to: NOW, minProfit: 0 }), live);
});

test('a leg refreshed at the same price gets its new time even when another leg is newer', () => {
  const board = new SignalBoard();
  board.upsert(row({ sportsbook: 'draftkings', side: 'HOME', priceAmerican: 110, updated: NOW - 10 * 60_000 }));
  board.upsert(row({ sportsbook: 'fanduel', side: 'AWAY', priceAmerican: 105, updated: NOW }));
  board.change(oddsId(row({ sportsbook: 'draftkings', side: 'HOME' })), { updated: NOW - 5 * 60_000 });
  const [arb] = board.books.arbitrage.all();
  assert.equal(arb.legs[0].updated, new Date(NOW - 5 * 60_000).toISOString());
  assert.equal(arb.updated, new Date(NOW).toISOString());
  assertMatchesReference(board);
});
