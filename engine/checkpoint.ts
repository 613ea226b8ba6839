// The hot state of an engine as one checkpoint body, and back. What is saved is what
// cannot be derived: every column of the store (the used slots, raw bytes per typed
// array, never element by element), the string pools, the free list, the history ring
// slabs, the event table, the delta feed's change log and tombstone queue, the sources
// and the counters (seq, last change time, tombstone horizon, first load time).
// What a restore would otherwise derive from the rows at length is saved too (`derived`):
// the id table and the posting lists, taken back as they were once checked against the
// rows (a restore of the large board then sorts nothing and fills no table row by row);
// a checkpoint without them (earlier builds), or with ones that do not fit, gets them
// rebuilt by restoreEngine (live rows sorted once by the integer ranks of their id parts,
// as a board load does). Live counts are counted from the rows. Per-row fragments,
// is_main flags, signal books and snapshot pieces start empty and fill on first use, as
// after a load. Beside the board, the named parts the engine's listeners keep that the
// board does not determine (the steam detector's histories and moves;
// OddsEngine.saveWithCheckpoints), handed back after a restore.
//
// The state's shape is versioned (CHECKPOINT_VERSION); a reader refuses another version.
// How a body lays the state out is the body format: 1, one msgpack document (typed arrays
// as msgpackr extensions), still read; 2, a msgpack manifest and the typed arrays as raw
// blocks (engine/checkpointBlocks.ts), what is written now. readEngineState tells them
// apart by the body's first bytes.

import { crc32 as zlibCrc32 } from 'node:zlib';
import { Packr } from 'msgpackr';
import { blockBody, blocksCrc, isBlockBody, memoryBody, planBlocks, readBlockBody, type BlockBody, type BodySource } from './checkpointBlocks.ts';
import type { Clock } from './clock.ts';
import type { ChangeLogState, TombstoneQueueState } from './changeLog.ts';
import { OddsEngine, type EngineCounters, type EngineOptions } from './engine.ts';
import { RINGS_PER_SLAB, type RingPoolState } from './historyRing.ts';
import type { StringPool } from './intern.ts';
import { sortByOrder } from './loadBoard.ts';
import type { SourceRecord } from './model.ts';
import { doubledCapacity, type OddsStore } from './oddsStore.ts';
import type { NumericArray } from './columns.ts';
import type { PostingList } from './postingList.ts';

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
  /**
   * What the engine's listeners saved beside the board (OddsEngine.saveWithCheckpoints),
   * by name; absent in checkpoints written before there were any (a listener then starts
   * from the board alone).
   */
  parts?: Record<string, unknown>;
  /**
   * What a restore would otherwise derive from the rows, as it was (absent in checkpoints
   * of earlier builds, whose restore rebuilds it): taken as it is when it fits the rows
   * (OddsEngine.restoredFromSaved), rebuilt otherwise.
   */
  derived?: SavedDerived;
}

/**
 * The derived state a checkpoint keeps: the id table as it is, the posting lists
 * flattened (per family in Indexes.families order, each id's list length, -1 for none;
 * then every list's slots one after another) and the live count.
 */
export interface SavedDerived {
  keyTable: Int32Array;
  keyCount: number;
  lengths: Int32Array[];
  items: Int32Array;
  live: number;
}

/** Per family, each id's list length (-1: none), and the total: the layout of SavedDerived. */
function listLengths(families: readonly (readonly (PostingList | undefined)[])[]): { lengths: Int32Array[]; total: number } {
  let total = 0;
  const lengths = families.map((family) => {
    const out = new Int32Array(family.length);
    for (let i = 0; i < family.length; i++) {
      const list = family[i];
      out[i] = list === undefined ? -1 : list.length;
      total += list === undefined ? 0 : list.length;
    }
    return out;
  });
  return { lengths, total };
}

/** The engine's derived state, flattened now (a copy of the lists; the id table is the live one). */
function savedDerived(engine: OddsEngine): SavedDerived {
  const derived = engine.derivedState();
  const { lengths, total } = listLengths(derived.families);
  const items = new Int32Array(total);
  let at = 0;
  for (const family of derived.families) {
    for (const list of family) {
      if (list === undefined || list.length === 0) continue;
      items.set(list.items.subarray(0, list.length), at);
      at += list.length;
    }
  }
  return { keyTable: derived.keys.table, keyCount: derived.keys.count, lengths, items, live: derived.live };
}

