// The odds board as columns: one typed array per field of an odds row, strings
// interned to Int32 ids in per-domain pools, nulls as sentinels (-1 for references,
// 0 for priceAmerican since American prices never fall in (-100, 100), NaN for
// numbers). Slots are stable for a row's life; freed slots go on a free list and are
// reused. Engine-internal: signals and snapshot read these columns directly.

import { grown } from './columns.ts';
import { StringPool } from './intern.ts';
import { NO_RING } from './historyRing.ts';
import { INPUT_FIELDS, type RowColumn, type RowField } from './rowFields.ts';
import { MARKET_SCOPES, SIDES, TEAM_SIDES, type MarketScope, type OddsInput } from './model.ts';

export { SIDES, TEAM_SIDES };

export const NONE = -1;
/** priceAmerican column value for "no price" (DFS rows). */
export const NO_PRICE = 0;

export const SLOT_FREE = 0;
export const SLOT_LIVE = 1;
export const SLOT_TOMBSTONE = 2;

/** side column codes: the index in SIDES (engine/model.ts). */
export const SIDE_OVER = SIDES.indexOf('OVER');
export const SIDE_UNDER = SIDES.indexOf('UNDER');
/** scope column: 0 event (no marketScope), then MARKET_SCOPES in order (1 SEASON, 2 TOURNAMENT). */
export const SCOPES: readonly (MarketScope | null)[] = [null, ...MARKET_SCOPES];
export const SCOPE_EVENT = 0;

export class RowError extends Error {
  constructor(
    readonly code: 'invalid_row',
    detail: string,
  ) {
    super(detail);
  }
}

function enumIndex<T>(values: readonly T[], value: T, field: string): number {
  const at = values.indexOf(value);
  if (at < 0) throw new RowError('invalid_row', `${field} ${String(value)} is not one of ${values.join(', ')}`);
  return at;
}

/** The capacity reserve() grows `from` to for `wanted` slots: doubling from at least 16. */
export function doubledCapacity(from: number, wanted: number): number {
  let doubled = Math.max(16, from);
  while (doubled < wanted) doubled *= 2;
  return doubled;
}

export class OddsStore {
  readonly events = new StringPool();
  readonly books = new StringPool();
  readonly leagues = new StringPool();
  readonly markets = new StringPool();
  readonly subtypes = new StringPool();
  readonly periods = new StringPool();
  readonly selectionIds = new StringPool();
  /** Display strings: selection labels, team names, player names, segments. */
  readonly labels = new StringPool();
  readonly players = new StringPool();
  readonly teams = new StringPool();

  capacity = 0;
  /** Slots ever handed out (high-water mark); slots below it are live, tombstones or free. */
  size = 0;
  private freeSlots = new Int32Array(16);
  private freeCount = 0;

  state = new Uint8Array(0);
  event = new Int32Array(0);
  book = new Int32Array(0);
  league = new Int32Array(0);
  market = new Int32Array(0);
  subtype = new Int32Array(0);
  period = new Int32Array(0);
  selectionId = new Int32Array(0);
  selection = new Int32Array(0);
  side = new Uint8Array(0);
  teamSide = new Uint8Array(0);
  teamName = new Int32Array(0);
  priceAmerican = new Int32Array(0);
  dfsMultiplier = new Float64Array(0);
  line = new Float64Array(0);
  player = new Int32Array(0);
  playerName = new Int32Array(0);
  /** The team the selection is about (internal, not a row field). */
  team = new Int32Array(0);
  suspended = new Uint8Array(0);
  eventStartTime = new Float64Array(0);
  updated = new Float64Array(0);
  scope = new Uint8Array(0);
  segment = new Int32Array(0);
  seq = new Float64Array(0);
  ring = new Int32Array(0);

  constructor(initialCapacity = 1024) {
    this.reserve(initialCapacity);
  }

  get freeSlotCount(): number {
    return this.freeCount;
  }

  /** Makes room for `capacity` slots: doubling, or exactly that many when `exact` (a load that knows its size). */
  reserve(capacity: number, exact = false): void {
    if (capacity <= this.capacity) return;
    if (!exact) capacity = doubledCapacity(this.capacity, capacity);
    this.state = grown(this.state, capacity, 0, 'exact');
    this.event = grown(this.event, capacity, 0, 'exact');
    this.book = grown(this.book, capacity, 0, 'exact');
    this.league = grown(this.league, capacity, 0, 'exact');
    this.market = grown(this.market, capacity, 0, 'exact');
    this.subtype = grown(this.subtype, capacity, 0, 'exact');
    this.period = grown(this.period, capacity, 0, 'exact');
    this.selectionId = grown(this.selectionId, capacity, 0, 'exact');
    this.selection = grown(this.selection, capacity, 0, 'exact');
    this.side = grown(this.side, capacity, 0, 'exact');
    this.teamSide = grown(this.teamSide, capacity, 0, 'exact');
    this.teamName = grown(this.teamName, capacity, 0, 'exact');
    this.priceAmerican = grown(this.priceAmerican, capacity, 0, 'exact');
    this.dfsMultiplier = grown(this.dfsMultiplier, capacity, 0, 'exact');
    this.line = grown(this.line, capacity, 0, 'exact');
    this.player = grown(this.player, capacity, 0, 'exact');
    this.playerName = grown(this.playerName, capacity, 0, 'exact');
    this.team = grown(this.team, capacity, 0, 'exact');
    this.suspended = grown(this.suspended, capacity, 0, 'exact');
    this.eventStartTime = grown(this.eventStartTime, capacity, 0, 'exact');
    this.updated = grown(this.updated, capacity, 0, 'exact');
    this.scope = grown(this.scope, capacity, 0, 'exact');
    this.segment = grown(this.segment, capacity, 0, 'exact');
    this.seq = grown(this.seq, capacity, 0, 'exact');
    this.ring = grown(this.ring, capacity, NO_RING, 'exact');
    this.capacity = this.state.length;
  }

