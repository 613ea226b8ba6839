// What one log record holds: a validated batch in its normalized form plus the time it
// is applied at, msgpack-encoded:
//
//   { v: 1, t: <apply time, epoch ms>, c: [LoggedChange, ...] }
//
// Normalized means everything that depends on the board at the time was resolved by
// the validator: prices are American (priceDecimal converted), event times are epoch
// ms, odds rows carry their derived teamId, box rows carry their event's teams and
// league. Replaying a record needs nothing but the state before it: the engine applies
// it at `t` (never the replaying machine's clock) and the cold store upserts its cold
// records, so a replay rebuilds the same board, the same seq and the same delta feed.
// The seq is not stored: it is a function of the state and the batch.

import { Packr } from 'msgpackr';
import { TICK_AMERICAN, TICK_AMERICAN_NULL, TICK_DFS, TICK_HAS_SUSPENDED, TICK_SUSPENDED, type Change, type PriceByIdChange } from '../engine/engine.ts';
import type { EventRecord, EventStatus, OddsInput, SourceRecord } from '../engine/model.ts';
import type { ColdRecordChange } from '../persistence/coldWrites.ts';
import { copyBytes, viewOf } from './idBytes.ts';
import type { SpareBuffers } from './spareBuffers.ts';
import type { TickBatch } from './tickBatch.ts';

export const RECORD_VERSION = 1;

export type LoggedChange =
  | { op: 'upsert'; row: OddsInput }
  | PriceByIdChange
  | { op: 'remove'; id: string }
  | { op: 'status'; eventId: string; status: EventStatus }
  | { op: 'source'; source: SourceRecord }
  | { op: 'event'; event: EventRecord }
  | Exclude<ColdRecordChange, { op: 'event' }>;

export interface BatchRecord {
  /** Apply time, epoch ms. */
  time: number;
  changes: LoggedChange[];
}

const packr = new Packr({ useRecords: false });

/**
 * The record as msgpack. Price ticks, nearly every change a feed sends, are written by
 * hand (a general encoder walks each object's keys and checks each value's type);
 * anything else goes through msgpackr. Both are plain msgpack that decodeRecord (any
 * msgpack reader) reads back to the same values: a tick's map holds op, id and the
 * price fields it has, its id as a str16, integer prices as int32, other numbers as
 * float64.
 */
export function encodeRecord(record: BatchRecord): Buffer {
  const changes = record.changes;
  const out = new RecordWriter(64 + changes.length * 96);
  out.byte(0x83); // fixmap of 3: v, t, c
  out.ascii(KEY_V);
  out.byte(RECORD_VERSION);
  out.ascii(KEY_T);
  out.float64(record.time);
  out.ascii(KEY_C);
  out.byte(0xdd); // array32
  out.uint32(changes.length);
  for (let i = 0; i < changes.length; i++) {
    const change = changes[i];
    if (change.op !== 'priceById' || !out.tick(change)) out.bytes(packr.pack(change));
  }
  return out.done();
}

/**
 * encodeRecord's bytes for a batch of validated ticks read straight from a body
 * (tickBatch.ts, validateTicks.ts): the same map per tick, written from the typed
 * arrays with the id's bytes copied from the body (ASCII, so the same as its UTF-8),
 * into a block from `spares` (the caller gives it back once the log is done with it).
 */
