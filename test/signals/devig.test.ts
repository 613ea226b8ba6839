// Devig methods against values computed independently (mpmath, 40 digits), and the
// universal properties of each method.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DEVIG_METHODS, devig, devigInto, devigMethodCode, type DevigMethod } from '../../engine/signals/devig.ts';

const close = (actual: number[], expected: number[], tolerance = 1e-12): void => {
  assert.equal(actual.length, expected.length);
  actual.forEach((value, i) => assert.ok(Math.abs(value - expected[i]) <= tolerance, `outcome ${i}: ${value} vs ${expected[i]}`));
};

const minus110 = 1 + 100 / 110;
const minus150 = 1 + 100 / 150;
const plus130 = 2.3;

test('-110/-110: every method gives 50/50', () => {
  for (const method of DEVIG_METHODS) close(devig(method, [minus110, minus110]), [0.5, 0.5]);
});

test('-150/+130 against hand-computed values', () => {
  close(devig('multiplicative', [minus150, plus130]), [0.57983193277310924, 0.42016806722689076]);
  close(devig('additive', [minus150, plus130]), [0.58260869565217391, 0.41739130434782609]);
  close(devig('power', [minus150, plus130]), [0.58398263503635948, 0.41601736496364052]);
  // two-outcome Shin coincides with additive (closed form, z = 0.0348154187...)
  close(devig('shin', [minus150, plus130]), [0.58260869565217391, 0.41739130434782609]);
  close(devig('worst', [minus150, plus130]), [0.57983193277310924, 0.41601736496364052]);
});

test('3-way soccer market 2.10 / 3.40 / 3.60 against hand-computed values', () => {
  const prices = [2.1, 3.4, 3.6];
  close(devig('multiplicative', prices), [0.45434298440979955, 0.28062360801781737, 0.26503340757238307]);
  close(devig('additive', prices), [0.46016184251478369, 0.27808901338313103, 0.26174914410208528]);
  close(devig('power', prices), [0.46017445786048774, 0.27797996407638868, 0.26184557806312357]);
  close(devig('shin', prices), [0.45866571596133566, 0.2787376371327903, 0.26259664690587404], 1e-11);
  close(devig('worst', prices), [0.45434298440979955, 0.27797996407638868, 0.26174914410208528], 1e-11);
});

test('heavy favourite 1.05 / 12.0: the methods disagree on the longshot as expected', () => {
  close(devig('multiplicative', [1.05, 12]), [0.91954022988505747, 0.080459770114942529]);
  close(devig('additive', [1.05, 12]), [0.93452380952380952, 0.065476190476190476]);
  close(devig('power', [1.05, 12]), [0.94473255521410289, 0.055267444785897109]);
  close(devig('shin', [1.05, 12]), [0.93452380952380952, 0.065476190476190476]);
  close(devig('worst', [1.05, 12]), [0.91954022988505747, 0.055267444785897109]);
});

test('additive clamps a longshot it would push below zero and still sums to 1', () => {
  // q = 0.95 + 0.20 + 0.02: the 0.17 margin split three ways would make the 0.02 outcome negative
  const p = devig('additive', [1 / 0.95, 1 / 0.2, 1 / 0.02]);
  for (const value of p) assert.ok(value > 0 && value < 1, `${value}`);
  assert.ok(Math.abs(p.reduce((a, b) => a + b) - 1) < 1e-12);
  assert.ok(p[2] < 1e-5, 'the clamped outcome stays at the floor');
});

test('devigInto writes at offsets and leaves the rest of the buffer alone', () => {
  const prices = new Float64Array([9, 9, minus150, plus130, 9]);
  const out = new Float64Array(6).fill(-1);
  devigInto(devigMethodCode('multiplicative'), prices, 2, 2, out, 3);
  assert.deepEqual(Array.from(out.subarray(0, 3)), [-1, -1, -1]);
  close(Array.from(out.subarray(3, 5)), [0.57983193277310924, 0.42016806722689076]);
  assert.equal(out[5], -1);
  assert.equal(devigMethodCode('nope'), -1);
});

const margin = fc.double({ min: 0.001, max: 0.15, noNaN: true });
const probabilities = (n: number) =>
  fc.array(fc.double({ min: 0.02, max: 1, noNaN: true }), { minLength: n, maxLength: n })
    .map((weights) => { const total = weights.reduce((a, b) => a + b); return weights.map((w) => w / total); })
    .filter((p) => p.every((x) => x > 0.01 && x < 0.99));
const market = fc.oneof(probabilities(2), probabilities(3));
/** A book's prices: fair probabilities with an overround, spread multiplicatively; always > 1 like real prices. */
const pricedMarket = fc.tuple(market, margin)
  .filter(([fair, m]) => fair.every((p) => p * (1 + m) < 0.995))
  .map(([fair, m]) => ({ fair, prices: fair.map((p) => 1 / (p * (1 + m))) }));

test('property: outputs in (0,1); all but worst sum to 1; worst is the per-outcome minimum', () => {
  fc.assert(fc.property(pricedMarket, ({ prices }) => {
    const results = new Map<DevigMethod, number[]>();
    for (const method of DEVIG_METHODS) {
      const p = devig(method, prices);
      results.set(method, p);
      for (const value of p) assert.ok(value > 0 && value < 1, `${method}: ${value}`);
      if (method !== 'worst') assert.ok(Math.abs(p.reduce((a, b) => a + b) - 1) < 1e-9, `${method} sums to ${p.reduce((a, b) => a + b)}`);
    }
    const worst = results.get('worst')!;
    worst.forEach((value, i) => {
      const lowest = Math.min(...(['multiplicative', 'additive', 'power', 'shin'] as const).map((m2) => results.get(m2)![i]));
      assert.equal(value, lowest);
    });
    // every method removes the margin, so each fair probability is below its implied one
    for (const method of ['multiplicative', 'power'] as const) {
      results.get(method)!.forEach((p, i) => assert.ok(p < 1 / prices[i] + 1e-12));
    }
  }), { numRuns: 500 });
});

test('property: devig of a no-margin market is the identity, for every method', () => {
  fc.assert(fc.property(market, (fair) => {
    const prices = fair.map((p) => 1 / p);
    for (const method of DEVIG_METHODS) close(devig(method, prices), fair, 1e-9);
  }), { numRuns: 500 });
});

test('property: the favourite stays the favourite under every method', () => {
  fc.assert(fc.property(pricedMarket, ({ prices }) => {
    // The favourite is the shortest price; prices within a relative 1e-9 of it are a tie
    // (an ulp apart, the methods' own float error can order them either way), so such
    // markets have no favourite.
    const shortest = Math.min(...prices);
    fc.pre(prices.filter((price) => price - shortest <= shortest * 1e-9).length === 1);
    const favourite = prices.indexOf(shortest);
    for (const method of DEVIG_METHODS) {
      const p = devig(method, prices);
      assert.equal(p.indexOf(Math.max(...p)), favourite, method);
    }
  }), { numRuns: 300 });
});
