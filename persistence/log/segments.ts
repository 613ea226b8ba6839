// The on-disk form of the file log: segment files under DATA_DIR/wal named by the index
// of their first record (wal-0000000000000001.log), each a plain sequence of frames:
//
//   offset 0  u32 LE  payload length in bytes
//   offset 4  u32 LE  CRC-32 of bytes 8 .. end of payload (the index words and the payload)
//   offset 8  u32 LE  record index, high 32 bits
//   offset 12 u32 LE  record index, low 32 bits
//   offset 16         payload (msgpack, opaque here)
//
// Indexes run 1, 2, 3... with no gap across segments. scanSegment walks one file and
// sorts what it finds at its first bad frame into two cases: a torn tail (the frame
// runs past the end of the file, or is the file's last bytes and fails its CRC, or the
// rest of the file is zeros) is what a crash in the middle of a write leaves and was
// never acknowledged; anything else (a bad CRC with bytes after it, a wrong index) is
// damage to something that may have been acknowledged, and is never skipped.

import { crc32 } from './crc32.ts';
import { numberedFiles } from './numberedFiles.ts';

export const FRAME_HEADER_BYTES = 16;
const SEGMENT_NAME = /^wal-(\d{16})\.log$/;

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

/**
 * A frame's 16 header bytes for `payload` at `index` (the frame is the header, then the
 * payload as it is): the log writes the two side by side rather than copy the payload.
 */
export function encodeFrameHeader(index: number, payload: Uint8Array): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32LE(payload.length, 0);
  header.writeUInt32LE(Math.floor(index / 0x100000000), 8);
  header.writeUInt32LE(index >>> 0, 12);
  header.writeUInt32LE(crc32(payload, 0, payload.length, crc32(header, 8)), 4);
  return header;
}

export function encodeFrame(index: number, payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.writeUInt32LE(Math.floor(index / 0x100000000), 8);
  frame.writeUInt32LE(index >>> 0, 12);
  frame.set(payload, FRAME_HEADER_BYTES);
  frame.writeUInt32LE(crc32(frame, 8), 4);
  return frame;
}

export interface SegmentProblem {
  offset: number;
  detail: string;
  /** True for a torn tail (an unacknowledged partial write); false for damage. */
  torn: boolean;
}

export interface SegmentScan {
  /** Offset just past the last good frame. */
  validEnd: number;
  /** Index of the last good frame (firstIndex - 1 when none). */
  lastIndex: number;
  records: number;
  problem: SegmentProblem | null;
}

/**
 * Walks the frames of one segment whose first record must be `firstIndex`; calls
 * visit(index, payload view) for each good frame until the first bad one.
 */
export function scanSegment(
  bytes: Uint8Array,
  firstIndex: number,
  visit?: (index: number, payload: Uint8Array) => void,
): SegmentScan {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = bytes.length;
  let at = 0;
  let expected = firstIndex;
  let records = 0;
  const result = (problem: SegmentProblem | null): SegmentScan => ({ validEnd: at, lastIndex: expected - 1, records, problem });
  while (at < size) {
    if (restIsZero(bytes, at)) return result({ offset: at, detail: `${size - at} zero bytes after the last record`, torn: true });
    if (at + FRAME_HEADER_BYTES > size) return result({ offset: at, detail: `a frame header cut short (${size - at} of ${FRAME_HEADER_BYTES} bytes)`, torn: true });
    const length = view.getUint32(at, true);
    const end = at + FRAME_HEADER_BYTES + length;
    if (end > size) return result({ offset: at, detail: `a record of ${length} bytes cut short at ${size - at - FRAME_HEADER_BYTES}`, torn: true });
    const stored = view.getUint32(at + 4, true);
    if (crc32(bytes, at + 8, end) !== stored) {
      return result({ offset: at, detail: `CRC mismatch in a record of ${length} bytes`, torn: end === size });
    }
    const index = view.getUint32(at + 8, true) * 0x100000000 + view.getUint32(at + 12, true);
    if (index !== expected) return result({ offset: at, detail: `record index ${index} where ${expected} was expected`, torn: false });
    visit?.(index, bytes.subarray(at + FRAME_HEADER_BYTES, end));
    expected++;
    records++;
    at = end;
  }
  return result(null);
}

function restIsZero(bytes: Uint8Array, from: number): boolean {
  // a frame never starts with 8 zero bytes (its CRC covers a non-zero index), so a
  // zero run to the end is space the file system gave the file but no write filled
  if (bytes[from] !== 0) return false;
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/**
 * Calls visit for each frame of bytes that scanSegment already found good (every
 * frame whole, its CRC and index right): the walk trusts the lengths and reads no CRC.
 */
export function walkChecked(bytes: Uint8Array, firstIndex: number, visit: (index: number, payload: Uint8Array) => void): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  let index = firstIndex;
  while (at + FRAME_HEADER_BYTES <= bytes.length) {
    const end = at + FRAME_HEADER_BYTES + view.getUint32(at, true);
    visit(index++, bytes.subarray(at + FRAME_HEADER_BYTES, end));
    at = end;
  }
}
