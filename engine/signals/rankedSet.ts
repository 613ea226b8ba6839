// Records kept in serving order, (score desc, id asc), as a sorted array of refs:
// O(log n) position lookup, upsert/delete by binary search + copyWithin (results are
// a small fraction of the board), keyset pages after a (score, id) cursor, and
// filtered pages that walk the order instead of sorting per read.

import { grown } from '../columns.ts';

export interface RankCursor {
  score: number;
  id: string;
}

/** Every list is any-of; null means no filter. Entries with score < minScore are left out. */
export interface RankFilter {
  leagues: readonly string[] | null;
  eventIds: readonly string[] | null;
  tags: readonly string[] | null;
  minScore: number;
}

export const MATCH_ALL: RankFilter = Object.freeze({ leagues: null, eventIds: null, tags: null, minScore: -Infinity });

export interface RankedPage<V> {
  items: V[];
  /** Another matching entry follows the last item. */
  hasMore: boolean;
  /** Cursor of the last item (pass back as `after`), null when the page is empty. */
  last: RankCursor | null;
}

export class RankedSet<V> {
  /** Bumped on every change: cached pages over this set are valid while it holds. */
  version = 0;
  private order = new Int32Array(16);
  private count = 0;
  private scores = new Float64Array(16);
  private readonly ids: string[] = [];
  private readonly values: (V | undefined)[] = [];
  private readonly leagues: string[] = [];
  private readonly events: string[] = [];
  private readonly tags: string[] = [];
  private readonly refs = new Map<string, number>();
  private readonly freeRefs: number[] = [];

  get size(): number {
    return this.count;
  }

  get(id: string): V | undefined {
    const ref = this.refs.get(id);
    return ref === undefined ? undefined : this.values[ref];
  }

  /** Position in serving order, -1 when absent. */
  rankOf(id: string): number {
    const ref = this.refs.get(id);
    return ref === undefined ? -1 : this.lowerBound(this.scores[ref], id);
  }

  scoreAt(rank: number): number {
    return this.scores[this.order[rank]];
  }

  valueAt(rank: number): V {
    return this.values[this.order[rank]]!;
  }

  upsert(id: string, score: number, value: V, league: string, eventId: string, tag: string): void {
    if (Number.isNaN(score)) throw new RangeError(`RankedSet score is NaN for ${id}`);
    let ref = this.refs.get(id);
    if (ref === undefined) {
      ref = this.newRef(id);
      this.insertAt(this.lowerBound(score, id), ref);
    } else if (this.scores[ref] !== score) {
      this.move(this.lowerBound(this.scores[ref], id), this.lowerBound(score, id), ref);
    }
    this.scores[ref] = score;
    this.values[ref] = value;
    this.leagues[ref] = league;
    this.events[ref] = eventId;
    this.tags[ref] = tag;
    this.version++;
  }

  delete(id: string): boolean {
    const ref = this.refs.get(id);
    if (ref === undefined) return false;
    this.removeAt(this.lowerBound(this.scores[ref], id));
    this.refs.delete(id);
    this.values[ref] = undefined;
    this.freeRefs.push(ref);
    this.version++;
    return true;
  }

  /** First rank strictly after the cursor (0 for null); the cursor's entry need not exist. */
  rankAfter(after: RankCursor | null): number {
    if (after === null) return 0;
    const at = this.lowerBound(after.score, after.id);
    if (at < this.count && this.scores[this.order[at]] === after.score && this.ids[this.order[at]] === after.id) return at + 1;
    return at;
  }

  /** Up to `limit` matching values after the cursor, in serving order. */
  page(filter: RankFilter, after: RankCursor | null, limit: number): RankedPage<V> {
    const items: V[] = [];
    let lastRef = -1;
    let hasMore = false;
    for (let rank = this.rankAfter(after); rank < this.count; rank++) {
      const ref = this.order[rank];
      if (this.scores[ref] < filter.minScore) break;
      if (!this.matches(ref, filter)) continue;
      if (items.length === limit) { hasMore = true; break; }
      items.push(this.values[ref]!);
      lastRef = ref;
    }
    const last = lastRef < 0 ? null : { score: this.scores[lastRef], id: this.ids[lastRef] };
    return { items, hasMore, last };
  }

  /** Ids in serving order (tests and debugging). */
  idsInOrder(): string[] {
    const out: string[] = new Array(this.count);
    for (let rank = 0; rank < this.count; rank++) out[rank] = this.ids[this.order[rank]];
    return out;
  }

  private matches(ref: number, filter: RankFilter): boolean {
    return (filter.leagues === null || filter.leagues.includes(this.leagues[ref]))
      && (filter.eventIds === null || filter.eventIds.includes(this.events[ref]))
      && (filter.tags === null || filter.tags.includes(this.tags[ref]));
  }

  /** First rank whose entry is not before (score, id) in serving order. */
  private lowerBound(score: number, id: string): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ref = this.order[mid];
      const s = this.scores[ref];
      if (s > score || (s === score && this.ids[ref] < id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Moves the entry at rank `from` to where (its new score) belongs: `to` is that key's
   * lower bound in the array still holding the entry. Only the span between shifts,
   * so a small score change costs little however big the set.
   */
  private move(from: number, to: number, ref: number): void {
    const order = this.order;
    if (to > from) {
      order.copyWithin(from, from + 1, to);
      order[to - 1] = ref;
    } else if (to < from) {
      order.copyWithin(to + 1, to, from);
      order[to] = ref;
    }
  }

  private insertAt(rank: number, ref: number): void {
    if (this.count === this.order.length) this.order = grown(this.order, this.count + 1);
    this.order.copyWithin(rank + 1, rank, this.count);
    this.order[rank] = ref;
    this.count++;
  }

  private removeAt(rank: number): void {
    this.order.copyWithin(rank, rank + 1, this.count);
    this.count--;
  }

  private newRef(id: string): number {
    let ref = this.freeRefs.pop();
    if (ref === undefined) {
      ref = this.ids.length;
      this.ids.push(id);
      this.values.push(undefined);
      this.leagues.push('');
      this.events.push('');
      this.tags.push('');
      if (ref === this.scores.length) this.scores = grown(this.scores, ref + 1);
    } else {
      this.ids[ref] = id;
    }
    this.refs.set(id, ref);
    return ref;
  }
}
