// The hot state of an engine as one msgpack document, and back. What is saved is what
// cannot be derived: every column of the store (the used slots, raw bytes per typed
// array, never element by element), the string pools, the free list, the history ring
// slabs, the event table, the delta feed's change log and tombstone queue, the sources
// and the counters (seq, last change time, tombstone horizon, first load time).
// Derived state is rebuilt by restoreEngine: the id table, the posting lists (live rows
// sorted once by the integer ranks of their id parts, as a board load does), live
// counts; per-row fragments, is_main flags, signal books and snapshot pieces start
// empty and fill on first use, as after a load.
//
// The document is versioned (CHECKPOINT_VERSION); a reader refuses another version.

import { Packr } from 'msgpackr';
import type { Clock } from './clock.ts';
import type { ChangeLogState, TombstoneQueueState } from './changeLog.ts';
import { OddsEngine, type EngineCounters, type EngineOptions } from './engine.ts';
import type { RingPoolState } from './historyRing.ts';
import type { StringPool } from './intern.ts';
import { sortByOrder } from './loadBoard.ts';
import type { SourceRecord } from './model.ts';
import type { OddsStore } from './oddsStore.ts';
import type { NumericArray } from './columns.ts';

export const CHECKPOINT_VERSION = 1;

const POOLS = ['events', 'books', 'leagues', 'markets', 'subtypes', 'periods', 'selectionIds', 'labels', 'players', 'teams'] as const;
const COLUMNS = [
  'state', 'event', 'book', 'league', 'market', 'subtype', 'period', 'selectionId', 'selection', 'side', 'teamSide',
  'teamName', 'priceAmerican', 'dfsMultiplier', 'line', 'player', 'playerName', 'team', 'suspended', 'eventStartTime',
  'updated', 'scope', 'segment', 'seq', 'ring',
] as const;
const EVENT_COLUMNS = ['known', 'league', 'home', 'away', 'startTime', 'status', 'futures'] as const;

type PoolName = (typeof POOLS)[number];
type ColumnName = (typeof COLUMNS)[number];
type EventColumnName = (typeof EVENT_COLUMNS)[number];

export interface EngineState {
  version: number;
  counters: EngineCounters;
  sources: SourceRecord[];
  pools: Record<PoolName, readonly string[]>;
  size: number;
  free: Int32Array;
  columns: Record<ColumnName, NumericArray>;
  rings: RingPoolState[];
  events: Record<EventColumnName, NumericArray>;
  changeLog: ChangeLogState;
  tombstones: TombstoneQueueState;
}

/** How the state is packed (a packer in another thread uses the same options). moreTypes: typed arrays travel as one extension each (their bytes as they are). */
export const CHECKPOINT_PACK_OPTIONS = { moreTypes: true, useRecords: false } as const;
const packr = new Packr(CHECKPOINT_PACK_OPTIONS);

/** The engine's hot state as a plain object (arrays are views of the live ones: encode before the next apply). */
export function engineState(engine: OddsEngine): EngineState {
  const s = engine.store;
  const pools = {} as Record<PoolName, readonly string[]>;
  for (const name of POOLS) pools[name] = (s[name] as StringPool).all();
  const columns = {} as Record<ColumnName, NumericArray>;
  for (const name of COLUMNS) columns[name] = (s[name] as NumericArray).subarray(0, s.size);
  const events = {} as Record<EventColumnName, NumericArray>;
  for (const name of EVENT_COLUMNS) events[name] = engine.eventTable[name];
  return {
    version: CHECKPOINT_VERSION,
    counters: engine.counters(),
    sources: engine.sources.list(),
    pools,
    size: s.size,
    free: s.freeList(),
    columns,
    rings: engine.rings.saveState(),
    events,
    changeLog: engine.changeLog.saveState(),
    tombstones: engine.tombstoneState(),
  };
}

/**
 * A copy of the engine's hot state taken in steps: begin() (synchronous, cheap) takes
 * the small parts and allocates the big arrays, then each copyStep moves up to
 * `maxBytes` of typed-array contents. The caller keeps every write away from the engine
 * until done() (the write path holds its applies), and may serve reads between steps:
 * the event loop is never held for the whole copy. The copy owns all its arrays, so it
 * can be packed later, or elsewhere (transferred to a worker thread).
 */
export class EngineStateCopy {
  readonly state: EngineState;
  private readonly sources: NumericArray[] = [];
  private readonly targets: NumericArray[] = [];
  private job = 0;
  private offset = 0;

