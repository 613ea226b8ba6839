// One snapshot piece as raw DEFLATE that can sit anywhere inside a larger stream:
// compressed alone (no back-references into its neighbours), ending byte-aligned on
// a sync-flush marker (an empty non-final stored block, 00 00 ff ff), never with a
// final block. Any such pieces concatenated, then a final block, form one valid
// DEFLATE stream, which is what lets a snapshot recompress only the events that moved.
//
// Compressor choice: node:zlib deflateRawSync at level 1. Measured with
// bench/gzip.bench.ts on ~64 KB JSON pieces of odds rows (Node 20.20, 2-core box):
//   zlib level 1: ~150-180 MB/s, ratio ~7-8x; zlib level 6: ~2-3x slower for ~10-20%
//   smaller output; fflate level 1 (Deflate + flush(true)): ~2-3x slower than zlib
//   level 1, and its sync flush is broken in 0.8.3 (fflate issue 267): some pieces
//   end with a misaligned stored-block header that zlib rejects ("invalid stored
//   block lengths"). fflate's deflateSync always ends with a final block, so it
//   cannot produce a middle piece at all. Level 1 wins because a moving board
//   recompresses pieces continuously and the output is cached between polls; the
//   bytes saved by level 6 do not pay for the CPU. Exact numbers: see the report
//   of benchGzip().

import { constants, crc32, deflateRawSync, type ZlibOptions } from 'node:zlib';
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

export function compressPiece(bytes: Uint8Array, level: number = DEFAULT_PIECE_LEVEL): DeflatedPiece {
  const options = OPTIONS_BY_LEVEL[level];
  if (options === undefined) throw new SnapshotGzipError('invalid_level', `level must be an integer 0..9, got ${level}`);
  if (bytes.length === 0) return EMPTY_PIECE;
  const deflated = deflateRawSync(bytes, options);
  if (!endsWithSyncMarker(deflated)) {
    throw new SnapshotGzipError('piece_not_aligned', 'deflateRawSync did not end on a sync-flush marker');
  }
  return { deflated, crc: crc32(bytes), rawLength: bytes.length };
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
  const deflated = Buffer.allocUnsafe(bytes.length + 5 * blocks);
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
