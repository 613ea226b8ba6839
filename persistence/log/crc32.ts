// CRC-32 (the IEEE polynomial of zip, gzip and PNG): the log frames every record with it
// and checkpoints cover their whole body with it, so it runs over every byte appended and
// over a few hundred megabytes at restore. zlib's own (node:zlib crc32, in every Node
// version package.json admits) runs several times faster than a table-driven loop in
// JavaScript; the snapshot's gzip members use the same function.

import { crc32 as zlibCrc32 } from 'node:zlib';

/** CRC-32 of bytes[start, end), continuing from `crc` (0 for a fresh one). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
  // nothing to add: node:zlib's crc32 of an empty view does not give its seed back
  if (end <= start) return crc >>> 0;
  const part = start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end);
  return zlibCrc32(part, crc) >>> 0;
}
