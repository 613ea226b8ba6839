// No-vig fair probabilities from one book's quotes of a complete market (2 or 3
// outcomes, decimal prices). Every method writes into a caller's Float64Array so the
// hot path allocates nothing; `devig()` at the bottom is the allocating convenience.
// The methods are those of the R package `implied` (basic = multiplicative, additive,
// power, shin, wpo, or = odds_ratio, bb = balanced_book, jsd = jensen_shannon) plus
// worst (the per-outcome minimum of the first four); docs/signals.md has the formulas.

export const DEVIG_METHODS = ['multiplicative', 'additive', 'power', 'shin', 'worst', 'odds_ratio', 'wpo', 'balanced_book', 'jensen_shannon'] as const;
export type DevigMethod = (typeof DEVIG_METHODS)[number];

export const DEVIG_MULTIPLICATIVE = 0;
const DEVIG_ADDITIVE = 1;
const DEVIG_POWER = 2;
const DEVIG_SHIN = 3;
const DEVIG_WORST = 4;
const DEVIG_ODDS_RATIO = 5;
const DEVIG_WPO = 6;
const DEVIG_BALANCED_BOOK = 7;
const DEVIG_JENSEN_SHANNON = 8;

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
    case DEVIG_ODDS_RATIO: oddsRatio(n, sum, out, outOffset); return;
    case DEVIG_WPO: wpo(n, sum, prices, offset, out, outOffset); return;
    case DEVIG_BALANCED_BOOK: balancedBook(n, sum, out, outOffset); return;
    case DEVIG_JENSEN_SHANNON: jensenShannon(n, sum, out, outOffset); return;
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

/** Floors values below ADDITIVE_FLOOR and renormalizes when any was floored (additive-like methods). */
function floorAndNormalize(n: number, out: Float64Array, o: number): void {
  let clamped = false;
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (out[o + i] < ADDITIVE_FLOOR) { out[o + i] = ADDITIVE_FLOOR; clamped = true; }
    total += out[o + i];
  }
  if (clamped) for (let i = 0; i < n; i++) out[o + i] /= total;
}

/**
 * Odds ratio (Cheung 2015): the book's odds are the fair odds times one ratio c,
 * q_i / (1 - q_i) = c p_i / (1 - p_i), so p_i = q_i / (c + q_i - c q_i) with c chosen
 * so the p_i sum to 1. Two outcomes: c = sqrt(q_1 q_2 / ((1 - q_1)(1 - q_2))) (the
 * product of the two odds equations with p_2 = 1 - p_1). Three: Newton on c from 1;
 * sum p_i(c) is decreasing and convex in c, so from the left it converges monotonically.
 */
function oddsRatio(n: number, sum: number, out: Float64Array, o: number): void {
  if (sum === 1) { multiplicative(n, sum, out, o); return; }
  let c: number;
  if (n === 2) {
    c = Math.sqrt((implied[0] * implied[1]) / ((1 - implied[0]) * (1 - implied[1])));
  } else {
    c = 1;
    for (let step = 0; step < SOLVER_MAX_STEPS; step++) {
      let f = -1;
      let slope = 0;
      for (let i = 0; i < n; i++) {
        const q = implied[i];
        const d = c + q - c * q;
        f += q / d;
        slope -= (q * (1 - q)) / (d * d);
      }
      let next = c - f / slope;
      if (next <= 0) next = c / 2;
      const moved = Math.abs(next - c);
      c = next;
      if (moved < NEWTON_LAST_STEP * c) break;
    }
  }
  let total = 0;
  for (let i = 0; i < n; i++) {
    const q = implied[i];
    const p = q / (c + q - c * q);
    out[o + i] = p;
    total += p;
  }
  for (let i = 0; i < n; i++) out[o + i] /= total;
}

/**
 * Margin weights proportional to the odds (Buchdahl, "Wisdom of the Crowd"): the margin
 * M = S - 1 is spread in proportion to each price O_i, fair odds F_i = n O_i / (n - M O_i).
 * Algebraically 1/F_i = q_i - M/n, the additive method's result (as in `implied`);
 * computed here from the fair odds as the method states it, floored like additive.
 */
function wpo(n: number, sum: number, prices: ArrayLike<number>, offset: number, out: Float64Array, o: number): void {
  const m = sum - 1;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const price = prices[offset + i];
    const fairOdds = (n * price) / (n - m * price);
    const p = fairOdds > 0 ? 1 / fairOdds : 0;
    out[o + i] = p;
    total += p;
  }
  for (let i = 0; i < n; i++) out[o + i] /= total;
  floorAndNormalize(n, out, o);
}

/**
 * Balanced book (Fingleton & Waldron 1999), the variant of Shin's model in which the
 * book balances its liabilities: z = (S - 1) / (n - 1), p_i = (q_i - z) / (1 - z), which
 * sum to 1 exactly. A longshot can go below zero: floored like additive.
 */
