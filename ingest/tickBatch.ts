// A msgpack batch of price ticks read straight from its bytes into typed arrays: the
// common body a feed sends (one array of {op: "price", id, priceAmerican | dfsMultiplier,
// suspended?} maps), with no object, no id string and no number boxed per change.
//
// The reader takes only what it can read exactly as msgpackr (decode.ts) would, in the
// shapes validation (validate.ts) takes without a question: op "price", an ASCII id of
// four non-empty parts joined by ':' (at most 400 characters), priceAmerican as a
// msgpack integer, dfsMultiplier as an integer or float64, suspended as a boolean, each
// key at most once, and nothing after the array. Anything else (another op, a null, a
// float price, priceDecimal, an unknown key, a body that is not msgpack) makes it
// answer null, and the write path reads the body the general way: every error a body
// can earn is still reported by the one validator, with the same words.

import { TICK_AMERICAN, TICK_DFS, TICK_HAS_SUSPENDED, TICK_SUSPENDED, type SlotTicks } from '../engine/engine.ts';

/** Longest id a tick may name (the price schema's limit, changes.ts). */
const MAX_ID_LENGTH = 400;
const COLON = 0x3a;

/** A batch of ticks as read; validation (validateTicks.ts) fills `slot` and marks DFS rows' ticks. */
export interface TickBatch extends SlotTicks {
  /** The body the ids are read from. */
  readonly body: Uint8Array;
  /** Where each id's bytes start in `body`, and how many there are (ASCII: one byte a character). */
  readonly idStart: Int32Array;
  readonly idLength: Int32Array;
  /** A hash of each id's bytes (TickSlots keys on it). */
  readonly idHash: Int32Array;
}

/** FNV-1a step over one byte (TickSlots hashes its keys the same way). */
export function hashByte(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, 0x01000193);
}
export const HASH_SEED = 0x811c9dc5 | 0;

// the keys a tick may hold, as their bytes
const KEY_OP = bytesOf('op');
const KEY_ID = bytesOf('id');
const KEY_PRICE_AMERICAN = bytesOf('priceAmerican');
const KEY_DFS_MULTIPLIER = bytesOf('dfsMultiplier');
const KEY_SUSPENDED = bytesOf('suspended');
const VALUE_PRICE = bytesOf('price');

function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

function sameBytes(body: Uint8Array, at: number, length: number, expected: Uint8Array): boolean {
  if (length !== expected.length) return false;
  for (let i = 0; i < length; i++) if (body[at + i] !== expected[i]) return false;
  return true;
}

