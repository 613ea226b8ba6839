// ArbitrageBook's runner-up bound and SignalBooks' re-rank: when the best price of an
// outcome gets worse but stays strictly above every other quote, the tick settles in
// O(1); when it falls to or below the runner-up, that outcome is re-ranked from the
// members' prices (QuoteSource.usablePrice) without a full re-read, unless the group
// arbs (its legs change). Counted through refreshGroup, checked against the brute force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oddsId } from '../engine/model.ts';
import { bruteForceArbitrage } from '../engine/signals/bruteForce.ts';
import { row, SignalBoard } from './signals-harness.ts';

function board() {
  const b = new SignalBoard();
  const over = (book: string, price: number) => row({ sportsbook: book, side: 'OVER', market: 'TOTAL', line: 220.5, priceAmerican: price });
  const under = (book: string, price: number) => row({ sportsbook: book, side: 'UNDER', market: 'TOTAL', line: 220.5, priceAmerican: price });
  for (const input of [over('draftkings', -105), over('fanduel', -115), over('betmgm', -120), under('draftkings', -115), under('fanduel', -110)]) b.upsert(input);
  let refreshes = 0;
  const books = b.books as unknown as { refreshGroup: (g: number, s: unknown) => void };
  const original = books.refreshGroup.bind(b.books);
  books.refreshGroup = (g, s) => { refreshes++; original(g, s); };
  return { b, id: (book: string, side: 'OVER' | 'UNDER') => oddsId((side === 'OVER' ? over : under)(book, 0)), refreshes: () => refreshes };
}

test('a worse best settles without a re-read: above the runner-up in O(1), else re-ranked from prices', () => {
  const { b, id, refreshes } = board();
  b.change(id('draftkings', 'OVER'), { priceAmerican: -108 }); // still above fanduel -115: O(1)
  b.change(id('draftkings', 'OVER'), { priceAmerican: -115 }); // ties the runner-up: re-ranked from prices
  b.change(id('fanduel', 'OVER'), { priceAmerican: -112 }); // overtakes the best: O(1)
  b.change(id('draftkings', 'OVER'), { priceAmerican: -113 }); // a non-best quote: O(1)
  b.change(id('fanduel', 'OVER'), { priceAmerican: -114 }); // falls below draftkings: re-ranked, draftkings best
  assert.equal(refreshes(), 0, 'no full re-read while the group does not arb');
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
  b.change(id('draftkings', 'UNDER'), { priceAmerican: 125 }); // now it arbs: the full path builds the legs
  assert.equal(refreshes(), 1);
  const arbs = b.books.arbitrage.all();
  assert.deepEqual(arbs, bruteForceArbitrage(b.json()));
  assert.equal(arbs.length, 1);
  assert.equal(arbs[0].legs[0].oddsId, id('draftkings', 'OVER'), 'the re-ranked best is the over leg');
  b.change(id('draftkings', 'UNDER'), { priceAmerican: -115 });
  b.change(id('draftkings', 'OVER'), { priceAmerican: -125 }, 'changed'); // the batch path agrees
  b.change(id('betmgm', 'OVER'), { priceAmerican: -101 });
  b.change(id('fanduel', 'UNDER'), { priceAmerican: 102 });
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
});

test('in a listed (arbing) group a worse best always re-reads: its legs change', () => {
  const { b, id, refreshes } = board();
  b.change(id('draftkings', 'UNDER'), { priceAmerican: 130 });
  assert.equal(b.books.arbitrage.all().length, 1);
  const before = refreshes();
  b.change(id('draftkings', 'OVER'), { priceAmerican: -106 });
  assert.equal(refreshes(), before + 1);
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
});
