// The read side of /odds, /events/{id}/odds, /players/{id}/odds, /teams/{id}/odds and
// /odds/updated. A query picks the posting lists that drive it (every row it can
// return is in them), walks them in (sportsbook, id) order from the keyset position
// (merging when several lists drive it), tests the remaining filters per row with
// generation-stamped masks (no per-query clearing or allocation) and stops one match
// after the page. Rendering joins cached per-row fragments.

import { grown } from './columns.ts';
import type { EventTable } from './eventTable.ts';
import type { FragmentCache } from './fragmentCache.ts';
import type { Indexes } from './indexes.ts';
import type { MainLines } from './mainLines.ts';
import type { ChangeLog } from './changeLog.ts';
import { NONE, SCOPE_EVENT, SLOT_LIVE, SLOT_TOMBSTONE, type OddsStore } from './oddsStore.ts';
import type { PostingList } from './postingList.ts';
import type { StringPool } from './intern.ts';
import { bookOfId, compareStrings } from './rowOrder.ts';
import { formatCode, type OddsFormat } from './rowJson.ts';

export interface OddsFilter {
  /** Lower-case codes, any-of. */
  leagues: string[] | null;
  /** Lower-case ids, any-of. */
  sportsbooks: string[] | null;
  /** Upper-case tokens, each a case-insensitive substring of market OR marketSubtype, any-of. */
  markets: string[] | null;
  /** One id or a comma list of at most 20, any-of. */
  eventIds: string[] | null;
  playerId: string | null;
  /** Home or away team of the event; game rows only (futures anchors have no teams). */
  teamId: string | null;
  scope: 'event' | 'season' | 'tournament' | null;
  isMain: boolean;
}

export type DeltaFilter = Pick<OddsFilter, 'leagues' | 'sportsbooks' | 'markets'>;

export interface OddsPage {
  /** Row slots of the page in (sportsbook, id) order; a reused buffer, valid until the next query. */
  slots: Int32Array;
  count: number;
  hasMore: boolean;
  /** Id of the last row of the page (the cursor key). */
  lastId: string | null;
  /** Latest `updated` (epoch ms) among the page rows, 0 if none. */
  maxUpdated: number;
}

/** What the query side reads from the engine. */
export interface QuerySource {
  readonly store: OddsStore;
  readonly eventTable: EventTable;
  readonly indexes: Indexes;
  readonly mainLines: MainLines;
  readonly fragments: FragmentCache;
  readonly changeLog: ChangeLog;
  readonly seq: number;
  readonly liveRows: number;
  /** Brings list versions up to date (they drive version() and is_main staleness). */
  syncVersions(): void;
}

const SCOPE_CODES = { event: 0, season: 1, tournament: 2 } as const;
const MAX_STREAMS = 64;

export class OddsQuery {
  private pageSlots = new Int32Array(1024);
  private gen = 0;
  private leagueMask = new Uint32Array(0);
  private bookMask = new Uint32Array(0);
  private eventMask = new Uint32Array(0);
  private marketMask = new Uint32Array(0);
  private subtypeMask = new Uint32Array(0);
  private seen = new Uint32Array(0);

  // Compiled filter, valid during one call.
  private useLeague = false;
  private useBook = false;
  private useMarket = false;
  private useEvent = false;
  private player = NONE;
  private team = NONE;
  private scope = -1;
  private mainOnly = false;
  private since = -Infinity;

  // Streams: each is a chain of lists walked in order; several streams are merged.
  private readonly lists: PostingList[] = [];
  private readonly streamFirst = new Int32Array(MAX_STREAMS);
  private readonly streamEnd = new Int32Array(MAX_STREAMS);
  private readonly streamList = new Int32Array(MAX_STREAMS);
  private readonly streamPos = new Int32Array(MAX_STREAMS);
  private streamCount = 0;

  private booksByName: number[] = [];

  // The last delta result set from the change log, reused while nothing changed.
  private deltaRows = new Int32Array(1024);
  private deltaCount = 0;
  private deltaKey = '';
  private deltaSeq = -1;

  constructor(private readonly source: QuerySource) {}

  /** Version of the lists that drive `filter`: unchanged iff no row the query can return changed. */
  version(filter: OddsFilter): number {
    this.source.syncVersions();
    if (!this.compile(filter)) return this.source.seq;
    this.chooseStreams();
    let version = 0;
    for (let i = 0; i < this.lists.length; i++) version = Math.max(version, this.lists[i].version);
    return this.lists.length === 0 ? this.source.seq : version;
  }

