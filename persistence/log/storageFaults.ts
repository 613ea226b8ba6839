// A Storage that fails one operation the way a disk does: the Nth operation of a kind
// (write, fsync, rename, truncate, unlink; counted from 1 across the sync and async
// calls) gets
//   short   a write writes half of what it was given and answers that (a later write
//           of the rest fails with ENOSPC, as a full disk does)
//   ENOSPC  the operation throws ENOSPC (nothing written)
//   EIO     the operation throws EIO (an fsync's EIO: the kernel may have dropped pages)
//   crash   the operation does nothing (a write: its first half) and every operation
//           from then on throws: the process died here; what the files hold is what a
//           restart finds
// Only the tests and the soak script use it; the service runs on nodeStorage.

import { nodeStorage, type Storage, type StorageFile, type StorageOp } from './storage.ts';

export type FaultKind = 'short' | 'ENOSPC' | 'EIO' | 'crash';

export interface StorageFault {
  op: StorageOp;
  /** 1 = the first operation of that kind from now on. */
  nth: number;
  kind: FaultKind;
}

export class FaultyStorage implements Storage {
  readonly counts: Record<StorageOp, number> = { write: 0, fsync: 0, rename: 0, truncate: 0, unlink: 0 };
  /** Set once the fault fired. */
  fired = false;
  /** After a crash fault: every operation throws. */
  dead = false;
  /** After a short write fired: every later write fails ENOSPC (the disk is full). */
  private full = false;

  constructor(
    private fault: StorageFault | null,
    private readonly base: Storage = nodeStorage,
  ) {}

  /** Space again after a short write filled the disk (an operator freed some). */
  roomAgain(): void {
    this.full = false;
  }

  /** Arms a fault counted from the operations made so far. */
  arm(fault: StorageFault): void {
    this.fault = { ...fault, nth: this.counts[fault.op] + fault.nth };
    this.fired = false;
  }

  /** What the operation does: 'go', 'half' (a write writes half), or it throws. */
  private check(op: StorageOp): 'go' | 'half' {
    if (this.dead) throw errno('EIO', `the process crashed (simulated) before this ${op}`);
    if (op === 'write' && this.full) throw errno('ENOSPC', 'no space left on device (simulated, after a short write)');
    const n = ++this.counts[op];
    const fault = this.fault;
    if (fault === null || this.fired || fault.op !== op || fault.nth !== n) return 'go';
    this.fired = true;
    switch (fault.kind) {
      case 'short':
        if (op !== 'write') throw errno('EIO', `simulated EIO on ${op}`);
        this.full = true;
        return 'half';
      case 'ENOSPC':
        throw errno('ENOSPC', `no space left on device (simulated ${op} #${n})`);
      case 'EIO':
        throw errno('EIO', `i/o error (simulated ${op} #${n})`);
      case 'crash':
        this.dead = true;
        if (op === 'write') return 'half';
        throw errno('EIO', `the process crashed (simulated) at ${op} #${n}`);
    }
  }

  private afterHalf(): void {
    if (this.dead) throw errno('EIO', 'the process crashed (simulated) in the middle of a write');
  }

  async open(path: string, flags: 'w' | 'r+'): Promise<StorageFile> {
    if (this.dead) throw errno('EIO', 'the process crashed (simulated) before this open');
    const file = await this.base.open(path, flags);
    return new FaultyFile(this, file);
  }

  async rename(from: string, to: string): Promise<void> {
    this.check('rename');
    await this.base.rename(from, to);
  }

  openSync(path: string, flags: 'w' | 'r+'): number {
    if (this.dead) throw errno('EIO', 'the process crashed (simulated) before this open');
    return this.base.openSync(path, flags);
  }

  writeSync(fd: number, bytes: Uint8Array, offset: number, length: number, position: number | null): number {
    if (this.check('write') === 'half') {
      const half = length >>> 1;
      const n = half > 0 ? this.base.writeSync(fd, bytes, offset, half, position) : 0;
      this.afterHalf();
      return n;
    }
    return this.base.writeSync(fd, bytes, offset, length, position);
  }

  fsyncSync(fd: number): void {
    this.check('fsync');
    this.base.fsyncSync(fd);
  }

  ftruncateSync(fd: number, length: number): void {
    this.check('truncate');
    this.base.ftruncateSync(fd, length);
  }

  closeSync(fd: number): void {
    this.base.closeSync(fd); // closing never fails here: the fd must not leak in a test
  }

  renameSync(from: string, to: string): void {
    this.check('rename');
    this.base.renameSync(from, to);
  }

  unlinkSync(path: string): void {
    this.check('unlink');
    this.base.unlinkSync(path);
  }

  syncDirSync(dir: string): void {
    this.check('fsync');
    this.base.syncDirSync(dir);
  }

  /** @internal FaultyFile's way in. */
  gate(op: StorageOp): 'go' | 'half' {
    return this.check(op);
  }
  /** @internal */
  crashedMidWrite(): void {
    this.afterHalf();
  }
}

class FaultyFile implements StorageFile {
  constructor(
    private readonly storage: FaultyStorage,
    private readonly file: StorageFile,
  ) {}

  async writev(parts: readonly Uint8Array[], position: number): Promise<number> {
    if (this.storage.gate('write') === 'half') {
      const all = Buffer.concat(parts as Uint8Array[]);
      const half = all.length >>> 1;
      const n = half > 0 ? await this.file.write(all, 0, half, position) : 0;
      this.storage.crashedMidWrite();
      return n;
    }
    return this.file.writev(parts, position);
  }

  async write(bytes: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    if (this.storage.gate('write') === 'half') {
      const half = length >>> 1;
      const n = half > 0 ? await this.file.write(bytes, offset, half, position) : 0;
      this.storage.crashedMidWrite();
      return n;
    }
    return this.file.write(bytes, offset, length, position);
  }

  async datasync(): Promise<void> {
    this.storage.gate('fsync');
    await this.file.datasync();
  }

  async sync(): Promise<void> {
    this.storage.gate('fsync');
    await this.file.sync();
  }

  async truncate(length: number): Promise<void> {
    this.storage.gate('truncate');
    await this.file.truncate(length);
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  const error = new Error(`${code}: ${message}`) as NodeJS.ErrnoException;
  error.code = code;
  return error;
}
