// Posting lists by league, sportsbook, event, player, team and scope, plus the list of
// tombstones (for the delta feed). Every list is in (sportsbook, id) order, so a query
// is a walk over one list (or a merge of a few) and a page is a slice.
//
// Team lists hold game rows only (futures anchors have no teams): rows of non-futures events, without a
// marketScope, under both the home and the away team of the event.

import { PostingList } from './postingList.ts';
import type { EventTable } from './eventTable.ts';
import { NONE, SCOPE_EVENT, type OddsStore } from './oddsStore.ts';
import type { RowOrder } from './rowOrder.ts';
import { grown } from './columns.ts';

export class Indexes {
  readonly byLeague: PostingList[] = [];
  readonly byBook: PostingList[] = [];
  readonly byEvent: PostingList[] = [];
  readonly byPlayer: PostingList[] = [];
  readonly byTeam: PostingList[] = [];
  readonly byScope: PostingList[] = [new PostingList(), new PostingList(), new PostingList()];
  readonly tombstones = new PostingList();
  private mark = new Uint8Array(0);

  constructor(
    private readonly store: OddsStore,
    private readonly events: EventTable,
    readonly order: RowOrder,
  ) {}

  /** The list for `id` in `family`, created on first use. */
  list(family: PostingList[], id: number): PostingList {
    let found = family[id];
    if (found === undefined) {
      for (let i = family.length; i <= id; i++) if (family[i] === undefined) family[i] = new PostingList();
      found = family[id];
    }
    return found;
  }

  /** True when the row belongs to team lists: a game row of an event with teams. */
  isGameRow(slot: number): boolean {
    const s = this.store;
    return s.scope[slot] === SCOPE_EVENT && this.events.futures[s.event[slot]] === 0;
  }

  insert(slot: number, seq: number): void {
    const s = this.store;
    this.insertInto(this.list(this.byLeague, s.league[slot]), slot, seq);
    this.insertInto(this.list(this.byBook, s.book[slot]), slot, seq);
    this.insertInto(this.list(this.byEvent, s.event[slot]), slot, seq);
    this.insertInto(this.byScope[s.scope[slot]], slot, seq);
    if (s.player[slot] !== NONE) this.insertInto(this.list(this.byPlayer, s.player[slot]), slot, seq);
    if (this.isGameRow(slot)) {
      const ev = s.event[slot];
      const home = this.events.home[ev];
      const away = this.events.away[ev];
      if (home !== NONE) this.insertInto(this.list(this.byTeam, home), slot, seq);
      if (away !== NONE && away !== home) this.insertInto(this.list(this.byTeam, away), slot, seq);
    }
  }

  remove(slot: number, seq: number): void {
    const s = this.store;
    this.removeFrom(this.byLeague[s.league[slot]], slot, seq);
    this.removeFrom(this.byBook[s.book[slot]], slot, seq);
    this.removeFrom(this.byEvent[s.event[slot]], slot, seq);
    this.removeFrom(this.byScope[s.scope[slot]], slot, seq);
    if (s.player[slot] !== NONE) this.removeFrom(this.byPlayer[s.player[slot]], slot, seq);
    if (this.isGameRow(slot)) {
      const ev = s.event[slot];
      const home = this.events.home[ev];
      const away = this.events.away[ev];
      if (home !== NONE) this.removeFrom(this.byTeam[home], slot, seq);
      if (away !== NONE && away !== home) this.removeFrom(this.byTeam[away], slot, seq);
    }
  }

  /** A row's content changed: every list holding it gets the new version. */
  touch(slot: number, seq: number): void {
    const s = this.store;
    this.byLeague[s.league[slot]].version = seq;
    this.byBook[s.book[slot]].version = seq;
    this.byEvent[s.event[slot]].version = seq;
    this.byScope[s.scope[slot]].version = seq;
    const player = s.player[slot];
    if (player !== NONE) this.byPlayer[player].version = seq;
    const ev = s.event[slot];
    if (s.scope[slot] === SCOPE_EVENT && this.events.futures[ev] === 0) {
      const home = this.events.home[ev];
      const away = this.events.away[ev];
      if (home !== NONE) this.byTeam[home].version = seq;
      if (away !== NONE) this.byTeam[away].version = seq;
    }
  }

  /** Sets every list's version (after the change log lost entries not yet folded in). */
  touchAll(seq: number): void {
    for (const family of [this.byLeague, this.byBook, this.byEvent, this.byPlayer, this.byTeam, this.byScope]) {
      for (const list of family) if (list !== undefined) list.version = seq;
    }
  }

