// One market group's DFS pick'em rows, as the edge book keeps them between updates
// (so a staleness expiry or a per-request devig method can re-price them without the
// engine). Overwritten in place on every update of the group.

import { grown } from '../columns.ts';

const NONE: readonly string[] = Object.freeze([]);

export class DfsQuotes {
  count = 0;
  book = new Int32Array(8);
  /** Index in the group's outcome set, -1 when the side takes no part. */
  outcome = new Int32Array(8);
  side = new Uint8Array(8);
  line = new Float64Array(8);
  /**
   * What a tick rewrites, per pick [3 * e]: suspended (0/1), multiplier, updated; one
   * stride so a DFS tick writes one place.
   */
  tick = new Float64Array(8 * 3);
  oddsId: string[] = [];
  selection: string[] = [];
  /** Ids this group has in the multiplicative result set (usually none). */
  listed: readonly string[] = NONE;
  /** Position in the edge book's list of groups with DFS rows. */
  listPosition = -1;
  /** Quotes changed since the group was last priced (it waits in the book's dirty list). */
  dirty = false;

  constructor(readonly group: number) {}

  clear(): void {
    this.count = 0;
  }

  push(book: number, outcome: number, side: number, suspended: number, multiplier: number, line: number, updated: number, oddsId: string, selection: string): void {
    const i = this.count;
    if (i === this.book.length) this.grow(i * 2);
    this.book[i] = book;
    this.outcome[i] = outcome;
    this.side[i] = side;
    this.line[i] = line;
    this.setTick(i, suspended, multiplier, updated);
    this.oddsId[i] = oddsId;
    this.selection[i] = selection;
    this.count = i + 1;
  }

  /** Pick e's suspension (0/1), multiplier and update time. */
  setTick(e: number, suspended: number, multiplier: number, updated: number): void {
    const tick = this.tick;
    tick[3 * e] = suspended;
    tick[3 * e + 1] = multiplier;
    tick[3 * e + 2] = updated;
  }

  suspendedAt(e: number): boolean {
    return this.tick[3 * e] === 1;
  }

  multiplierAt(e: number): number {
    return this.tick[3 * e + 1];
  }

  updatedAt(e: number): number {
    return this.tick[3 * e + 2];
  }

  private grow(capacity: number): void {
    this.book = grown(this.book, capacity, 0, 'exact');
    this.outcome = grown(this.outcome, capacity, 0, 'exact');
    this.side = grown(this.side, capacity, 0, 'exact');
    this.line = grown(this.line, capacity, 0, 'exact');
    this.tick = grown(this.tick, capacity * 3, 0, 'exact');
  }
}

export const NO_LISTED = NONE;
