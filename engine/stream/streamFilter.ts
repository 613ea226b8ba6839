// Which rows a stream subscription follows: the /odds filters a push client can set
// (league, sportsbook, market, event ids, one player), compiled to per-id masks over
// the store's string pools so a changed row is tested with a few array reads. Pools
// only grow, so a compiled filter stays right until a pool it reads has grown: then it
// rebuilds that mask (a league first seen after the subscription is matched from then on).
import { NONE, type OddsStore } from '../oddsStore.ts';
import type { OddsFilter } from '../oddsQuery.ts';

export interface StreamFilter {
  /** Lower-case league codes, any-of; null: all. */
  leagues: string[] | null;
  /** Lower-case source ids, any-of; null: all. */
  sportsbooks: string[] | null;
  /** Upper-case tokens, each a substring of market OR marketSubtype, any-of; null: all. */
  markets: string[] | null;
  /** Exact event ids, any-of; null: all. */
  eventIds: string[] | null;
  /** One player id (as /odds player_id); null: all. */
  playerId: string | null;
}

/** The same filter as an /odds query (the image is an /odds walk). */
export function oddsFilterOf(filter: StreamFilter): OddsFilter {
  return { ...filter, teamId: null, scope: null, isMain: false };
}

/** A stable text for a filter: subscriptions with equal keys share one compiled matcher. */
export function filterKey(filter: StreamFilter): string {
  const sorted = (values: string[] | null) => (values === null ? null : [...new Set(values)].sort());
  return JSON.stringify([sorted(filter.leagues), sorted(filter.sportsbooks), sorted(filter.markets), sorted(filter.eventIds), filter.playerId]);
}

export class CompiledFilter {
  private leagueMask: Uint8Array = new Uint8Array(0);
  private bookMask: Uint8Array = new Uint8Array(0);
  private eventMask: Uint8Array = new Uint8Array(0);
  private marketMask: Uint8Array = new Uint8Array(0);
  private subtypeMask: Uint8Array = new Uint8Array(0);
  private player = NONE;
  /** Pool sizes the masks were built at (league, book, event, market, subtype, player); -1: not built. */
  private readonly sizes = new Int32Array(6).fill(-1);

  constructor(
    readonly filter: StreamFilter,
    private readonly store: OddsStore,
  ) {}

  matches(slot: number): boolean {
    const s = this.store;
    this.refresh();
    const f = this.filter;
    if (f.leagues !== null && this.leagueMask[s.league[slot]] !== 1) return false;
    if (f.sportsbooks !== null && this.bookMask[s.book[slot]] !== 1) return false;
    if (f.eventIds !== null && this.eventMask[s.event[slot]] !== 1) return false;
    if (f.markets !== null && this.marketMask[s.market[slot]] !== 1 && this.subtypeMask[s.subtype[slot]] !== 1) return false;
    if (f.playerId !== null && (this.player === NONE || s.player[slot] !== this.player)) return false;
    return true;
  }

  /**
   * Rebuilds only the masks of the dimensions this filter restricts whose pool grew:
   * a league filter is untouched when a new event or player is interned (the fan-out
   * tests every changed row against its groups, and a pool that grows would otherwise
   * make every group rebuild every mask it has at once, inside a batch's send).
   */
  private refresh(): void {
    const s = this.store;
    const f = this.filter;
    const sizes = this.sizes;
    if (f.leagues !== null && sizes[0] !== s.leagues.size) {
      sizes[0] = s.leagues.size;
      this.leagueMask = exactMask(s.leagues.size, f.leagues, (v) => s.leagues.lookup(v));
    }
    if (f.sportsbooks !== null && sizes[1] !== s.books.size) {
      sizes[1] = s.books.size;
      this.bookMask = exactMask(s.books.size, f.sportsbooks, (v) => s.books.lookup(v));
    }
    if (f.eventIds !== null && sizes[2] !== s.events.size) {
      sizes[2] = s.events.size;
      this.eventMask = exactMask(s.events.size, f.eventIds, (v) => s.events.lookup(v));
    }
    if (f.markets !== null) {
      if (sizes[3] !== s.markets.size) {
        sizes[3] = s.markets.size;
        this.marketMask = substringMask(s.markets.size, (id) => s.markets.get(id), f.markets);
      }
      if (sizes[4] !== s.subtypes.size) {
        sizes[4] = s.subtypes.size;
        this.subtypeMask = substringMask(s.subtypes.size, (id) => s.subtypes.get(id), f.markets);
      }
    }
    if (f.playerId !== null && sizes[5] !== s.players.size) {
      sizes[5] = s.players.size;
      this.player = s.players.lookup(f.playerId);
    }
  }
}

function exactMask(size: number, values: readonly string[], lookup: (value: string) => number): Uint8Array {
  const mask = new Uint8Array(size);
  for (const value of values) {
    const id = lookup(value);
    if (id >= 0) mask[id] = 1;
  }
  return mask;
}

/** The same rule as /odds market: a token matches a case-insensitive substring of the name. */
function substringMask(size: number, name: (id: number) => string, tokens: readonly string[]): Uint8Array {
  const mask = new Uint8Array(size);
  for (let id = 0; id < size; id++) {
    const upper = name(id).toUpperCase();
    for (const token of tokens) {
      if (upper.includes(token.toUpperCase())) {
        mask[id] = 1;
        break;
      }
    }
  }
  return mask;
}