export function encodeTickRecord(time: number, ticks: TickBatch, spares: SpareBuffers): Buffer {
  const { count, idStart, idLength, american, dfs, fields } = ticks;
  let size = 1 + KEY_V.length + 1 + KEY_T.length + 9 + KEY_C.length + 5; // fixmap, v, t, c and the array32 header
  for (let i = 0; i < count; i++) {
    const f = fields[i];
    size += 1 + OP_PRICE_BY_ID.length + 3 + idLength[i];
    if ((f & TICK_AMERICAN) !== 0) size += KEY_PRICE_AMERICAN.length + ((f & TICK_AMERICAN_NULL) !== 0 ? 1 : 5);
    if ((f & TICK_DFS) !== 0) size += KEY_DFS_MULTIPLIER.length + 9;
    if ((f & TICK_HAS_SUSPENDED) !== 0) size += KEY_SUSPENDED.length + 1;
  }
  const out = Buffer.from(spares.take(size), 0, size);
  const to = viewOf(out);
  const from = ticks.view;
  let at = 0;
  out[at++] = 0x83;
  at += KEY_V.copy(out, at);
  out[at++] = RECORD_VERSION;
  at += KEY_T.copy(out, at);
  out[at] = 0xcb;
  to.setFloat64(at + 1, time);
  at += 9;
  at += KEY_C.copy(out, at);
  out[at] = 0xdd;
  to.setUint32(at + 1, count);
  at += 5;
  // the fixed keys four bytes at a time (idBytes.ts: a call per key costs more than the copy)
  const opKeys = TICK_KEYS.op;
  const americanKey = TICK_KEYS.priceAmerican;
  const dfsKey = TICK_KEYS.dfsMultiplier;
  const suspendedKey = TICK_KEYS.suspended;
  for (let i = 0; i < count; i++) {
    const f = fields[i];
    const hasAmerican = (f & TICK_AMERICAN) !== 0;
    const hasDfs = (f & TICK_DFS) !== 0;
    const hasSuspended = (f & TICK_HAS_SUSPENDED) !== 0;
    out[at++] = 0x80 | (2 + (hasAmerican ? 1 : 0) + (hasDfs ? 1 : 0) + (hasSuspended ? 1 : 0));
    copyBytes(opKeys, 0, to, at, opKeys.byteLength);
    at += opKeys.byteLength;
    const length = idLength[i];
    out[at] = 0xda;
    to.setUint16(at + 1, length);
    at += 3;
    copyBytes(from, idStart[i], to, at, length);
    at += length;
    if (hasAmerican) {
      copyBytes(americanKey, 0, to, at, americanKey.byteLength);
      at += americanKey.byteLength;
      if ((f & TICK_AMERICAN_NULL) !== 0) out[at++] = 0xc0;
      else {
        out[at] = 0xd2;
        to.setInt32(at + 1, american[i]);
        at += 5;
      }
    }
    if (hasDfs) {
      copyBytes(dfsKey, 0, to, at, dfsKey.byteLength);
      at += dfsKey.byteLength;
      out[at] = 0xcb;
      to.setFloat64(at + 1, dfs[i]);
      at += 9;
    }
    if (hasSuspended) {
      copyBytes(suspendedKey, 0, to, at, suspendedKey.byteLength);
      at += suspendedKey.byteLength;
      out[at++] = (f & TICK_SUSPENDED) !== 0 ? 0xc3 : 0xc2;
    }
  }
  return out;
}

// msgpack of the fixed strings: a fixstr header (0xa0 | length), then the ASCII bytes
const fixstr = (text: string): Buffer => Buffer.concat([Buffer.from([0xa0 | text.length]), Buffer.from(text, 'latin1')]);
const KEY_V = fixstr('v');
const KEY_T = fixstr('t');
const KEY_C = fixstr('c');
const OP_PRICE_BY_ID = Buffer.concat([fixstr('op'), fixstr('priceById'), fixstr('id')]);
const KEY_PRICE_AMERICAN = fixstr('priceAmerican');
const KEY_DFS_MULTIPLIER = fixstr('dfsMultiplier');
const KEY_SUSPENDED = fixstr('suspended');
const INT32_LIMIT = 2 ** 31;
/** The fixed keys of a tick as DataViews, for encodeTickRecord. */
const TICK_KEYS = {
  op: viewOf(OP_PRICE_BY_ID),
  priceAmerican: viewOf(KEY_PRICE_AMERICAN),
  dfsMultiplier: viewOf(KEY_DFS_MULTIPLIER),
  suspended: viewOf(KEY_SUSPENDED),
};

/** Writes `text` as UTF-8 at `at` (room is made); returns the byte count. Ids are ASCII: a loop beats a call into the encoder. */
function writeUtf8(buffer: Buffer, text: string, at: number): number {
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return buffer.write(text, at, 'utf8');
    buffer[at + i] = code;
  }
  return n;
}

/** An output buffer that doubles as it fills. */
class RecordWriter {
  private buffer: Buffer;
  private at = 0;