  /** Keyset page: rows strictly after afterId in (sportsbook, id) order. */
  page(filter: OddsFilter, afterId: string | null, limit: number): OddsPage {
    if (filter.isMain) this.source.syncVersions();
    this.since = -Infinity;
    if (!this.compile(filter)) return this.emptyPage();
    this.chooseStreams();
    return this.walk(afterId, limit);
  }

  /** Rows (tombstones included) with updated >= since, in (sportsbook, id) order. */
  delta(filter: DeltaFilter, since: number, afterId: string | null, limit: number): OddsPage {
    const full: OddsFilter = { ...filter, eventIds: null, playerId: null, teamId: null, scope: null, isMain: false };
    if (!this.compile(full)) return this.emptyPage();
    this.since = since;
    const log = this.source.changeLog;
    if (since > log.coveredAfter) {
      const first = log.firstAtOrAfter(since);
      if (log.length - first <= Math.max(4096, this.source.liveRows >>> 2)) return this.deltaFromLog(full, first, afterId, limit);
    }
    this.chooseStreams();
    this.addStream(this.source.indexes.tombstones);
    return this.walk(afterId, limit);
  }

  /** Version for a delta query: its driving lists and the tombstones. */
  deltaVersion(filter: DeltaFilter): number {
    const full: OddsFilter = { ...filter, eventIds: null, playerId: null, teamId: null, scope: null, isMain: false };
    return Math.max(this.version(full), this.source.indexes.tombstones.version);
  }

  /** The page's rows as JSON objects joined by ',' (no brackets), from cached fragments, in a new Buffer. */
  render(page: OddsPage, format: OddsFormat): Buffer {
    return this.source.fragments.join(page.slots, page.count, formatCode(format));
  }

  /** Byte length render(page, format) would have (so a caller can size one body buffer). */
  renderLength(page: OddsPage, format: OddsFormat): number {
    return this.source.fragments.joinedLength(page.slots, page.count, formatCode(format));
  }

  /** Writes what render() returns into `target` at `offset`; returns the bytes written. Call renderLength first. */
  renderInto(page: OddsPage, format: OddsFormat, target: Uint8Array, offset: number): number {
    return this.source.fragments.joinInto(page.slots, page.count, formatCode(format), target, offset);
  }

  // ---- compiling filters -------------------------------------------------------

  private compile(filter: OddsFilter): boolean {
    const s = this.source.store;
    if (++this.gen === 0xffffffff) this.resetMasks();
    const gen = this.gen;
    this.useLeague = present(filter.leagues);
    this.useBook = present(filter.sportsbooks);
    this.useMarket = present(filter.markets);
    this.useEvent = present(filter.eventIds);
    this.mainOnly = filter.isMain;
    this.scope = filter.scope === null ? -1 : SCOPE_CODES[filter.scope];
    this.player = NONE;
    this.team = NONE;
    if (this.useLeague) {
      this.leagueMask = grown(this.leagueMask, s.leagues.size);
      if (!stamp(this.leagueMask, s.leagues, filter.leagues!, gen, true)) return false;
    }
    if (this.useBook) {
      this.bookMask = grown(this.bookMask, s.books.size);
      if (!stamp(this.bookMask, s.books, filter.sportsbooks!, gen, true)) return false;
    }
    if (this.useEvent) {
      this.eventMask = grown(this.eventMask, s.events.size);
      if (!stamp(this.eventMask, s.events, filter.eventIds!, gen, false)) return false;
    }
    if (this.useMarket && !this.stampMarkets(filter.markets!, gen)) return false;
    if (filter.playerId !== null) {
      this.player = s.players.lookup(filter.playerId);
      if (this.player === NONE) return false;
    }
    if (filter.teamId !== null) {
      this.team = s.teams.lookup(filter.teamId);
      if (this.team === NONE) return false;
    }
    return true;
  }

  private stampMarkets(tokens: string[], gen: number): boolean {
    const s = this.source.store;
    this.marketMask = grown(this.marketMask, s.markets.size);
    this.subtypeMask = grown(this.subtypeMask, s.subtypes.size);
    let any = false;
    for (let id = 0; id < s.markets.size; id++) {
      if (matchesAny(s.markets.get(id), tokens)) {
        this.marketMask[id] = gen;
        any = true;
      }
    }
    for (let id = 0; id < s.subtypes.size; id++) {
      if (matchesAny(s.subtypes.get(id), tokens)) {
        this.subtypeMask[id] = gen;
        any = true;
      }
    }
    return any;
  }

  private resetMasks(): void {
    for (const mask of [this.leagueMask, this.bookMask, this.eventMask, this.marketMask, this.subtypeMask, this.seen]) mask.fill(0);
    this.gen = 1;
  }

