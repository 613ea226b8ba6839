// The on-disk form of the file log: segment files under DATA_DIR/wal named by the index
// of their first record (wal-0000000000000001.log). Format 2 (what this build writes):
//
//   segment header, 24 bytes:
//     offset 0   8 bytes "ODDSWAL2"
//     offset 8   u32 LE  format version (2)
//     offset 12  u32 LE  first record index, high 32 bits (must match the name)
//     offset 16  u32 LE  first record index, low 32 bits
//     offset 20  u32 LE  CRC-32 of bytes 0..20
//   then frames, each:
//     offset 0   u32 LE  payload length in bytes
//     offset 4   u32 LE  record index, high 32 bits
//     offset 8   u32 LE  record index, low 32 bits
//     offset 12  u32 LE  CRC-32 of the payload
//     offset 16  u32 LE  CRC-32 of bytes 0..16 (the frame header's own check)
//     offset 20          payload (msgpack, opaque here)
//
// The header's own CRC is what tells a damaged length from a torn tail: a length is
// believed only when its header checks, so a frame that runs past the end of the file
// with a good header is a write cut short, and one with a bad header is damage.
//
// Indexes run 1, 2, 3... with no gap across segments. scanSegment walks one file and
// sorts what it finds at its first bad frame into two cases. A torn tail is what a
// crash in the middle of an unacknowledged write leaves, and only at the very end:
// a header cut short, a good header whose payload runs past the end of the file, or
// zeros from inside the last frame to the end (space a power loss left unwritten).
// Anything else is damage to something that may have been acknowledged and is never
// skipped: a header that fails its CRC, a wrong index, a payload that fails its CRC
// with bytes after it, and also a last record that is whole but fails its CRC (it
// cannot be told from an acknowledged record damaged since, so a start refuses it
// and `npm run repair` names it).
//
// Format 1 segments (no segment header; 16-byte frame headers of length, CRC-32 of
// index and payload, index) written by earlier builds are still read; a log that holds
// one appends to a new format 2 segment, never to it.

import { crc32 } from './crc32.ts';
import { numberedFiles } from './numberedFiles.ts';

/** Bytes of a format 2 frame header. */
export const FRAME_HEADER_BYTES = 20;
/** Bytes of a format 1 frame header (read only). */
export const V1_FRAME_HEADER_BYTES = 16;
export const SEGMENT_HEADER_BYTES = 24;
export const SEGMENT_FORMAT = 2;
const SEGMENT_MAGIC = Buffer.from('ODDSWAL2', 'latin1');
const SEGMENT_NAME = /^wal-(\d{16})\.log$/;
/** A zero run this long (or the whole payload) at the end of the last frame is space a power loss left unwritten, not damage. */
const UNWRITTEN_RUN = 512;

export function segmentName(firstIndex: number): string {
  return `wal-${String(firstIndex).padStart(16, '0')}.log`;
}

export interface SegmentFile {
  path: string;
  name: string;
  firstIndex: number;
}

/** Segment files of a wal directory, oldest first ([] when the directory does not exist). */
export function listSegments(dir: string): SegmentFile[] {
  return numberedFiles(dir, SEGMENT_NAME).map((file) => ({ path: file.path, name: file.name, firstIndex: file.number }));
}

/** The 24 bytes a format 2 segment starts with. */
export function encodeSegmentHeader(firstIndex: number): Buffer {
  const header = Buffer.alloc(SEGMENT_HEADER_BYTES);
  SEGMENT_MAGIC.copy(header, 0);
  header.writeUInt32LE(SEGMENT_FORMAT, 8);
  header.writeUInt32LE(Math.floor(firstIndex / 0x100000000), 12);
  header.writeUInt32LE(firstIndex >>> 0, 16);
  header.writeUInt32LE(crc32(header, 0, 20), 20);
  return header;
}

/**
 * A frame's header bytes for `payload` at `index` (the frame is the header, then the
 * payload as it is): the log writes the two side by side rather than copy the payload.
 */
