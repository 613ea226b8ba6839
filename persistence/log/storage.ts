// The storage seam: every write, fsync, rename, truncate and unlink the batch log
// (fileBatchLog.ts) and the checkpoint writer (checkpointFiles.ts) make goes through
// a Storage. nodeStorage is the file system as node:fs gives it; faultyStorage
// (storageFaults.ts) wraps it to fail the Nth operation of a kind the way a disk does
// (a short write, ENOSPC, EIO, or a crash that stops every later operation), which is
// how the tests put the write path through the faults an operator meets.
//
// Reads are not part of the seam: damage is put into files at rest (byte flips and
// truncations of real files), and a start reads what is there.

import { closeSync, fsyncSync, ftruncateSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';

export type StorageOp = 'write' | 'fsync' | 'rename' | 'truncate' | 'unlink';
export const STORAGE_OPS: readonly StorageOp[] = ['write', 'fsync', 'rename', 'truncate', 'unlink'];

/** A file open for writing. Writes answer how many bytes they wrote (possibly fewer than asked: the caller checks). */
export interface StorageFile {
  writev(parts: readonly Uint8Array[], position: number): Promise<number>;
  write(bytes: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /** fdatasync (data and the size, not the times). */
  datasync(): Promise<void>;
  /** fsync. */
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

export interface Storage {
  /** 'w': create or empty; 'r+': an existing file. */
  open(path: string, flags: 'w' | 'r+'): Promise<StorageFile>;
  rename(from: string, to: string): Promise<void>;
  /** The synchronous operations (a start's cut of a torn tail, the replica's checkpoint, deletions). */
  openSync(path: string, flags: 'w' | 'r+'): number;
  writeSync(fd: number, bytes: Uint8Array, offset: number, length: number, position: number | null): number;
  fsyncSync(fd: number): void;
  ftruncateSync(fd: number, length: number): void;
  closeSync(fd: number): void;
  renameSync(from: string, to: string): void;
  /** Deletes a file (no error when it is gone already). */
  unlinkSync(path: string): void;
  /** fsync of a directory: a created, renamed or deleted name survives a crash only after it. */
  syncDirSync(dir: string): void;
}

class NodeFile implements StorageFile {
  constructor(private readonly handle: FileHandle) {}
  async writev(parts: readonly Uint8Array[], position: number): Promise<number> {
    return (await this.handle.writev(parts as Uint8Array[], position)).bytesWritten;
  }
  async write(bytes: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return (await this.handle.write(bytes, offset, length, position)).bytesWritten;
  }
  datasync(): Promise<void> {
    return this.handle.datasync();
  }
  sync(): Promise<void> {
    return this.handle.sync();
  }
  truncate(length: number): Promise<void> {
    return this.handle.truncate(length);
  }
  close(): Promise<void> {
    return this.handle.close();
  }
}

export const nodeStorage: Storage = {
  async open(path, flags) {
    return new NodeFile(await open(path, flags));
  },
  rename: (from, to) => rename(from, to),
  openSync: (path, flags) => openSync(path, flags),
  writeSync: (fd, bytes, offset, length, position) => writeSync(fd, bytes, offset, length, position),
  fsyncSync: (fd) => fsyncSync(fd),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
  closeSync: (fd) => closeSync(fd),
  renameSync: (from, to) => renameSync(from, to),
  unlinkSync: (path) => rmSync(path, { force: true }),
  syncDirSync(dir) {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

/** Writes all of bytes at `position` (or the file position when null), looping over short writes; a write that makes no progress is an error. */
export function writeFullySync(storage: Storage, fd: number, bytes: Uint8Array, position: number | null): void {
  let written = 0;
  while (written < bytes.length) {
    const n = storage.writeSync(fd, bytes, written, bytes.length - written, position === null ? null : position + written);
    if (!(n > 0)) throw shortWriteError(written, bytes.length);
    written += n;
  }
}

/** Writes all of bytes at `position`, looping over short writes; a write that makes no progress is an error. */
export async function writeFully(file: StorageFile, bytes: Uint8Array, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const n = await file.write(bytes, written, bytes.length - written, position + written);
    if (!(n > 0)) throw shortWriteError(written, bytes.length);
    written += n;
  }
}

/** A write that stopped making progress (what a full disk gives at its edge before ENOSPC). */
export function shortWriteError(written: number, wanted: number): Error {
  const error = new Error(`short write: ${written} of ${wanted} bytes written, and the next write wrote nothing`) as NodeJS.ErrnoException;
  error.code = 'ESHORT';
  return error;
}
