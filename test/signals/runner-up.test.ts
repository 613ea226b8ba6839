// ArbitrageBook's runner-up bound and SignalBooks' re-rank: when the best price of an
// outcome gets worse but stays strictly above every other quote, the tick settles in
// O(1); when it falls to or below the runner-up, that bound stands in for the best
// price until a tick could make the group arb, and only then is the outcome re-ranked
// from the members' prices (QuoteSource.usablePrice), still without a full re-read. In a group that
// arbs, a best leg that stays the best only re-prices the record; a change of legs
// re-reads (at the next read of the book: a tick defers it). Counted through
// refreshGroup and the deferred re-reads (settledReads), checked against the brute force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { oddsId } from '../../engine/model.ts';
import { bruteForceArbitrage } from '../helpers/bruteForce.ts';
import { row, SignalBoard } from '../helpers/signals-harness.ts';

function board() {
  const b = new SignalBoard();
  const refs = new Map<string, number>();
  const over = (book: string, price: number) => row({ sportsbook: book, side: 'OVER', market: 'TOTAL', line: 220.5, priceAmerican: price });
  const under = (book: string, price: number) => row({ sportsbook: book, side: 'UNDER', market: 'TOTAL', line: 220.5, priceAmerican: price });
  // caesars and betrivers quote only the under: an arb with their under is always on two
  // books and never a book's own negative margin (a flagged book is read in full)
  for (const input of [over('draftkings', -105), over('fanduel', -115), over('betmgm', -120), under('draftkings', -115), under('fanduel', -110), under('caesars', -130), under('betrivers', -140)]) refs.set(oddsId(input), b.upsert(input));
  let refreshes = 0;
  const books = b.books as unknown as { refreshGroup: (g: number, s: unknown) => void };
  const original = books.refreshGroup.bind(b.books);
  books.refreshGroup = (g, s) => { refreshes++; original(g, s); };
  const id = (book: string, side: 'OVER' | 'UNDER') => oddsId((side === 'OVER' ? over : under)(book, 0));
  // whether the over (k = 0) or under (k = 1) outcome holds only an upper bound of its best
  const unsure = (k: number) => b.books.arbitrage.isUnsure(b.books.groups.groupOf(refs.get(id('draftkings', 'OVER'))!), k);
  return { b, id, unsure, refreshes: () => refreshes + b.books.settledReads };
}

test('a worse best settles without a re-read: above the runner-up in O(1), else bounded or re-ranked from prices', () => {
  const { b, id, refreshes } = board();
  b.change(id('draftkings', 'OVER'), { priceAmerican: -108 }); // still above fanduel -115: O(1)
  b.change(id('draftkings', 'OVER'), { priceAmerican: -115 }); // ties the runner-up: bounded by it
  b.change(id('fanduel', 'OVER'), { priceAmerican: -112 }); // overtakes the best: O(1)
  b.change(id('draftkings', 'OVER'), { priceAmerican: -113 }); // a non-best quote: O(1)
  b.change(id('fanduel', 'OVER'), { priceAmerican: -114 }); // falls below draftkings: bounded by draftkings' price
  assert.equal(refreshes(), 0, 'no full re-read while the group does not arb');
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
  b.change(id('caesars', 'UNDER'), { priceAmerican: 125 }); // could arb at the bound: the over is re-ranked (draftkings), it arbs, the full path builds the legs
  const arbs = b.books.arbitrage.all();
  assert.equal(refreshes(), 1);
  assert.deepEqual(arbs, bruteForceArbitrage(b.json()));
  assert.equal(arbs.length, 1);
  assert.equal(arbs[0].legs[0].oddsId, id('draftkings', 'OVER'), 'the re-ranked best is the over leg');
  b.change(id('caesars', 'UNDER'), { priceAmerican: -115 });
  b.change(id('draftkings', 'OVER'), { priceAmerican: -125 }, 'changed'); // the batch path agrees
  b.change(id('betmgm', 'OVER'), { priceAmerican: -101 });
  b.change(id('fanduel', 'UNDER'), { priceAmerican: 102 });
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
});

