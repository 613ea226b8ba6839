// is_main: within (event, book, subtype, period, scope) where scope is
// the player for player props, the team for TEAM_TOTAL and nothing otherwise, the
// OVER/UNDER lines priced on both sides compete and only the one minimizing
// |p_over - p_under| (p = 1/decimal; ties: the lower line) stays. Everything else
// passes: other sides, DFS rows, lines with one side missing, single lines.
//
// Computed lazily per event: flags are rebuilt from the event's posting list when
// the list's version moved since the last build, so a page stays a walk with one
// flag test per row and no sort at query time beyond the touched events.

import { americanToDecimal } from './model.ts';
import { grown } from './columns.ts';
import { NONE, NO_PRICE, SIDE_OVER, SIDE_UNDER, type OddsStore } from './oddsStore.ts';
import type { Indexes } from './indexes.ts';

export class MainLines {
  /** 1 on rows that lost to a more balanced line of their group. */
  private notMain = new Uint8Array(0);
  private builtAt = new Float64Array(0);
  private scratch = new Int32Array(256);
  private scopeKey = new Int32Array(256);
  private teamTotal = -1;

  constructor(
    private readonly store: OddsStore,
    private readonly indexes: Indexes,
  ) {}

  isMain(slot: number): boolean {
    const ev = this.store.event[slot];
    const list = this.indexes.byEvent[ev];
    if (list !== undefined && (ev >= this.builtAt.length || this.builtAt[ev] !== list.version)) this.rebuild(ev);
    return this.notMain[slot] === 0;
  }

  private rebuild(ev: number): void {
    const s = this.store;
    const list = this.indexes.byEvent[ev];
    this.notMain = grown(this.notMain, s.capacity);
    this.builtAt = grown(this.builtAt, ev + 1, -1);
    this.builtAt[ev] = list.version;
    this.teamTotal = s.markets.lookup('TEAM_TOTAL');
    this.scratch = grown(this.scratch, list.length);
    this.scopeKey = grown(this.scopeKey, s.capacity);
    let count = 0;
    for (let i = 0; i < list.length; i++) {
      const slot = list.items[i];
      this.notMain[slot] = 0;
      const side = s.side[slot];
      if (side !== SIDE_OVER && side !== SIDE_UNDER) continue;
      if (s.priceAmerican[slot] === NO_PRICE || !Number.isNaN(s.dfsMultiplier[slot]) || Number.isNaN(s.line[slot])) continue;
      this.scopeKey[slot] = this.scopeOf(slot);
      this.scratch[count++] = slot;
    }
    if (count < 4) return; // two competing lines need four rows
    const candidates = this.scratch.subarray(0, count);
    candidates.sort(this.compareCandidates);
    let start = 0;
    while (start < count) {
      let end = start + 1;
      while (end < count && this.sameGroup(candidates[start], candidates[end])) end++;
      this.settleGroup(candidates, start, end);
      start = end;
    }
  }

  /** Player for player props, team (offset to stay apart) for TEAM_TOTAL, -1 otherwise. */
  private scopeOf(slot: number): number {
    const s = this.store;
    if (s.player[slot] !== NONE) return s.player[slot] * 2;
    if (s.market[slot] === this.teamTotal && s.team[slot] !== NONE) return s.team[slot] * 2 + 1;
    return -1;
  }

  private sameGroup(a: number, b: number): boolean {
    const s = this.store;
    return (
      s.book[a] === s.book[b] &&
      s.subtype[a] === s.subtype[b] &&
      s.period[a] === s.period[b] &&
      this.scopeKey[a] === this.scopeKey[b]
    );
  }

  private readonly compareCandidates = (a: number, b: number): number => {
    const s = this.store;
    return (
      s.book[a] - s.book[b] ||
      s.subtype[a] - s.subtype[b] ||
      s.period[a] - s.period[b] ||
      this.scopeKey[a] - this.scopeKey[b] ||
      s.line[a] - s.line[b] ||
      s.side[a] - s.side[b]
    );
  };

  /** Rows [start, end) of one group, by line then side (OVER before UNDER). */
  private settleGroup(rows: Int32Array, start: number, end: number): void {
    const s = this.store;
    let competitors = 0;
    let bestLine = NaN;
    let bestGap = Infinity;
    for (let i = start; i < end; ) {
      const line = s.line[rows[i]];
      let j = i;
      while (j < end && s.line[rows[j]] === line) j++;
      const gap = this.gapOf(rows, i, j);
      if (gap === gap) {
        competitors++;
        if (gap < bestGap) {
          bestGap = gap;
          bestLine = line;
        }
      }
      i = j;
    }
    if (competitors < 2) return;
    for (let i = start; i < end; ) {
      const line = s.line[rows[i]];
      let j = i;
      while (j < end && s.line[rows[j]] === line) j++;
      if (line !== bestLine && this.gapOf(rows, i, j) === this.gapOf(rows, i, j)) {
        for (let k = i; k < j; k++) this.notMain[rows[k]] = 1;
      }
      i = j;
    }
  }

  /** |p_over - p_under| for the rows [i, j) of one line, NaN unless both sides are there. */
  private gapOf(rows: Int32Array, i: number, j: number): number {
    const s = this.store;
    let over = -1;
    let under = -1;
    for (let k = i; k < j; k++) {
      const slot = rows[k];
      if (s.side[slot] === SIDE_OVER && over < 0) over = slot;
      else if (s.side[slot] === SIDE_UNDER && under < 0) under = slot;
    }
    if (over < 0 || under < 0) return NaN;
    return Math.abs(1 / americanToDecimal(s.priceAmerican[over]) - 1 / americanToDecimal(s.priceAmerican[under]));
  }
}
