// What the arbitrage tick path reads of a market group, in one 64-byte record per
// group: per outcome k (at most 3) one 16-byte chunk holding everything a tick on that
// outcome reads, and a fourth chunk for the group's flag. A 16-byte chunk never
// straddles a cache line (typed-array storage is 16-byte aligned, not necessarily
// 64), so the common tick touches exactly one line of this table.
//   f64[8g + 2k]        best usable decimal price (0: none; for UNSURE, an upper bound)
//   i32[16g + 4k + 2]   the best quote's ref (NO_BEST; UNTRACKED: it came from a batch
//                       without refs and the fast path cannot follow it; UNSURE: not
//                       known, only its price bound is)
//   f32[16g + 4k + 3]   an upper bound of the runner-up usable price (0: none), rounded
//                       up to a float32 so it stays a bound
//   i32[16g + 12]       1 while the group has a listed arbitrage record

import { grown } from '../columns.ts';

export const NO_BEST = -1;
export const UNTRACKED = -2;
export const UNSURE = -3;

const float32 = new Float32Array(1);
const float32Bits = new Uint32Array(float32.buffer);

/** The least float32 at or above x (x >= 0). */
function float32AtOrAbove(x: number): number {
  const nearest = Math.fround(x);
  if (nearest >= x) return nearest;
  float32[0] = nearest;
  float32Bits[0]++;
  return float32[0];
}

export class BestPrices {
  private f64: Float64Array<ArrayBuffer>;
  private i32: Int32Array<ArrayBuffer>;
  private f32: Float32Array<ArrayBuffer>;

  constructor(capacity = 64) {
    this.f64 = new Float64Array(8 * capacity);
    this.i32 = new Int32Array(this.f64.buffer);
    this.f32 = new Float32Array(this.f64.buffer);
    this.clearFrom(0);
  }

  get capacity(): number {
    return this.f64.length / 8;
  }

  /** Room for group g (new groups hold no best and are not listed). */
  ensure(g: number): void {
    let capacity = this.capacity;
    if (g < capacity) return;
    while (capacity <= g) capacity *= 2;
    const f64 = grown(this.f64, 8 * capacity, 0, 'exact');
    const from = this.capacity;
    this.f64 = f64;
    this.i32 = new Int32Array(f64.buffer);
    this.f32 = new Float32Array(f64.buffer);
    this.clearFrom(from);
  }

  price(g: number, k: number): number {
    return this.f64[8 * g + 2 * k];
  }

  setPrice(g: number, k: number, price: number): void {
    this.f64[8 * g + 2 * k] = price;
  }

  ref(g: number, k: number): number {
    return this.i32[16 * g + 4 * k + 2];
  }

  setRef(g: number, k: number, ref: number): void {
    this.i32[16 * g + 4 * k + 2] = ref;
  }

  /** The runner-up bound (>= the true runner-up price). */
  runnerUp(g: number, k: number): number {
    return this.f32[16 * g + 4 * k + 3];
  }

  setRunnerUp(g: number, k: number, price: number): void {
    this.f32[16 * g + 4 * k + 3] = float32AtOrAbove(price);
  }

  /** Raises the runner-up bound to at least price. */
  raiseRunnerUp(g: number, k: number, price: number): void {
    if (price > this.f32[16 * g + 4 * k + 3]) this.f32[16 * g + 4 * k + 3] = float32AtOrAbove(price);
  }

  isListed(g: number): boolean {
    return this.i32[16 * g + 12] === 1;
  }

  setListed(g: number, listed: boolean): void {
    this.i32[16 * g + 12] = listed ? 1 : 0;
  }

  private clearFrom(from: number): void {
    for (let g = from; g < this.capacity; g++) for (let k = 0; k < 3; k++) this.i32[16 * g + 4 * k + 2] = NO_BEST;
  }
}
