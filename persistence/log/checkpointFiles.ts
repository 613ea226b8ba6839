// Checkpoint files in DATA_DIR, one per checkpoint, named by the last log record they
// cover: checkpoint-0000000000001234.ckpt holds the state after records 1..1234, so a
// restore replays the log from 1235. The body is opaque here (the engine's state, laid out
// as engine/checkpoint.ts says); the file frames it (format 2):
//
//   offset 0    8 bytes  "ODDSCKPT"
//   offset 8    u32 LE   format version (2)
//   offset 12   u32 LE   CRC-32 of the body
//   offset 16   u32 LE   body length, high 32 bits
//   offset 20   u32 LE   body length, low 32 bits
//   offset 24   u32 LE   last log record covered, high 32 bits (must match the name)
//   offset 28   u32 LE   last log record covered, low 32 bits
//   offset 32   u32 LE   meta length M
//   offset 36   u32 LE   CRC-32 of bytes 0..36 and the meta (the header's own check)
//   offset 40   M bytes  meta: a UTF-8 JSON object of small values that belong to the
//                        board's history rather than its state (CheckpointMeta: the
//                        board id, and room for e.g. a stream clock's epoch)
//   offset 40+M          body
//   trailer     16 bytes "CKPT-END", the header CRC again, the body CRC again
//
// Every byte is covered: the header CRC covers the header and the meta (so the body's
// length and CRC are trusted only when it matches), the body CRC the body, and the
// trailer says the file was written to its end. Format 1 (24-byte header: magic,
// version, body CRC, body length; no meta, no trailer) is still read.
//
// Writing (writeCheckpointFile): a temporary file (.tmp), every write's length checked
// (a short write is an error, never a file), fsync, then the temporary file is read
// back and checked as a restore would check it, renamed over the final name, the
// directory fsync'd; only then are older checkpoints deleted (all but `keep` newest).
// Any failure deletes the temporary file and throws CheckpointWriteError: the previous
// checkpoints are untouched. A crash at any point leaves the previous checkpoint
// intact; a leftover .tmp is deleted by the next write.

import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from './crc32.ts';
import { numberedFiles } from './numberedFiles.ts';
import { nodeStorage, writeFully, writeFullySync, type Storage, type StorageFile } from './storage.ts';

const MAGIC = Buffer.from('ODDSCKPT', 'latin1');
const TRAILER_MAGIC = Buffer.from('CKPT-END', 'latin1');
export const CHECKPOINT_FORMAT = 2;
const V1_HEADER_BYTES = 24;
export const CHECKPOINT_HEADER_BYTES = 40;
export const CHECKPOINT_TRAILER_BYTES = 16;
const MAX_META_BYTES = 64 * 1024;
const NAME = /^checkpoint-(\d{16})\.ckpt$/;

/**
 * Small values kept with each checkpoint that describe the board's history, not its
 * state: carried from checkpoint to checkpoint by the durable board. boardId names
 * the board (chosen when DATA_DIR was first filled); other keys may be added by the
 * parts that need a value to survive restarts (a stream clock's epoch, for one).
 */
export interface CheckpointMeta {
  boardId?: string;
  [key: string]: unknown;
}

export interface CheckpointFile {
  path: string;
  /** The last log record the checkpoint covers. */
  logIndex: number;
}

export function checkpointName(logIndex: number): string {
  return `checkpoint-${String(logIndex).padStart(16, '0')}.ckpt`;
}

/** Checkpoints in `dir`, newest first. */
export function listCheckpoints(dir: string): CheckpointFile[] {
  return numberedFiles(dir, NAME)
    .reverse()
    .map((file) => ({ path: file.path, logIndex: file.number }));
}

export interface WrittenCheckpoint extends CheckpointFile {
  bytes: number;
}

export interface WriteCheckpointOptions {
  fsync?: boolean;
  /** CRC-32 of the body computed elsewhere (a worker thread); default: computed here. */
  crc?: number;
  meta?: CheckpointMeta;
  /** How many checkpoints to keep, this one included (default 1: older ones are deleted). */
  keep?: number;
  storage?: Storage;
}

