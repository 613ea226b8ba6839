// No-vig fair probabilities from one book's quotes of a complete market (2 or 3
// outcomes, decimal prices). Every method writes into a caller's Float64Array so the
// hot path allocates nothing; `devig()` at the bottom is the allocating convenience.

export const DEVIG_METHODS = ['multiplicative', 'additive', 'power', 'shin', 'worst'] as const;
export type DevigMethod = (typeof DEVIG_METHODS)[number];

export const DEVIG_MULTIPLICATIVE = 0;
const DEVIG_ADDITIVE = 1;
const DEVIG_POWER = 2;
const DEVIG_SHIN = 3;
const DEVIG_WORST = 4;

export function devigMethodCode(name: string): number {
  return (DEVIG_METHODS as readonly string[]).indexOf(name);
}

/** Largest market the methods accept (three-way: HOME, DRAW, AWAY). */
const MAX_OUTCOMES = 3;

/** Additive can push a longshot to zero or below; it is floored here, then renormalized. */
const ADDITIVE_FLOOR = 1e-6;
const SOLVER_TOLERANCE = 1e-14;
const NEWTON_LAST_STEP = 1e-10;
const SOLVER_MAX_STEPS = 100;

const implied = new Float64Array(MAX_OUTCOMES);
const logs = new Float64Array(MAX_OUTCOMES);
const worstScratch = new Float64Array(MAX_OUTCOMES);

/**
 * Fair probabilities for the n (2..3) decimal prices at prices[offset..offset+n)
 * into out[outOffset..outOffset+n). Prices must be > 1.
 */
export function devigInto(
  method: number,
  prices: ArrayLike<number>,
  offset: number,
  n: number,
  out: Float64Array,
  outOffset: number,
): void {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const q = 1 / prices[offset + i];
    implied[i] = q;
    sum += q;
  }
  switch (method) {
    case DEVIG_MULTIPLICATIVE: multiplicative(n, sum, out, outOffset); return;
    case DEVIG_ADDITIVE: additive(n, sum, out, outOffset); return;
    case DEVIG_POWER: power(n, sum, out, outOffset); return;
    case DEVIG_SHIN: shin(n, sum, out, outOffset); return;
    case DEVIG_WORST: worst(n, sum, out, outOffset); return;
    default: throw new RangeError(`unknown devig method code ${method}`);
  }
}

function multiplicative(n: number, sum: number, out: Float64Array, o: number): void {
  for (let i = 0; i < n; i++) out[o + i] = implied[i] / sum;
}

/** p_i = q_i - (S - 1)/n: the margin is taken off every outcome equally. */
function additive(n: number, sum: number, out: Float64Array, o: number): void {
  const cut = (sum - 1) / n;
  let clamped = false;
  let total = 0;
  for (let i = 0; i < n; i++) {
    let p = implied[i] - cut;
    if (p < ADDITIVE_FLOOR) { p = ADDITIVE_FLOOR; clamped = true; }
    out[o + i] = p;
    total += p;
  }
  if (clamped) for (let i = 0; i < n; i++) out[o + i] /= total;
}

/**
 * Find k with sum q_i^k = 1, p_i = q_i^k. f(k) = sum q_i^k - 1 is convex and
 * decreasing (all q_i < 1), so Newton converges (monotonically once left of the
 * root). q^k is exp(k ln q) with the logs taken once. Convergence is quadratic: once
 * a step is below 1e-10 the next would be below double precision, so stop there.
 */
function power(n: number, sum: number, out: Float64Array, o: number): void {
  if (sum === 1) { multiplicative(n, sum, out, o); return; }
  for (let i = 0; i < n; i++) logs[i] = Math.log(implied[i]);
  let k = 1;
  for (let step = 0; step < SOLVER_MAX_STEPS; step++) {
    let f = -1;
    let slope = 0;
    for (let i = 0; i < n; i++) {
      const qk = Math.exp(k * logs[i]);
      f += qk;
      slope += qk * logs[i];
    }
    const delta = f / slope;
    let next = k - delta;
    if (next <= 0) next = k / 2; // an overshoot from the right must stay in k > 0
    const moved = Math.abs(next - k);
    k = next;
    if (moved < NEWTON_LAST_STEP * k) break;
  }
  let total = 0;
  for (let i = 0; i < n; i++) {
    const p = Math.exp(k * logs[i]);
    out[o + i] = p;
    total += p;
  }
  // absorbs the solver's last ulp so the outputs sum to 1
  for (let i = 0; i < n; i++) out[o + i] /= total;
}

/**
 * Shin (1993): insider share z solves sum p_i(z) = 1 with
 * p_i = (sqrt(z^2 + 4(1-z) q_i^2 / S) - z) / (2(1-z)).
 * Two outcomes have a closed form; three use the Jullien-Salanie fixed point.
 * Without an overround (S <= 1) z would be negative: fall back to multiplicative.
 */
function shin(n: number, sum: number, out: Float64Array, o: number): void {
  if (sum <= 1) { multiplicative(n, sum, out, o); return; }
  let z: number;
  if (n === 2) {
    const diff = implied[0] - implied[1];
    const d2 = diff * diff;
    z = ((sum - 1) * (d2 - sum)) / (sum * (d2 - 1));
  } else {
    z = 0;
    for (let step = 0; step < SOLVER_MAX_STEPS * 10; step++) {
      let roots = 0;
      for (let i = 0; i < n; i++) roots += Math.sqrt(z * z + (4 * (1 - z) * implied[i] * implied[i]) / sum);
      const next = (roots - 2) / (n - 2);
      const moved = Math.abs(next - z);
      z = next;
      if (moved < SOLVER_TOLERANCE) break;
    }
  }
  let total = 0;
  for (let i = 0; i < n; i++) {
    const q = implied[i];
    const p = (Math.sqrt(z * z + (4 * (1 - z) * q * q) / sum) - z) / (2 * (1 - z));
    out[o + i] = p;
    total += p;
  }
  for (let i = 0; i < n; i++) out[o + i] /= total;
}

/** The lowest fair probability of the four methods, per outcome (conservative; does not sum to 1). */
function worst(n: number, sum: number, out: Float64Array, o: number): void {
  // each method reads `implied`, which the others leave untouched
  multiplicative(n, sum, out, o);
  additive(n, sum, worstScratch, 0);
  lowerInto(n, out, o);
  power(n, sum, worstScratch, 0);
  lowerInto(n, out, o);
  shin(n, sum, worstScratch, 0);
  lowerInto(n, out, o);
}

function lowerInto(n: number, out: Float64Array, o: number): void {
  for (let i = 0; i < n; i++) if (worstScratch[i] < out[o + i]) out[o + i] = worstScratch[i];
}

/** Allocating form for tests, references and cold paths. */
export function devig(method: DevigMethod, decimals: readonly number[]): number[] {
  const n = decimals.length;
  if (n < 2 || n > MAX_OUTCOMES) throw new RangeError(`devig needs 2..${MAX_OUTCOMES} prices, got ${n}`);
  const out = new Float64Array(n);
  devigInto(devigMethodCode(method), decimals, 0, n, out, 0);
  return Array.from(out);
}