/** How the state is packed (a packer in another thread uses the same options). moreTypes: typed arrays travel as one extension each (their bytes as they are). */
export const CHECKPOINT_PACK_OPTIONS = { moreTypes: true, useRecords: false } as const;
const packr = new Packr(CHECKPOINT_PACK_OPTIONS);

/** The engine's hot state as a plain object (arrays are views of the live ones: encode before the next apply). */
export function engineState(engine: OddsEngine): EngineState {
  return { ...baseState(engine), derived: savedDerived(engine) };
}

/** engineState without the derived state (EngineStateCopy copies that in steps). */
function baseState(engine: OddsEngine): EngineState {
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
    rings: engine.rings.saveState().map(trimLastSlab),
    events,
    changeLog: engine.changeLog.saveState(),
    tombstones: engine.tombstoneState(),
    parts: engine.checkpointPartsState(),
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
  /** The state with the live typed arrays in it, until copyStep has replaced each with its copy. */
  private readonly copied: EngineState;
  private readonly jobs: { from: NumericArray; to: NumericArray | null; place: (copy: NumericArray) => void }[] = [];
  private job = 0;
  private offset = 0;

  constructor(engine: OddsEngine) {
    // only the small parts here; each big array is allocated and copied by the steps
    const live = baseState(engine);
    const columns = { ...live.columns };
    for (const name of COLUMNS) this.later(live.columns[name], (copy) => (columns[name] = copy));
    const events = { ...live.events };
    for (const name of EVENT_COLUMNS) this.later(live.events[name], (copy) => (events[name] = copy));
    const pools = {} as Record<PoolName, readonly string[]>;
    for (const name of POOLS) pools[name] = live.pools[name].slice(); // strings are immutable: copying the array is enough
    const rings = live.rings.map((ring) => {
      const saved: RingPoolState = { ...ring, words: ring.words.slice(), dm: ring.dm.slice() };
      ring.words.forEach((slab, i) => this.later(slab, (copy) => (saved.words[i] = copy as Uint32Array)));
      ring.dm.forEach((slab, i) => this.later(slab, (copy) => (saved.dm[i] = copy as Float64Array)));
      this.later(ring.meta, (copy) => (saved.meta = copy as Uint8Array));
      return saved;
    });
    // the derived state: the id table, and the posting lists into one array, list by list
    const derivedNow = engine.derivedState();
    const { lengths, total } = listLengths(derivedNow.families);
    const items = new Int32Array(total);
    let at = 0;
    for (const family of derivedNow.families) {
      for (const list of family) {
        if (list === undefined || list.length === 0) continue;
        this.jobs.push({ from: list.items.subarray(0, list.length), to: items.subarray(at, at + list.length), place: () => {} });
        at += list.length;
      }
    }
    const derived: SavedDerived = { keyTable: derivedNow.keys.table, keyCount: derivedNow.keys.count, lengths, items, live: derivedNow.live };
    this.later(derivedNow.keys.table, (copy) => (derived.keyTable = copy as Int32Array));
    this.owned.push(items, ...lengths);
    // the free lists, change log and tombstone queue come out of engineState as copies already
    this.copied = { ...live, pools, columns, events, rings, derived };
  }

  /** Arrays made for the copy outright (not by a job), moved with it to a worker thread. */
  private readonly owned: NumericArray[] = [];

  /** The copied state (once done()). */
  get state(): EngineState {
    if (!this.done()) throw new Error('the engine state is not copied yet');
    return this.copied;
  }

  /** Copies up to about `maxBytes`; true once everything is copied. */
  copyStep(maxBytes: number): boolean {
    let budget = maxBytes;
    while (this.job < this.jobs.length && budget > 0) {
      const job = this.jobs[this.job];
      const from = job.from;
      const to = (job.to ??= new (from.constructor as new (length: number) => NumericArray)(from.length));
      const count = Math.min(from.length - this.offset, Math.max(1, Math.floor(budget / from.BYTES_PER_ELEMENT)));
      to.set(from.subarray(this.offset, this.offset + count) as never, this.offset);
      this.offset += count;
      budget -= count * from.BYTES_PER_ELEMENT + 256; // a little for each array, so many small ones make a step too
      if (this.offset >= from.length) {
        job.place(to);
        this.job++;
        this.offset = 0;
      }
    }
    return this.done();
  }

  done(): boolean {
    return this.job === this.jobs.length;
  }

  /** Every ArrayBuffer the copy owns (what a transfer to a worker thread moves). */
  buffers(): ArrayBuffer[] {
    const state = this.state;
    const out: ArrayBuffer[] = [];
    const add = (array: NumericArray) => out.push(array.buffer as ArrayBuffer);
    for (const job of this.jobs) add(job.to!);
    add(state.free);
    add(state.changeLog.slots);
    add(state.changeLog.times);
    add(state.tombstones.slots);
    add(state.tombstones.seqs);
    add(state.tombstones.times);
    for (const ring of state.rings) add(ring.free);
    for (const array of this.owned) add(array);
    return [...new Set(out)];
  }

  private later(from: NumericArray, place: (copy: NumericArray) => void): void {
    this.jobs.push({ from, to: null, place });
  }
}

