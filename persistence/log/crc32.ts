// CRC-32 (the IEEE polynomial of zip, gzip and PNG), slice-by-8: the log frames every
// record with it and checkpoints cover their whole body with it, so it runs over a few
// hundred megabytes at restore; eight table lookups per eight bytes keep that well
// under a second. Node 20 has no zlib.crc32.

const TABLES = buildTables();

function buildTables(): Int32Array[] {
  const tables = Array.from({ length: 8 }, () => new Int32Array(256));
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    tables[0][n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = tables[0][n];
    for (let t = 1; t < 8; t++) {
      c = tables[0][c & 0xff] ^ (c >>> 8);
      tables[t][n] = c;
    }
  }
  return tables;
}

/** CRC-32 of bytes[start, end), continuing from `crc` (0 for a fresh one). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
  let c = ~crc;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const lo = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c =
      t7[lo & 0xff] ^
      t6[(lo >>> 8) & 0xff] ^
      t5[(lo >>> 16) & 0xff] ^
      t4[lo >>> 24] ^
      t3[bytes[i + 4]] ^
      t2[bytes[i + 5]] ^
      t1[bytes[i + 6]] ^
      t0[bytes[i + 7]];
  }
  for (; i < end; i++) c = t0[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}
