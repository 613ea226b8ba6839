// The sharp books' current quotes for the market groups that have DFS rows, in dense
// typed arrays by the group's local slot, and the fair value they imply: the mean
// over the books whose complete market is quoted, unsuspended and fresh. Per-book fair
// values under the non-default devig methods are cached until the slot's quotes change.

import { DEVIG_MULTIPLICATIVE, devigInto } from './devig.ts';
import { grown } from '../columns.ts';

const STRIDE = 3; // prices per (slot, sharp book): one per outcome

export class SharpQuotes {
  // results of the last fairAt
  readonly fair = new Float64Array(STRIDE);
  /** Bit per sharp book whose fair value was used. */
  usedMask = 0;
  /** When the oldest used quote goes stale (Infinity if none used). */
  expiresAt = Infinity;
  /** Latest update among the used quotes (0 if none). */
  newest = 0;

  /** [(local * books + book) * STRIDE + outcome]. */
  private price = new Float64Array(0);
  private updated = new Float64Array(0);
  /** Bit per outcome quoted (usable) by that book, [local * books + book]. */
  private present = new Uint8Array(0);
  /** Changes whenever a slot's quotes change: keys the per-method cache. */
  private stamp = new Int32Array(0);
  private stampCounter = 0;
  private readonly cachedFair: Float64Array[] = [];
  private readonly cachedStamp: Int32Array[] = [];
  private readonly perBook = new Float64Array(STRIDE);
  private capacity = 0;

  constructor(readonly books: number, readonly stalenessMs: number) {}

  ensure(local: number): void {
    if (local < this.capacity) return;
    let capacity = Math.max(64, this.capacity);
    while (capacity <= local) capacity *= 2;
    const cells = capacity * this.books;
    this.price = grown(this.price, cells * STRIDE, 0, 'exact');
    this.updated = grown(this.updated, cells * STRIDE, 0, 'exact');
    this.present = grown(this.present, cells, 0, 'exact');
    this.stamp = grown(this.stamp, capacity, 0, 'exact');
    this.capacity = capacity;
  }

  /** Forgets every quote of slot `local`. */
  clear(local: number): void {
    this.present.fill(0, local * this.books, (local + 1) * this.books);
    this.stamp[local] = ++this.stampCounter;
  }

  /** Reads what quote(local, book, k, ...) will write (see EdgeBook.warmQuote). */
  warm(local: number, book: number, k: number): number {
    const cell = local * this.books + book;
    return this.price[cell * STRIDE + k] + this.updated[cell * STRIDE + k] + this.present[cell] + this.stamp[local];
  }

  /** Sharp book `book` quotes outcome k of slot `local`: usable (price > 1, not suspended) or not. */
  quote(local: number, book: number, k: number, price: number, updated: number, usable: boolean): void {
    const cell = local * this.books + book;
    if (usable) {
      this.price[cell * STRIDE + k] = price;
      this.updated[cell * STRIDE + k] = updated;
      this.present[cell] |= 1 << k;
    } else {
      this.present[cell] &= ~(1 << k);
    }
    this.stamp[local] = ++this.stampCounter;
  }

  /** Slot `from`'s quotes now belong to slot `to` (dense slots after a group leaves). */
  move(from: number, to: number): void {
    const n = this.books;
    this.price.copyWithin(to * n * STRIDE, from * n * STRIDE, (from + 1) * n * STRIDE);
    this.updated.copyWithin(to * n * STRIDE, from * n * STRIDE, (from + 1) * n * STRIDE);
    this.present.copyWithin(to * n, from * n, (from + 1) * n);
    this.stamp[to] = ++this.stampCounter; // the per-method cache of `to` no longer applies
  }

  /**
   * Mean fair probability per outcome (into `fair`) over the books whose n outcomes of
   * slot `local` are all quoted and none older than the staleness window at now.
   * Returns how many books were used (0: no fair value).
   */
  fairAt(local: number, n: number, now: number, method: number): number {
    const full = (1 << n) - 1;
    const fair = this.fair;
    fair[0] = fair[1] = fair[2] = 0;
    const perBook = method === DEVIG_MULTIPLICATIVE ? null : this.cachedFor(local, n, method);
    let used = 0;
    let mask = 0;
    let expiresAt = Infinity;
    let newest = 0;
    for (let book = 0; book < this.books; book++) {
      const cell = local * this.books + book;
      if (this.present[cell] !== full) continue;
      const at = cell * STRIDE;
      let oldest = Infinity;
      let latest = 0;
      for (let k = 0; k < n; k++) {
        const t = this.updated[at + k];
        if (t < oldest) oldest = t;
        if (t > latest) latest = t;
      }
      if (now - oldest > this.stalenessMs) continue;
      if (perBook === null) {
        devigInto(DEVIG_MULTIPLICATIVE, this.price, at, n, this.perBook, 0);
        for (let k = 0; k < n; k++) fair[k] += this.perBook[k];
      } else {
        for (let k = 0; k < n; k++) fair[k] += perBook[at + k];
      }
      used++;
      mask |= 1 << book;
      if (oldest + this.stalenessMs < expiresAt) expiresAt = oldest + this.stalenessMs;
      if (latest > newest) newest = latest;
    }
    for (let k = 0; k < n; k++) fair[k] /= used;
    this.usedMask = mask;
    this.expiresAt = expiresAt;
    this.newest = newest;
    return used;
  }

  /** Per-book fair values of slot `local` under a method, computed once per change of its quotes. */
  private cachedFor(local: number, n: number, method: number): Float64Array {
    let values = this.cachedFair[method];
    let stamps = this.cachedStamp[method];
    if (values === undefined || values.length < this.price.length) {
      values = grown(values ?? new Float64Array(0), this.price.length, 0, 'exact');
      stamps = grown(stamps ?? new Int32Array(0), this.stamp.length, 0, 'exact');
      this.cachedFair[method] = values;
      this.cachedStamp[method] = stamps;
    }
    if (stamps[local] !== this.stamp[local]) {
      const full = (1 << n) - 1;
      for (let book = 0; book < this.books; book++) {
        const cell = local * this.books + book;
        if (this.present[cell] === full) devigInto(method, this.price, cell * STRIDE, n, values, cell * STRIDE);
      }
      stamps[local] = this.stamp[local];
    }
    return values;
  }
}
