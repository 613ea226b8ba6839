// A msgpack batch of price ticks read straight from its bytes into typed arrays: the
// common body a feed sends (one array of {op: "price", id, priceAmerican | dfsMultiplier,
// suspended?} maps), with no object, no id string and no number boxed per change.
//
// The reader takes only what it can read exactly as msgpackr (decode.ts) would, in the
// shapes validation (validate.ts) takes without a question: op "price", an ASCII id
// (at most 400 characters; validateTicks.ts checks its four parts), priceAmerican as a
// msgpack integer, dfsMultiplier as an integer or float64, suspended as a boolean, each
// key at most once, and nothing after the array. Anything else (another op, a null, a
// float price, priceDecimal, an unknown key, a body that is not msgpack) makes it
// answer null, and the write path reads the body the general way: every error a body
// can earn is still reported by the one validator, with the same words.

import { hashAsciiBytes, viewOf } from './idBytes.ts';
import type { SpareBuffers } from './spareBuffers.ts';
import { TICK_AMERICAN, TICK_DFS, TICK_HAS_SUSPENDED, TICK_SUSPENDED, type SlotTicks } from '../engine/engine.ts';

/** Longest id a tick may name (the price schema's limit, changes.ts). */
const MAX_ID_LENGTH = 400;

/** A batch of ticks as read; validation (validateTicks.ts) fills `slot` and marks DFS rows' ticks. */
export interface TickBatch extends SlotTicks {
  /** The body the ids are read from. */
  readonly body: Uint8Array;
  /** Where each id's bytes start in `body`, and how many there are (ASCII: one byte a character). */
  readonly idStart: Int32Array;
  readonly idLength: Int32Array;
  /** hashAsciiBytes of each id (TickSlots keys on it). */
  readonly idHash: Int32Array;
  /** A DataView over `body`. */
  readonly view: DataView;
  /** The block the typed arrays are views of (given back to `spares` once the batch is done). */
  readonly memory: ArrayBuffer;
}

/** Bytes of the typed arrays of a batch of `count` ticks. */
function memoryBytes(count: number): number {
  return count * (8 + 5 * 4 + 1);
}

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

/** Reads a body of ticks, or null when it is anything else (see the header); the arrays are views of a block from `spares`. */
export function readTickBatch(body: Uint8Array, spares: SpareBuffers): TickBatch | null {
  const end = body.length;
  if (end === 0) return null;
  const view = viewOf(body);
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

  // every array of the batch in one block (spareBuffers.ts)
  const memory = spares.take(memoryBytes(count));
  const dfs = new Float64Array(memory, 0, count);
  const idStart = new Int32Array(memory, count * 8, count);
  const idLength = new Int32Array(memory, count * 12, count);
  const idHash = new Int32Array(memory, count * 16, count);
  const american = new Int32Array(memory, count * 20, count);
  const slot = new Int32Array(memory, count * 24, count);
  const fields = new Uint8Array(memory, count * 28, count);
  const batch: TickBatch = { count, body, view, idStart, idLength, idHash, american, dfs, fields, slot, memory };
  if (readTicks(batch, at)) return batch;
  spares.give(memory);
  return null;
}

/** Reads the ticks from `at` into the batch's arrays; false for anything else (see the header). */
function readTicks(batch: TickBatch, start: number): boolean {
  const { count, body, view, idStart, idLength, idHash, american, dfs, fields } = batch;
  const end = body.length;
  let at = start;

  for (let i = 0; i < count; i++) {
    if (at >= end) return false;
    const mapHead = body[at++];
    let keys: number;
    if (mapHead >= 0x80 && mapHead <= 0x8f) keys = mapHead & 0x0f;
    else if (mapHead === 0xde && at + 2 <= end) {
      keys = view.getUint16(at);
      at += 2;
    } else return false;
    if (keys < 2 || keys > 4) return false;
    let seen = 0; // 1 op, 2 id, 4 priceAmerican, 8 dfsMultiplier, 16 suspended
    let flags = 0;
    for (let k = 0; k < keys; k++) {
      // the key: a fixstr (every key a tick may hold is shorter than 32 bytes)
      if (at >= end) return false;
      const keyHead = body[at++];
      if (keyHead < 0xa0 || keyHead > 0xbf) return false;
      const keyLength = keyHead & 0x1f;
      const keyAt = at;
      at += keyLength;
      if (at >= end) return false;
      const valueHead = body[at++];
      if (sameBytes(body, keyAt, keyLength, KEY_ID)) {
        if (seen & 2) return false;
        seen |= 2;
        let length: number;
        if (valueHead >= 0xa0 && valueHead <= 0xbf) length = valueHead & 0x1f;
        else if (valueHead === 0xd9 && at + 1 <= end) length = body[at++];
        else if (valueHead === 0xda && at + 2 <= end) {
          length = view.getUint16(at);
          at += 2;
        } else return false;
        if (length > MAX_ID_LENGTH || at + length > end) return false;
        // ASCII only; the four parts joined by ':' are checked where the id is first met (validateTicks.ts)
        const hash = hashAsciiBytes(view, at, length);
        if (hash < 0) return false;
        idStart[i] = at;
        idLength[i] = length;
        idHash[i] = hash;
        at += length;
      } else if (sameBytes(body, keyAt, keyLength, KEY_PRICE_AMERICAN)) {
        if (seen & 4) return false;
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
          if (value >= 2 ** 30) return false; // out of any price's range (and of an Int32Array's); validation words it
        } else return false; // 64-bit integers: out of any price's range; validation words it
        american[i] = value;
        flags |= TICK_AMERICAN;
      } else if (sameBytes(body, keyAt, keyLength, KEY_DFS_MULTIPLIER)) {
        if (seen & 8) return false;
        seen |= 8;
        let value: number;
        if (valueHead === 0xcb && at + 8 <= end) {
          value = view.getFloat64(at);
          at += 8;
        } else if (valueHead <= 0x7f) value = valueHead;
        else if (valueHead >= 0xe0) value = valueHead - 0x100;
        else return false;
        if (!Number.isFinite(value)) return false;
        dfs[i] = value;
        flags |= TICK_DFS;
      } else if (sameBytes(body, keyAt, keyLength, KEY_SUSPENDED)) {
        if (seen & 16) return false;
        seen |= 16;
        if (valueHead === 0xc3) flags |= TICK_HAS_SUSPENDED | TICK_SUSPENDED;
        else if (valueHead === 0xc2) flags |= TICK_HAS_SUSPENDED;
        else return false;
      } else if (sameBytes(body, keyAt, keyLength, KEY_OP)) {
        if (seen & 1) return false;
        seen |= 1;
        const length = valueHead - 0xa0;
        if (length !== VALUE_PRICE.length || at + length > end || !sameBytes(body, at, length, VALUE_PRICE)) return false;
        at += length;
      } else return false;
    }
    if ((seen & 3) !== 3) return false;
    fields[i] = flags;
  }
  return at === end; // msgpackr refuses trailing bytes
}

/** The id of tick `i` as a string (ASCII). */
export function tickId(batch: TickBatch, i: number): string {
  const start = batch.idStart[i];
  return Buffer.from(batch.body.buffer, batch.body.byteOffset + start, batch.idLength[i]).toString('latin1');
}
