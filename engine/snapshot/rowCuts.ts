// Where the snapshot body is cut into pieces. The layout is a function of the board,
// so the same rows give the same pieces whether they were built in one go at start-up
// or kept up to date through hours of changes, hence the same compressed bytes: a
// process restored from the same board serves byte-identical bodies.
//
// Pieces are cut like content-defined chunks, on rows: walking the body in order, a
// piece collects rows and their WEIGHT (a row's rendered bytes, times HOT_WEIGHT when
// the row is hot). Once the piece's weight reaches half the span, each further row
// ends it with a chance proportional to its own weight (drawn from a hash of the
// row's identity), and a piece never weighs more than MAX_SPANS spans. Whether a cut
// follows a row depends only on the rows of its own piece, so a change moves only
// the cuts of the pieces it touches and those up to where the new cuts meet the old
// ones again (a few pieces at most).
//
// Why this shape: every piece starts deflate with an empty window, which costs a few
// hundred bytes per piece on this JSON (measured on the medium board at level 1:
// pieces of 32 KiB raw come out 17% larger than one stream, 128 KiB 4.5%, 256 KiB
// 2.2%). The body must stay within 10% of one stream, so the number of pieces is
// what is budgeted: cold rows sit in pieces of about `span` (128 KiB by default),
// and hot rows weigh HOT_WEIGHT times more, so a run of hot rows is cut into pieces
// HOT_WEIGHT times smaller (cheap to recompress) while a hot row alone among cold
// ones only shortens its piece. Heat cannot split the board into more pieces than
// HOT_WEIGHT times the cold layout, whatever share of rows is hot.
//
// Heat: a row is hot when its last HOT_MOVES prices were all first seen within
// HOT_SECONDS before the heat moment, the board's as-of time rounded down to a whole
// HEAT_BUCKET_SECONDS. Heat is read from the row's own history ring and the board's
// as-of time only, so it is part of the board state. It rises only when the row
// changes (which re-renders its piece anyway) and falls only when the heat moment
// moves past the row's coolsAt(): the variant keeps the hot rows it rendered by that
// moment (CoolingRows) and re-renders them then, once a bucket, not on every tick.
// The bucket is one second: rows cool about evenly over time (on the large board,
// about 120 a second), and a minute's bucket handed them back all at once: 3,016
// pieces (390 MB raw with history) re-made in one version at each minute, which held
// that version back 2.7 s on one core while a version otherwise took 20-30 ms.

import type { OddsEngine } from '../engine.ts';
import { NO_RING } from '../historyRing.ts';
import { grown } from '../columns.ts';

export const HOT_MOVES = 3;
export const HOT_SECONDS = 600;
export const HEAT_BUCKET_SECONDS = 1;
/** A hot row counts this many times its bytes. */
export const HOT_WEIGHT = 8;
/** No piece weighs more than this many spans (a run of rows that never hashes to a cut). */
const MAX_SPANS = 4;

/** The heat moment (epoch seconds) of an as-of time in epoch ms. */
export function heatMoment(asOfMs: number): number {
  const seconds = Math.floor(asOfMs / 1000);
  return seconds - (((seconds % HEAT_BUCKET_SECONDS) + HEAT_BUCKET_SECONDS) % HEAT_BUCKET_SECONDS);
}

export class RowCuts {
  /** FNV-1a of the row's identity per slot; valid while `hashed` is 1. */
  private hash = new Int32Array(0);
  private hashed = new Uint8Array(0);
  /**
   * Per slot: first-seen time (epoch seconds) of the row's HOT_MOVES-th newest price,
   * -Infinity when it has fewer, NaN when not read yet. The row is hot while that is
   * within HOT_SECONDS of the heat moment. It changes only when the row changes
   * (changed()), so a walk over a piece reads a number per row, not the row's ring.
   */
  private hotFrom = new Float64Array(0);
  /** Weight at which a piece may end. */
  private readonly half: number;
  /** Weight over `half` a piece adds, on average, before it ends. */
  private readonly extra: number;
  private readonly max: number;
  /** Heat is judged at this moment (epoch seconds); see heatMoment(). */
  moment = 0;

  /** `span`: the raw bytes a piece of cold rows averages. */
  constructor(
    private readonly engine: OddsEngine,
    span: number,
  ) {
    const whole = Math.max(2, Math.round(span));
    this.half = Math.floor(whole / 2);
    this.extra = whole - this.half;
    this.max = MAX_SPANS * whole;
  }

  /** The slot holds a new row (or a revived one): its identity hash is read again. */
  forget(slot: number): void {
    if (slot < this.hashed.length) this.hashed[slot] = 0;
  }

  /** The row in the slot changed (its ring may have a new price): its heat is read again. */
  changed(slot: number): void {
    if (slot < this.hotFrom.length) this.hotFrom[slot] = NaN;
  }

  /** The weight of a row of `bytes` rendered bytes. */
  weightOf(slot: number, bytes: number): number {
    return this.isHot(slot) ? bytes * HOT_WEIGHT : bytes;
  }

  /**
   * Whether the piece ends after row `slot` (weighing `rowWeight`), the piece weighing
   * `pieceWeight` with it.
   */
  cutsAfter(slot: number, rowWeight: number, pieceWeight: number): boolean {
    if (pieceWeight >= this.max) return true;
    if (pieceWeight < this.half) return false;
    return (this.hashOf(slot) >>> 0) % this.extra < rowWeight;
  }

  isHot(slot: number): boolean {
    return this.hotFromOf(slot) >= this.moment - HOT_SECONDS;
  }

  /** The first heat moment at which a row hot now is cold (it cools unless it moves again). */
  coolsAt(slot: number): number {
    return heatMoment((this.hotFromOf(slot) + HOT_SECONDS) * 1000) + HEAT_BUCKET_SECONDS;
  }

  private hotFromOf(slot: number): number {
    if (slot >= this.hotFrom.length) this.hotFrom = grown(this.hotFrom, slot + 1, NaN);
    const known = this.hotFrom[slot];
    if (known === known) return known; // not NaN
    const engine = this.engine;
    const handle = engine.store.ring[slot];
    let from = -Infinity;
    if (handle !== NO_RING) {
      const n = engine.rings.length(handle);
      if (n >= HOT_MOVES) from = engine.rings.fs(handle, n - HOT_MOVES);
    }
    this.hotFrom[slot] = from;
    return from;
  }

  private hashOf(slot: number): number {
    if (slot >= this.hashed.length) {
      const size = Math.max(1024, 2 * slot + 2);
      const hash = new Int32Array(size);
      hash.set(this.hash);
      const hashed = new Uint8Array(size);
      hashed.set(this.hashed);
      this.hash = hash;
      this.hashed = hashed;
    }
    if (this.hashed[slot] === 1) return this.hash[slot];
    const s = this.engine.store;
    let h = 0x811c9dc5;
    h = fnv(h, s.events.get(s.event[slot]));
    h = fnv(h, s.books.get(s.book[slot]));
    h = fnv(h, s.subtypes.get(s.subtype[slot]));
    h = fnv(h, s.selectionIds.get(s.selectionId[slot]));
    // FNV's low bits mix poorly: finish with a multiply-xorshift so `% span` is fair.
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
    h ^= h >>> 15;
    this.hash[slot] = h;
    this.hashed[slot] = 1;
    return h;
  }
}

function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ 0x3a, 0x01000193); // a separator, so ("ab","c") and ("a","bc") differ
}
