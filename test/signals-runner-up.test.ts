// ArbitrageBook's runner-up bound: when the best price of an outcome gets worse but
// stays strictly above every other quote, the tick settles without re-reading the
// group; when it falls to or below the runner-up, the group is re-read and the other
// book takes over. Counted through refreshGroup, checked against the brute force.
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

test('the best getting worse but staying above the runner-up settles in O(1)', () => {
  const { b, id, refreshes } = board();
  b.change(id('draftkings', 'OVER'), { priceAmerican: -108 }); // still above fanduel -115
  assert.equal(refreshes(), 0);
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
  b.change(id('draftkings', 'OVER'), { priceAmerican: -115 }); // ties the runner-up: re-read
  assert.equal(refreshes(), 1);
  b.change(id('fanduel', 'OVER'), { priceAmerican: -112 }); // overtakes the best: O(1), the old best becomes the bound
  b.change(id('draftkings', 'OVER'), { priceAmerican: -113 }); // a non-best quote: O(1)
  assert.equal(refreshes(), 1);
  b.change(id('fanduel', 'OVER'), { priceAmerican: -114 }); // the best falls below the bound (-113): re-read
  assert.equal(refreshes(), 2);
  b.change(id('fanduel', 'OVER'), { priceAmerican: -112 });
  b.change(id('draftkings', 'UNDER'), { priceAmerican: 125 }); // an arb: fanduel's over must be its leg
  const arbs = b.books.arbitrage.all();
  assert.deepEqual(arbs, bruteForceArbitrage(b.json()));
  assert.equal(arbs.length, 1);
  assert.equal(arbs[0].legs[0].oddsId, id('fanduel', 'OVER'));
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