  constructor(size: number) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  byte(value: number): void {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  uint32(value: number): void {
    this.room(4);
    this.buffer.writeUInt32BE(value, this.at);
    this.at += 4;
  }

  float64(value: number): void {
    this.room(9);
    this.buffer[this.at] = 0xcb;
    this.buffer.writeDoubleBE(value, this.at + 1);
    this.at += 9;
  }

  ascii(bytes: Buffer): void {
    this.bytes(bytes);
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** Writes a tick; false (nothing written) for a field value the hand encoder does not cover. */
  tick(change: PriceByIdChange): boolean {
    const { id, priceAmerican: american, dfsMultiplier: dfs, suspended } = change;
    if (american !== undefined && american !== null && !(Number.isInteger(american) && Math.abs(american) < INT32_LIMIT)) return false;
    if (dfs !== undefined && dfs !== null && typeof dfs !== 'number') return false;
    if (suspended !== undefined && typeof suspended !== 'boolean') return false;
    const fields = 2 + (american !== undefined ? 1 : 0) + (dfs !== undefined ? 1 : 0) + (suspended !== undefined ? 1 : 0);
    // the id: at most 3 bytes of UTF-8 per UTF-16 unit; a str16 holds any id (400 characters at most)
    this.room(1 + OP_PRICE_BY_ID.length + 3 + id.length * 3 + 15 + 9 + 15 + 9 + 11 + 1);
    const b = this.buffer; // room() above made space for the whole tick: no reallocation below
    const start = this.at;
    b[this.at++] = 0x80 | fields;
    b.set(OP_PRICE_BY_ID, this.at);
    this.at += OP_PRICE_BY_ID.length;
    const length = writeUtf8(b, id, this.at + 3);
    if (length > 0xffff) {
      this.at = start;
      return false;
    }
    b[this.at] = 0xda;
    b.writeUInt16BE(length, this.at + 1);
    this.at += 3 + length;
    if (american !== undefined) {
      this.ascii(KEY_PRICE_AMERICAN);
      if (american === null) this.byte(0xc0);
      else {
        b[this.at] = 0xd2;
        b.writeInt32BE(american, this.at + 1);
        this.at += 5;
      }
    }
    if (dfs !== undefined) {
      this.ascii(KEY_DFS_MULTIPLIER);
      if (dfs === null) this.byte(0xc0);
      else this.float64(dfs);
    }
    if (suspended !== undefined) {
      this.ascii(KEY_SUSPENDED);
      this.byte(suspended ? 0xc3 : 0xc2);
    }
    return true;
  }

  done(): Buffer {
    return this.buffer.subarray(0, this.at);
  }
}

export function decodeRecord(payload: Uint8Array): BatchRecord {
  const raw = packr.unpack(payload) as { v?: unknown; t?: unknown; c?: unknown };
  if (raw === null || typeof raw !== 'object' || raw.v !== RECORD_VERSION || typeof raw.t !== 'number' || !Array.isArray(raw.c)) {
    throw new Error(`not a version ${RECORD_VERSION} batch record`);
  }
  return { time: raw.t, changes: raw.c as LoggedChange[] };
}

/** The engine's share of a batch (events go to both the engine and the cold store). */
export function engineChanges(changes: readonly LoggedChange[]): Change[] {
  const out: Change[] = [];
  for (const change of changes) if (!isColdOnly(change)) out.push(change as Change);
  return out;
}

/**
 * engineChanges, keeping `slots` (one per change, as validation resolved them) parallel
 * to what the engine gets; the batch itself when it has no cold change (a batch of ticks).
 */
export function engineShare(changes: readonly LoggedChange[], slots: readonly number[] | undefined): { changes: readonly Change[]; slots: readonly number[] | undefined } {
  let cold = 0;
  for (let i = 0; i < changes.length; i++) if (isColdOnly(changes[i])) cold++;
  if (cold === 0) return { changes: changes as readonly Change[], slots };
  const out: Change[] = [];
  const outSlots: number[] | undefined = slots === undefined ? undefined : [];
  for (let i = 0; i < changes.length; i++) {
    const change = changes[i];
    if (isColdOnly(change)) continue;
    out.push(change as Change);
    outSlots?.push(slots![i]);
  }
  return { changes: out, slots: outSlots };
}

function isColdOnly(change: LoggedChange): boolean {
  return change.op === 'team' || change.op === 'player' || change.op === 'season' || change.op === 'boxscore';
}

/** The cold store's share of a batch. */
export function coldChanges(changes: readonly LoggedChange[]): ColdRecordChange[] {
  const out: ColdRecordChange[] = [];
  for (const change of changes) {
    if (change.op === 'team' || change.op === 'player' || change.op === 'season' || change.op === 'boxscore' || change.op === 'event') out.push(change);
  }
  return out;
}
