// OddsEngine: the in-memory odds board and the query side that the HTTP
// routes, the snapshot and the signals call.
//
// Write side
//   engine.apply(batch: Change[]) -> { applied, seq }     the only way rows change
//     { op: 'upsert', row }            new id: insert; existing: price/dfsMultiplier/suspended/line refresh;
//                                      a tombstoned id comes back to life in its old slot
//     { op: 'price', slot, priceAmerican, dfsMultiplier?, suspended }   hot path (simulator, bench)
//     { op: 'remove', id }             live row -> tombstone (kept >= 10 min for the delta feed)
//     { op: 'status', eventId, status } allowed transitions only (eventTable.ts); final/cancelled tombstone the event's rows
//   Every applied change: seq += 1 and updated = clock time (never moving backwards).
//   A new price (pa, dm or su differ) appends a history entry; the same price again only
//   refreshes the newest entry's ls (and the row's updated).
//   engine.upsertEvent(record)          event table (hot fields); loadBoard() ingests a Board.
//   engine.subscribe(listener)          rowChanged(slot, kind) / eventChanged(eventId), called
//                                       synchronously inside apply after the columns changed;
//                                       changesApplied() once at the end of an apply that
//                                       changed rows (a listener may defer per-row work to it).
//
// Read side
//   engine.odds.page(filter, afterId, limit) / .render(page, format) / .version(filter)
//   engine.odds.renderLength(page, format) + .renderInto(page, format, target, offset)
//                                       (write rows straight into one response buffer)
//   engine.delta(filter, since, afterId, limit)   tombstones included ("removed": true)
//   engine.deltaVersion(filter), engine.seq, engine.asOf(), engine.tombstoneHorizon()
//   engine.status(), bookCounts(), marketCounts()  (live rows, suspended included, tombstones excluded)
//   engine.hasEvent(id), event(id), eventIdsWithLiveRows(), knownLeagues()
//   engine.slotOf(id), idOf(slot), isLive(slot), history(slot), historyInto(slot, buf), rowObject(slot, format)
//
// Engine-internal parts exported for engine/signals and engine/snapshot, which read
// columns directly: engine.store (OddsStore columns + pools; store.rowInput(slot)),
// engine.rings (HistoryRings, handle per row in store.ring), engine.eventTable,
// engine.indexes (posting lists), engine.keys (id -> slot).
// Elsewhere: loadBoard(engine, board) in loadBoard.ts; Simulator in fixtures/simulator.ts;
// rowObject/rowJsonText in rowJson.ts, the time texts in timeFormat.ts.
// Pages: OddsPage.slots is a reused buffer, valid until the next page/delta call;
// render() returns a fresh Buffer. Filters: empty arrays mean "no filter".
// Tombstones stay >= 10 min (tombstoneRetentionMs), then their slots are reused and
// tombstoneHorizon() moves to (removal time + 1 ms) of the newest recycled one.
// Version tokens: every posting list carries a version that moves whenever a row in it
// changes (membership included); odds.version(filter) is the max over the lists that
// drive the query, so an unchanged token means an unchanged result. Membership changes
// set versions at once; content changes are folded in lazily from the change log by
// syncVersions() (called by every query method), which keeps ~8 random reads per
// update out of apply(). Code reading PostingList.version directly calls
// engine.syncVersions() first.

import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from './clock.ts';
import { ChangeLog, TombstoneQueue, type TombstoneQueueState } from './changeLog.ts';
import { EventTable, STATUS_CANCELLED, STATUS_FINAL, isAllowedTransition, statusCode, type EventInfo } from './eventTable.ts';
import { FragmentCache } from './fragmentCache.ts';
import { HistoryRings, NO_RING, historyEntry, type HistoryEntry } from './historyRing.ts';
import { Indexes } from './indexes.ts';
import { MainLines } from './mainLines.ts';
import { EVENT_STATUSES, type EventRecord, type EventStatus, type HistoryBuffer, type OddsInput, type SourceRecord } from './model.ts';
import { SourceRegistry } from './sourceRegistry.ts';
import { OddsQuery, type DeltaFilter, type OddsPage } from './oddsQuery.ts';
import type { PostingList } from './postingList.ts';
import { NONE, NO_PRICE, OddsStore, SLOT_FREE, SLOT_LIVE, SLOT_TOMBSTONE } from './oddsStore.ts';
import { RowKeyTable } from './rowKeyTable.ts';
import { RowOrder, compareStrings } from './rowOrder.ts';
import { rowObject, type OddsFormat } from './rowJson.ts';

/**
 * What rowChanged reports: 'insert' (a new row, or a tombstone revived in its slot),
 * 'update' (an upsert over a live row: its line may have changed), 'price' (only its
 * price fields changed: priceAmerican, dfsMultiplier, suspended; the 'price' op, whose
 * listeners may skip every grouping field) or 'remove' (now a tombstone).
 */
export type ChangeKind = 'insert' | 'update' | 'price' | 'remove';

export interface ChangeListener {
  rowChanged(slot: number, kind: ChangeKind): void;
  eventChanged?(eventId: string): void;
  /** An event's start moved; its rows were rewritten (each also heard as an 'update'). */
  eventMoved?(eventId: string, startTime: number): void;
  /**
   * Once per apply() that changed rows, after its last rowChanged and before apply
   * returns: a listener that batches per-row work (to overlap its memory reads) settles
   * it here, so nothing is pending when anyone reads.
   */
  changesApplied?(): void;
}

