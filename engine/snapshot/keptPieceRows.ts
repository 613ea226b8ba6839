// The rendered bytes of the pieces a snapshot variant made, row by row, so that a
// refresh copies the rows that did not change instead of rendering them again: a
// dirty piece costs the rendering of its changed rows plus one copy per run of
// unchanged ones (and the cut rule's few array reads per row), not the rendering of
// every row in it.
//
// A row's bytes are a function of its slot's columns, its history ring (both change
// only through engine changes, which forget() the slot as they are applied), its
// event's head when it is the event's first row (an event whose head changed has all
// its rows forgotten) and whether it opens or closes its event (kept per row and
// compared). So a row still listed here renders to exactly these bytes, and a piece
// made of copies is byte for byte the piece a full render would make.
//
// Memory: the raw bytes are the pieces' own (the buffer handed to the compressor is
// the one kept here, no copy), up to `budgetBytes`; past it the pieces rendered
// longest ago are dropped (their rows are rendered in full the next time). A kept
// piece holds its buffer in pieceBuffers.ts, which reuses it once it is released.
// A piece's row table lies in that same memory, after its bytes (the caller asks
// for the room with tableBytes()), not in arrays of its own: every ArrayBuffer is
// an entry that each full collection walks in its final pause when V8 collects on
// one thread (--single-threaded-gc), and four arrays per piece (137,000 entries with
// the pieces' raw and deflated bytes, on the large board with history) made that walk
// 23-28 ms of every pause.

import type { ByteSink } from './byteSink.ts';
import { pieceBuffers } from './pieceBuffers.ts';

/** Row flags: it carries its event's opening / closing. */
export const ROW_FIRST = 1;
export const ROW_LAST = 2;

/** Int32s per row in a kept piece's table: slot, start, end, flags. */
const ROW_STRIDE = 4;
const ROW_SLOT = 0;
/** Byte offset of the row in raw (its leading comma excluded) and of its end. */
const ROW_START = 1;
const ROW_END = 2;
const ROW_FLAGS = 3;

interface PieceRows {
  readonly key: string;
  readonly raw: Buffer;
  /** ROW_STRIDE Int32s per row, in the memory after raw's bytes when it had room (tableBytes()). */
  readonly rows: Int32Array;
  readonly count: number;
}

/** The rendered rows of the snapshot pieces made last, kept so a refresh copies the unchanged ones (see above). */
export class KeptPieceRows {
  /** Per slot: the kept piece holding its bytes, and the row's index there. */
  private owner: (PieceRows | undefined)[] = [];
  private index = new Int32Array(0);
  /** Kept pieces, oldest first (a piece kept again moves to the end). */
  private readonly pieces = new Map<string, PieceRows>();
  private held = 0;
  // The rows of the piece being rendered.
  private slots = new Int32Array(1024);
  private starts = new Int32Array(1024);
  private ends = new Int32Array(1024);
  private flags = new Uint8Array(1024);
  private count = 0;
  // A run of consecutive kept rows not yet copied into the sink.
  private runPiece: PieceRows | undefined = undefined;
  private runFrom = 0;
  private runTo = 0;
  private runLast = -1;

  constructor(private readonly budgetBytes: number) {}

  get bytes(): number {
    return this.held;
  }

  /** The slot's row changed (or the slot holds another row now): its kept bytes are stale. */
  forget(slot: number): void {
    if (slot < this.owner.length) this.owner[slot] = undefined;
  }

  /** Every kept piece is let go (the variant is dropped): their buffers can be reused. */
  clear(): void {
    for (const piece of this.pieces.values()) this.release(piece); // release() deletes: a Map iterates on past it
  }

  /** A piece left the body. */
  drop(key: string): void {
    const piece = this.pieces.get(key);
    if (piece !== undefined) this.release(piece);
  }

  // ---- rendering one piece ----------------------------------------------------------

  /** A new piece starts in the (empty) sink. */
  begin(): void {
    this.count = 0;
    this.runPiece = undefined;
  }

  /** Where the next byte would land: the sink's length plus the run not yet copied. */
  position(sink: ByteSink): number {
    return this.runPiece === undefined ? sink.length : sink.length + (this.runTo - this.runFrom);
  }