/** A checkpoint could not be written; the previous checkpoints are as they were. */
export class CheckpointWriteError extends Error {
  readonly code = 'checkpoint_failed';
  constructor(
    readonly file: string,
    readonly step: string,
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause;
    super(`writing checkpoint ${file} failed at ${step}: ${cause instanceof Error ? cause.message : String(cause)}; the previous checkpoint is kept`, options);
    this.name = 'CheckpointWriteError';
  }
}

function encodeHeader(logIndex: number, bodyLength: number, bodyCrc: number, meta: CheckpointMeta): { head: Buffer; trailer: Buffer } {
  const metaBytes = Buffer.from(JSON.stringify(meta), 'utf8');
  if (metaBytes.length > MAX_META_BYTES) throw new Error(`checkpoint meta of ${metaBytes.length} bytes is over ${MAX_META_BYTES}`);
  const head = Buffer.alloc(CHECKPOINT_HEADER_BYTES + metaBytes.length);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(CHECKPOINT_FORMAT, 8);
  head.writeUInt32LE(bodyCrc, 12);
  head.writeUInt32LE(Math.floor(bodyLength / 0x100000000), 16);
  head.writeUInt32LE(bodyLength >>> 0, 20);
  head.writeUInt32LE(Math.floor(logIndex / 0x100000000), 24);
  head.writeUInt32LE(logIndex >>> 0, 28);
  head.writeUInt32LE(metaBytes.length, 32);
  metaBytes.copy(head, CHECKPOINT_HEADER_BYTES);
  const headerCrc = headerCrcOf(head, metaBytes.length);
  head.writeUInt32LE(headerCrc, 36);
  const trailer = Buffer.alloc(CHECKPOINT_TRAILER_BYTES);
  TRAILER_MAGIC.copy(trailer, 0);
  trailer.writeUInt32LE(headerCrc, 8);
  trailer.writeUInt32LE(bodyCrc, 12);
  return { head, trailer };
}

function headerCrcOf(head: Uint8Array, metaLength: number): number {
  return crc32(head, CHECKPOINT_HEADER_BYTES, CHECKPOINT_HEADER_BYTES + metaLength, crc32(head, 0, 36));
}

/** Writes a checkpoint durably and checked (see the header), then deletes all but the `keep` newest. */
export function writeCheckpoint(dir: string, logIndex: number, body: Uint8Array, options: WriteCheckpointOptions = {}): WrittenCheckpoint {
  const storage = options.storage ?? nodeStorage;
  const sync = options.fsync ?? true;
  const path = join(dir, checkpointName(logIndex));
  const temp = `${path}.tmp`;
  const bodyCrc = options.crc ?? crc32(body);
  const { head, trailer } = encodeHeader(logIndex, body.length, bodyCrc, options.meta ?? {});
  let step = 'create';
  try {
    const fd = storage.openSync(temp, 'w');
    try {
      step = 'write';
      writeFullySync(storage, fd, head, 0);
      writeFullySync(storage, fd, body, head.length);
      writeFullySync(storage, fd, trailer, head.length + body.length);
      step = 'fsync';
      if (sync) storage.fsyncSync(fd);
    } finally {
      storage.closeSync(fd);
    }
    step = 'read back';
    checkCheckpointBytes(readFileSync(temp), temp, logIndex);
    step = 'rename';
    storage.renameSync(temp, path);
    step = 'directory fsync';
    if (sync) storage.syncDirSync(dir);
  } catch (error) {
    forget(storage, temp);
    throw new CheckpointWriteError(path, step, { cause: error });
  }
  dropOlder(dir, logIndex, temp, options.keep ?? 1, storage, sync);
  return { path, logIndex, bytes: head.length + body.length + trailer.length };
}

/**
 * writeCheckpoint without holding the event loop: the body (already a copy of the state),
 * one buffer or the parts it is made of in order (a format 2 body: its manifest and the
 * state's arrays as they are, engine/checkpointBlocks.ts), is written, fsync'd and read
 * back on the thread pool while batches go on applying; the same steps, checks and crash
 * guarantees.
 */