export type Change =
  | { op: 'upsert'; row: OddsInput }
  | { op: 'price'; slot: number; priceAmerican: number | null; dfsMultiplier?: number | null; suspended: boolean }
  | PriceByIdChange
  | { op: 'remove'; id: string }
  | { op: 'status'; eventId: string; status: EventStatus }
  | { op: 'event'; event: EventHotFields }
  | { op: 'source'; source: SourceRecord };

/**
 * A price tick addressed by odds id (what a feed knows; slots are internal). An absent
 * dfsMultiplier or suspended keeps the row's current value.
 */
export interface PriceByIdChange {
  op: 'priceById';
  id: string;
  /** undefined keeps the current price (a suspension toggle). */
  priceAmerican?: number | null;
  dfsMultiplier?: number | null;
  suspended?: boolean;
}

/** What a tick of SlotTicks carries, as bits of its `fields`. */
export const TICK_AMERICAN = 1;
export const TICK_DFS = 2;
export const TICK_HAS_SUSPENDED = 4;
export const TICK_SUSPENDED = 8;
/** With TICK_AMERICAN: the tick's priceAmerican is null (a DFS row's). */
export const TICK_AMERICAN_NULL = 16;

/**
 * Price ticks by slot, in parallel typed arrays (what the write path reads a batch of
 * ticks into): tick i is a priceById change on the row at slot[i], with priceAmerican
 * american[i] (null with TICK_AMERICAN_NULL), dfsMultiplier dfs[i] and suspended as
 * its `fields` bits say; a field it does not carry keeps the row's value.
 */
export interface SlotTicks {
  readonly count: number;
  readonly slot: Int32Array;
  readonly american: Int32Array;
  readonly dfs: Float64Array;
  readonly fields: Uint8Array;
}

/** The fields of an event the engine holds hot (the rest is cold, in SQLite). */
export type EventHotFields = Pick<EventRecord, 'id' | 'league' | 'homeTeamId' | 'awayTeamId' | 'startTime' | 'status' | 'isFutures'>;

export interface ApplyResult {
  applied: number;
  seq: number;
}

export interface EngineOptions {
  /** How long a tombstone stays in the delta feed (at least 10 minutes). */
  tombstoneRetentionMs?: number;
  initialCapacity?: number;
  /** Entries the change log keeps at most (older deltas walk the lists instead). */
  changeLogEntries?: number;
  /** Cap of each odds_format's fragment arena. */
  fragmentBytesPerFormat?: number;
}

/** What a checkpoint keeps of the engine's own fields. */
export interface EngineCounters {
  seq: number;
  lastChangeAt: number;
  horizon: number;
  firstLoadedAt: number;
  /**
   * Names the board's history (see historyId); absent in checkpoints written before it
   * was kept, whose history is then named after their first load time.
   */
  historyId?: string;
}

const DEFAULT_TOMBSTONE_RETENTION_MS = 10 * 60 * 1000;

/** What restoredFromSaved takes (engine/checkpoint.ts, SavedDerived). */
export interface SavedDerivedInput {
  keyTable: Int32Array;
  keyCount: number;
  lengths: Int32Array[];
  items: Int32Array;
  live: number;
}

export class OddsEngine {
  readonly store: OddsStore;
  readonly eventTable: EventTable;
  readonly indexes: Indexes;
  readonly rings = new HistoryRings();
  readonly keys: RowKeyTable;
  readonly changeLog: ChangeLog;
  readonly mainLines: MainLines;
  readonly fragments: FragmentCache;
  readonly odds: OddsQuery;
  /** Sportsbooks and DFS sources with their kind (seeded with the built-in ones; the 'source' op adds more). */
  readonly sources = new SourceRegistry();

  private lastSeq = 0;
  /**
   * Names this board's history: drawn at random when a board starts from nothing, kept
   * by every checkpoint and restored with it, so a restart on the same data directory,
   * and every replica of the same stream (they restore the writer's checkpoint), carry
   * the same name, and a board started afresh gets a new one. The push stream's clk
   * tokens carry it: a token resumes on any process holding this history, never on
   * another board at the same seq.
   */
  private historyName = randomBytes(5).toString('hex');
  /** Clock time when the first board load finished: the delta feed cannot vouch for anything before it. */
  private firstLoadedAt = -Infinity;
  private lastChangeAt = 0;
  private horizon = 0;
  private live = 0;
  private readonly tombstoneQueue = new TombstoneQueue();
  private readonly retentionMs: number;
  private listeners: ChangeListener[] = [];
  /** Listener state saved with checkpoints (saveWithCheckpoints), and what a restored checkpoint held. */
  private readonly checkpointParts = new Map<string, () => unknown>();
  private restoredParts = new Map<string, unknown>();
  /** Live rows per (market, subtype) pair, keyed market * 2^20 + subtype. */
  private readonly pairCounts = new Map<number, number>();
  private dropScratch = new Int32Array(256);
  /** Absolute change-log index up to which list versions include content changes. */
  private versionCursor = 0;

  constructor(
    readonly clock: Clock,
    options: EngineOptions = {},
  ) {
    this.retentionMs = options.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS;
    this.store = new OddsStore(options.initialCapacity ?? 1024);
    this.eventTable = new EventTable(this.store);
    this.indexes = new Indexes(this.store, this.eventTable, new RowOrder(this.store));
    this.keys = new RowKeyTable(this.store);
    this.changeLog = new ChangeLog(options.changeLogEntries ?? 1 << 20);
    this.mainLines = new MainLines(this.store, this.indexes);
    this.fragments = new FragmentCache(this.store, options.fragmentBytesPerFormat);
    this.odds = new OddsQuery(this);
  }

