// Shared memory for the raw bytes of snapshot pieces, reused instead of allocated
// per piece. A live board re-makes hundreds of pieces a second (tens of MB/s of raw
// bytes); each fresh SharedArrayBuffer is memory outside V8's heap that V8 counts as
// external memory and answers, every few tens of MB, with a round of incremental
// marking of the whole heap (the trace of the large board showed a quarter of the
// main thread's major collections started by "external memory pressure"). A piece's
// buffer is given back once nobody reads it any more and the next piece of about
// its size takes it.
//
// Holders: the rendered rows kept to copy unchanged rows from (keptPieceRows.ts) and
// a compression on a worker thread still in flight (compressionWorkers.ts). Each
// holder retain()s the buffer and release()s it when done; at zero holders the
// buffer goes back to a free list. A buffer nobody retained, or whose holders went
// away without releasing it (a variant dropped), is collected as any other: the
// holder counts are weak. The caller must not read a buffer after its release.
//
// Sizes: a buffer is a view of `length` bytes at the start of a SharedArrayBuffer
// whose size is the length rounded up to one of eight steps per power of two (at
// most 1/8, on average about 1/16, more than the bytes), so pieces of similar size
// share one free list.

/** Smallest buffer handed out (smaller pieces round up to it). */
const MIN_BYTES = 4096;
/** Size steps per power of two. */
const STEPS = 8;
/**
 * Bytes kept in the free lists at most; beyond it a released buffer is left to the
 * collector. Enough for a few seconds of re-made pieces on the large board (tens of
 * MB/s), little against the pieces kept (hundreds of MB).
 */
const MAX_FREE_BYTES = 64 * 1024 * 1024;

/** The allocation size for `length` bytes: MIN_BYTES, or `length` rounded up to a step. */
export function bufferSize(length: number): number {
  if (length <= MIN_BYTES) return MIN_BYTES;
  const octave = 2 ** Math.floor(Math.log2(length));
  const step = octave / STEPS;
  return Math.ceil(length / step) * step;
}

export class PieceBufferPool {
  /** Free SharedArrayBuffers by allocation size, most recently freed last. */
  private readonly free = new Map<number, SharedArrayBuffer[]>();
  private freeBytes = 0;
  /** Holders per retained buffer (by the Buffer handed out). */
  private readonly holders = new WeakMap<Buffer, number>();
  /** Counters: buffers made, and taken from a free list. */
  readonly stats = { allocated: 0, reused: 0 };

  /**
   * A buffer of `length` bytes (contents undefined) in shared memory, made or reused,
   * with at least `extraBytes` more after it in the same memory (`buffer.buffer`).
   */
  take(length: number, extraBytes = 0): Buffer {
    const size = bufferSize(length + extraBytes);
    const list = this.free.get(size);
    let memory: SharedArrayBuffer;
    if (list !== undefined && list.length > 0) {
      memory = list.pop()!;
      this.freeBytes -= size;
      this.stats.reused++;
    } else {
      memory = new SharedArrayBuffer(size);
      this.stats.allocated++;
    }
    return Buffer.from(memory, 0, length);
  }

  /**
   * Bytes after the buffer's own that it alone may use: the rest of the memory of a
   * buffer from take() (a SharedArrayBuffer of a size step, the buffer at its start),
   * 0 for any other buffer (one of node's pooled Buffers shares its memory with others).
   */
  roomAfter(buffer: Buffer): number {
    const memory = poolMemory(buffer);
    return memory === null ? 0 : memory.byteLength - buffer.length;
  }

  /** One more holder of a buffer from take(). */
  retain(buffer: Buffer): void {
    this.holders.set(buffer, (this.holders.get(buffer) ?? 0) + 1);
  }

  /** A holder is done with the buffer; the last one hands it back. Buffers not retained here are ignored. */
  release(buffer: Buffer): void {
    const count = this.holders.get(buffer);
    if (count === undefined) return;
    if (count > 1) {
      this.holders.set(buffer, count - 1);
      return;
    }
    this.holders.delete(buffer);
    const memory = poolMemory(buffer);
    if (memory === null) return;
    const size = memory.byteLength;
    if (this.freeBytes + size > MAX_FREE_BYTES) return;
    let list = this.free.get(size);
    if (list === undefined) this.free.set(size, (list = []));
    list.push(memory);
    this.freeBytes += size;
  }

  /** Bytes waiting in the free lists. */
  get freeListBytes(): number {
    return this.freeBytes;
  }
}

/** The memory of a buffer shaped as take() makes them (a SharedArrayBuffer of a size step, the buffer at its start), or null. */
function poolMemory(buffer: Buffer): SharedArrayBuffer | null {
  const memory = buffer.buffer;
  if (!(memory instanceof SharedArrayBuffer) || buffer.byteOffset !== 0) return null;
  const size = memory.byteLength;
  return size === bufferSize(size) && size >= buffer.length ? memory : null;
}

/** The process's pool: pieces of every variant share it (and the compression threads read its memory). */
export const pieceBuffers = new PieceBufferPool();