  constructor(engine: OddsEngine) {
    const live = engineState(engine);
    const columns = {} as Record<ColumnName, NumericArray>;
    for (const name of COLUMNS) columns[name] = this.later(live.columns[name]);
    const events = {} as Record<EventColumnName, NumericArray>;
    for (const name of EVENT_COLUMNS) events[name] = this.later(live.events[name]);
    const pools = {} as Record<PoolName, readonly string[]>;
    for (const name of POOLS) pools[name] = live.pools[name].slice(); // strings are immutable: copying the array is enough
    this.state = {
      ...live,
      pools,
      columns,
      events,
      // the free lists, change log and tombstone queue come out of saveState as copies already
      rings: live.rings.map((ring) => ({
        ...ring,
        words: ring.words.map((slab) => this.later(slab) as Uint32Array),
        dm: ring.dm.map((slab) => this.later(slab) as Float64Array),
        meta: this.later(ring.meta) as Uint8Array,
      })),
    };
  }

  /** Bytes the steps copy in all. */
  get totalBytes(): number {
    let bytes = 0;
    for (const target of this.targets) bytes += target.byteLength;
    return bytes;
  }

  /** Copies up to about `maxBytes`; true once everything is copied. */
  copyStep(maxBytes: number): boolean {
    let budget = maxBytes;
    while (this.job < this.sources.length && budget > 0) {
      const from = this.sources[this.job];
      const to = this.targets[this.job];
      const count = Math.min(from.length - this.offset, Math.max(1, Math.floor(budget / from.BYTES_PER_ELEMENT)));
      to.set(from.subarray(this.offset, this.offset + count) as never, this.offset);
      this.offset += count;
      budget -= count * from.BYTES_PER_ELEMENT;
      if (this.offset === from.length) {
        this.job++;
        this.offset = 0;
      }
    }
    return this.done();
  }

  done(): boolean {
    return this.job === this.sources.length;
  }

  /** Every ArrayBuffer the copy owns (what a transfer to a worker thread moves). */
  buffers(): ArrayBuffer[] {
    const out: ArrayBuffer[] = [];
    const add = (array: NumericArray) => out.push(array.buffer as ArrayBuffer);
    this.targets.forEach(add);
    add(this.state.free);
    add(this.state.changeLog.slots);
    add(this.state.changeLog.times);
    add(this.state.tombstones.slots);
    add(this.state.tombstones.seqs);
    add(this.state.tombstones.times);
    for (const ring of this.state.rings) add(ring.free);
    return [...new Set(out)];
  }

  private later(from: NumericArray): NumericArray {
    const to = new (from.constructor as new (length: number) => NumericArray)(from.length);
    this.sources.push(from);
    this.targets.push(to);
    return to;
  }
}

export function encodeEngineState(engine: OddsEngine): Buffer {
  return packr.pack(engineState(engine));
}

/** A new engine holding the state `bytes` (from encodeEngineState) describe. */
export function decodeEngineState(bytes: Uint8Array, clock: Clock, options: EngineOptions = {}): OddsEngine {
  const state = packr.unpack(bytes) as EngineState;
  if (state === null || typeof state !== 'object' || state.version !== CHECKPOINT_VERSION) {
    throw new Error(`checkpoint version ${String((state as EngineState | null)?.version)} is not ${CHECKPOINT_VERSION}`);
  }
  return restoreEngine(state, clock, options);
}

export function restoreEngine(state: EngineState, clock: Clock, options: EngineOptions = {}): OddsEngine {
  const engine = new OddsEngine(clock, { ...options, initialCapacity: Math.max(16, state.size + (state.size >>> 4)) });
  const s: OddsStore = engine.store;
  for (const name of POOLS) (s[name] as StringPool).restore(state.pools[name]);
  s.restoreSlots(state.size, state.free);
  for (const name of COLUMNS) {
    const saved = state.columns[name];
    if (saved.length !== state.size) throw new Error(`checkpoint column ${name} holds ${saved.length} slots, expected ${state.size}`);
    (s[name] as NumericArray).set(saved as never);
  }
  const table = engine.eventTable;
  const eventCount = state.events.known.length;
  for (const name of EVENT_COLUMNS) {
    const column = table[name] as NumericArray;
    const restored = new (column.constructor as new (length: number) => NumericArray)(eventCount);
    restored.set(state.events[name] as never);
    (table as unknown as Record<string, NumericArray>)[name] = restored;
  }
  for (const source of state.sources) engine.sources.register(source);
  engine.rings.restoreState(state.rings);
  engine.changeLog.restoreState(state.changeLog);
  engine.restored(state.counters, state.tombstones, (slots, count) => sortByOrder(engine, slots, count));
  return engine;
}
