// Bytes kept beyond the call that made them get memory of their own.
//
// Buffer.from(string), Buffer.from(array) and Buffer.allocUnsafe(n) take a small buffer
// (under half of Buffer.poolSize) as a view into a shared pool slab, and a view kept alive
// keeps its whole slab: 8 KiB on Node 20, 64 KiB on Node 24. On Node 24 zlib's sync calls
// also return their output as such a view, so a cache that keeps one small buffer now and
// then (a price's JSON fragment, a stored block, a gzip trailer) between pieces being
// compressed keeps one 64 KiB slab per entry: on the medium board with small snapshot
// pieces that was ~1,450 slabs (95 MB) beside 17,687 pieces, and each is one more
// ArrayBuffer for every full collection to walk (test/snapshot/array-buffers.test.ts).

/** `length` bytes of unpooled, uninitialized memory. */
export function keptBytes(length: number): Buffer {
  return Buffer.allocUnsafeSlow(length);
}

/** A copy of `bytes` in memory of its own. */
export function keptCopy(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafeSlow(bytes.length);
  out.set(bytes);
  return out;
}

/** `text` encoded (UTF-8 unless told) in memory of its own. */
export function keptText(text: string, encoding: 'utf8' | 'latin1' = 'utf8'): Buffer {
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text, encoding));
  out.write(text, 0, encoding);
  return out;
}

/** Slab size of a KeptArena: small entries share one ArrayBuffer per 64 KiB. */
const ARENA_SLAB_BYTES = 64 * 1024;

/**
 * Small byte strings kept for the process's life (a cache of a price's JSON fragment),
 * packed into slabs of their own. One ArrayBuffer per entry would be thousands more
 * ArrayBuffers for every full collection to walk; views into the shared pool would keep
 * its slabs (and whatever transient bytes share them) alive. Entries are never freed: only
 * for caches bounded by their domain.
 */
export class KeptArena {
  private slab = Buffer.allocUnsafeSlow(0);
  private used = 0;

  text(text: string, encoding: 'utf8' | 'latin1' = 'utf8'): Buffer {
    const length = Buffer.byteLength(text, encoding);
    if (length > ARENA_SLAB_BYTES >>> 2) return keptText(text, encoding);
    if (this.used + length > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(ARENA_SLAB_BYTES);
      this.used = 0;
    }
    const at = this.used;
    this.slab.write(text, at, encoding);
    this.used += length;
    return this.slab.subarray(at, at + length);
  }
}
