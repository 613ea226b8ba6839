// Checkpoint files in DATA_DIR, one per checkpoint, named by the last log record they
// cover: checkpoint-0000000000001234.ckpt holds the state after records 1..1234, so a
// restore replays the log from 1235. The body is opaque here (the engine's msgpack
// document); the file frames it:
//
//   offset 0   8 bytes  "ODDSCKPT"
//   offset 8   u32 LE   format version (1)
//   offset 12  u32 LE   CRC-32 of the body
//   offset 16  u32 LE   body length, high 32 bits
//   offset 20  u32 LE   body length, low 32 bits
//   offset 24           body
//
// Writing: a temporary file (.tmp), fsync, rename over the final name, fsync of the
// directory; only then are older checkpoints deleted. A crash at any point leaves the
// previous checkpoint intact; a leftover .tmp is deleted on the next write.

import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from './crc32.ts';
import { numberedFiles } from './numberedFiles.ts';
import { syncDir } from './fileBatchLog.ts';

const MAGIC = Buffer.from('ODDSCKPT', 'latin1');
const FORMAT = 1;
const HEADER_BYTES = 24;
const NAME = /^checkpoint-(\d{16})\.ckpt$/;

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

/** Writes a checkpoint durably, then deletes the older ones. */
export function writeCheckpoint(dir: string, logIndex: number, body: Uint8Array, options: { fsync?: boolean } = {}): WrittenCheckpoint {
  const sync = options.fsync ?? true;
  const path = join(dir, checkpointName(logIndex));
  const temp = `${path}.tmp`;
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(FORMAT, 8);
  header.writeUInt32LE(crc32(body), 12);
  header.writeUInt32LE(Math.floor(body.length / 0x100000000), 16);
  header.writeUInt32LE(body.length >>> 0, 20);
  const fd = openSync(temp, 'w');
  try {
    writeFully(fd, header);
    writeFully(fd, body);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  if (sync) syncDir(dir);
  for (const old of listCheckpoints(dir)) if (old.logIndex < logIndex) rmSync(old.path, { force: true });
  for (const name of readdirSync(dir)) if (name.endsWith('.ckpt.tmp') && join(dir, name) !== temp) rmSync(join(dir, name), { force: true });
  return { path, logIndex, bytes: HEADER_BYTES + body.length };
}

/**
 * writeCheckpoint without holding the event loop: the body (already a copy of the state)
 * is written and fsync'd on the thread pool while batches go on applying; `crc`, when
 * given, is the body's CRC-32 computed elsewhere. The same
 * steps and the same crash guarantees: temporary file, fsync, rename, directory fsync,
 * then the older checkpoints go.
 */
export async function writeCheckpointInBackground(dir: string, logIndex: number, body: Uint8Array, options: { fsync?: boolean; crc?: number } = {}): Promise<WrittenCheckpoint> {
  const sync = options.fsync ?? true;
  const path = join(dir, checkpointName(logIndex));
  const temp = `${path}.tmp`;
  const header = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(FORMAT, 8);
  // a CRC taken where the body was built (a worker thread) keeps this pass off the event loop
  header.writeUInt32LE(options.crc ?? crc32(body), 12);
  header.writeUInt32LE(Math.floor(body.length / 0x100000000), 16);
  header.writeUInt32LE(body.length >>> 0, 20);
  const file = await open(temp, 'w');
  try {
    await file.writev([header, body]);
    if (sync) await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  if (sync) syncDir(dir);
  for (const old of listCheckpoints(dir)) if (old.logIndex < logIndex) rmSync(old.path, { force: true });
  for (const name of readdirSync(dir)) if (name.endsWith('.ckpt.tmp') && join(dir, name) !== temp) rmSync(join(dir, name), { force: true });
  return { path, logIndex, bytes: HEADER_BYTES + body.length };
}

function writeFully(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

export class CheckpointDamagedError extends Error {
  readonly code = 'checkpoint_damaged';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'CheckpointDamagedError';
  }
}

/** The body of a checkpoint file after checking its header, length and CRC. */
export function readCheckpoint(file: CheckpointFile): Uint8Array {
  const bytes = readFileSync(file.path);
  if (bytes.length < HEADER_BYTES || !bytes.subarray(0, 8).equals(MAGIC)) throw new CheckpointDamagedError(file.path, 'not a checkpoint file');
  const format = bytes.readUInt32LE(8);
  if (format !== FORMAT) throw new CheckpointDamagedError(file.path, `format ${format}, expected ${FORMAT}`);
  const length = bytes.readUInt32LE(16) * 0x100000000 + bytes.readUInt32LE(20);
  if (bytes.length !== HEADER_BYTES + length) throw new CheckpointDamagedError(file.path, `${bytes.length - HEADER_BYTES} body bytes, header says ${length}`);
  const body = bytes.subarray(HEADER_BYTES);
  if (crc32(body) !== bytes.readUInt32LE(12)) throw new CheckpointDamagedError(file.path, 'CRC mismatch');
  return body;
}