  allocate(): number {
    if (this.freeCount > 0) return this.freeSlots[--this.freeCount];
    if (this.size === this.capacity) this.reserve(this.size + 1);
    return this.size++;
  }

  /** Returns a slot to the free list; the caller has dropped it from every index and freed its ring. */
  release(slot: number): void {
    this.state[slot] = SLOT_FREE;
    this.ring[slot] = NO_RING;
    this.freeSlots = grown(this.freeSlots, this.freeCount + 1);
    this.freeSlots[this.freeCount++] = slot;
  }

  /** Writes every field of `row` into `slot` (prices, times and state are the caller's). */
  writeRow(slot: number, row: OddsInput): void {
    this.event[slot] = this.events.intern(row.eventId);
    this.book[slot] = this.books.intern(row.sportsbook);
    this.league[slot] = this.leagues.intern(row.league);
    this.market[slot] = this.markets.intern(row.market);
    this.subtype[slot] = this.subtypes.intern(row.marketSubtype);
    this.period[slot] = this.periods.intern(row.period);
    this.selectionId[slot] = this.selectionIds.intern(row.selectionId);
    this.selection[slot] = this.labels.intern(row.selection);
    this.side[slot] = enumIndex(SIDES, row.side, 'side');
    this.teamSide[slot] = enumIndex(TEAM_SIDES, row.teamSide, 'teamSide');
    this.teamName[slot] = this.labels.intern(row.teamName);
    this.line[slot] = row.line === null ? NaN : row.line;
    this.player[slot] = row.playerId === null ? NONE : this.players.intern(row.playerId);
    this.playerName[slot] = row.playerName === null ? NONE : this.labels.intern(row.playerName);
    this.team[slot] = row.teamId === null ? NONE : this.teams.intern(row.teamId);
    this.eventStartTime[slot] = row.eventStartTime;
    this.scope[slot] = enumIndex(SCOPES, row.marketScope, 'marketScope');
    this.segment[slot] = row.segment === null ? NONE : this.labels.intern(row.segment);
  }

  /** The row's id, {eventId}:{sportsbook}:{marketSubtype}:{selectionId} (built, not stored). */
  idOf(slot: number): string {
    return `${this.events.get(this.event[slot])}:${this.books.get(this.book[slot])}:${this.subtypes.get(
      this.subtype[slot],
    )}:${this.selectionIds.get(this.selectionId[slot])}`;
  }

  /**
   * A stored field of the row in `slot` as OddsInput holds it (null for null), read the
   * way engine/rowFields.ts says (its column, pool and null sentinel). Not for hot paths.
   */
  fieldValue(field: RowField, slot: number): string | number | boolean | null {
    const value = (this as unknown as Record<RowColumn, ArrayLike<number>>)[field.column!][slot];
    switch (field.kind) {
      case 'string':
        return this[field.pool!].get(value);
      case 'ref':
        return value === NONE ? null : this[field.pool!].get(value);
      case 'enum':
        return field.values![value];
      case 'price':
        return value === NO_PRICE ? null : value;
      case 'number':
        return Number.isNaN(value) ? null : value;
      case 'bool':
        return value === 1;
      case 'minute':
      case 'instant':
        return value;
      case 'scope':
        return SCOPES[value];
      default:
        throw new Error(`${field.name} is not a stored field`);
    }
  }

  /** The row in `slot` as an OddsInput (a fresh object: for cloning rows, not for hot paths). */
  rowInput(slot: number): OddsInput {
    const row: Record<string, unknown> = {};
    for (const field of INPUT_FIELDS) row[field.name] = this.fieldValue(field, slot);
    return row as unknown as OddsInput;
  }

  /** The free list (slots released and not yet reused), oldest first: a checkpoint saves it. */
  freeList(): Int32Array {
    return this.freeSlots.slice(0, this.freeCount);
  }

  /** Restores size and free list saved by a checkpoint (the columns are set by the caller). */
  restoreSlots(size: number, free: Int32Array): void {
    this.reserve(size);
    this.size = size;
    this.freeSlots = grown(this.freeSlots, free.length);
    this.freeSlots.set(free);
    this.freeCount = free.length;
  }

  isLive(slot: number): boolean {
    return slot >= 0 && slot < this.size && this.state[slot] === SLOT_LIVE;
  }

  /** Bytes held by the columns (capacity, not just used slots). */
  columnBytes(): number {
    let total = this.freeSlots.byteLength;
    for (const value of Object.values(this)) {
      if (ArrayBuffer.isView(value) && value !== this.freeSlots) total += value.byteLength;
    }
    return total;
  }
}