export async function writeCheckpointInBackground(dir: string, logIndex: number, body: Uint8Array | readonly Uint8Array[], options: WriteCheckpointOptions = {}): Promise<WrittenCheckpoint> {
  const storage = options.storage ?? nodeStorage;
  const sync = options.fsync ?? true;
  const path = join(dir, checkpointName(logIndex));
  const temp = `${path}.tmp`;
  const bodyParts: readonly Uint8Array[] = body instanceof Uint8Array ? [body] : body;
  let bodyLength = 0;
  for (const part of bodyParts) bodyLength += part.length;
  // a CRC taken where the body was built (a worker thread) keeps this pass off the event loop
  let bodyCrc = options.crc;
  if (bodyCrc === undefined) {
    bodyCrc = 0;
    for (const part of bodyParts) bodyCrc = crc32(part, 0, part.length, bodyCrc);
  }
  const { head, trailer } = encodeHeader(logIndex, bodyLength, bodyCrc, options.meta ?? {});
  const total = head.length + bodyLength + trailer.length;
  let step = 'create';
  try {
    const file = await storage.open(temp, 'w');
    try {
      step = 'write';
      await writeParts(file, [head, ...bodyParts, trailer], 0);
      step = 'fsync';
      if (sync) await file.sync();
    } finally {
      await file.close();
    }
    step = 'read back';
    await verifyCheckpointFile(temp, logIndex, total);
    step = 'rename';
    await storage.rename(temp, path);
    step = 'directory fsync';
    if (sync) storage.syncDirSync(dir);
  } catch (error) {
    forget(storage, temp);
    throw new CheckpointWriteError(path, step, { cause: error });
  }
  dropOlder(dir, logIndex, temp, options.keep ?? 1, storage, sync);
  return { path, logIndex, bytes: total };
}

/** Parts one gathered write takes at most (the system's own limit, IOV_MAX, is 1024 on Linux). */
const PARTS_PER_WRITE = 512;

/**
 * Writes `parts` one after another from `position`: gathered writes of up to
 * PARTS_PER_WRITE parts; after a short one (a full disk at its edge) the rest of its parts
 * one by one, and a write that makes no progress is an error, never a shorter file.
 */
async function writeParts(file: StorageFile, parts: readonly Uint8Array[], position: number): Promise<void> {
  let at = position;
  for (let first = 0; first < parts.length; first += PARTS_PER_WRITE) {
    const group = parts.slice(first, first + PARTS_PER_WRITE);
    let wanted = 0;
    for (const part of group) wanted += part.length;
    const written = await file.writev(group, at);
    if (written < wanted) {
      let skip = written;
      let to = at + written;
      for (const part of group) {
        if (skip >= part.length) {
          skip -= part.length;
          continue;
        }
        await writeFully(file, part.subarray(skip), to);
        to += part.length - skip;
        skip = 0;
      }
    }
    at += wanted;
  }
}

/** Deletes a temporary file after a failure; a failure to delete is left for the next write's clean-up. */
function forget(storage: Storage, temp: string): void {
  try {
    storage.unlinkSync(temp);
  } catch {
    // the next checkpoint write deletes leftover .tmp files
  }
}

/**
 * After the new checkpoint is in place: all but the `keep` newest checkpoints and any
 * leftover temporary file go. A failed deletion leaves a file behind (the next
 * checkpoint deletes it), never a missing one.
 */
function dropOlder(dir: string, logIndex: number, temp: string, keep: number, storage: Storage, sync: boolean): void {
  let dropped = 0;
  try {
    const all = listCheckpoints(dir).filter((file) => file.logIndex <= logIndex);
    for (const old of all.slice(Math.max(1, keep))) {
      storage.unlinkSync(old.path);
      dropped++;
    }
    for (const name of readdirSync(dir)) {
      if (name.endsWith('.ckpt.tmp') && join(dir, name) !== temp) {
        storage.unlinkSync(join(dir, name));
        dropped++;
      }
    }
    if (dropped > 0 && sync) storage.syncDirSync(dir);
  } catch {
    // the checkpoint is written and durable; an old file stays until the next checkpoint
  }
}

