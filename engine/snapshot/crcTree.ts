// The combined CRC-32 and length of an ordered list of pieces, kept in a segment
// tree of (crc, length) pairs. Joining is associative with (0, 0) as identity, so
// replacing one piece re-joins only its log2(n) ancestors instead of folding the
// whole board again; inserts and removes shift positions and rebuild in O(n).

import { crc32Combine } from './crc32Combine.ts';

export interface CrcSource {
  readonly crc: number;
  readonly rawLength: number;
}

export class CrcTree {
  private capacity = 1;
  private crc = new Uint32Array(2);
  private len = new Float64Array(2);

  /** Recomputes every node from the pieces, growing by doubling when needed. */
  rebuild(pieces: readonly CrcSource[]): void {
    const n = pieces.length;
    if (n > this.capacity || this.capacity > 4 * Math.max(n, 1)) this.resize(n);
    const cap = this.capacity;
    for (let i = 0; i < cap; i++) {
      const piece = i < n ? pieces[i] : undefined;
      this.crc[cap + i] = piece === undefined ? 0 : piece.crc;
      this.len[cap + i] = piece === undefined ? 0 : piece.rawLength;
    }
    for (let node = cap - 1; node >= 1; node--) this.join(node);
  }

  /** Sets leaf `index` (which must be < the length given to the last rebuild). */
  update(index: number, crc: number, rawLength: number): void {
    let node = this.capacity + index;
    this.crc[node] = crc;
    this.len[node] = rawLength;
    for (node >>= 1; node >= 1; node >>= 1) this.join(node);
  }

  get totalCrc(): number {
    return this.crc[1];
  }

  get totalLength(): number {
    return this.len[1];
  }

  private join(node: number): void {
    const left = 2 * node;
    const right = left + 1;
    this.crc[node] = crc32Combine(this.crc[left], this.crc[right], this.len[right]);
    this.len[node] = this.len[left] + this.len[right];
  }

  private resize(n: number): void {
    let cap = 1;
    while (cap < n) cap *= 2;
    this.capacity = cap;
    this.crc = new Uint32Array(2 * cap);
    this.len = new Float64Array(2 * cap);
  }
}