function balancedBook(n: number, sum: number, out: Float64Array, o: number): void {
  const z = (sum - 1) / (n - 1);
  for (let i = 0; i < n; i++) out[o + i] = (implied[i] - z) / (1 - z);
  floorAndNormalize(n, out, o);
}

// Jensen-Shannon (C. D. Long; `implied` method jsd): every outcome's fair p_i sits at the
// same binary Jensen-Shannon divergence t from its implied q_i (p_i < q_i), with t such
// that the p_i sum to 1. JS(p, q) = H((p + q)/2) - (H(p) + H(q))/2 with H the binary
// entropy in nats; dJS/dp = ln(p (1 - m) / ((1 - p) m)) / 2, m = (p + q)/2, negative
// below q. (`implied` states it as the distance sqrt(t); the same p_i.)
const jsP = new Float64Array(MAX_OUTCOMES);
const jsSlope = new Float64Array(MAX_OUTCOMES);

function binaryEntropy(x: number): number {
  return x <= 0 || x >= 1 ? 0 : -(x * Math.log(x) + (1 - x) * Math.log(1 - x));
}

export function binaryJensenShannon(p: number, q: number): number {
  return binaryEntropy((p + q) / 2) - (binaryEntropy(p) + binaryEntropy(q)) / 2;
}

/** The p in (0, q] with JS(p, q) = t (0 when even p -> 0 is not that far), by Newton with a bisection bracket; its slope into jsSlope[i]. */
function jsSolveOutcome(q: number, t: number, i: number, start: number): number {
  if (t <= 0) { jsSlope[i] = 0; return q; }
  if (binaryJensenShannon(0, q) <= t) { jsSlope[i] = 0; return 0; }
  let lo = 0;
  let hi = q;
  let p = start > 0 && start < q ? start : q / 2;
  for (let step = 0; step < SOLVER_MAX_STEPS; step++) {
    const f = binaryJensenShannon(p, q) - t; // decreasing in p on (0, q)
    if (f > 0) lo = p; else hi = p;
    const m = (p + q) / 2;
    const slope = Math.log((p * (1 - m)) / ((1 - p) * m)) / 2;
    jsSlope[i] = slope;
    let next = slope < 0 ? p - f / slope : NaN;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    const moved = Math.abs(next - p);
    p = next;
    if (moved < 1e-15 || hi - lo < 1e-16) break;
  }
  const m = (p + q) / 2;
  jsSlope[i] = Math.log((p * (1 - m)) / ((1 - p) * m)) / 2;
  return p;
}

/**
 * Below this overround Jensen-Shannon answers multiplicative: the divergences are then
 * ~1e-20 and the entropy differences that measure them cancel to noise (~1e-17), which
 * would put p off by ~sqrt(1e-17); every method agrees with multiplicative there to ~1e-10.
 */
const JS_MIN_OVERROUND = 1e-10;

function jensenShannon(n: number, sum: number, out: Float64Array, o: number): void {
  if (sum - 1 <= JS_MIN_OVERROUND) { multiplicative(n, sum, out, o); return; }
  // t in [0, hi]: at t = 0 the p_i sum to S > 1; at hi the smallest q's p is 0 and the others are smaller than their q
  let lo = 0;
  let hi = Infinity;
  for (let i = 0; i < n; i++) { const h = binaryJensenShannon(0, implied[i]); if (h < hi) hi = h; }
  // Newton from a small t: dp_i/dt = 1 / slope_i
  let t = hi / 2;
  for (let i = 0; i < n; i++) jsP[i] = implied[i] / sum;
  for (let step = 0; step < SOLVER_MAX_STEPS; step++) {
    let f = -1;
    let df = 0;
    for (let i = 0; i < n; i++) {
      const p = jsSolveOutcome(implied[i], t, i, jsP[i]);
      jsP[i] = p;
      f += p;
      if (jsSlope[i] < 0) df += 1 / jsSlope[i];
    }
    if (f > 0) lo = t; else hi = t;
    let next = df < 0 ? t - f / df : NaN;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    const moved = Math.abs(next - t);
    t = next;
    if (moved <= 1e-15 * t || Math.abs(f) < 1e-15) break;
  }
  let total = 0;
  for (let i = 0; i < n; i++) {
    const p = jsSolveOutcome(implied[i], t, i, jsP[i]);
    out[o + i] = p;
    total += p;
  }
  for (let i = 0; i < n; i++) out[o + i] /= total;
}

/** Allocating form for tests, references and cold paths. */
export function devig(method: DevigMethod, decimals: readonly number[]): number[] {
  const n = decimals.length;
  if (n < 2 || n > MAX_OUTCOMES) throw new RangeError(`devig needs 2..${MAX_OUTCOMES} prices, got ${n}`);
  const out = new Float64Array(n);
  devigInto(devigMethodCode(method), decimals, 0, n, out, 0);
  return Array.from(out);
}