/** Reads a written file back in steps (the thread pool reads, the CRC runs between reads) and checks it as a restore would. */
async function verifyCheckpointFile(path: string, logIndex: number, expectedBytes: number): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    if (size !== expectedBytes) throw new CheckpointDamagedError(path, 0, 'file', `${size} bytes on disk after writing ${expectedBytes}`);
    const headBytes = Buffer.alloc(Math.min(size, CHECKPOINT_HEADER_BYTES + MAX_META_BYTES));
    await handle.read(headBytes, 0, headBytes.length, 0);
    const header = parseHeader(headBytes, path, size);
    if (header.logIndex !== logIndex) throw new CheckpointDamagedError(path, 24, 'header', `covers record ${header.logIndex}, written for ${logIndex}`);
    const chunk = Buffer.allocUnsafe(Math.min(4 * 1024 * 1024, Math.max(1, header.bodyEnd - header.bodyStart)));
    let crc = 0;
    let at = header.bodyStart;
    while (at < header.bodyEnd) {
      const want = Math.min(chunk.length, header.bodyEnd - at);
      const { bytesRead } = await handle.read(chunk, 0, want, at);
      if (bytesRead <= 0) throw new CheckpointDamagedError(path, at, 'body', 'read back short');
      crc = crc32(chunk, 0, bytesRead, crc);
      at += bytesRead;
    }
    if (crc !== header.bodyCrc) throw new CheckpointDamagedError(path, header.bodyStart, 'body', 'the body read back does not match its CRC');
    const trailer = Buffer.alloc(CHECKPOINT_TRAILER_BYTES);
    await handle.read(trailer, 0, trailer.length, header.bodyEnd);
    checkTrailer(trailer, path, header);
  } finally {
    await handle.close();
  }
}

/** A checkpoint file that fails its checks: where, which part, what. */
export class CheckpointDamagedError extends Error {
  readonly code = 'checkpoint_damaged';
  constructor(
    readonly file: string,
    readonly offset: number,
    /** 'file', 'header', 'meta', 'body' or 'trailer'. */
    readonly part: string,
    readonly detail: string,
  ) {
    super(`${file} at offset ${offset} (${part}): ${detail}`);
    this.name = 'CheckpointDamagedError';
  }
}

interface ParsedHeader {
  format: number;
  bodyCrc: number;
  headerCrc: number;
  bodyStart: number;
  bodyEnd: number;
  /** -1 in format 1 (only the name says it). */
  logIndex: number;
  meta: CheckpointMeta;
}

function parseHeader(bytes: Buffer, path: string, fileSize: number): ParsedHeader {
  if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) throw new CheckpointDamagedError(path, 0, 'header', 'not a checkpoint file (its first 8 bytes are not ODDSCKPT)');
  const format = bytes.readUInt32LE(8);
  if (format === 1) {
    if (bytes.length < V1_HEADER_BYTES) throw new CheckpointDamagedError(path, 0, 'header', `${fileSize} bytes: shorter than a format 1 header`);
    const length = bytes.readUInt32LE(16) * 0x100000000 + bytes.readUInt32LE(20);
    if (fileSize !== V1_HEADER_BYTES + length) throw new CheckpointDamagedError(path, 16, 'header', `${fileSize - V1_HEADER_BYTES} body bytes, the header says ${length} (format 1: a short write or a damaged length)`);
    return { format, bodyCrc: bytes.readUInt32LE(12), headerCrc: 0, bodyStart: V1_HEADER_BYTES, bodyEnd: fileSize, logIndex: -1, meta: {} };
  }
  if (format !== CHECKPOINT_FORMAT) throw new CheckpointDamagedError(path, 8, 'header', `format ${format}: this build reads formats 1 and ${CHECKPOINT_FORMAT}`);
  if (bytes.length < CHECKPOINT_HEADER_BYTES) throw new CheckpointDamagedError(path, 0, 'header', `${fileSize} bytes: shorter than its header`);
  const metaLength = bytes.readUInt32LE(32);
  const headerCrc = bytes.readUInt32LE(36);
  if (metaLength > MAX_META_BYTES || CHECKPOINT_HEADER_BYTES + metaLength > bytes.length) {
    throw new CheckpointDamagedError(path, 32, 'header', `meta length ${metaLength} is impossible (header CRC ${headerCrc.toString(16)})`);
  }
  if (headerCrcOf(bytes, metaLength) !== headerCrc) throw new CheckpointDamagedError(path, 0, 'header', 'the header (or its meta) fails its CRC');
  const length = bytes.readUInt32LE(16) * 0x100000000 + bytes.readUInt32LE(20);
  const bodyStart = CHECKPOINT_HEADER_BYTES + metaLength;
  const bodyEnd = bodyStart + length;
  if (fileSize !== bodyEnd + CHECKPOINT_TRAILER_BYTES) {
    throw new CheckpointDamagedError(path, Math.min(fileSize, bodyEnd), fileSize < bodyEnd + CHECKPOINT_TRAILER_BYTES ? 'file' : 'trailer', `${fileSize} bytes where the header says ${bodyEnd + CHECKPOINT_TRAILER_BYTES} (cut short or grown)`);
  }
  let meta: CheckpointMeta;
  try {
    meta = JSON.parse(bytes.subarray(CHECKPOINT_HEADER_BYTES, bodyStart).toString('utf8')) as CheckpointMeta;
  } catch (error) {
    throw new CheckpointDamagedError(path, CHECKPOINT_HEADER_BYTES, 'meta', `not JSON: ${(error as Error).message}`);
  }
  const logIndex = bytes.readUInt32LE(24) * 0x100000000 + bytes.readUInt32LE(28);
  return { format, bodyCrc: bytes.readUInt32LE(12), headerCrc, bodyStart, bodyEnd, logIndex, meta };
}

