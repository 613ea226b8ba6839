import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { measureSignals } from '../fixtures/boardSignals.ts';
import { board } from './fixtures-helpers.ts';

describe('fixture prices support the derived signals', () => {
  it('medium: arbitrage on roughly 0.5-2% of two-way groups, DFS edges of 2%+ on some props', () => {
    const s = measureSignals(board('medium'));
    assert.ok(s.twoWayGroups > 3000, `two-way groups ${s.twoWayGroups}`);
    assert.ok(s.arbRate >= 0.005 && s.arbRate <= 0.025, `arbitrage rate ${s.arbRate}`);
    assert.ok(s.maxArbProfit < 0.06, `largest arbitrage ${s.maxArbProfit} is implausible`);
    assert.ok(s.dfsMatched > 0.9 * s.dfsRows, `DFS rows matched to sharp fair value: ${s.dfsMatched}/${s.dfsRows}`);
    assert.ok(s.edges >= 50, `edges ${s.edges}`);
    assert.ok(s.edgeRate >= 0.01 && s.edgeRate <= 0.2, `edge rate ${s.edgeRate}`);
  });

  it('small: still has a little arbitrage and some edges', () => {
    const s = measureSignals(board('small'));
    assert.ok(s.arbGroups >= 1 && s.arbRate <= 0.03, `arbitrage ${s.arbGroups}/${s.twoWayGroups}`);
    assert.ok(s.edges >= 3 && s.edgeRate <= 0.25, `edges ${s.edges}/${s.dfsMatched}`);
  });

  it('is_main picks the same (main) line at every book of a market', () => {
    for (const size of ['small', 'medium'] as const) {
      const s = measureSignals(board(size));
      assert.ok(s.mainMarkets > 100, `${size}: markets with alternates ${s.mainMarkets}`);
      assert.equal(s.mainDisagreements, 0, `${size}: markets where books' most balanced lines differ`);
    }
  });

  it('sharp books are tighter than retail books (no-vig fair value is meaningful)', () => {
    const overround = new Map<string, { sum: number; n: number }>();
    const pairs = new Map<string, number>();
    board('medium').forEachOdds((row) => {
      if (row.market !== 'MONEYLINE' || row.priceAmerican === null) return;
      const key = `${row.eventId}|${row.sportsbook}|${row.period}`;
      const q = row.priceAmerican > 0 ? 100 / (row.priceAmerican + 100) : -row.priceAmerican / (-row.priceAmerican + 100);
      const prev = pairs.get(key);
      if (prev === undefined) {
        pairs.set(key, q);
        return;
      }
      const o = overround.get(row.sportsbook) ?? { sum: 0, n: 0 };
      o.sum += prev + q - 1;
      o.n++;
      overround.set(row.sportsbook, o);
    });
    const mean = (book: string): number => overround.get(book)!.sum / overround.get(book)!.n;
    for (const book of ['pinnacle', 'circa', 'bookmaker']) assert.ok(mean(book) > 0.01 && mean(book) < 0.035, `${book} margin ${mean(book)}`);
    for (const book of ['draftkings', 'fanduel', 'betmgm', 'betrivers']) assert.ok(mean(book) > 0.035 && mean(book) < 0.09, `${book} margin ${mean(book)}`);
  });
});
