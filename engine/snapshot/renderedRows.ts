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

import type { ByteSink } from './byteSink.ts';
import { pieceBuffers } from './pieceBuffers.ts';

/** Row flags: it carries its event's opening / closing. */
export const ROW_FIRST = 1;
export const ROW_LAST = 2;

interface PieceRows {
  readonly key: string;
  readonly raw: Buffer;
  readonly slots: Int32Array;
  /** Byte offset of each row in raw (its leading comma excluded) and of its end. */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly flags: Uint8Array;
}

export class RenderedRows {
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
    if (piece.flags[i] !== flags) return -1;
    const length = piece.ends[i] - piece.starts[i];
    if (this.runPiece === piece && this.runLast === i - 1) {
      // The next row of the same kept piece: the comma between them is in its bytes.
      this.runTo = piece.ends[i];
    } else {
      this.flushRun(sink);
      if (comma >= 0) sink.byte(comma);
      this.runPiece = piece;
      this.runFrom = piece.starts[i];
      this.runTo = piece.ends[i];
    }
    this.runLast = i;
    return length;
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

  /** The piece is done: `raw` (its whole bytes, not to be changed from now on) is kept under `key`. */
  keep(key: string, raw: Buffer): void {
    if (this.budgetBytes <= 0) return;
    const old = this.pieces.get(key);
    if (old !== undefined) this.release(old);
    const n = this.count;
    const piece: PieceRows = {
      key,
      raw,
      slots: this.slots.slice(0, n),
      starts: this.starts.slice(0, n),
      ends: this.ends.slice(0, n),
      flags: this.flags.slice(0, n),
    };
    let top = -1;
    for (let i = 0; i < n; i++) if (piece.slots[i] > top) top = piece.slots[i];
    if (top >= this.index.length) {
      const index = new Int32Array(Math.max(1024, 2 * top + 2));
      index.set(this.index);
      this.index = index;
    }
    for (let i = 0; i < n; i++) {
      this.owner[piece.slots[i]] = piece;
      this.index[piece.slots[i]] = i;
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
    for (let i = 0; i < piece.slots.length; i++) {
      const slot = piece.slots[i];
      if (this.owner[slot] === piece) this.owner[slot] = undefined;
    }
    pieceBuffers.release(piece.raw);
  }
}

function grow(array: Int32Array): Int32Array<ArrayBuffer> {
  const more = new Int32Array(2 * array.length);
  more.set(array);
  return more;
}