function checkTrailer(trailer: Buffer, path: string, header: ParsedHeader): void {
  if (!trailer.subarray(0, 8).equals(TRAILER_MAGIC) || trailer.readUInt32LE(8) !== header.headerCrc || trailer.readUInt32LE(12) !== header.bodyCrc) {
    throw new CheckpointDamagedError(path, header.bodyEnd, 'trailer', 'the trailer does not match the header (a write that did not reach the end, or damage)');
  }
}

export interface CheckpointContents {
  body: Uint8Array;
  meta: CheckpointMeta;
  format: number;
}

/** Checks a whole checkpoint file in memory; `expectedIndex` (when known) must match its header. */
function checkCheckpointBytes(bytes: Buffer, path: string, expectedIndex: number): CheckpointContents {
  const header = parseHeader(bytes, path, bytes.length);
  if (header.logIndex >= 0 && expectedIndex >= 0 && header.logIndex !== expectedIndex) {
    throw new CheckpointDamagedError(path, 24, 'header', `the header covers record ${header.logIndex} but the name says ${expectedIndex}`);
  }
  const body = bytes.subarray(header.bodyStart, header.bodyEnd);
  if (crc32(body) !== header.bodyCrc) throw new CheckpointDamagedError(path, header.bodyStart, 'body', `the body (${body.length} bytes from offset ${header.bodyStart}) fails its CRC`);
  if (header.format !== 1) checkTrailer(bytes.subarray(header.bodyEnd), path, header);
  return { body, meta: header.meta, format: header.format };
}

/** Bytes a reader reads at a time when it reads only to take the CRC (drain). */
const DRAIN_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * A checkpoint's body read in order, straight into the caller's arrays, with no copy of
 * the whole body in between (a restore reads a format 2 body block by block into the
 * arrays the board keeps: engine/checkpointBlocks.ts). Opening checks the header (and
 * its meta) and the file's length; the body CRC is taken as the bytes are read, and
 * verify() checks it and the trailer once the last byte is read. The caller uses nothing
 * it read before verify() returned, and after a read or a decode that fails calls
 * drain(), which reads the rest and throws the CRC failure when that is the cause.
 */
export class CheckpointBodyReader {
  readonly meta: CheckpointMeta;
  readonly format: number;
  /** The body's length in bytes. */
  readonly length: number;
  private position = 0;
  private crc = 0;
  private verified = false;

  private constructor(
    readonly path: string,
    private readonly fd: number,
    private readonly header: ParsedHeader,
  ) {
    this.meta = header.meta;
    this.format = header.format;
    this.length = header.bodyEnd - header.bodyStart;
  }

