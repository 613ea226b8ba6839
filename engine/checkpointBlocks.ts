// Body format 2 of a checkpoint: the engine's state (engine/checkpoint.ts) as a small
// msgpack manifest followed by its typed arrays as raw blocks, each array's bytes as they
// are in memory. Body format 1 packed the whole state as one msgpack document, typed
// arrays included as msgpackr extensions: a restore read the file into one buffer, then
// msgpackr copied every array out of it (one slice each: ~600 MB on the large board,
// most of it history ring slabs), and a checkpoint copied every array into the packer's
// buffer. Here a restore reads each block straight from the file into a new array of
// its own (checkpointFiles.ts, CheckpointBodyReader), and a checkpoint writes the copy's
// arrays as they are (one gathered write): no pass of msgpack over the big arrays.
//
// Layout (little-endian; offsets from the start of the body):
//   0        8 bytes  "ODDSBLK2" (a format 1 body is a msgpack map: its first byte is
//                     0x80-0x8f, 0xde or 0xdf, never "O")
//   8        u32      manifest length M
//   12       u32      CRC-32 of the manifest
//   16       M bytes  the manifest: the state as msgpack, each typed array replaced by
//                     {"$block": i, "type": t, "length": n} (i from 0 in body order, t an
//                     index into BLOCK_TYPES, n elements)
//            zero bytes up to a multiple of 8
//   then     block 0, block 1, ...: n elements' bytes each, then zero bytes up to a
//            multiple of 8; the body ends exactly after the last block's padding.
//
// The checkpoint file's body CRC covers every byte of this. The manifest has a CRC of its
// own because it is unpacked before the body CRC can be known (its lengths decide what is
// allocated and read): a damaged manifest is refused, never unpacked. What blocks are
// allocated is bounded by the body length (the file header, checked by its own CRC, says
// it), and nothing read is handed back before the source's verify() passed.

import { crc32 as zlibCrc32 } from 'node:zlib';
import { Packr } from 'msgpackr';
import { crc32Combine } from './snapshot/crc32Combine.ts';

export const BLOCK_BODY_MAGIC = Buffer.from('ODDSBLK2', 'latin1');
const PREFIX_BYTES = 16;
const BLOCK_KEY = '$block';

/** Block element types by their code in the manifest (msgpackr's order of typed arrays). */
const BLOCK_TYPES = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array] as const;
const BLOCK_TYPE_NAMES: readonly string[] = BLOCK_TYPES.map((type) => type.name);
type Block = InstanceType<(typeof BLOCK_TYPES)[number]>;

/** Blocks are the arrays' bytes as this machine holds them; the format says little-endian. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const ZEROS = new Uint8Array(8);

function pad8(bytes: number): number {
  return (8 - (bytes % 8)) % 8;
}

/** A typed array's bytes, as a Uint8Array over the same memory. */
export function bytesOf(block: ArrayBufferView): Uint8Array {
  return new Uint8Array(block.buffer, block.byteOffset, block.byteLength);
}

/** A state split for writing: the manifest value (typed arrays replaced by placeholders) and the arrays, in block order. */
export interface BlockPlan {
  manifest: unknown;
  blocks: ArrayBufferView[];
}

/**
 * Replaces every typed array in `state` (plain objects and arrays, walked) by a
 * placeholder naming its block. `state` is not changed: the objects and arrays on the
 * way to a typed array are copied; arrays of plain values (the string pools, a million
 * strings) are kept as they are.
 */
export function planBlocks(state: unknown): BlockPlan {
  if (!LITTLE_ENDIAN) throw new Error('checkpoint blocks are little-endian; this machine is not');
  const blocks: ArrayBufferView[] = [];
  const replace = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (ArrayBuffer.isView(value)) {
      const type = BLOCK_TYPE_NAMES.indexOf((value as Block)[Symbol.toStringTag] ?? '');
      if (type < 0) throw new Error(`a checkpoint cannot hold a ${value.constructor.name}`);
      blocks.push(value);
      return { [BLOCK_KEY]: blocks.length - 1, type, length: (value as Block).length };
    }
    if (Array.isArray(value)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (item === null || typeof item !== 'object') continue;
        out ??= value.slice();
        out[i] = replace(item);
      }
      return out ?? value;
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = replace((value as Record<string, unknown>)[key]);
    return out;
  };
  return { manifest: replace(state), blocks };
}