  /** Every per-row test of the compiled filter. */
  private matches(slot: number): boolean {
    const s = this.source.store;
    const gen = this.gen;
    if (s.updated[slot] < this.since) return false;
    if (this.useLeague && this.leagueMask[s.league[slot]] !== gen) return false;
    if (this.useBook && this.bookMask[s.book[slot]] !== gen) return false;
    if (this.useEvent && this.eventMask[s.event[slot]] !== gen) return false;
    if (this.useMarket && this.marketMask[s.market[slot]] !== gen && this.subtypeMask[s.subtype[slot]] !== gen) return false;
    if (this.player !== NONE && s.player[slot] !== this.player) return false;
    if (this.scope >= 0 && s.scope[slot] !== this.scope) return false;
    if (this.team !== NONE) {
      const ev = s.event[slot];
      const events = this.source.eventTable;
      if (s.scope[slot] !== SCOPE_EVENT || events.futures[ev] === 1) return false;
      if (events.home[ev] !== this.team && events.away[ev] !== this.team) return false;
    }
    if (this.mainOnly && s.state[slot] === SLOT_LIVE && !this.source.mainLines.isMain(slot)) return false;
    return true;
  }

  // ---- choosing and walking lists ----------------------------------------------

  /** Picks the smallest family of lists that holds every row the filter can return. */
  private chooseStreams(): void {
    const s = this.source.store;
    const ix = this.source.indexes;
    this.lists.length = 0;
    this.streamCount = 0;
    if (this.useEvent) {
      for (let ev = 0; ev < this.eventMask.length; ev++) {
        if (this.eventMask[ev] === this.gen && ix.byEvent[ev] !== undefined) this.addStream(ix.byEvent[ev]);
      }
      return;
    }
    if (this.player !== NONE) return this.addStream(ix.list(ix.byPlayer, this.player));
    if (this.team !== NONE) return this.addStream(ix.list(ix.byTeam, this.team));
    const leagueRows = this.useLeague ? this.sumLists(ix.byLeague, this.leagueMask) : Infinity;
    const bookRows = this.useBook ? this.sumLists(ix.byBook, this.bookMask) : Infinity;
    const scopeRows = this.scope >= 0 ? ix.byScope[this.scope].length : Infinity;
    if (leagueRows <= bookRows && leagueRows <= scopeRows && leagueRows !== Infinity) {
      for (let id = 0; id < this.leagueMask.length && id < s.leagues.size; id++) {
        if (this.leagueMask[id] === this.gen && ix.byLeague[id] !== undefined) this.addStream(ix.byLeague[id]);
      }
      return;
    }
    if (scopeRows < bookRows) return this.addStream(ix.byScope[this.scope]);
    this.addBookChain();
  }

  private sumLists(family: PostingList[], mask: Uint32Array): number {
    let total = 0;
    for (let id = 0; id < family.length && id < mask.length; id++) {
      if (mask[id] === this.gen && family[id] !== undefined) total += family[id].length;
    }
    return total;
  }

  /** The book lists (all, or the filtered ones) in book-name order: one stream, no merge. */
  private addBookChain(): void {
    const s = this.source.store;
    const ix = this.source.indexes;
    if (this.booksByName.length !== s.books.size) {
      this.booksByName = Array.from({ length: s.books.size }, (_, i) => i).sort((a, b) =>
        compareStrings(s.books.get(a), s.books.get(b)),
      );
    }
    const first = this.lists.length;
    for (const book of this.booksByName) {
      if (this.useBook && this.bookMask[book] !== this.gen) continue;
      if (ix.byBook[book] !== undefined) this.lists.push(ix.byBook[book]);
    }
    this.openStream(first, this.lists.length);
  }

  private addStream(list: PostingList): void {
    this.lists.push(list);
    this.openStream(this.lists.length - 1, this.lists.length);
  }

  private openStream(first: number, end: number): void {
    if (this.streamCount === MAX_STREAMS) throw new Error('too many lists in one query');
    const k = this.streamCount++;
    this.streamFirst[k] = first;
    this.streamEnd[k] = end;
  }

  /** Positions every stream at the first row after afterId. */
  private seek(afterId: string | null): void {
    const order = this.source.indexes.order;
    const book = afterId === null ? '' : bookOfId(afterId);
    for (let k = 0; k < this.streamCount; k++) {
      let li = this.streamFirst[k];
      let pos = 0;
      for (; li < this.streamEnd[k]; li++) {
        const list = this.lists[li];
        pos = afterId === null ? 0 : list.after(book, afterId, order);
        if (pos < list.length) break;
      }
      this.streamList[k] = li;
      this.streamPos[k] = pos;
    }
  }

