// What the arbitrage tick path reads of a market group, in one 64-byte record per
// group so that a tick touches one record (a random cache line or two on a large
// board) instead of a stride of doubles plus side arrays. Per outcome k (at most 3):
//   f64[8g + k]            best usable decimal price (0: none)
//   f64[8g + 3 + k]        upper bound of the runner-up usable price (0: none)
//   i32[16g + 12 + k]      the best quote's ref (NO_BEST; UNTRACKED: it came from a
//                          batch without refs and the fast path cannot follow it; UNSURE:
//                          not known, and the price is an upper bound of the best price)
//   i32[16g + 15]          1 while the group has a listed arbitrage record
// f64[8g + 6] and [8g + 7] are spare (the two views share one buffer).

export const NO_BEST = -1;
export const UNTRACKED = -2;
export const UNSURE = -3;
export const RUNNER_UP = 3;
export const REF = 12;
export const LISTED = 15;

export class BestPrices {
  f64: Float64Array<ArrayBuffer>;
  i32: Int32Array<ArrayBuffer>;

  constructor(capacity = 64) {
    this.f64 = new Float64Array(8 * capacity);
    this.i32 = new Int32Array(this.f64.buffer);
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
    const f64 = new Float64Array(8 * capacity);
    f64.set(this.f64);
    const from = this.capacity;
    this.f64 = f64;
    this.i32 = new Int32Array(f64.buffer);
    this.clearFrom(from);
  }

  isListed(g: number): boolean {
    return this.i32[16 * g + LISTED] === 1;
  }

  setListed(g: number, listed: boolean): void {
    this.i32[16 * g + LISTED] = listed ? 1 : 0;
  }

  private clearFrom(from: number): void {
    for (let g = from; g < this.capacity; g++) this.i32.fill(NO_BEST, 16 * g + REF, 16 * g + REF + 3);
  }
}