/**
 * A ring pool's slabs are allocated whole (a thousand rings at a time) and filled from
 * the front, so the last one is mostly zeros on a small or young board. It is saved
 * without its trailing zeros, with the full lengths beside it; restoring puts the
 * zeros back, so the slab is the same bytes (a small board's checkpoint shrinks from
 * 1.4 MB to a few kilobytes).
 */
interface SavedRingPool extends RingPoolState {
  /** Full length of a slab's words and dm arrays (absent in checkpoints that saved whole slabs). */
  slabWords?: number;
  slabDm?: number;
}

function trimLastSlab(ring: RingPoolState): SavedRingPool {
  const last = ring.words.length - 1;
  if (last < 0) return ring;
  const words = ring.words[last]!;
  const dm = ring.dm[last]!;
  // rings are handed out from the front and none past ring.rings was ever written, so
  // the scan for the last non-zero word starts at the end of the last ring handed out,
  // not at the end of the slab (on a small board, a scan of ~1 MB of zeros each time)
  const ringsInLast = Math.min(RINGS_PER_SLAB, Math.max(0, ring.rings - last * RINGS_PER_SLAB));
  let w = (words.length / RINGS_PER_SLAB) * ringsInLast;
  while (w > 0 && words[w - 1] === 0) w--;
  // dm compared by its bits: -0 is not zero bytes
  const dmBits = new Uint32Array(dm.buffer, dm.byteOffset, dm.length * 2);
  let d = ((dm.length * 2) / RINGS_PER_SLAB) * ringsInLast;
  while (d > 0 && dmBits[d - 1] === 0) d--;
  const trimmedWords = ring.words.slice();
  const trimmedDm = ring.dm.slice();
  trimmedWords[last] = words.subarray(0, w);
  trimmedDm[last] = dm.subarray(0, Math.ceil(d / 2));
  return { ...ring, words: trimmedWords, dm: trimmedDm, slabWords: words.length, slabDm: dm.length };
}

function fullLastSlab(saved: SavedRingPool): RingPoolState {
  const { slabWords, slabDm, ...ring } = saved;
  const last = ring.words.length - 1;
  if (last < 0 || slabWords === undefined || slabDm === undefined) return ring;
  if (ring.words[last]!.length < slabWords) {
    const words = new Uint32Array(slabWords);
    words.set(ring.words[last]!);
    ring.words = ring.words.slice();
    ring.words[last] = words;
  }
  if (ring.dm[last]!.length < slabDm) {
    const dm = new Float64Array(slabDm);
    dm.set(ring.dm[last]!);
    ring.dm = ring.dm.slice();
    ring.dm[last] = dm;
  }
  return ring;
}

/**
 * A state's body (format 2) packed on this thread: the manifest here, the blocks as they
 * are (the parts point into the state's arrays: write them before those change). Large
 * boards pack the manifest and take the blocks' CRC in a worker thread instead
 * (ingest/durableBoard.ts).
 */
export function packStateHere(state: EngineState): BlockBody {
  const plan = planBlocks(state);
  // a copy: the packer's next pack reuses its buffer
  const manifest = Buffer.from(packr.pack(plan.manifest));
  return blockBody(manifest, zlibCrc32(manifest) >>> 0, plan.blocks, blocksCrc(plan.blocks));
}

/** The engine's state as one body (format 2) in one buffer (replicas' checkpoints, tests). */
export function encodeEngineState(engine: OddsEngine): Buffer {
  const body = packStateHere(engineState(engine));
  return Buffer.concat(body.parts, body.length);
}