  /**
   * Appends the kept bytes of the row (with `comma` before it) if they are still
   * good for these flags; returns the row's length in bytes, or -1 (render it).
   */
  copy(sink: ByteSink, slot: number, flags: number, comma: number): number {
    const piece = slot < this.owner.length ? this.owner[slot] : undefined;
    if (piece === undefined) return -1;
    const i = this.index[slot];
    const row = i * ROW_STRIDE;
    const rows = piece.rows;
    if (rows[row + ROW_FLAGS] !== flags) return -1;
    const start = rows[row + ROW_START];
    const end = rows[row + ROW_END];
    if (this.runPiece === piece && this.runLast === i - 1) {
      // The next row of the same kept piece: the comma between them is in its bytes.
      this.runTo = end;
    } else {
      this.flushRun(sink);
      if (comma >= 0) sink.byte(comma);
      this.runPiece = piece;
      this.runFrom = start;
      this.runTo = end;
    }
    this.runLast = i;
    return end - start;
  }

  /** Copies the pending run into the sink: before rendering a row, and before the piece ends. */
  flushRun(sink: ByteSink): void {
    const piece = this.runPiece;
    if (piece === undefined) return;
    this.runPiece = undefined;
    sink.bytes(piece.raw.subarray(this.runFrom, this.runTo));
  }

  /** Lists a row of the piece being rendered: its bytes are [start, end) of the piece. */
  row(slot: number, start: number, end: number, flags: number): void {
    const n = this.count;
    if (n === this.slots.length) {
      this.slots = grow(this.slots);
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
      const more = new Uint8Array(2 * n);
      more.set(this.flags);
      this.flags = more;
    }
    this.slots[n] = slot;
    this.starts[n] = start;
    this.ends[n] = end;
    this.flags[n] = flags;
    this.count = n + 1;
  }

  /**
   * Bytes to ask for after a piece's `rawLength` bytes (sharedPiece's extraBytes) so
   * that keep() writes the table of the rows listed since begin() there.
   */
  tableBytes(rawLength: number): number {
    if (this.budgetBytes <= 0) return 0;
    return tableOffset(rawLength) - rawLength + this.count * ROW_STRIDE * 4;
  }

  /** The piece is done: `raw` (its whole bytes, not to be changed from now on) is kept under `key`. */
  keep(key: string, raw: Buffer): void {
    if (this.budgetBytes <= 0) return;
    const old = this.pieces.get(key);
    if (old !== undefined) this.release(old);
    const n = this.count;
    const rows = rowTable(raw, n);
    let top = -1;
    for (let i = 0, row = 0; i < n; i++, row += ROW_STRIDE) {
      const slot = this.slots[i];
      rows[row + ROW_SLOT] = slot;
      rows[row + ROW_START] = this.starts[i];
      rows[row + ROW_END] = this.ends[i];
      rows[row + ROW_FLAGS] = this.flags[i];
      if (slot > top) top = slot;
    }
    const piece: PieceRows = { key, raw, rows, count: n };
    if (top >= this.index.length) {
      const index = new Int32Array(Math.max(1024, 2 * top + 2));
      index.set(this.index);
      this.index = index;
    }
    for (let i = 0; i < n; i++) {
      this.owner[this.slots[i]] = piece;
      this.index[this.slots[i]] = i;
    }
    this.pieces.set(key, piece);
    pieceBuffers.retain(raw); // given back when the piece is released
    this.held += raw.length;
    for (const oldest of this.pieces.values()) {
      if (this.held <= this.budgetBytes) break;
      this.release(oldest);
    }
  }

  private release(piece: PieceRows): void {
    this.pieces.delete(piece.key);
    this.held -= piece.raw.length;
    const rows = piece.rows;
    for (let row = 0; row < piece.count * ROW_STRIDE; row += ROW_STRIDE) {
      const slot = rows[row + ROW_SLOT];
      if (this.owner[slot] === piece) this.owner[slot] = undefined;
    }
    pieceBuffers.release(piece.raw);
  }
}

/** Where a piece's row table starts after its raw bytes: the next multiple of 4. */
function tableOffset(rawLength: number): number {
  return (rawLength + 3) & ~3;
}

/**
 * The table for `count` rows: in the piece's own memory after its bytes when that has
 * room (a buffer from sharedPiece() with tableBytes() asked for), else an array of its own.
 */
function rowTable(raw: Buffer, count: number): Int32Array {
  const offset = tableOffset(raw.length);
  const bytes = count * ROW_STRIDE * 4;
  if (offset - raw.length + bytes <= pieceBuffers.roomAfter(raw)) return new Int32Array(raw.buffer, offset, count * ROW_STRIDE);
  return new Int32Array(count * ROW_STRIDE);
}

function grow(array: Int32Array): Int32Array<ArrayBuffer> {
  const more = new Int32Array(2 * array.length);
  more.set(array);
  return more;
}