/**
 * CRC-32 of the blocks as the body holds them (each block's bytes, then its padding).
 * persistence/log/packWorker.mjs computes the same in a worker thread for large bodies:
 * a change here is a change there.
 */
export function blocksCrc(blocks: readonly ArrayBufferView[]): number {
  let crc = 0;
  for (const block of blocks) {
    // (an empty block adds nothing: node:zlib's crc32 of an empty view does not give its seed back)
    if (block.byteLength > 0) crc = zlibCrc32(bytesOf(block), crc);
    const pad = pad8(block.byteLength);
    if (pad > 0) crc = zlibCrc32(ZEROS.subarray(0, pad), crc);
  }
  return crc >>> 0;
}

/** A body as the parts one gathered write writes, in order, with its length and CRC. */
export interface BlockBody {
  parts: Uint8Array[];
  length: number;
  crc: number;
}

/** The body of `blocks` (a plan's, in its order) under the packed manifest; the CRCs are the manifest's and blocksCrc(blocks). */
export function blockBody(manifest: Uint8Array, manifestCrc: number, blocks: readonly ArrayBufferView[], crcOfBlocks: number): BlockBody {
  const prefix = Buffer.alloc(PREFIX_BYTES);
  BLOCK_BODY_MAGIC.copy(prefix, 0);
  prefix.writeUInt32LE(manifest.length, 8);
  prefix.writeUInt32LE(manifestCrc >>> 0, 12);
  const manifestPad = ZEROS.subarray(0, pad8(PREFIX_BYTES + manifest.length));
  const parts: Uint8Array[] = [prefix, manifest];
  if (manifestPad.length > 0) parts.push(manifestPad);
  let crc = crc32Combine(zlibCrc32(prefix) >>> 0, manifestCrc >>> 0, manifest.length);
  if (manifestPad.length > 0) crc = zlibCrc32(manifestPad, crc) >>> 0;
  let blockBytes = 0;
  for (const block of blocks) {
    parts.push(bytesOf(block));
    const pad = pad8(block.byteLength);
    if (pad > 0) parts.push(ZEROS.subarray(0, pad));
    blockBytes += block.byteLength + pad;
  }
  crc = crc32Combine(crc, crcOfBlocks >>> 0, blockBytes);
  return { parts, length: PREFIX_BYTES + manifest.length + manifestPad.length + blockBytes, crc };
}

/** A body read from its start to its end, in order (a checkpoint file, or bytes in memory). */
export interface BodySource {
  /** The body's length in bytes. */
  readonly length: number;
  /** Fills `target` with the next target.length bytes of the body (throws past its end). */
  read(target: Uint8Array): void;
  /**
   * Called once every byte was read, before anything read is used: throws unless the
   * body passes its own check (a checkpoint file's body CRC and trailer).
   */
  verify(): void;
}

/** A BodySource over bytes already in memory (and checked, if they were to be). */
export function memoryBody(bytes: Uint8Array): BodySource & { bytes: Uint8Array } {
  let position = 0;
  return {
    bytes,
    length: bytes.length,
    read(target) {
      if (position + target.length > bytes.length) throw new Error(`reading ${target.length} bytes at ${position} passes the body's end (${bytes.length})`);
      target.set(bytes.subarray(position, position + target.length));
      position += target.length;
    },
    verify() {},
  };
}

/** True when a body's first 8 bytes say format 2. */
export function isBlockBody(first: Uint8Array): boolean {
  return first.length >= 8 && BLOCK_BODY_MAGIC.equals(first.subarray(0, 8));
}

interface Place {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  /** Where the block sits in the state: the keys from the root (e.g. ['columns', 'priceAmerican']). */
  path: readonly (string | number)[];
  index: number;
  type: number;
  length: number;
}