  /** The name of this board's history (lower-case letters and digits; see `history`). */
  get historyId(): string {
    return this.historyName;
  }

  /** Seq of the last applied change. */
  get seq(): number {
    return this.lastSeq;
  }

  /** Live rows on the board (tombstones excluded). */
  get liveRows(): number {
    return this.live;
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /**
   * State a listener keeps that the board alone does not determine (the steam detector's
   * price histories and reported moves): saved into every checkpoint under its name by
   * `save` (called between two applies; it must return a copy that later applies do not
   * change) and handed back once after a restore by takeRestoredPart. Returns the
   * unregister.
   */
  saveWithCheckpoints(name: string, save: () => unknown): () => void {
    this.checkpointParts.set(name, save);
    return () => {
      if (this.checkpointParts.get(name) === save) this.checkpointParts.delete(name);
    };
  }

  /** Every registered part's saved state, by name (what a checkpoint holds beside the board). */
  checkpointPartsState(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, save] of this.checkpointParts) out[name] = save();
    return out;
  }

  /** The parts a restored checkpoint held (a restore sets them before anything is replayed). */
  restoreCheckpointParts(parts: Record<string, unknown>): void {
    this.restoredParts = new Map(Object.entries(parts));
  }

  /** A part the restored checkpoint held under `name`, once (undefined: none, or taken already). */
  takeRestoredPart(name: string): unknown {
    const part = this.restoredParts.get(name);
    this.restoredParts.delete(name);
    return part;
  }

  // ---- write side ----------------------------------------------------------------

  /**
   * Applies a batch at the clock's time, or at `at` when given (a replayed batch uses
   * the time it was first applied at, so replay rebuilds the same state; the time never
   * moves before the last applied change either way).
   *
   * `slotOfId`, when given, runs parallel to `batch`: for a priceById change, the slot
   * its id names on the board as this apply finds it (the caller resolved it while no
   * other change could move that row), so the id is not looked up again; -1 looks it up.
   */
  apply(batch: readonly Change[], at?: number, slotOfId?: ArrayLike<number>): ApplyResult {
    const now = at === undefined ? this.now() : Math.max(at, this.lastChangeAt);
    this.sweepTombstones(now);
    let applied = 0;
    for (let i = 0; i < batch.length; i++) {
      const change = batch[i];
      let ok: boolean;
      switch (change.op) {
        case 'price':
          ok = this.applyPrice(change.slot, change.priceAmerican, change.dfsMultiplier, change.suspended, now);
          break;
        case 'upsert':
          ok = this.applyUpsert(change.row, now);
          break;
        case 'remove':
          ok = this.applyRemove(this.keys.findId(change.id), now);
          break;
        case 'status':
          ok = this.applyStatus(change.eventId, change.status, now);
          break;
        case 'priceById': {
          const known = slotOfId === undefined ? -1 : slotOfId[i];
          const slot = known >= 0 ? known : this.keys.findId(change.id);
          if (slot < 0) {
            ok = false;
            break;
          }
          const s = this.store;
          const american = change.priceAmerican !== undefined ? change.priceAmerican : s.priceAmerican[slot] === NO_PRICE ? null : s.priceAmerican[slot];
          ok = this.applyPrice(slot, american, change.dfsMultiplier, change.suspended ?? s.suspended[slot] === 1, now);
          break;
        }
        case 'event':
          this.upsertEvent(change.event, now);
          ++this.lastSeq;
          ok = true;
          break;
        case 'source':
          this.sources.register(change.source);
          ++this.lastSeq;
          ok = true;
          break;
        default:
          ok = false;
      }
      if (ok) applied++;
    }
    if (applied > 0) {
      this.lastChangeAt = now;
      const listeners = this.listeners;
      for (let i = 0; i < listeners.length; i++) listeners[i].changesApplied?.();
    }
    return { applied, seq: this.lastSeq };
  }

  /**
   * apply() of a batch of priceById changes whose slots the caller resolved, given as
   * typed arrays: the same columns, history, change log, seq and listener calls as
   * apply() with those changes and slots, without an object per change.
   */
  applyTicks(ticks: SlotTicks, at: number): ApplyResult {
    const now = Math.max(at, this.lastChangeAt);
    this.sweepTombstones(now);
    const s = this.store;
    const { slot: slots, american: prices, dfs: multipliers, fields: bits } = ticks;
    this.warmTicks(slots, ticks.count);
    let applied = 0;
    for (let i = 0; i < ticks.count; i++) {
      const slot = slots[i];
      if (slot < 0) continue;
      const f = bits[i];
      const american = (f & TICK_AMERICAN) !== 0 ? ((f & TICK_AMERICAN_NULL) !== 0 ? null : prices[i]) : s.priceAmerican[slot] === NO_PRICE ? null : s.priceAmerican[slot];
      const dfs = (f & TICK_DFS) !== 0 ? multipliers[i] : undefined;
      const suspended = (f & TICK_HAS_SUSPENDED) !== 0 ? (f & TICK_SUSPENDED) !== 0 : s.suspended[slot] === 1;
      if (this.applyPrice(slot, american, dfs, suspended, now)) applied++;
    }
    if (applied > 0) {
      this.lastChangeAt = now;
      const listeners = this.listeners;
      for (let i = 0; i < listeners.length; i++) listeners[i].changesApplied?.();
    }
    return { applied, seq: this.lastSeq };
  }

  /**
   * Reads what applying ticks to these slots will read (the row's columns, its history
   * ring's head and newest entry), in two loops of independent reads: on a large board
   * each is a cache miss, and a miss the loop does not wait on overlaps with the next
   * ones, where the apply itself pays them one after another (a ring's entry is found
   * through its head). Changes nothing; the sum is kept so the reads are not dropped.
   */
  private warmTicks(slots: Int32Array, count: number): void {
    const s = this.store;
    const rings = this.rings;
    const { state, priceAmerican, suspended, dfsMultiplier, ring, seq, updated } = s;
    let sink = 0;
    for (let i = 0; i < count; i++) {
      const slot = slots[i];
      if (slot < 0 || slot >= s.size) continue;
      sink += state[slot] + priceAmerican[slot] + suspended[slot] + dfsMultiplier[slot] + seq[slot] + updated[slot] + rings.warmMeta(ring[slot]);
    }
    for (let i = 0; i < count; i++) {
      const slot = slots[i];
      if (slot < 0 || slot >= s.size) continue;
      sink += rings.warmNewest(ring[slot]);
    }
    this.warmSink = sink;
  }

  /** Last sum of warmTicks' reads. */
  warmSink = 0;

  /**
   * Adds or replaces an event's hot fields; team lists follow a change of home/away.
   * Listeners hear eventChanged (the snapshot renders the event's head from these fields).
   */
  upsertEvent(record: EventHotFields, now: number = this.lastChangeAt): void {
    const ix = this.store.events.lookup(record.id);
    const list = ix >= 0 ? this.indexes.byEvent[ix] : undefined;
    if (list === undefined || list.length === 0) {
      this.eventTable.upsert(record);
    } else {
      // A moved start (a rescheduled or re-timed fixture) is rewritten into every row of
      // the event: rows carry their own eventStartTime column, and ingest checks a row's
      // start against its event's, so a row left with the old start would contradict both
      // its event and the rows that arrive after the move.
      const moved = this.eventTable.has(ix) && this.eventTable.startTime[ix] !== record.startTime;
      const slots = list.items.slice(0, list.length);
      const seq = ++this.lastSeq;
      for (const slot of slots) this.indexes.remove(slot, seq);
      this.eventTable.upsert(record);
      if (moved) for (const slot of slots) this.store.eventStartTime[slot] = record.startTime;
      for (const slot of slots) this.indexes.insert(slot, seq);
      if (moved) {
        // each row changed: a new seq and updated time, its fragment rebuilt, a delta on the stream
        for (const slot of slots) if (this.store.state[slot] === SLOT_LIVE) this.commit(slot, now, 'update');
        for (const listener of this.listeners) listener.eventMoved?.(record.id, record.startTime);
      }
    }
    for (const listener of this.listeners) listener.eventChanged?.(record.id);
  }

  private applyPrice(slot: number, american: number | null, dfs: number | null | undefined, suspended: boolean, now: number): boolean {
    const s = this.store;
    if (slot < 0 || slot >= s.size || s.state[slot] !== SLOT_LIVE) return false;
    if (!validAmerican(american)) return false;
    const pa = american === null ? NO_PRICE : american;
    const dm = dfs === undefined ? s.dfsMultiplier[slot] : dfs === null ? NaN : dfs;
    this.writePrice(slot, pa, dm, suspended ? 1 : 0, now);
    this.commit(slot, now, 'price');
    return true;
  }

  private applyUpsert(row: OddsInput, now: number): boolean {
    const s = this.store;
    if (!validAmerican(row.priceAmerican)) return false;
    const pa = row.priceAmerican === null ? NO_PRICE : row.priceAmerican;
    const dm = row.dfsMultiplier === null ? NaN : row.dfsMultiplier;
    const su = row.suspended ? 1 : 0;
    let slot = this.findRow(row);
    if (slot >= 0 && s.state[slot] === SLOT_LIVE) {
      s.line[slot] = row.line === null ? NaN : row.line;
      this.writePrice(slot, pa, dm, su, now);
      this.commit(slot, now, 'update');
      return true;
    }
    const ev = this.ensureEvent(row);
    const status = this.eventTable.status[ev];
    if (status === STATUS_FINAL || status === STATUS_CANCELLED) return false;
    const seq = ++this.lastSeq;
    if (slot >= 0) {
      // A tombstone comes back: same slot, history kept.
      this.indexes.tombstones.remove(slot, this.indexes.order);
      this.indexes.tombstones.version = seq;
      s.writeRow(slot, row);
    } else {
      slot = s.allocate();
      s.writeRow(slot, row);
      s.ring[slot] = NO_RING;
      this.keys.add(slot);
    }
    s.state[slot] = SLOT_LIVE;
    this.writePrice(slot, pa, dm, su, now);
    s.seq[slot] = seq;
    s.updated[slot] = now;
    this.indexes.insert(slot, seq);
    this.countLive(slot, 1);
    this.changeLog.append(slot, now);
    this.notify(slot, 'insert');
    return true;
  }

  private applyRemove(slot: number, now: number): boolean {
    const s = this.store;
    if (slot < 0 || s.state[slot] !== SLOT_LIVE) return false;
    const seq = ++this.lastSeq;
    this.indexes.remove(slot, seq);
    this.indexes.tombstones.insert(slot, this.indexes.order);
    this.indexes.tombstones.version = seq;
    this.entomb(slot, seq, now);
    return true;
  }

  private applyStatus(eventId: string, status: EventStatus, now: number): boolean {
    const ev = this.store.events.lookup(eventId);
    if (!this.eventTable.has(ev)) return false;
    const from = EVENT_STATUSES[this.eventTable.status[ev]];
    if (!isAllowedTransition(from, status)) return false;
    ++this.lastSeq;
    this.eventTable.status[ev] = statusCode(status);
    if (status === 'final' || status === 'cancelled') this.dropEventRows(ev, now);
    for (const listener of this.listeners) listener.eventChanged?.(eventId);
    return true;
  }

  /** A final or cancelled event's rows all become tombstones, with linear list updates. */
  private dropEventRows(ev: number, now: number): void {
    const list = this.indexes.byEvent[ev];
    if (list === undefined || list.length === 0) return;
    const count = list.length;
    if (this.dropScratch.length < count) this.dropScratch = new Int32Array(count * 2);
    const slots = this.dropScratch;
    slots.set(list.items.subarray(0, count));
    const firstSeq = this.lastSeq + 1;
    this.indexes.removeMany(slots, count, firstSeq + count - 1);
    this.indexes.tombstones.mergeSorted(slots, count, this.indexes.order);
    for (let i = 0; i < count; i++) this.entomb(slots[i], ++this.lastSeq, now);
    this.indexes.tombstones.version = this.lastSeq;
  }

  /** Marks a row removed (already out of the live lists and into the tombstone list). */
  private entomb(slot: number, seq: number, now: number): void {
    const s = this.store;
    s.state[slot] = SLOT_TOMBSTONE;
    s.seq[slot] = seq;
    s.updated[slot] = now;
    this.countLive(slot, -1);
    this.tombstoneQueue.push(slot, seq, now);
    this.changeLog.append(slot, now);
    this.notify(slot, 'remove');
  }

  /** Recycles tombstones whose retention has passed; their slots are reused. */
  private sweepTombstones(now: number): void {
    const queue = this.tombstoneQueue;
    const s = this.store;
    let recycled = false;
    while (queue.hasDueAt(now - this.retentionMs)) {
      const slot = queue.oldestSlot();
      const seq = queue.oldestSeq();
      const removedAt = queue.oldestTime();
      queue.shift();
      if (s.state[slot] !== SLOT_TOMBSTONE || s.seq[slot] !== seq) continue; // revived since
      this.indexes.tombstones.remove(slot, this.indexes.order);
      this.keys.delete(slot);
      this.rings.free(s.ring[slot]);
      s.release(slot);
      if (removedAt + 1 > this.horizon) this.horizon = removedAt + 1;
      recycled = true;
    }
    if (recycled) this.indexes.tombstones.version = ++this.lastSeq;
  }

  private writePrice(slot: number, pa: number, dm: number, su: number, now: number): void {
    const s = this.store;
    const seconds = Math.floor(now / 1000);
    const ring = s.ring[slot];
    const old = s.dfsMultiplier[slot];
    const sameDm = old === dm || (old !== old && dm !== dm);
    if (ring !== NO_RING && s.priceAmerican[slot] === pa && sameDm && s.suspended[slot] === su && s.state[slot] === SLOT_LIVE) {
      this.rings.touch(ring, seconds);
      return;
    }
    s.priceAmerican[slot] = pa;
    s.dfsMultiplier[slot] = dm;
    s.suspended[slot] = su;
    s.ring[slot] = this.rings.append(ring, seconds, seconds, pa, dm === dm ? dm : 0, su);
  }

  /** A content change: list versions follow lazily (syncVersions) from the log entry. */
  private commit(slot: number, now: number, kind: ChangeKind): void {
    const s = this.store;
    const seq = ++this.lastSeq;
    s.seq[slot] = seq;
    s.updated[slot] = now;
    this.changeLog.append(slot, now);
    this.notify(slot, kind);
  }

  /** Folds content changes logged since the last call into the list versions. */
  syncVersions(): void {
    const log = this.changeLog;
    if (this.versionCursor === log.appended) return;
    const first = log.firstAbsolute;
    if (this.versionCursor < first) {
      this.indexes.touchAll(this.lastSeq); // entries were dropped before being folded in
    } else {
      const s = this.store;
      for (let abs = this.versionCursor; abs < log.appended; abs++) {
        const slot = log.slotAt(abs - first);
        if (s.state[slot] === SLOT_LIVE) this.indexes.touch(slot, this.lastSeq);
      }
    }
    this.versionCursor = log.appended;
  }

  private notify(slot: number, kind: ChangeKind): void {
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) listeners[i].rowChanged(slot, kind);
  }

  private findRow(row: OddsInput): number {
    const s = this.store;
    const ev = s.events.lookup(row.eventId);
    const book = s.books.lookup(row.sportsbook);
    const subtype = s.subtypes.lookup(row.marketSubtype);
    const selection = s.selectionIds.lookup(row.selectionId);
    if (ev < 0 || book < 0 || subtype < 0 || selection < 0) return -1;
    return this.keys.find(ev, book, subtype, selection);
  }

  /** The event index of the row's event; an unknown event gets a minimal scheduled record. */
  private ensureEvent(row: OddsInput): number {
    const ix = this.store.events.intern(row.eventId);
    if (this.eventTable.has(ix)) return ix;
    return this.eventTable.upsert({
      id: row.eventId,
      league: row.league,
      homeTeamId: null,
      awayTeamId: null,
      startTime: row.eventStartTime,
      status: 'scheduled',
      isFutures: row.marketScope !== null,
    });
  }

  private countLive(slot: number, delta: number): void {
    const s = this.store;
    this.live += delta;
    const key = s.market[slot] * 1048576 + s.subtype[slot];
    this.pairCounts.set(key, (this.pairCounts.get(key) ?? 0) + delta);
  }

  /** Clock time, never before the last applied change (a system clock may step back). */
  private now(): number {
    const time = this.clock.now();
    return time > this.lastChangeAt ? time : this.lastChangeAt;
  }

  // ---- bulk load (used by loadBoard) -----------------------------------------------

  /**
   * Writes a loaded row without seq, log or index work. Returns its slot when it still
   * has to be indexed (new, or a tombstone coming back), or -1 - slot when it was a
   * live row overwritten in place (already indexed: see touchLoaded).
   */
  loadRow(row: OddsInput, history: HistoryBuffer): number {
    const s = this.store;
    this.ensureEvent(row);
    let slot = this.findRow(row);
    let needsIndex = true;
    if (slot < 0) {
      slot = s.allocate();
      s.writeRow(slot, row);
      this.keys.add(slot);
    } else if (s.state[slot] === SLOT_LIVE) {
      this.countLive(slot, -1);
      needsIndex = false;
    } else {
      this.indexes.tombstones.remove(slot, this.indexes.order);
    }
    s.writeRow(slot, row);
    s.state[slot] = SLOT_LIVE;
    s.priceAmerican[slot] = row.priceAmerican === null ? NO_PRICE : row.priceAmerican;
    s.dfsMultiplier[slot] = row.dfsMultiplier === null ? NaN : row.dfsMultiplier;
    s.suspended[slot] = row.suspended ? 1 : 0;
    s.updated[slot] = row.updated;
    s.ring[slot] = this.rings.assign(s.ring[slot], history);
    this.countLive(slot, 1);
    return needsIndex ? slot : -1 - slot;
  }

  /** Ends a bulk load: one seq for every loaded row, lists built, asOf moved. */
  finishLoad(slots: Int32Array, count: number, maxUpdated: number, sortedByLoader: boolean): void {
    const s = this.store;
    const seq = ++this.lastSeq;
    for (let i = 0; i < count; i++) s.seq[slots[i]] = seq;
    if (this.live === count && sortedByLoader) {
      this.indexes.appendSorted(slots, count, seq);
      this.indexes.trim();
    } else {
      for (let i = 0; i < count; i++) this.indexes.insert(slots[i], seq);
    }
    if (maxUpdated > this.lastChangeAt) this.lastChangeAt = maxUpdated;
    if (this.firstLoadedAt === -Infinity && count > 0) this.firstLoadedAt = this.lastChangeAt;
    this.changeLog.coverFrom(maxUpdated);
  }

  /** Bumps the seq of rows a load overwrote in place (they are already indexed). */
  touchLoaded(slot: number): void {
    const seq = ++this.lastSeq;
    this.store.seq[slot] = seq;
    this.indexes.touch(slot, seq);
  }

  // ---- checkpoint (engine/checkpoint.ts holds the format) -----------------------------

  /** The engine's own counters, for a checkpoint (the parts' state is saved by the parts). */
  counters(): EngineCounters {
    return { seq: this.lastSeq, lastChangeAt: this.lastChangeAt, horizon: this.horizon, firstLoadedAt: this.firstLoadedAt, historyId: this.historyName };
  }

  tombstoneState(): TombstoneQueueState {
    return this.tombstoneQueue.saveState();
  }

  /** The counters and tombstone queue a checkpoint saved, back (both kinds of restore). */
  private restoreCounters(counters: EngineCounters, tombstones: TombstoneQueueState): void {
    this.lastSeq = counters.seq;
    this.lastChangeAt = counters.lastChangeAt;
    this.horizon = counters.horizon;
    this.firstLoadedAt = counters.firstLoadedAt;
    this.historyName = typeof counters.historyId === 'string' && /^[a-z0-9]{1,32}$/.test(counters.historyId) ? counters.historyId : legacyHistoryId(counters.firstLoadedAt);
    this.tombstoneQueue.restoreState(tombstones);
  }

  /**
   * Finishes a restore into this fresh engine after the store, rings, event table and
   * change log were filled: the counters come back, and what is derived from the rows
   * (id table, posting lists, live counts) is rebuilt in one pass over the slots.
   */
  restored(counters: EngineCounters, tombstones: TombstoneQueueState, sortLive: (slots: Int32Array, count: number) => void): void {
    this.derivedFrom = 'rebuilt';
    const s = this.store;
    this.restoreCounters(counters, tombstones);
    this.keys.reserve(s.size);
    let liveCount = 0;
    let deadCount = 0;
    for (let slot = 0; slot < s.size; slot++) {
      if (s.state[slot] === SLOT_LIVE) liveCount++;
      else if (s.state[slot] === SLOT_TOMBSTONE) deadCount++;
    }
    const live = new Int32Array(liveCount);
    const dead = new Int32Array(deadCount);
    liveCount = 0;
    deadCount = 0;
    for (let slot = 0; slot < s.size; slot++) {
      const state = s.state[slot];
      if (state === SLOT_FREE) continue;
      this.keys.add(slot);
      if (state === SLOT_LIVE) {
        live[liveCount++] = slot;
        this.countLive(slot, 1);
      } else dead[deadCount++] = slot;
    }
    sortLive(live, liveCount);
    this.indexes.appendSorted(live, liveCount, this.lastSeq);
    this.indexes.trim();
    dead.sort(this.indexes.order.compare);
    this.indexes.tombstones.mergeSorted(dead, deadCount, this.indexes.order);
    this.indexes.tombstones.version = this.lastSeq;
    this.versionCursor = this.changeLog.appended;
  }

  /** How a restore got the id table and posting lists: as the checkpoint saved them, or rebuilt from the rows (null: not restored). */
  derivedFrom: 'saved' | 'rebuilt' | null = null;

  /**
   * What restored() derives from the rows at length, as it is now, for a checkpoint to
   * keep (arrays are the live ones: copy them before the next apply): the id table,
   * every posting list (Indexes.families order) and the live count.
   */
  derivedState(): { keys: { table: Int32Array; count: number }; families: readonly (readonly (PostingList | undefined)[])[]; live: number } {
    return { keys: this.keys.saveState(), families: this.indexes.families(), live: this.live };
  }

  /**
   * restored() with what a checkpoint kept of the derived state (derivedState, the lists
   * flattened: per family the list lengths, then every list's slots in one array) taken
   * as it was instead of rebuilt: no sort of the live rows, no id table filled row by
   * row. The saved state is checked against the rows first (every used slot in the id
   * table once; each list holds exactly the rows of its id, tombstones in the tombstone
   * list); false, with nothing changed, when it does not fit (the caller then calls
   * restored()). The live counts per (market, subtype) are counted from the rows.
   */
  restoredFromSaved(counters: EngineCounters, tombstones: TombstoneQueueState, saved: SavedDerivedInput): boolean {
    if (!this.savedDerivedFits(saved)) return false;
    this.derivedFrom = 'saved';
    this.restoreCounters(counters, tombstones);
    this.keys.adopt(saved.keyTable, saved.keyCount);
    this.indexes.adopt(saved.lengths, saved.items, this.lastSeq);
    const s = this.store;
    for (let slot = 0; slot < s.size; slot++) if (s.state[slot] === SLOT_LIVE) this.countLive(slot, 1);
    this.versionCursor = this.changeLog.appended;
    return true;
  }

  private savedDerivedFits(saved: SavedDerivedInput): boolean {
    const s = this.store;
    const size = s.size;
    const state = s.state;
    const { keyTable, lengths, items } = saved;
    if (this.live !== 0 || this.keys.size !== 0) return false;
    if (!(keyTable instanceof Int32Array) || !(items instanceof Int32Array) || !Array.isArray(lengths) || lengths.length !== 7) return false;
    if (!lengths.every((l) => l instanceof Int32Array) || lengths[5]!.length !== this.indexes.byScope.length || lengths[6]!.length !== 1) return false;
    if (keyTable.length < 16 || (keyTable.length & (keyTable.length - 1)) !== 0 || saved.keyCount * 2 > keyTable.length) return false;
    let used = 0;
    let live = 0;
    for (let slot = 0; slot < size; slot++) {
      if (state[slot] === SLOT_LIVE) live++;
      if (state[slot] !== SLOT_FREE) used++;
    }
    if (live !== saved.live || used !== saved.keyCount) return false;
    // the id table: each used slot once
    const seen = new Uint8Array(size);
    let entries = 0;
    for (let i = 0; i < keyTable.length; i++) {
      const entry = keyTable[i]!;
      if (entry === 0) continue;
      const slot = entry - 1;
      if (slot < 0 || slot >= size || state[slot] === SLOT_FREE || seen[slot] !== 0) return false;
      seen[slot] = 1;
      entries++;
    }
    if (entries !== saved.keyCount) return false;
    // the lists: each list's slots are rows of its id (tombstones in the last), none twice in
    // one list, and each family holds every row it should: the same sets a build makes
    let total = 0;
    for (const family of lengths) for (let i = 0; i < family.length; i++) total += Math.max(0, family[i]!);
    if (total !== items.length) return false;
    const ix = this.indexes;
    const events = this.eventTable;
    let players = 0;
    let teams = 0;
    let tombstones = 0;
    for (let slot = 0; slot < size; slot++) {
      if (state[slot] === SLOT_TOMBSTONE) tombstones++;
      if (state[slot] !== SLOT_LIVE) continue;
      if (s.player[slot] !== NONE) players++;
      if (ix.isGameRow(slot)) {
        const ev = s.event[slot];
        const home = events.home[ev];
        const away = events.away[ev];
        if (home !== NONE) teams++;
        if (away !== NONE && away !== home) teams++;
      }
    }
    const expected = [live, live, live, players, teams, live, tombstones];
    const columns = [s.league, s.book, s.event, s.player];
    const mark = new Int32Array(size);
    let tag = 0;
    let at = 0;
    for (let f = 0; f < lengths.length; f++) {
      const want = f === 6 ? SLOT_TOMBSTONE : SLOT_LIVE;
      const family = lengths[f]!;
      const column = f < columns.length ? columns[f]! : null;
      let count = 0;
      for (let i = 0; i < family.length; i++) {
        tag++;
        const end = at + Math.max(0, family[i]!);
        for (; at < end; at++) {
          const slot = items[at]!;
          if (slot < 0 || slot >= size || state[slot] !== want || mark[slot] === tag) return false;
          mark[slot] = tag;
          if (column !== null) {
            if (column[slot] !== i) return false;
          } else if (f === 4) {
            if (!ix.isGameRow(slot)) return false;
            const ev = s.event[slot];
            if (events.home[ev] !== i && events.away[ev] !== i) return false;
          } else if (f === 5 && s.scope[slot] !== i) return false;
          count++;
        }
      }
      if (count !== expected[f]) return false;
    }
    return true;
  }

  // ---- read side -----------------------------------------------------------------

  // Reads never recycle tombstones (only apply does, at the batch's time): the board
  // and its seq are then a function of the applied batches alone, which is what lets a
  // restart or a replica replay the log into the same state. A tombstone past its
  // retention stays in the feed until the next apply, which the contract allows (it
  // promises at least the retention, not at most).
  delta(filter: DeltaFilter, since: number, afterId: string | null, limit: number): OddsPage {
    return this.odds.delta(filter, since, afterId, limit);
  }

  /** Version of a delta query (its driving lists and the tombstones); unchanged iff its result is. */
  deltaVersion(filter: DeltaFilter): number {
    return this.odds.deltaVersion(filter);
  }

  /** Clock time of the last applied change (the delta feed's meta.updated: the next poll's since). */
  asOf(): number {
    return this.lastChangeAt;
  }

  /** A since before this may have missed tombstones that were since recycled (the re-bootstrap note). */
  tombstoneHorizon(): number {
    return this.horizon;
  }

  /** Clock time of the board's first load (-Infinity before it): no delta feed reaches before it. */
  firstLoadTime(): number {
    return this.firstLoadedAt;
  }

  /**
   * The oldest since the delta feed answers completely: not before the newest recycled
   * tombstone (tombstoneHorizon), nor before the board's first load (the as-of of the
   * loaded rows), since removals from before the load were never seen here.
   */
  deltaHorizon(): number {
    return this.horizon > this.firstLoadedAt ? this.horizon : this.firstLoadedAt;
  }

  status(): { totalMarkets: number; sportsbooks: number } {
    let sportsbooks = 0;
    for (const list of this.indexes.byBook) if (list !== undefined && list.length > 0) sportsbooks++;
    return { totalMarkets: this.live, sportsbooks };
  }

  bookCounts(): { id: string; marketCount: number }[] {
    const out: { id: string; marketCount: number }[] = [];
    this.indexes.byBook.forEach((list, book) => {
      if (list !== undefined && list.length > 0) out.push({ id: this.store.books.get(book), marketCount: list.length });
    });
    return out.sort((a, b) => compareStrings(a.id, b.id));
  }

  marketCounts(): { marketType: string; marketSubtype: string; liveCount: number }[] {
    const out: { marketType: string; marketSubtype: string; liveCount: number }[] = [];
    for (const [key, liveCount] of this.pairCounts) {
      if (liveCount <= 0) continue;
      const market = Math.floor(key / 1048576);
      out.push({ marketType: this.store.markets.get(market), marketSubtype: this.store.subtypes.get(key - market * 1048576), liveCount });
    }
    return out.sort((a, b) => compareStrings(a.marketType, b.marketType) || compareStrings(a.marketSubtype, b.marketSubtype));
  }

  hasEvent(id: string): boolean {
    return this.eventTable.has(this.store.events.lookup(id));
  }

  event(id: string): EventInfo | undefined {
    const ix = this.store.events.lookup(id);
    return this.eventTable.has(ix) ? this.eventTable.info(ix) : undefined;
  }

  /** Events with at least one live row, by id. */
  eventIdsWithLiveRows(): string[] {
    const out: string[] = [];
    this.indexes.byEvent.forEach((list, ev) => {
      if (list !== undefined && list.length > 0) out.push(this.store.events.get(ev));
    });
    return out.sort(compareStrings);
  }

  /** Leagues with any event loaded, sorted. */
  knownLeagues(): string[] {
    const seen = new Set<string>();
    const table = this.eventTable;
    for (let ev = 0; ev < table.known.length; ev++) if (table.known[ev] === 1) seen.add(this.store.leagues.get(table.league[ev]));
    return [...seen].sort(compareStrings);
  }

  /** Slot of a live row or tombstone by id, or -1. */
  slotOf(id: string): number {
    return this.keys.findId(id);
  }

  idOf(slot: number): string {
    return this.store.idOf(slot);
  }

  isLive(slot: number): boolean {
    return this.store.isLive(slot);
  }

  isTombstone(slot: number): boolean {
    return slot >= 0 && slot < this.store.size && this.store.state[slot] === SLOT_TOMBSTONE;
  }

  /** The row's price history, oldest first. */
  *history(slot: number): IterableIterator<HistoryEntry> {
    const handle = this.store.ring[slot];
    const length = this.rings.length(handle);
    for (let i = 0; i < length; i++) yield historyEntry(this.rings, handle, i);
  }

  /** Copies the row's history, oldest first, into a reusable buffer; returns the entry count. */
  historyInto(slot: number, out: HistoryBuffer): number {
    return this.rings.copyInto(this.store.ring[slot], out);
  }

  /** Reference renderer: the row as a plain object (JSON.stringify gives the served bytes). */
  rowObject(slot: number, format: OddsFormat): Record<string, unknown> {
    return rowObject(this.store, slot, format);
  }

  /** Bytes held by engine structures, by part (heap objects such as pools not included). */
  memory(): Record<string, number> {
    return {
      columns: this.store.columnBytes(),
      events: this.eventTable.known.length * (1 + 4 * 3 + 8 + 2),
      indexes: this.indexes.bytes(),
      keys: this.keys.bytes(),
      rings: this.rings.allocatedBytes(),
      changeLog: this.changeLog.bytes(),
      tombstoneQueue: this.tombstoneQueue.bytes(),
      fragments: this.fragments.bytes(),
    };
  }
}

function validAmerican(price: number | null): boolean {
  return price === null || (Number.isInteger(price) && (price >= 100 || price <= -100));
}

/**
 * The history name of a board checkpointed before the name was kept: derived from its
 * first load time, as the stream's epoch of a restored or replicated board was then, so
 * clk tokens issued by such a fleet stay valid across the upgrade.
 */
function legacyHistoryId(firstLoadedAt: number): string {
  return createHash('sha256').update(`board-${firstLoadedAt}`).digest('hex').slice(0, 10);
}
