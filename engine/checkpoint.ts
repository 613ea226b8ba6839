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

// moreTypes: typed arrays travel as one extension each (their bytes as they are)
const packr = new Packr({ moreTypes: true, useRecords: false });

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
