// Where the snapshot body is cut into pieces: between two neighbouring rows (in body
// order), decided by those two rows alone, so the layout is a function of the board
// state. The same rows give the same pieces whether they were built in one go at
// start-up or kept up to date through hours of changes, hence the same compressed
// bytes: a process restored from the same board serves byte-identical bodies, and a
// change moves only the cuts next to the rows it touched.
//
// A row's heat sets how likely a cut is next to it, so rows that move often sit in
// small pieces (cheap to recompress) and stable rows in large ones (compress well):
//   hot   its last four prices were all first seen within HOT_SECONDS
//   warm  its event is in play, or its last two prices came within WARM_SECONDS
//   cold  otherwise
// Heat is read from the row's own history ring and its event's status, both part of
// the board, and changes only when the row or its event changes, which re-renders the
// pieces around it anyway. Whether a cut falls next to a row is drawn from a hash of
// the row's identity (event id, sportsbook, subtype, selection id: strings, not the
// process's interned numbers), so the pieces average `span` rows for cold rows,
// span / (2 WARM_DIVISOR) for warm and span / (2 HOT_DIVISOR) for hot ones (a warm
// or hot row can cut on both sides). Events in play also start and end on a cut.

import type { OddsEngine } from '../engine.ts';
import { NO_RING } from '../historyRing.ts';
import { isLiveEvent } from './pieceKeys.ts';

export const HOT_SECONDS = 600;
export const WARM_SECONDS = 3600;
const WARM_DIVISOR = 4;
const HOT_DIVISOR = 16;

export const COLD = 0;
export const WARM = 1;
export const HOT = 2;

export class RowCuts {
  /** FNV-1a of the row's identity per slot; valid while `hashed` is 1. */
  private hash = new Int32Array(0);
  private hashed = new Uint8Array(0);
  private readonly cold: number;
  private readonly warm: number;
  private readonly hot: number;

  /** `span`: the average rows of a piece of cold rows. */
  constructor(
    private readonly engine: OddsEngine,
    span: number,
  ) {
    this.cold = Math.max(1, Math.round(span));
    this.warm = Math.max(1, Math.round(span / WARM_DIVISOR));
    this.hot = Math.max(1, Math.round(span / HOT_DIVISOR));
  }

  /** The slot holds a new row (or a revived one): its identity hash is read again. */
  forget(slot: number): void {
    if (slot < this.hashed.length) this.hashed[slot] = 0;
  }

  /** Whether the body is cut between row `a` and the row `b` that follows it. */
  between(a: number, b: number): boolean {
    const s = this.engine.store;
    const evA = s.event[a];
    const evB = s.event[b];
    if (evA !== evB && (isLiveEvent(this.engine, evA) || isLiveEvent(this.engine, evB))) return true;
    return this.cutsAfter(a) || this.cutsBefore(b);
  }

  heatOf(slot: number): number {
    const engine = this.engine;
    const handle = engine.store.ring[slot];
    if (handle !== NO_RING) {
      const rings = engine.rings;
      const n = rings.length(handle);
      if (n >= 4 && rings.fs(handle, n - 1) - rings.fs(handle, n - 4) <= HOT_SECONDS) return HOT;
      if (n >= 2 && rings.fs(handle, n - 1) - rings.fs(handle, n - 2) <= WARM_SECONDS) return WARM;
    }
    return isLiveEvent(engine, engine.store.event[slot]) ? WARM : COLD;
  }

  private cutsAfter(slot: number): boolean {
    return (this.hashOf(slot) >>> 0) % this.spanOf(this.heatOf(slot)) === 0;
  }

  private cutsBefore(slot: number): boolean {
    const heat = this.heatOf(slot);
    return heat !== COLD && (this.hashOf(slot) >>> 16) % this.spanOf(heat) === 0;
  }

  private spanOf(heat: number): number {
    return heat === HOT ? this.hot : heat === WARM ? this.warm : this.cold;
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