  /** Opens a checkpoint file and checks its header against its name and its size; throws CheckpointDamagedError. */
  static open(file: CheckpointFile): CheckpointBodyReader {
    const fd = openSync(file.path, 'r');
    try {
      const size = fstatSync(fd).size;
      const headBytes = Buffer.alloc(Math.min(size, CHECKPOINT_HEADER_BYTES + MAX_META_BYTES));
      readFullySync(fd, headBytes, 0, file.path);
      const header = parseHeader(headBytes, file.path, size);
      if (header.logIndex >= 0 && file.logIndex >= 0 && header.logIndex !== file.logIndex) {
        throw new CheckpointDamagedError(file.path, 24, 'header', `the header covers record ${header.logIndex} but the name says ${file.logIndex}`);
      }
      return new CheckpointBodyReader(file.path, fd, header);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** Fills `target` with the next target.length bytes of the body. */
  read(target: Uint8Array): void {
    if (this.position + target.length > this.length) throw new Error(`reading ${target.length} bytes at ${this.position} passes the body's end (${this.length})`);
    readFullySync(this.fd, target, this.header.bodyStart + this.position, this.path);
    this.crc = crc32(target, 0, target.length, this.crc);
    this.position += target.length;
  }

  /** Once every byte is read: the body CRC, then the trailer (format 2); throws CheckpointDamagedError. */
  verify(): void {
    if (this.verified) return;
    const { bodyStart } = this.header;
    if (this.position !== this.length) throw new Error(`verify after ${this.position} of the body's ${this.length} bytes`);
    if (this.crc !== this.header.bodyCrc) throw new CheckpointDamagedError(this.path, bodyStart, 'body', `the body (${this.length} bytes from offset ${bodyStart}) fails its CRC`);
    if (this.format !== 1) {
      const trailer = Buffer.alloc(CHECKPOINT_TRAILER_BYTES);
      readFullySync(this.fd, trailer, this.header.bodyEnd, this.path);
      checkTrailer(trailer, this.path, this.header);
    }
    this.verified = true;
  }

  /** Reads what is left of the body (only for its CRC), then verify(): after a failure, tells damage (thrown here) from a body that passes its checks. */
  drain(): void {
    const chunk = Buffer.allocUnsafe(Math.min(DRAIN_CHUNK_BYTES, Math.max(1, this.length - this.position)));
    while (this.position < this.length) this.read(chunk.subarray(0, Math.min(chunk.length, this.length - this.position)));
    this.verify();
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Fills `target` from `position` of the file; a file that ends first was cut short under us (its size was checked at open). */
function readFullySync(fd: number, target: Uint8Array, position: number, path: string): void {
  let done = 0;
  while (done < target.length) {
    const n = readSync(fd, target, done, target.length - done, position + done);
    if (n <= 0) throw new CheckpointDamagedError(path, position + done, 'file', `ends at offset ${position + done} while reading (it shrank after it was opened)`);
    done += n;
  }
}

/** A checkpoint's body and meta after checking its header, length, CRCs and trailer. */
export function readCheckpointFile(file: CheckpointFile): CheckpointContents {
  return checkCheckpointBytes(readFileSync(file.path), file.path, file.logIndex);
}

/** The body of a checkpoint file after checking it (readCheckpointFile). */
export function readCheckpoint(file: CheckpointFile): Uint8Array {
  return readCheckpointFile(file).body;
}

/** Offsets of a format 2 file's parts (for tests that damage each one). */
export function checkpointLayout(bytes: Buffer): { headerBytes: number; metaStart: number; bodyStart: number; bodyEnd: number; size: number } {
  const metaLength = bytes.readUInt32LE(32);
  const bodyStart = CHECKPOINT_HEADER_BYTES + metaLength;
  const length = bytes.readUInt32LE(16) * 0x100000000 + bytes.readUInt32LE(20);
  return { headerBytes: CHECKPOINT_HEADER_BYTES, metaStart: CHECKPOINT_HEADER_BYTES, bodyStart, bodyEnd: bodyStart + length, size: bytes.length };
}
