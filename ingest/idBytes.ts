// Odds ids as bytes where they lie (in a batch body, in TickSlots' arena, in a log
// record being written): hashed, compared and copied four bytes at a time through
// DataViews, because a byte loop in JavaScript costs about a nanosecond a byte and an
// id is some 60 to 100 bytes, several times a change's budget on the write path.

const COLON = 0x3a;

/**
 * A hash of the ASCII bytes view[start, start + length) (0 to 2^31 - 1), or -1 when a
 * byte is not ASCII. Any two equal byte runs hash alike; the same bytes in a string
 * hash alike once written to bytes (TickSlots does).
 */
export function hashAsciiBytes(view: DataView, start: number, length: number): number {
  let hash = 0x811c9dc5 ^ length;
  let high = 0;
  let i = 0;
  for (; i + 4 <= length; i += 4) {
    const word = view.getInt32(start + i);
    high |= word;
    hash = Math.imul(hash ^ word, 0x01000193);
    hash ^= hash >>> 15;
  }
  for (; i < length; i++) {
    const byte = view.getUint8(start + i);
    high |= byte;
    hash = Math.imul(hash ^ byte, 0x01000193);
  }
  if ((high & 0x80808080) !== 0) return -1;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash & 0x7fffffff;
}

/** True when a[aStart, aStart + length) and b[bStart, bStart + length) hold the same bytes. */
export function sameBytes(a: DataView, aStart: number, b: DataView, bStart: number, length: number): boolean {
  let i = 0;
  for (; i + 4 <= length; i += 4) if (a.getInt32(aStart + i) !== b.getInt32(bStart + i)) return false;
  for (; i < length; i++) if (a.getUint8(aStart + i) !== b.getUint8(bStart + i)) return false;
  return true;
}

/** Copies from[fromStart, fromStart + length) to to[toStart...). */
export function copyBytes(from: DataView, fromStart: number, to: DataView, toStart: number, length: number): void {
  let i = 0;
  for (; i + 4 <= length; i += 4) to.setInt32(toStart + i, from.getInt32(fromStart + i));
  for (; i < length; i++) to.setUint8(toStart + i, from.getUint8(fromStart + i));
}

/** True for the odds id form: four non-empty parts joined by ':' (what validate.ts's pattern asks). */
export function isOddsIdForm(bytes: Uint8Array, start: number, length: number): boolean {
  let colons = 0;
  let part = 0;
  for (let i = 0; i < length; i++) {
    if (bytes[start + i] === COLON) {
      if (part === 0) return false;
      colons++;
      part = 0;
    } else part++;
  }
  return colons === 3 && part > 0;
}

/** A DataView over all of `bytes`. */
export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