  /** The next slot across all streams in (sportsbook, id) order, or -1. */
  private next(): number {
    let best = -1;
    let bestSlot = -1;
    const order = this.source.indexes.order;
    for (let k = 0; k < this.streamCount; k++) {
      const li = this.streamList[k];
      if (li >= this.streamEnd[k]) continue;
      const slot = this.lists[li].items[this.streamPos[k]];
      if (best < 0 || order.compareSlots(slot, bestSlot) < 0) {
        best = k;
        bestSlot = slot;
      }
    }
    if (best < 0) return -1;
    let pos = this.streamPos[best] + 1;
    let li = this.streamList[best];
    while (li < this.streamEnd[best] && pos >= this.lists[li].length) {
      li++;
      pos = 0;
    }
    this.streamList[best] = li;
    this.streamPos[best] = pos;
    return bestSlot;
  }

  private walk(afterId: string | null, limit: number): OddsPage {
    const s = this.source.store;
    this.pageSlots = grown(this.pageSlots, limit);
    this.seek(afterId);
    let count = 0;
    let hasMore = false;
    let maxUpdated = 0;
    for (let slot = this.next(); slot >= 0; slot = this.next()) {
      if (!this.matches(slot)) continue;
      if (count === limit) {
        hasMore = true;
        break;
      }
      this.pageSlots[count++] = slot;
      if (s.updated[slot] > maxUpdated) maxUpdated = s.updated[slot];
    }
    return this.makePage(count, hasMore, maxUpdated);
  }

  // ---- the delta feed from the change log ----------------------------------------

  private deltaFromLog(filter: OddsFilter, first: number, afterId: string | null, limit: number): OddsPage {
    const s = this.source.store;
    const log = this.source.changeLog;
    const key = `${this.since}|${filter.leagues ?? ''}|${filter.sportsbooks ?? ''}|${filter.markets ?? ''}`;
    if (key !== this.deltaKey || this.deltaSeq !== this.source.seq) {
      this.seen = grown(this.seen, s.capacity);
      const gen = this.gen;
      let count = 0;
      for (let i = first; i < log.length; i++) {
        const slot = log.slotAt(i);
        if (this.seen[slot] === gen) continue;
        this.seen[slot] = gen;
        const state = s.state[slot];
        if (state !== SLOT_LIVE && state !== SLOT_TOMBSTONE) continue;
        if (!this.matches(slot)) continue;
        this.deltaRows = grown(this.deltaRows, count + 1);
        this.deltaRows[count++] = slot;
      }
      this.deltaRows.subarray(0, count).sort(this.source.indexes.order.compare);
      this.deltaCount = count;
      this.deltaKey = key;
      this.deltaSeq = this.source.seq;
    }
    let start = 0;
    if (afterId !== null) {
      const order = this.source.indexes.order;
      const book = bookOfId(afterId);
      let hi = this.deltaCount;
      while (start < hi) {
        const mid = (start + hi) >>> 1;
        if (order.compareKeyToSlot(book, afterId, this.deltaRows[mid]) >= 0) start = mid + 1;
        else hi = mid;
      }
    }
    const count = Math.min(limit, this.deltaCount - start);
    this.pageSlots = grown(this.pageSlots, limit);
    let maxUpdated = 0;
    for (let i = 0; i < count; i++) {
      const slot = this.deltaRows[start + i];
      this.pageSlots[i] = slot;
      if (s.updated[slot] > maxUpdated) maxUpdated = s.updated[slot];
    }
    return this.makePage(count, start + count < this.deltaCount, maxUpdated);
  }

  private makePage(count: number, hasMore: boolean, maxUpdated: number): OddsPage {
    return {
      slots: this.pageSlots,
      count,
      hasMore,
      lastId: count > 0 ? this.source.store.idOf(this.pageSlots[count - 1]) : null,
      maxUpdated,
    };
  }

  private emptyPage(): OddsPage {
    return this.makePage(0, false, 0);
  }
}

function present(values: string[] | null): values is string[] {
  return values !== null && values.length > 0;
}

/** Stamps the ids of `values` in `mask`; false when none of them is known. */
function stamp(mask: Uint32Array, pool: StringPool, values: string[], gen: number, lowerCase: boolean): boolean {
  let any = false;
  for (const value of values) {
    const id = pool.lookup(lowerCase ? value.toLowerCase() : value);
    if (id >= 0) {
      mask[id] = gen;
      any = true;
    }
  }
  return any;
}

function matchesAny(text: string, tokens: string[]): boolean {
  const upper = text.toUpperCase();
  for (const token of tokens) if (upper.includes(token.toUpperCase())) return true;
  return false;
}