/** Reads a body of ticks, or null when it is anything else (see the header). */
export function readTickBatch(body: Uint8Array): TickBatch | null {
  const end = body.length;
  if (end === 0) return null;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let at = 0;
  const head = body[at++];
  let count: number;
  if (head >= 0x90 && head <= 0x9f) count = head & 0x0f;
  else if (head === 0xdc && at + 2 <= end) {
    count = view.getUint16(at);
    at += 2;
  } else if (head === 0xdd && at + 4 <= end) {
    count = view.getUint32(at);
    at += 4;
  } else return null;
  // the smallest tick is a fixmap of op and id with a 7-byte id: 1 + 3 + 6 + 3 + 8 bytes
  if (count === 0 || count * 21 > end - at) return null;

  const idStart = new Int32Array(count);
  const idLength = new Int32Array(count);
  const idHash = new Int32Array(count);
  const american = new Int32Array(count);
  const dfs = new Float64Array(count);
  const fields = new Uint8Array(count);

  for (let i = 0; i < count; i++) {
    if (at >= end) return null;
    const mapHead = body[at++];
    let keys: number;
    if (mapHead >= 0x80 && mapHead <= 0x8f) keys = mapHead & 0x0f;
    else if (mapHead === 0xde && at + 2 <= end) {
      keys = view.getUint16(at);
      at += 2;
    } else return null;
    if (keys < 2 || keys > 4) return null;
    let seen = 0; // 1 op, 2 id, 4 priceAmerican, 8 dfsMultiplier, 16 suspended
    let flags = 0;
    for (let k = 0; k < keys; k++) {
      // the key: a fixstr (every key a tick may hold is shorter than 32 bytes)
      if (at >= end) return null;
      const keyHead = body[at++];
      if (keyHead < 0xa0 || keyHead > 0xbf) return null;
      const keyLength = keyHead & 0x1f;
      const keyAt = at;
      at += keyLength;
      if (at >= end) return null;
      const valueHead = body[at++];
      if (sameBytes(body, keyAt, keyLength, KEY_ID)) {
        if (seen & 2) return null;
        seen |= 2;
        let length: number;
        if (valueHead >= 0xa0 && valueHead <= 0xbf) length = valueHead & 0x1f;
        else if (valueHead === 0xd9 && at + 1 <= end) length = body[at++];
        else if (valueHead === 0xda && at + 2 <= end) {
          length = view.getUint16(at);
          at += 2;
        } else return null;
        if (length > MAX_ID_LENGTH || at + length > end) return null;
        // four non-empty parts joined by ':', ASCII only
        let hash = HASH_SEED;
        let colons = 0;
        let partLength = 0;
        for (let j = 0; j < length; j++) {
          const byte = body[at + j];
          if (byte >= 0x80) return null;
          if (byte === COLON) {
            if (partLength === 0) return null;
            colons++;
            partLength = 0;
          } else partLength++;
          hash = hashByte(hash, byte);
        }
        if (colons !== 3 || partLength === 0) return null;
        idStart[i] = at;
        idLength[i] = length;
        idHash[i] = hash;
        at += length;
      } else if (sameBytes(body, keyAt, keyLength, KEY_PRICE_AMERICAN)) {
        if (seen & 4) return null;
        seen |= 4;
        let value: number;
        if (valueHead <= 0x7f) value = valueHead;
        else if (valueHead >= 0xe0) value = valueHead - 0x100;
        else if (valueHead === 0xcc && at + 1 <= end) value = body[at++];
        else if (valueHead === 0xcd && at + 2 <= end) {
          value = view.getUint16(at);
          at += 2;
        } else if (valueHead === 0xd0 && at + 1 <= end) value = view.getInt8(at++);
        else if (valueHead === 0xd1 && at + 2 <= end) {
          value = view.getInt16(at);
          at += 2;
        } else if (valueHead === 0xd2 && at + 4 <= end) {
          value = view.getInt32(at);
          at += 4;
        } else if (valueHead === 0xce && at + 4 <= end) {
          value = view.getUint32(at);
          at += 4;
          if (value >= 2 ** 30) return null; // out of any price's range (and of an Int32Array's); validation words it
        } else return null; // 64-bit integers: out of any price's range; validation words it
        american[i] = value;
        flags |= TICK_AMERICAN;
      } else if (sameBytes(body, keyAt, keyLength, KEY_DFS_MULTIPLIER)) {
        if (seen & 8) return null;
        seen |= 8;
        let value: number;
        if (valueHead === 0xcb && at + 8 <= end) {
          value = view.getFloat64(at);
          at += 8;
        } else if (valueHead <= 0x7f) value = valueHead;
        else if (valueHead >= 0xe0) value = valueHead - 0x100;
        else return null;
        if (!Number.isFinite(value)) return null;
        dfs[i] = value;
        flags |= TICK_DFS;
      } else if (sameBytes(body, keyAt, keyLength, KEY_SUSPENDED)) {
        if (seen & 16) return null;
        seen |= 16;
        if (valueHead === 0xc3) flags |= TICK_HAS_SUSPENDED | TICK_SUSPENDED;
        else if (valueHead === 0xc2) flags |= TICK_HAS_SUSPENDED;
        else return null;
      } else if (sameBytes(body, keyAt, keyLength, KEY_OP)) {
        if (seen & 1) return null;
        seen |= 1;
        const length = valueHead - 0xa0;
        if (length !== VALUE_PRICE.length || at + length > end || !sameBytes(body, at, length, VALUE_PRICE)) return null;
        at += length;
      } else return null;
    }
    if ((seen & 3) !== 3) return null;
    fields[i] = flags;
  }
  if (at !== end) return null; // msgpackr refuses trailing bytes
  return { count, body, idStart, idLength, idHash, american, dfs, fields, slot: new Int32Array(count) };
}

/** The id of tick `i` as a string (ASCII). */
export function tickId(batch: TickBatch, i: number): string {
  const start = batch.idStart[i];
  return Buffer.from(batch.body.buffer, batch.body.byteOffset + start, batch.idLength[i]).toString('latin1');
}
