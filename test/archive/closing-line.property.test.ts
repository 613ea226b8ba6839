// The closing line on random histories: for any sequence of archived changes of one
// odds row (prices, suspension toggles that carry no price, upserts, removals) and any
// event start, the closing price is the price of the last change strictly before the
// start, that change neither a removal nor unpriced; the opening is the first price.
// The oracle replays the changes one by one into a plain state, with none of the
// path's carrying forward. Plus the no-vig close and CLV against their definitions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { americanToDecimal } from '../../engine/model.ts';
import { closingLines, closingPoint, clvOf, openingPoint, pricePaths, type Tick } from '../../engine/signals/tickHistory.ts';

const american = fc.oneof(fc.integer({ min: -2000, max: -100 }), fc.integer({ min: 100, max: 2000 }));
const change = fc.record({
  gap: fc.integer({ min: 0, max: 5_000 }),
  kind: fc.constantFrom('price', 'price', 'price', 'toggle', 'upsert', 'remove'),
  price: american,
  suspended: fc.boolean(),
});

function ticksOf(id: string, changes: { gap: number; kind: string; price: number; suspended: boolean }[], t0: number, seq0: number): Tick[] {
  let time = t0;
  return changes.map((c, i) => {
    time += c.gap;
    const base = { seq: seq0 + i, pos: 0, time_ms: time, odds_id: id, book: id.split(':')[1], selection_id: id.split(':')[3], line: null, dfs_multiplier: null };
    if (c.kind === 'toggle') return { ...base, kind: 'price', price_american: null, suspended: c.suspended };
    if (c.kind === 'remove') return { ...base, kind: 'remove', price_american: null, suspended: null };
    if (c.kind === 'upsert') return { ...base, kind: 'upsert', price_american: c.price, suspended: c.suspended };
    return { ...base, kind: 'price', price_american: c.price, suspended: null };
  });
}

/** The oracle: the row's state replayed change by change up to (not including) `start`. */
function replayClose(ticks: readonly Tick[], start: number): number | null {
  let price: number | null = null;
  let live = false;
  for (const tick of ticks) {
    if (tick.time_ms >= start) break;
    if (tick.kind === 'remove') {
      price = null;
      live = false;
    } else if (tick.kind === 'upsert') {
      price = tick.price_american;
      live = true;
    } else {
      if (!live) {
        // a tick after a removal starts from no price (the engine refuses it; the archive never has one, but the rule still holds)
        price = null;
        live = true;
      }
      if (tick.price_american !== null) price = tick.price_american;
    }
  }
  return live ? price : null;
}

test('closing = the last price strictly before the start, on random histories', () => {
  fc.assert(
    fc.property(fc.array(change, { minLength: 0, maxLength: 40 }), fc.integer({ min: 0, max: 200_000 }), (changes, startOffset) => {
      const t0 = 1_700_000_000_000;
      const ticks = ticksOf('ev:pinnacle:MONEYLINE:FULL-HOME', changes, t0, 1);
      const path = pricePaths(ticks);
      const start = t0 + startOffset;
      const close = closingPoint(path, start);
      assert.equal(close?.priceAmerican ?? null, replayClose(ticks, start));
      if (close !== null) assert.ok(close.time < start);
      const firstPriced = ticks.find((tick) => tick.price_american !== null && tick.kind !== 'remove');
      assert.equal(openingPoint(path)?.priceAmerican ?? null, firstPriced?.price_american ?? null);
    }),
    { numRuns: 500 },
  );
});

test('no-vig close and CLV follow their definitions (multiplicative), on random two-way closes', () => {
  fc.assert(
    fc.property(american, american, american, (homePrice, awayPrice, taken) => {
      const t0 = 1_700_000_000_000;
      const ticks = [...ticksOf('ev:b:ML:FULL-HOME', [{ gap: 0, kind: 'price', price: homePrice, suspended: false }], t0, 1), ...ticksOf('ev:b:ML:FULL-AWAY', [{ gap: 1, kind: 'price', price: awayPrice, suspended: false }], t0, 2)];
      const lines = closingLines(pricePaths(ticks), t0 + 10, 'multiplicative');
      const home = lines.find((line) => line.selectionId === 'FULL-HOME')!;
      const dh = americanToDecimal(homePrice);
      const da = americanToDecimal(awayPrice);
      const p = 1 / dh / (1 / dh + 1 / da);
      assert.ok(Math.abs(home.noVigProbability! - p) < 1e-12);
      const value = clvOf(taken, home);
      const dt = americanToDecimal(taken);
      assert.ok(Math.abs(value.clv! - (dt / dh - 1)) < 1e-12);
      assert.ok(Math.abs(value.clvNoVig! - (dt * p - 1)) < 1e-12);
      assert.ok(Math.abs(value.noVigClosingDecimal! - 1 / p) < 1e-12);
    }),
    { numRuns: 300 },
  );
});