  /**
   * Appends `count` slots given in (sportsbook, id) order to every list they belong
   * to: the linear build used at load (no per-row binary insert).
   */
  appendSorted(sorted: Int32Array, count: number, seq: number): void {
    const s = this.store;
    for (let i = 0; i < count; i++) {
      const slot = sorted[i];
      this.pushInto(this.list(this.byLeague, s.league[slot]), slot, seq);
      this.pushInto(this.list(this.byBook, s.book[slot]), slot, seq);
      this.pushInto(this.list(this.byEvent, s.event[slot]), slot, seq);
      this.pushInto(this.byScope[s.scope[slot]], slot, seq);
      if (s.player[slot] !== NONE) this.pushInto(this.list(this.byPlayer, s.player[slot]), slot, seq);
      if (this.isGameRow(slot)) {
        const ev = s.event[slot];
        const home = this.events.home[ev];
        const away = this.events.away[ev];
        if (home !== NONE) this.pushInto(this.list(this.byTeam, home), slot, seq);
        if (away !== NONE && away !== home) this.pushInto(this.list(this.byTeam, away), slot, seq);
      }
    }
  }

  /**
   * Removes `count` rows (all of one event) from every live list in one pass per
   * affected list, instead of one copyWithin per row.
   */
  removeMany(slots: Int32Array, count: number, seq: number): void {
    if (count === 0) return;
    const s = this.store;
    this.mark = grown(this.mark, s.capacity);
    const affected = new Set<PostingList>();
    for (let i = 0; i < count; i++) {
      const slot = slots[i];
      this.mark[slot] = 1;
      affected.add(this.byLeague[s.league[slot]]);
      affected.add(this.byBook[s.book[slot]]);
      affected.add(this.byEvent[s.event[slot]]);
      affected.add(this.byScope[s.scope[slot]]);
      if (s.player[slot] !== NONE) affected.add(this.byPlayer[s.player[slot]]);
      if (this.isGameRow(slot)) {
        const ev = s.event[slot];
        if (this.events.home[ev] !== NONE) affected.add(this.byTeam[this.events.home[ev]]);
        if (this.events.away[ev] !== NONE) affected.add(this.byTeam[this.events.away[ev]]);
      }
    }
    for (const list of affected) {
      list.removeMarked(this.mark);
      list.version = seq;
    }
    for (let i = 0; i < count; i++) this.mark[slots[i]] = 0;
  }

  /**
   * Every list by family, in the order a checkpoint keeps them: byLeague, byBook,
   * byEvent, byPlayer, byTeam, byScope, then the tombstone list alone. Holes (ids no
   * list was made for) are undefined.
   */
  families(): readonly (readonly (PostingList | undefined)[])[] {
    return [this.byLeague, this.byBook, this.byEvent, this.byPlayer, this.byTeam, this.byScope, [this.tombstones]];
  }

  /**
   * Takes saved lists (a checkpoint's; families() order) in place of building them from
   * the rows: family f's list i holds the next lengths[f][i] slots of `items` (-1: no
   * list), as a view (a list that grows gets an array of its own). Versions are what a
   * build at `seq` gives: seq for a list with rows and for the tombstone list, 0 for an
   * empty one. The lists must be empty; the caller checked the saved ones against the rows.
   */
  adopt(lengths: readonly Int32Array[], items: Int32Array, seq: number): void {
    const families = this.families();
    if (lengths.length !== families.length || lengths[5]!.length !== this.byScope.length || lengths[6]!.length !== 1) throw new Error('saved posting lists do not match the families');
    let at = 0;
    const take = (length: number): PostingList => {
      const list = new PostingList(0);
      list.items = items.subarray(at, at + length);
      list.length = length;
      list.version = length > 0 ? seq : 0;
      at += length;
      return list;
    };
    const growable = [this.byLeague, this.byBook, this.byEvent, this.byPlayer, this.byTeam];
    for (let f = 0; f < growable.length; f++) {
      const family = growable[f]!;
      family.length = 0;
      const saved = lengths[f]!;
      for (let i = 0; i < saved.length; i++) if (saved[i]! >= 0) family[i] = take(saved[i]!);
    }
    for (let i = 0; i < this.byScope.length; i++) this.byScope[i] = take(Math.max(0, lengths[5]![i]!));
    const tombstones = take(Math.max(0, lengths[6]![0]!));
    this.tombstones.items = tombstones.items;
    this.tombstones.length = tombstones.length;
    this.tombstones.version = seq;
    if (at !== items.length) throw new Error(`saved posting lists hold ${items.length} slots, their lengths ${at}`);
  }

  /** Bytes held by every posting list. */
  bytes(): number {
    let total = this.tombstones.bytes() + this.mark.byteLength;
    for (const family of [this.byLeague, this.byBook, this.byEvent, this.byPlayer, this.byTeam, this.byScope]) {
      for (const list of family) if (list !== undefined) total += list.bytes();
    }
    return total;
  }

  /** Releases spare capacity after a bulk build. */
  trim(): void {
    for (const family of [this.byLeague, this.byBook, this.byEvent, this.byPlayer, this.byTeam, this.byScope]) {
      for (const list of family) if (list !== undefined) list.trim();
    }
  }

  private insertInto(list: PostingList, slot: number, seq: number): void {
    list.insert(slot, this.order);
    list.version = seq;
  }

  private pushInto(list: PostingList, slot: number, seq: number): void {
    list.push(slot);
    list.version = seq;
  }

  private removeFrom(list: PostingList | undefined, slot: number, seq: number): void {
    if (list === undefined) return;
    list.remove(slot, this.order);
    list.version = seq;
  }
}
