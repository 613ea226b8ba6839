// Memory the write path's tick batches reuse: each batch of ticks needs a block for its
// typed arrays and one for its log record (tens of kilobytes for 1,000 ticks), and a
// fresh ArrayBuffer for each is memory outside the JavaScript heap that the collector
// counts, and answers with full collections of the whole heap (the board's pools and
// maps included) when enough of it was allocated. A few blocks, taken and given back
// as batches come and go, serve a steady stream with no new allocation at all.

/** Blocks are sized in powers of two from this up, so a block serves batches of about its size. */
const SMALLEST = 4096;

export class SpareBuffers {
  private readonly spares: ArrayBuffer[] = [];

  /** keep: blocks kept at most (about the batches in flight at once). */
  constructor(private readonly keep = 16) {}

  /** A block of at least `bytes` (a kept one, or a new one). */
  take(bytes: number): ArrayBuffer {
    const spares = this.spares;
    for (let i = spares.length - 1; i >= 0; i--) {
      const block = spares[i];
      if (block.byteLength >= bytes && block.byteLength <= bytes * 4) {
        spares[i] = spares[spares.length - 1];
        spares.pop();
        return block;
      }
    }
    let size = SMALLEST;
    while (size < bytes) size *= 2;
    return new ArrayBuffer(size);
  }

  /** Gives a block back; its taker must hold no view of it any more. */
  give(block: ArrayBuffer): void {
    if (this.spares.length < this.keep) this.spares.push(block);
  }

  get size(): number {
    return this.spares.length;
  }
}