/**
 * The state a body holds, read from `source` in order, either format. Nothing is
 * unpacked or handed back before source.verify() passed, but a format 2 body's manifest,
 * which has a CRC of its own. Throws a plain Error for a body that does not decode.
 */
export function readEngineState(source: BodySource): EngineState {
  const first = new Uint8Array(Math.min(8, source.length));
  source.read(first);
  let state: EngineState;
  if (isBlockBody(first)) {
    // the store's columns are read into arrays of the capacity restoreEngine's store will have, and adopted
    state = readBlockBody(source, packr, (path, length) => (path.length === 2 && path[0] === 'columns' ? doubledCapacity(0, restoredCapacity(length)) : length)) as EngineState;
  } else {
    // format 1: one msgpack document, unpacked once the whole body is read and verified
    let bytes: Uint8Array;
    const whole: unknown = 'bytes' in source ? source.bytes : undefined;
    if (whole instanceof Uint8Array && whole.length === source.length) bytes = whole;
    else {
      bytes = Buffer.allocUnsafe(source.length);
      bytes.set(first);
      source.read(bytes.subarray(first.length));
    }
    source.verify();
    state = packr.unpack(bytes) as EngineState;
  }
  if (state === null || typeof state !== 'object' || state.version !== CHECKPOINT_VERSION) {
    throw new Error(`checkpoint version ${String((state as EngineState | null)?.version)} is not ${CHECKPOINT_VERSION}`);
  }
  return state;
}

/** A new engine holding the state `bytes` (a body from encodeEngineState, or of format 1) describe. */
export function decodeEngineState(bytes: Uint8Array, clock: Clock, options: EngineOptions = {}): OddsEngine {
  return restoreEngine(readEngineState(memoryBody(bytes)), clock, options);
}

/** The store's capacity after a restore of `size` slots: room to grow by a sixteenth before the first doubling. */
function restoredCapacity(size: number): number {
  return Math.max(16, size + (size >>> 4));
}

/**
 * A saved column as the store's column `current` (allocated at the store's capacity):
 * the saved array's own memory when readEngineState left room for that capacity, so
 * the bytes read from the file are not copied again; a copy into `current` otherwise
 * (a format 1 body, a body in memory). The slots past `size` hold what `current`'s
 * unused slots hold (NO_RING for the ring column, zero for the others).
 */
function restoredColumn(current: NumericArray, saved: NumericArray, size: number): NumericArray {
  const Type = current.constructor as new (buffer: ArrayBufferLike, offset: number, length: number) => NumericArray;
  if (saved.constructor === current.constructor && saved.byteOffset === 0 && saved.buffer.byteLength >= current.byteLength) {
    const column = new Type(saved.buffer, 0, current.length);
    const unused = current.length > size ? current[size]! : 0;
    if (unused !== 0) column.fill(unused, size);
    return column;
  }
  current.set(saved as never);
  return current;
}

export function restoreEngine(state: EngineState, clock: Clock, options: EngineOptions = {}): OddsEngine {
  const engine = new OddsEngine(clock, { ...options, initialCapacity: restoredCapacity(state.size) });
  const s: OddsStore = engine.store;
  for (const name of POOLS) (s[name] as StringPool).restore(state.pools[name]);
  s.restoreSlots(state.size, state.free);
  for (const name of COLUMNS) {
    const saved = state.columns[name];
    if (saved.length !== state.size) throw new Error(`checkpoint column ${name} holds ${saved.length} slots, expected ${state.size}`);
    (s as unknown as Record<ColumnName, NumericArray>)[name] = restoredColumn(s[name] as NumericArray, saved, state.size);
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
  engine.rings.restoreState(state.rings.map(fullLastSlab));
  engine.changeLog.restoreState(state.changeLog);
  // the derived state as the checkpoint kept it when it fits the rows; rebuilt otherwise
  const derived = state.derived;
  const taken = derived !== undefined && derived !== null && typeof derived === 'object' && engine.restoredFromSaved(state.counters, state.tombstones, derived);
  if (!taken) engine.restored(state.counters, state.tombstones, (slots, count) => sortByOrder(engine, slots, count));
  if (state.parts !== undefined && state.parts !== null && typeof state.parts === 'object') engine.restoreCheckpointParts(state.parts);
  return engine;
}