test('in a listed (arbing) group a best leg that stays the best re-prices the record; a change of legs re-reads', () => {
  const { b, id, refreshes } = board();
  b.change(id('caesars', 'UNDER'), { priceAmerican: 130 });
  assert.equal(b.books.arbitrage.all().length, 1);
  let before = refreshes();
  const steps: [string, number, number][] = [
    // [odds id, new price, full re-reads it must cost]
    [id('draftkings', 'OVER'), -106, 0], // worse, still strictly above fanduel -115: same legs
    [id('caesars', 'UNDER'), 140, 1], // better: read in full (a better price could give its book a negative margin on its own)
    [id('caesars', 'UNDER'), 140, 0], // the same price again (a newer time): same legs
    [id('draftkings', 'OVER'), -115, 1], // ties the runner-up: the tie rule picks the leg
    [id('fanduel', 'OVER'), -101, 1], // overtakes the best: a new leg
    [id('fanduel', 'OVER'), -104, 0], // the new leg worse but above the rest
    [id('betrivers', 'UNDER'), 150, 1], // a new under leg
    [id('betrivers', 'UNDER'), -200, 1], // the best under leg falls below the runner-up bound
  ];
  for (const [oddsIdOf, priceAmerican, reads] of steps) {
    b.now += 1_000;
    b.change(oddsIdOf, { priceAmerican, updated: b.now });
    const arbs = b.books.arbitrage.all();
    assert.equal(refreshes() - before, reads, `${oddsIdOf} -> ${priceAmerican}`);
    before = refreshes();
    assert.deepEqual(arbs, bruteForceArbitrage(b.json()), `${oddsIdOf} -> ${priceAmerican}`);
    assert.equal(arbs.length, 1, 'the group still arbs');
  }
  // a re-priced leg that ends the arb drops the record
  b.change(id('caesars', 'UNDER'), { priceAmerican: -150, updated: b.now + 1 });
  assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
});

test('a best that falls below the runner-up far from an arb keeps only a bound; a tick that could arb resolves it exactly', () => {
  const { b, id, unsure, refreshes } = board();
  const exact = () => assert.deepEqual(b.books.arbitrage.all(), bruteForceArbitrage(b.json()));
  b.change(id('draftkings', 'OVER'), { priceAmerican: -125 }); // below fanduel -115: the over best is only bounded
  assert.ok(unsure(0), 'over: bounded, not re-ranked');
  assert.ok(!unsure(1));
  exact();
  b.change(id('betmgm', 'OVER'), { priceAmerican: -118 }); // under the bound: still unsure, nothing to do
  assert.ok(unsure(0));
  exact();
  b.change(id('fanduel', 'UNDER'), { priceAmerican: 105 }); // the under improves: 1/1.870 + 1/2.05 > 1 even at the bound
  assert.ok(unsure(0));
  exact();
  b.change(id('caesars', 'UNDER'), { priceAmerican: 130 }); // at the bound this could arb: the over is re-ranked, and it does arb
  assert.ok(!unsure(0), 'resolved');
  const arbs = b.books.arbitrage.all();
  exact();
  assert.equal(arbs.length, 1);
  assert.equal(arbs[0].legs[0].oddsId, id('fanduel', 'OVER'), 'the exact best over: fanduel -115');
  assert.equal(refreshes(), 1, 'one full read, for the legs of the new arb');
  b.change(id('caesars', 'UNDER'), { priceAmerican: -130 }); // back out of the arb
  exact(); // a read: the tick deferred the listed group's re-read to it, which unlists the group
  b.change(id('fanduel', 'OVER'), { priceAmerican: -140 }); // below the runner-up again: bounded
  assert.ok(unsure(0));
  exact();
  b.change(id('betmgm', 'OVER'), { priceAmerican: 200 }); // above the bound: certainly the best, exact again
  assert.ok(!unsure(0));
  exact();
});