/**
 * Elements to allocate for a block of `length` at `path`: at least `length`. A reader that
 * will grow an array at once (the store's columns to its capacity) asks for the room up
 * front, so the bytes are read once into memory that stays, not read and then copied:
 * on a machine where memory's first touch is dear that copy was a second touch of every
 * column.
 */
export type BlockRoom = (path: readonly (string | number)[], length: number) => number;

/**
 * Reads a format 2 body whose first 8 bytes (the magic) were read already: the manifest
 * (refused unless its CRC holds), then every block into an array of its own, then the
 * source's verify(); returns the state with the arrays in place. Throws a plain Error for
 * a layout that does not add up (the caller tells damage from a bug by the body CRC).
 */
export function readBlockBody(source: BodySource, packr: Packr, roomFor: BlockRoom = (_path, length) => length): unknown {
  const head = new Uint8Array(8);
  source.read(head);
  const view = new DataView(head.buffer);
  const manifestLength = view.getUint32(0, true);
  const manifestCrc = view.getUint32(4, true);
  if (PREFIX_BYTES + manifestLength > source.length) throw new Error(`its manifest of ${manifestLength} bytes reaches past the body's ${source.length}`);
  const manifestBytes = new Uint8Array(manifestLength);
  source.read(manifestBytes);
  if (zlibCrc32(manifestBytes) >>> 0 !== manifestCrc) throw new Error('its manifest fails its CRC');
  const root: { state: unknown } = { state: packr.unpack(manifestBytes) };
  const places: Place[] = [];
  const collect = (holder: Record<string, unknown> | unknown[], key: string | number, path: readonly (string | number)[]): void => {
    const value = (holder as Record<string | number, unknown>)[key];
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (value[i] !== null && typeof value[i] === 'object') collect(value, i, [...path, i]);
      return;
    }
    const record = value as Record<string, unknown>;
    if (Object.prototype.hasOwnProperty.call(record, BLOCK_KEY)) {
      places.push({ holder, key, path, index: record[BLOCK_KEY] as number, type: record.type as number, length: record.length as number });
      return;
    }
    for (const name of Object.keys(record)) collect(record, name, [...path, name]);
  };
  collect(root, 'state', []);
  places.sort((a, b) => a.index - b.index);
  let end = PREFIX_BYTES + manifestLength + pad8(PREFIX_BYTES + manifestLength);
  for (let i = 0; i < places.length; i++) {
    const place = places[i]!;
    if (place.index !== i) throw new Error(`its manifest names block ${String(place.index)} where block ${i} belongs`);
    if (!Number.isInteger(place.type) || place.type < 0 || place.type >= BLOCK_TYPES.length) throw new Error(`block ${i} has type ${String(place.type)}`);
    if (!Number.isSafeInteger(place.length) || place.length < 0) throw new Error(`block ${i} has length ${String(place.length)}`);
    const bytes = place.length * BLOCK_TYPES[place.type]!.BYTES_PER_ELEMENT;
    end += bytes + pad8(bytes);
    if (end > source.length) throw new Error(`its blocks reach past the body's end (${source.length} bytes) at block ${i}`);
  }
  if (end !== source.length) throw new Error(`its blocks end at byte ${end} of a ${source.length}-byte body`);
  const scratch = new Uint8Array(8);
  source.read(scratch.subarray(0, pad8(PREFIX_BYTES + manifestLength)));
  const arrays: Block[] = [];
  for (const place of places) {
    const Type = BLOCK_TYPES[place.type] as unknown as new (length: number) => Block;
    const room = Math.max(place.length, roomFor(place.path, place.length));
    const array = room === place.length ? new Type(place.length) : (new Type(room).subarray(0, place.length) as Block);
    source.read(bytesOf(array));
    source.read(scratch.subarray(0, pad8(array.byteLength)));
    arrays.push(array);
  }
  source.verify();
  for (let i = 0; i < places.length; i++) {
    const place = places[i]!;
    (place.holder as Record<string | number, unknown>)[place.key] = arrays[i];
  }
  return root.state;
}
