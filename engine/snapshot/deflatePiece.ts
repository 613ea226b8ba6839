// One snapshot piece as raw DEFLATE that can sit anywhere inside a larger stream:
// compressed alone (no back-references into its neighbours), ending byte-aligned on
// a sync-flush marker (an empty non-final stored block, 00 00 ff ff), never with a
// final block. Any such pieces concatenated, then a final block, form one valid
// DEFLATE stream, which is what lets a snapshot recompress only the events that moved.
//
// Compressor choice: node:zlib deflateRawSync at level 1. bench/gzip.bench.ts on
// 48 pieces of ~64 KB snapshot JSON (Node 20.20, shared 2-core box), MB/s of input
// and compression ratio, rows without / with priceHistory (one run; the shared box
// moves these by ~10%):
//   zlib level 1            400 / 230 MB/s   7.6x / 4.5x
//   zlib level 6            168 /  88 MB/s  10.0x / 5.8x
//   fflate 1, flush(true)    97 /  75 MB/s   6.9x / 4.4x   6 / 26 of 48 pieces CORRUPT
//   fflate 6, flush(true)    70 /  42 MB/s   9.7x / 5.4x   6 / 24 of 48 pieces CORRUPT
//   fflate 1, deflateSync   114 /  87 MB/s   (ends with a final block: cannot be a middle piece)
// fflate 0.8.3's Deflate.flush(true) output is rejected by zlib for some inputs
// ("invalid stored block lengths": the 6 / 26 corrupt pieces above), and fflate measured 3-4x
// slower than zlib level 1 anyway. Level 1 over 6: a moving board recompresses pieces
// continuously while polls of an unchanged board reuse cached bytes, so CPU per
// change matters more than the ~23% fewer bytes level 6 would give.

import { constants, crc32, deflateRawSync, type ZlibOptions } from 'node:zlib';
import { keptBytes, keptCopy } from '../keptBytes.ts';
import { SnapshotGzipError } from './errors.ts';

export interface DeflatedPiece {
  /** Raw DEFLATE blocks, none final, ending byte-aligned. */
  readonly deflated: Buffer;
  /** CRC-32 of the uncompressed bytes. */
  readonly crc: number;
  /** Uncompressed length in bytes. */
  readonly rawLength: number;
}

export const DEFAULT_PIECE_LEVEL = 1;

/** One frozen options object per level, so compressing allocates none. */
const OPTIONS_BY_LEVEL: readonly ZlibOptions[] = Array.from({ length: 10 }, (_, level) =>
  Object.freeze({ level, finishFlush: constants.Z_SYNC_FLUSH }),
);

const EMPTY_PIECE: DeflatedPiece = Object.freeze({ deflated: Buffer.alloc(0), crc: 0, rawLength: 0 });

/** Z_SYNC_FLUSH always ends with an empty stored block: LEN 0000, NLEN ffff. */
function endsWithSyncMarker(out: Buffer): boolean {
  const n = out.length;
  return n >= 4 && out[n - 4] === 0x00 && out[n - 3] === 0x00 && out[n - 2] === 0xff && out[n - 1] === 0xff;
}

function optionsOf(level: number): ZlibOptions {
  const options = OPTIONS_BY_LEVEL[level];
  if (options === undefined) throw new SnapshotGzipError('invalid_level', `level must be an integer 0..9, got ${level}`);
  return options;
}

export function compressPiece(bytes: Uint8Array, level: number = DEFAULT_PIECE_LEVEL): DeflatedPiece {
  optionsOf(level); // a bad level is an error even for an empty piece
  if (bytes.length === 0) return EMPTY_PIECE;
  return { deflated: deflatedBytes(bytes, level), crc: crc32(bytes), rawLength: bytes.length };
}

/** The raw DEFLATE bytes of a piece, compressed on this thread. */
export function deflatedBytes(bytes: Uint8Array, level: number = DEFAULT_PIECE_LEVEL): Buffer {
  return aligned(deflateRawSync(bytes, optionsOf(level)));
}

/** Checks that DEFLATE output of a piece ends byte-aligned on the sync-flush marker (and owns exactly its bytes). */
export function aligned(deflated: Buffer): Buffer {
  if (!endsWithSyncMarker(deflated)) {
    throw new SnapshotGzipError('piece_not_aligned', 'zlib did not end the piece on a sync-flush marker');
  }
  return exactSize(deflated);
}

/**
 * zlib's sync output smaller than its 16 KB chunk is a view into that chunk (on Node 24
 * into a 64 KiB Buffer pool slab): a board of thousands of ~8 KB pieces would hold twice
 * its size or more. Copy those out.
 */
function exactSize(out: Buffer): Buffer {
  if (out.buffer.byteLength <= out.length + (out.length >>> 3)) return out;
  return keptCopy(out);
}

/** A stored block holds at most 65535 bytes. */
const MAX_STORED = 0xffff;

/**
 * Bytes as non-final stored blocks (header byte 00: BFINAL 0, BTYPE 00, padding,
 * then LEN and its complement, little-endian). For small literals such as the
 * comma between pieces or the snapshot head, where running zlib costs more than
 * the few bytes it would save.
 */
export function storedBlock(bytes: Uint8Array): DeflatedPiece {
  if (bytes.length === 0) return EMPTY_PIECE;
  const blocks = Math.ceil(bytes.length / MAX_STORED);
  const deflated = keptBytes(bytes.length + 5 * blocks);
  let at = 0;
  for (let start = 0; start < bytes.length; start += MAX_STORED) {
    const len = Math.min(MAX_STORED, bytes.length - start);
    deflated[at] = 0x00;
    deflated.writeUInt16LE(len, at + 1);
    deflated.writeUInt16LE(len ^ 0xffff, at + 3);
    deflated.set(bytes.subarray(start, start + len), at + 5);
    at += 5 + len;
  }
  return { deflated, crc: crc32(bytes), rawLength: bytes.length };
}
