// One gzip member (RFC 1952) assembled from independently deflated pieces: header,
// the pieces' bytes as they are, an empty final block, then CRC-32 and ISIZE. Only
// ONE member: curl, Chrome and many HTTP clients stop reading after the first member
// of a multi-member body. The pieces' Buffers are handed out untouched, so a changed
// piece costs its own recompression plus log2(n) CRC joins, never a copy of the rest.

import type { DeflatedPiece } from './deflatePiece.ts';
import { CrcTree } from './crcTree.ts';
import { keptBytes } from '../keptBytes.ts';
import { SnapshotGzipError } from './errors.ts';

/** ID1 ID2, CM=8 (deflate), FLG=0, MTIME=0 (no time: identical boards give identical bytes), XFL=0, OS=255 (unknown). */
export const GZIP_HEADER: Buffer = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]);

/** BFINAL=1, BTYPE=01 (fixed Huffman), end-of-block: the shortest final block, 2 bytes. */
export const FINAL_EMPTY_BLOCK: Buffer = Buffer.from([0x03, 0x00]);

const TRAILER_BYTES = 8;
const FRAME_BYTES = GZIP_HEADER.length + FINAL_EMPTY_BLOCK.length + TRAILER_BYTES;
const TWO_POW_32 = 0x1_0000_0000;

export interface GzipMember {
  /** Write these in order; together they are the whole member. */
  readonly chunks: readonly Buffer[];
  /** Sum of the chunks' lengths (the Content-Length). */
  readonly byteLength: number;
  /** CRC-32 of the uncompressed content. */
  readonly crc: number;
  /** Uncompressed length (ISIZE holds it mod 2^32). */
  readonly rawLength: number;
}

export function gzipTrailer(crc: number, rawLength: number): Buffer {
  const trailer = keptBytes(TRAILER_BYTES);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(rawLength % TWO_POW_32, 4);
  return trailer;
}

/** An ordered, editable list of pieces that builds (and caches) one gzip member. */
export class GzipJoiner {
  private readonly pieces: DeflatedPiece[] = [];
  private readonly crcTree = new CrcTree();
  /** Inserts and removes shift leaves: the tree is rebuilt at the next build. */
  private structureChanged = false;
  /** Leaves replaced since the last build (while the structure stood still). */
  private readonly replaced: number[] = [];
  private cached: GzipMember | null = null;

  get size(): number {
    return this.pieces.length;
  }

  at(index: number): DeflatedPiece {
    this.checkIndex(index, this.pieces.length - 1);
    return this.pieces[index];
  }

  push(...pieces: DeflatedPiece[]): void {
    this.insert(this.pieces.length, ...pieces);
  }

  insert(index: number, ...pieces: DeflatedPiece[]): void {
    this.checkIndex(index, this.pieces.length);
    this.pieces.splice(index, 0, ...pieces);
    this.structureChanged = true;
    this.cached = null;
  }

  replace(index: number, piece: DeflatedPiece): void {
    this.checkIndex(index, this.pieces.length - 1);
    this.pieces[index] = piece;
    // Its CRC is read at build(): a piece compressed on a worker thread learns it later.
    if (!this.structureChanged) {
      this.replaced.push(index);
      if (this.replaced.length > this.pieces.length) this.structureChanged = true; // a rebuild is cheaper by then
    }
    this.cached = null;
  }

  remove(index: number, count = 1): void {
    this.checkIndex(index, this.pieces.length - 1);
    this.checkIndex(count, this.pieces.length - index);
    this.pieces.splice(index, count);
    this.structureChanged = true;
    this.cached = null;
  }

  /**
   * The member for the current pieces; the same object until something changes. A
   * piece's deflated bytes and CRC may arrive after it was placed (compressed on a
   * worker thread; its length is known at once): build only once they have.
   */
  build(): GzipMember {
    if (this.cached !== null) return this.cached;
    if (this.structureChanged) {
      this.crcTree.rebuild(this.pieces);
      this.structureChanged = false;
    } else {
      for (const index of this.replaced) this.crcTree.update(index, this.pieces[index].crc, this.pieces[index].rawLength);
    }
    this.replaced.length = 0;
    const n = this.pieces.length;
    const chunks = new Array<Buffer>(n + 3);
    chunks[0] = GZIP_HEADER;
    let deflatedBytes = 0;
    for (let i = 0; i < n; i++) {
      const deflated = this.pieces[i].deflated;
      chunks[i + 1] = deflated;
      deflatedBytes += deflated.length;
    }
    chunks[n + 1] = FINAL_EMPTY_BLOCK;
    const crc = this.crcTree.totalCrc;
    const rawLength = this.crcTree.totalLength;
    chunks[n + 2] = gzipTrailer(crc, rawLength);
    this.cached = { chunks, byteLength: deflatedBytes + FRAME_BYTES, crc, rawLength };
    return this.cached;
  }

  private checkIndex(index: number, max: number): void {
    if (!Number.isInteger(index) || index < 0 || index > max) {
      throw new SnapshotGzipError('invalid_index', `index ${index} outside 0..${max}`);
    }
  }
}
