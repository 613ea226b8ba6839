// Which subscription groups a changed row can concern, without testing every group.
// A group (every subscription with one filter) is filed under one dimension its filter
// restricts, the most selective it has: its event ids, else its leagues, else its
// sportsbooks; a group restricting none of them (all rows, or only a market or a
// player) is tested for every row. A changed row then looks up its own event, league
// and sportsbook and tests only the groups filed there, so the work of a batch grows
// with its rows times the groups they may match, not with the number of groups.
//
// Keys are the strings the filters hold (an event id, a lower-case league code, a
// source id) and the row's own values read from the store's pools, compared exactly,
// as the compiled filter compares them: a value first seen after a group was filed
// still finds it.
import type { OddsStore } from '../oddsStore.ts';
import type { CompiledFilter } from './streamFilter.ts';

/** What the index needs of a group: its filter, and room for the rows of the batch it follows. */
export interface IndexedGroup {
  readonly compiled: CompiledFilter;
  /** The fan-out pass that last found a row for this group (rows below are only valid for it). */
  pass: number;
  /** Rows of that pass this group follows, in change order; matchedCount of them. */
  matched: Int32Array;
  matchedCount: number;
}

export class GroupIndex<G extends IndexedGroup> {
  private readonly byEvent = new Map<string, G[]>();
  private readonly byLeague = new Map<string, G[]>();
  private readonly byBook = new Map<string, G[]>();
  private readonly everyRow: G[] = [];

  constructor(private readonly store: OddsStore) {}

  add(group: G): void {
    const f = group.compiled.filter;
    if (f.eventIds !== null) fileUnder(this.byEvent, f.eventIds, group);
    else if (f.leagues !== null) fileUnder(this.byLeague, f.leagues, group);
    else if (f.sportsbooks !== null) fileUnder(this.byBook, f.sportsbooks, group);
    else this.everyRow.push(group);
  }

  remove(group: G): void {
    const f = group.compiled.filter;
    if (f.eventIds !== null) unfile(this.byEvent, f.eventIds, group);
    else if (f.leagues !== null) unfile(this.byLeague, f.leagues, group);
    else if (f.sportsbooks !== null) unfile(this.byBook, f.sportsbooks, group);
    else removeFrom(this.everyRow, group);
  }

  /**
   * Appends `slot` to the matched rows of every group that follows it. A group matched
   * for the first time in this pass is reset and pushed onto `touched`.
   */
  collect(slot: number, pass: number, touched: G[]): void {
    const s = this.store;
    if (this.byEvent.size > 0) this.test(this.byEvent.get(s.events.get(s.event[slot]!)), slot, pass, touched);
    if (this.byLeague.size > 0) this.test(this.byLeague.get(s.leagues.get(s.league[slot]!)), slot, pass, touched);
    if (this.byBook.size > 0) this.test(this.byBook.get(s.books.get(s.book[slot]!)), slot, pass, touched);
    this.test(this.everyRow, slot, pass, touched);
  }

  private test(groups: G[] | undefined, slot: number, pass: number, touched: G[]): void {
    if (groups === undefined) return;
    for (let i = 0; i < groups.length; i++) {
      const group = groups[i]!;
      if (!group.compiled.matches(slot)) continue;
      if (group.pass !== pass) {
        group.pass = pass;
        group.matchedCount = 0;
        touched.push(group);
      }
      if (group.matchedCount === group.matched.length) {
        const grown = new Int32Array(group.matched.length * 2);
        grown.set(group.matched);
        group.matched = grown;
      }
      group.matched[group.matchedCount++] = slot;
    }
  }
}

function fileUnder<G>(map: Map<string, G[]>, keys: readonly string[], group: G): void {
  for (const key of new Set(keys)) {
    const list = map.get(key);
    if (list === undefined) map.set(key, [group]);
    else list.push(group);
  }
}

function unfile<G>(map: Map<string, G[]>, keys: readonly string[], group: G): void {
  for (const key of new Set(keys)) {
    const list = map.get(key);
    if (list === undefined) continue;
    removeFrom(list, group);
    if (list.length === 0) map.delete(key);
  }
}

function removeFrom<G>(list: G[], group: G): void {
  const at = list.indexOf(group);
  if (at < 0) return;
  list[at] = list[list.length - 1]!;
  list.pop();
}
