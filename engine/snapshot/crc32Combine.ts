// CRC-32 of a concatenation from the parts' CRCs, without reading the bytes: zlib's
// crc32_combine. Appending n zero bytes to a message is a linear map on its CRC
// register, i.e. a 32x32 matrix over GF(2); combine(A, B, lenB) = Z^lenB(A) xor B.
// zlib squares the one-zero-bit matrix on every call (~30 squarings of 1024 steps).
// Here the matrices for 2^k zero bytes (k = 0..52) are squared once at load and
// sliced into four 256-entry tables each (the matrix applied to every value of one
// input byte), so applying one costs 4 lookups and a combine costs 4 lookups per
// set bit of lenB: a fold over thousands of pieces per snapshot build stays cheap.

import { SnapshotGzipError } from './errors.ts';

/** Reflected CRC-32 polynomial (the one gzip and zlib.crc32 use). */
const POLY = 0xedb88320;
/** lenB < 2^53: bits 0..52 can be set. */
const MAX_BITS = 53;
const TWO_POW_32 = 0x1_0000_0000;
/** Four byte slices of 256 entries per operator. */
const OP_STRIDE = 1024;

/** Row i of a matrix is the image of bit i of the input vector. */
function matrixTimes(mat: Uint32Array, base: number, vec: number): number {
  let sum = 0;
  let row = base;
  while (vec !== 0) {
    if (vec & 1) sum ^= mat[row];
    vec >>>= 1;
    row++;
  }
  return sum >>> 0;
}

function square(out: Uint32Array, outBase: number, mat: Uint32Array, base: number): void {
  for (let n = 0; n < 32; n++) out[outBase + n] = matrixTimes(mat, base, mat[base + n]);
}

/** Matrices for 2^k zero bytes, k = 0..52, 32 rows each. */
function zeroByteMatrices(): Uint32Array {
  const scratchA = new Uint32Array(32);
  const scratchB = new Uint32Array(32);
  scratchA[0] = POLY; // one zero bit
  for (let n = 1; n < 32; n++) scratchA[n] = 1 << (n - 1);
  square(scratchB, 0, scratchA, 0); // 2 bits
  square(scratchA, 0, scratchB, 0); // 4 bits
  const mats = new Uint32Array(MAX_BITS * 32);
  square(mats, 0, scratchA, 0); // 8 bits = 1 byte
  for (let k = 1; k < MAX_BITS; k++) square(mats, k * 32, mats, (k - 1) * 32);
  return mats;
}

/** By linearity, table[v] = table[v without its lowest bit] ^ row of that bit. */
function byteSlicedTables(mats: Uint32Array): Uint32Array {
  const tables = new Uint32Array(MAX_BITS * OP_STRIDE);
  for (let k = 0; k < MAX_BITS; k++) {
    for (let slice = 0; slice < 4; slice++) {
      const base = k * OP_STRIDE + slice * 256;
      const rows = k * 32 + slice * 8;
      for (let v = 1; v < 256; v++) {
        const lowBit = 31 - Math.clz32(v & -v);
        tables[base + v] = (tables[base + (v & (v - 1))] ^ mats[rows + lowBit]) >>> 0;
      }
    }
  }
  return tables;
}

/** ZERO_BYTES[k * 1024 ...]: the operator appending 2^k zero bytes, byte-sliced. */
const ZERO_BYTES: Uint32Array = byteSlicedTables(zeroByteMatrices());

function appendZeros(crc: number, k: number): number {
  const base = k * OP_STRIDE;
  return (
    (ZERO_BYTES[base + (crc & 255)] ^
      ZERO_BYTES[base + 256 + ((crc >>> 8) & 255)] ^
      ZERO_BYTES[base + 512 + ((crc >>> 16) & 255)] ^
      ZERO_BYTES[base + 768 + (crc >>> 24)]) >>>
    0
  );
}

function isUint32(x: number): boolean {
  return Number.isInteger(x) && x >= 0 && x < TWO_POW_32;
}

/**
 * CRC-32 of A followed by B, given crc32(A), crc32(B) and B's length in bytes
 * (0 <= lenB < 2^53). Matches zlib >= 1.2.12 (for lenB = 0 it returns crcA ^ crcB,
 * which is crcA when B really is empty).
 */
export function crc32Combine(crcA: number, crcB: number, lenB: number): number {
  if (!isUint32(crcA) || !isUint32(crcB)) {
    throw new SnapshotGzipError('invalid_crc', `CRCs must be unsigned 32-bit integers, got ${crcA}, ${crcB}`);
  }
  if (!Number.isSafeInteger(lenB) || lenB < 0) {
    throw new SnapshotGzipError('invalid_length', `lenB must be a non-negative safe integer, got ${lenB}`);
  }
  let crc = crcA;
  let low = lenB % TWO_POW_32 >>> 0;
  let high = (lenB - low) / TWO_POW_32; // < 2^21, so bit operations are safe
  for (let k = 0; low !== 0; k++, low >>>= 1) {
    if (low & 1) crc = appendZeros(crc, k);
  }
  for (let k = 32; high !== 0; k++, high >>>= 1) {
    if (high & 1) crc = appendZeros(crc, k);
  }
  return (crc ^ crcB) >>> 0;
}