export function encodeFrameHeader(index: number, payload: Uint8Array): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32LE(payload.length, 0);
  header.writeUInt32LE(Math.floor(index / 0x100000000), 4);
  header.writeUInt32LE(index >>> 0, 8);
  header.writeUInt32LE(crc32(payload), 12);
  header.writeUInt32LE(crc32(header, 0, 16), 16);
  return header;
}

export function encodeFrame(index: number, payload: Uint8Array): Buffer {
  return Buffer.concat([encodeFrameHeader(index, payload), payload]);
}

/** A format 1 frame (what earlier builds wrote): for tests that read old logs. */
export function encodeV1Frame(index: number, payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(V1_FRAME_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(Math.floor(index / 0x100000000), 8);
  frame.writeUInt32LE(index >>> 0, 12);
  frame.set(payload, V1_FRAME_HEADER_BYTES);
  frame.writeUInt32LE(crc32(frame, 8), 4);
  return frame;
}

export interface SegmentProblem {
  offset: number;
  detail: string;
  /** True for a torn tail (an unacknowledged partial write); false for damage. */
  torn: boolean;
  /** The record the problem is in (the first one not read). */
  index: number;
}

export interface SegmentScan {
  /** 1 or 2; 2 for an empty file (the log writes its header first). */
  format: number;
  /** Offset just past the last good frame (0 when not even the segment header is whole). */
  validEnd: number;
  /** Index of the last good frame (firstIndex - 1 when none). */
  lastIndex: number;
  records: number;
  /** Damaged records a checkpoint covers that the scan stepped over (format 2, with coveredThrough). */
  skippedCovered?: number;
  problem: SegmentProblem | null;
}

/**
 * True unless the bytes begin with a whole, good format 1 record: a segment is read as
 * format 2 whenever it is not plainly format 1, so a damaged segment header is damage
 * (format 2's checks), never a format 1 file cut short.
 */
function isFormat2(bytes: Uint8Array): boolean {
  if (bytes.length < V1_FRAME_HEADER_BYTES) return true;
  let magic = true;
  for (let i = 0; i < 8; i++) if (bytes[i] !== SEGMENT_MAGIC[i]) magic = false;
  if (magic) return true;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = V1_FRAME_HEADER_BYTES + view.getUint32(0, true);
  return !(end <= bytes.length && crc32(bytes, 8, end) === view.getUint32(4, true));
}

/**
 * Walks the frames of one segment whose first record must be `firstIndex`; calls
 * visit(index, payload view) for each good frame until the first bad one.
 */
export function scanSegment(
  bytes: Uint8Array,
  firstIndex: number,
  visit?: (index: number, payload: Uint8Array) => void,
  coveredThrough = 0,
): SegmentScan {
  return isFormat2(bytes) ? scanV2(bytes, firstIndex, visit, coveredThrough) : scanV1(bytes, firstIndex, visit);
}

/**
 * After damage in a record a checkpoint covers (index <= coveredThrough): the next
 * frame whose header and payload check, with an index after `damaged` and at most
 * coveredThrough + 1, or -1. Records between are covered, so skipping them loses
 * nothing a start needs; a frame is believed only with both its CRCs right.
 */
function resync(bytes: Uint8Array, view: DataView, from: number, damaged: number, coveredThrough: number): number {
  for (let p = from; p + FRAME_HEADER_BYTES <= bytes.length; p++) {
    if (view.getUint32(p + 16, true) !== crc32(bytes, p, p + 16)) continue;
    const index = view.getUint32(p + 4, true) * 0x100000000 + view.getUint32(p + 8, true);
    if (index <= damaged || index > coveredThrough + 1) continue;
    const end = p + FRAME_HEADER_BYTES + view.getUint32(p, true);
    if (end > bytes.length || crc32(bytes, p + FRAME_HEADER_BYTES, end) !== view.getUint32(p + 12, true)) continue;
    return p;
  }
  return -1;
}

function scanV2(bytes: Uint8Array, firstIndex: number, visit: ((index: number, payload: Uint8Array) => void) | undefined, coveredThrough: number): SegmentScan {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = bytes.length;
  let at = 0;
  let expected = firstIndex;
  let records = 0;
  let skippedCovered = 0;
  const result = (problem: Omit<SegmentProblem, 'index'> | null): SegmentScan => ({
    format: 2,
    validEnd: at,
    lastIndex: expected - 1,
    records,
    skippedCovered,
    problem: problem === null ? null : { ...problem, index: expected },
  });
  if (size === 0) return result(null);
  if (size < SEGMENT_HEADER_BYTES) {
    // a crash while the segment was being created leaves a prefix of its header; anything else is damage
    const torn = encodeSegmentHeader(firstIndex).subarray(0, size).equals(bytes);
    return result({ offset: 0, detail: `a segment header cut short (${size} of ${SEGMENT_HEADER_BYTES} bytes)${torn ? '' : ' and not the header this segment should have'}`, torn });
  }
  const named = view.getUint32(12, true) * 0x100000000 + view.getUint32(16, true);
  const headerBad = crc32(bytes, 0, 20) !== view.getUint32(20, true) ? 'the segment header fails its CRC' : named !== firstIndex ? `the segment header says it starts at record ${named}, its name says ${firstIndex}` : null;
  if (headerBad !== null && firstIndex > coveredThrough) return result({ offset: 0, detail: headerBad, torn: false });
  at = SEGMENT_HEADER_BYTES;
  /** Damage in a covered record: skip to the next good frame (or, with none after it, the log ends in covered records). */
  const skipCovered = (): boolean => {
    if (expected > coveredThrough) return false;
    const next = resync(bytes, view, at + 1, expected, coveredThrough);
    skippedCovered++;
    if (next < 0) {
      // nothing readable after it: the segment holds no record a start needs
      at = size;
      expected = coveredThrough + 1;
      return true;
    }
    at = next;
    expected = view.getUint32(next + 4, true) * 0x100000000 + view.getUint32(next + 8, true);
    return true;
  };
  // a damaged header of a segment whose first records a checkpoint covers: read on from its next good frame
  if (headerBad !== null) {
    skippedCovered++;
    const next = resync(bytes, view, at, firstIndex - 1, coveredThrough);
    if (next < 0) {
      at = size;
      expected = coveredThrough + 1;
    } else {
      at = next;
      expected = view.getUint32(next + 4, true) * 0x100000000 + view.getUint32(next + 8, true);
    }
  }
  while (at < size) {
    if (restIsZero(bytes, at)) return result({ offset: at, detail: `${size - at} zero bytes after the last record`, torn: true });
    if (at + FRAME_HEADER_BYTES > size) return result({ offset: at, detail: `a frame header cut short (${size - at} of ${FRAME_HEADER_BYTES} bytes)`, torn: true });
    if (crc32(bytes, at, at + 16) !== view.getUint32(at + 16, true)) {
      if (zeroRunStart(bytes, at) < at + FRAME_HEADER_BYTES) return result({ offset: at, detail: 'a frame header left unwritten (zeros to the end of the file)', torn: true });
      if (skipCovered()) continue;
      return result({ offset: at, detail: `the header of record ${expected} fails its CRC (its length and index cannot be trusted)`, torn: false });
    }
    const length = view.getUint32(at, true);
    const index = view.getUint32(at + 4, true) * 0x100000000 + view.getUint32(at + 8, true);
    if (index !== expected) {
      if (skipCovered()) continue;
      return result({ offset: at, detail: `record index ${index} where ${expected} was expected`, torn: false });
    }
    const end = at + FRAME_HEADER_BYTES + length;
    if (end > size) return result({ offset: at, detail: `record ${index} of ${length} bytes cut short at ${size - at - FRAME_HEADER_BYTES}`, torn: true });
    if (crc32(bytes, at + FRAME_HEADER_BYTES, end) !== view.getUint32(at + 12, true)) {
      if (skipCovered()) continue;
      if (end < size) return result({ offset: at, detail: `the payload of record ${index} (${length} bytes) fails its CRC, with records after it`, torn: false });
      const zeros = zeroRunStart(bytes, at + FRAME_HEADER_BYTES);
      if (zeros < size && (size - zeros >= UNWRITTEN_RUN || zeros === at + FRAME_HEADER_BYTES)) {
        return result({ offset: at, detail: `the last record's payload ends in ${size - zeros} zero bytes (a write a power loss cut off)`, torn: true });
      }
      return result({
        offset: at,
        detail: `the last record (${index}, ${length} bytes) fails its CRC: damage to an acknowledged record or a write cut by a power loss, which cannot be told apart`,
        torn: false,
      });
    }
    visit?.(index, bytes.subarray(at + FRAME_HEADER_BYTES, end));
    expected++;
    records++;
    at = end;
  }
  return result(null);
}

function scanV1(bytes: Uint8Array, firstIndex: number, visit?: (index: number, payload: Uint8Array) => void): SegmentScan {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = bytes.length;
  let at = 0;
  let expected = firstIndex;
  let records = 0;
  const result = (problem: Omit<SegmentProblem, 'index'> | null): SegmentScan => ({
    format: 1,
    validEnd: at,
    lastIndex: expected - 1,
    records,
    problem: problem === null ? null : { ...problem, index: expected },
  });
  while (at < size) {
    if (restIsZero(bytes, at)) return result({ offset: at, detail: `${size - at} zero bytes after the last record`, torn: true });
    if (at + V1_FRAME_HEADER_BYTES > size) return result({ offset: at, detail: `a frame header cut short (${size - at} of ${V1_FRAME_HEADER_BYTES} bytes)`, torn: true });
    const length = view.getUint32(at, true);
    const end = at + V1_FRAME_HEADER_BYTES + length;
    // format 1 has no header check: a length past the end is taken for a cut write, as before
    if (end > size) return result({ offset: at, detail: `a record of ${length} bytes cut short at ${size - at - V1_FRAME_HEADER_BYTES} (format 1: its length is unchecked)`, torn: true });
    const stored = view.getUint32(at + 4, true);
    if (crc32(bytes, at + 8, end) !== stored) {
      // format 1 cannot tell a damaged last record from a cut write: taken for a cut write, as before
      return result({ offset: at, detail: `CRC mismatch in a record of ${length} bytes`, torn: end === size });
    }
    const index = view.getUint32(at + 8, true) * 0x100000000 + view.getUint32(at + 12, true);
    if (index !== expected) return result({ offset: at, detail: `record index ${index} where ${expected} was expected`, torn: false });
    visit?.(index, bytes.subarray(at + V1_FRAME_HEADER_BYTES, end));
    expected++;
    records++;
    at = end;
  }
  return result(null);
}

function restIsZero(bytes: Uint8Array, from: number): boolean {
  // a frame never starts with zeros to the end of the file (its header holds a
  // non-zero index and CRCs), so a zero run to the end is space the file system gave
  // the file but no write filled
  if (bytes[from] !== 0) return false;
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** Where the run of zeros that ends the file starts (bytes.length when the last byte is not zero), not before `from`. */
function zeroRunStart(bytes: Uint8Array, from: number): number {
  let i = bytes.length;
  while (i > from && bytes[i - 1] === 0) i--;
  return i;
}

/**
 * Calls visit for each frame of bytes that scanSegment already found good (every
 * frame whole, its CRCs and index right): the walk trusts the lengths and reads no CRC.
 */
export function walkChecked(bytes: Uint8Array, firstIndex: number, visit: (index: number, payload: Uint8Array) => void): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v2 = isFormat2(bytes);
  const headerBytes = v2 ? FRAME_HEADER_BYTES : V1_FRAME_HEADER_BYTES;
  let at = v2 && bytes.length > 0 ? SEGMENT_HEADER_BYTES : 0;
  let index = firstIndex;
  while (at + headerBytes <= bytes.length) {
    const end = at + headerBytes + view.getUint32(at, true);
    visit(index++, bytes.subarray(at + headerBytes, end));
    at = end;
  }
}
