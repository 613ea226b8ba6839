// BatchLog over segment files in DATA_DIR/wal (frame format: segments.ts).
//
// Group commit: appends are queued; one writer at a time takes the whole queue, writes
// it as one buffer and fsyncs once, then resolves every append of that group in index
// order. Appends that arrive while a write or fsync runs wait for the next group, so
// under load one fsync covers many batches. With fsync off (WAL_FSYNC=0) a record is
// acknowledged once the write returns (it survives a process crash, not a power cut).
//
// Every write goes through a Storage (storage.ts: node:fs, or a fault injector in tests)
// and its length is checked: a short write is finished or is an error, never a shorter
// record.
//
// Failure: a failed write cuts the segment back to the last durable frame, rejects the
// group and everything queued behind it, and later appends go on. A failed fsync is
// never retried (PostgreSQL's lesson since version 12: after an fsync error the kernel
// may have dropped the dirty pages and a second fsync would report success over lost
// data), so the log refuses every later append until the process restarts and reopens
// it, which re-reads what the file really holds.
//
// Opening scans the segments a start needs (from `needFrom`, the record after the
// checkpoint the start restores; segments wholly before it are not read, so damage
// there never blocks a start): a torn tail of the last segment is cut (and reported in
// `opened.tornTail`); any other bad frame throws LogDamagedError naming file, offset
// and record.

import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LogDamagedError, LogUnavailableError, type BatchLog, type LogRecord } from './batchLog.ts';
import { encodeFrameHeader, encodeSegmentHeader, listSegments, scanSegment, segmentName, walkChecked, SEGMENT_HEADER_BYTES, type SegmentFile } from './segments.ts';
import { nodeStorage, writeFully, type Storage, type StorageFile } from './storage.ts';

export interface FileBatchLogOptions {
  /** fsync each group before acknowledging it (default true; WAL_FSYNC=0 turns it off). */
  fsync?: boolean;
  /** A new segment starts once the current one holds this many bytes (default 64 MiB). */
  segmentBytes?: number;
  /** Keep the segments open() read until the first replay, which then neither reads nor checks them again (a start that replays at once). */
  keepForReplay?: boolean;
  /**
   * The first record the caller needs (the one after the checkpoint it restores;
   * default 1). Segments wholly before it are not read; the log's records continue
   * after needFrom - 1 even when no segment holds any.
   */
  needFrom?: number;
  /** Where writes, fsyncs, truncations and deletions go (default: node:fs). */
  storage?: Storage;
}

export interface TornTail {
  file: string;
  offset: number;
  droppedBytes: number;
  detail: string;
}

export interface OpenedLog {
  log: FileBatchLog;
  /** The cut torn tail, or null when the log ended cleanly. */
  tornTail: TornTail | null;
  /** Segments with damage in records the checkpoint covers (stepped over; `npm run repair` deletes what only they hold). */
  coveredDamage: string[];
}

interface Pending {
  index: number;
  /** The frame is header then payload, written side by side (the payload is not copied). */
  header: Buffer;
  payload: Uint8Array;
  resolve: (index: number) => void;
  reject: (error: Error) => void;
}

export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

export function walDir(dataDir: string): string {
  return join(dataDir, 'wal');
}

/** Reads WAL_FSYNC: '0' turns fsync off, anything else (or unset) keeps it on. */
export function fsyncFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.WAL_FSYNC !== '0';
}

/** Why and since when the log refuses every append until the process restarts. */
export interface LogStopped {
  /** Epoch milliseconds of the failure. */
  since: number;
  /** The step that failed: the group's fsync, or cutting a failed write back off the segment. */
  during: 'fsync' | 'truncate';
  /** The error as the system reported it (its code and message, e.g. "EIO: i/o error, fdatasync"). */
  error: string;
  /** The segment file it happened in. */
  file: string;
  /** The last record that is durable: everything up to it was acknowledged and is in the file. */
  durableIndex: number;
}

export class FileBatchLog implements BatchLog {
  private queue: Pending[] = [];
  private writing = false;
  private failure: Error | null = null;
  private closed = false;
  /** Index handed to the last append (durable or queued). */
  private assigned: number;
  private durable: number;
  private appendedBytes = 0;
  private groups = 0;
  private file: StorageFile | null = null;
  private segment: SegmentFile;
  private segmentSize: number;
  private readonly fsync: boolean;
  private readonly storage: Storage;
  private readonly segmentBytes: number;
  /** Told the seconds of each group's fsync and how many records it made durable (metrics); null: nobody. */
  onFsync: ((seconds: number, records: number) => void) | null = null;
  /** Told once, when the log stops taking appends until a restart (see `stopped`); null: nobody. */
  onStopped: ((stopped: LogStopped) => void) | null = null;
  private stoppedState: LogStopped | null = null;
  /**
   * Told each record once it is durable, in index order, before its append resolves
   * (the tick archive copies it); the payload may be read only during the call.
   */
  onDurable: ((index: number, payload: Uint8Array) => void) | null = null;

  private constructor(
    readonly dir: string,
    segments: SegmentFile[],
    lastIndex: number,
    lastSegmentSize: number,
    reuseLast: boolean,
    options: FileBatchLogOptions,
  ) {
    this.fsync = options.fsync ?? true;
    this.storage = options.storage ?? nodeStorage;
    this.segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.assigned = lastIndex;
    this.durable = lastIndex;
    this.segment = segments.length > 0 ? segments[segments.length - 1] : { path: join(dir, segmentName(lastIndex + 1)), name: segmentName(lastIndex + 1), firstIndex: lastIndex + 1 };
    // -1: no file yet; MAX: the last segment is not appended to (format 1, or it ends
    // before the checkpoint the start restored): the first append starts a new one
    this.segmentSize = segments.length === 0 ? -1 : reuseLast ? lastSegmentSize : Number.MAX_SAFE_INTEGER;
  }

  /**
   * Opens (creating) the log in `dir`: checks every frame, cuts a torn tail, and
   * throws LogDamagedError on damage before the end.
   */
  static open(dir: string, options: FileBatchLogOptions = {}): OpenedLog {
    mkdirSync(dir, { recursive: true });
    const needFrom = options.needFrom ?? 1;
    const all = listSegments(dir);
    // segments wholly before needFrom: a later segment starts at or before it
    let first = 0;
    while (first + 1 < all.length && all[first + 1].firstIndex <= needFrom) first++;
    if (all.length > 0 && all[first].firstIndex > needFrom) {
      throw new LogDamagedError(all[first].path, 0, `records ${needFrom} to ${all[first].firstIndex - 1} are missing: the log starts at ${all[first].firstIndex}`, needFrom);
    }
    const segments = all.slice(first);
    let lastIndex = needFrom - 1;
    let lastSize = 0;
    let reuseLast = true;
    let tornTail: TornTail | null = null;
    const coveredDamage: string[] = [];
    const checked = new Map<string, Uint8Array>();
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (i > 0 && segment.firstIndex !== lastIndex + 1) {
        throw new LogDamagedError(segment.path, 0, `segment starts at record ${segment.firstIndex} but the one before ends at ${lastIndex}`, lastIndex + 1);
      }
      const bytes = readFileSync(segment.path);
      // damage in records the checkpoint covers is stepped over (segments.ts), never a stop
      const scan = scanSegment(bytes, segment.firstIndex, undefined, needFrom - 1);
      if ((scan.skippedCovered ?? 0) > 0) coveredDamage.push(segment.path);
      const last = i === segments.length - 1;
      if (scan.problem !== null) {
        if (!last || !scan.problem.torn) throw new LogDamagedError(segment.path, scan.problem.offset, scan.problem.detail, scan.problem.index);
        tornTail = { file: segment.path, offset: scan.validEnd, droppedBytes: bytes.length - scan.validEnd, detail: scan.problem.detail };
        cutFile(options.storage ?? nodeStorage, segment.path, scan.validEnd, options.fsync ?? true);
      }
      // a segment wholly before needFrom-1's record is skipped above; the first one
      // kept may end before needFrom - 1 only when the checkpoint is ahead of the log
      lastIndex = Math.max(scan.lastIndex, i === 0 ? needFrom - 1 : scan.lastIndex);
      lastSize = scan.validEnd;
      // appends go on in this segment only if it is format 2 and ends where the log does
      reuseLast = scan.format === 2 && scan.lastIndex === lastIndex && (scan.skippedCovered ?? 0) === 0;
      if (options.keepForReplay === true && (scan.skippedCovered ?? 0) === 0) checked.set(segment.path, bytes.subarray(0, scan.validEnd));
    }
    const log = new FileBatchLog(dir, segments, lastIndex, lastSize, reuseLast, options);
    log.checkedAtOpen = checked;
    return { log, tornTail, coveredDamage };
  }

  /**
   * Segments as open() read and checked them (every frame's CRC and index), kept for
   * the replay that follows a start so it neither reads nor checks them again; the
   * first replay drops them (a later one reads the files).
   */
  private checkedAtOpen = new Map<string, Uint8Array>();

  get lastIndex(): number {
    return this.durable;
  }

  get bytesSinceCheckpoint(): number {
    return this.appendedBytes;
  }

  /** Groups written (each one write and one fsync): fewer than appends when group commit shares fsyncs. */
  get groupsWritten(): number {
    return this.groups;
  }

  /** True after a failed fsync: every append is refused until the log is reopened. */
  get broken(): boolean {
    return this.failure !== null;
  }

  /** Why the log refuses appends until a restart, since when; null while it takes them. */
  get stopped(): LogStopped | null {
    return this.stoppedState;
  }

  /** The failure that stops the log until a restart: recorded once, told to onStopped once. */
  private stop(error: Error, during: LogStopped['during']): void {
    if (this.failure !== null) return;
    this.failure = error;
    const code = (error as NodeJS.ErrnoException).code;
    this.stoppedState = { since: Date.now(), during, error: code !== undefined && !error.message.startsWith(code) ? `${code}: ${error.message}` : error.message, file: this.segment.path, durableIndex: this.durable };
    try {
      this.onStopped?.(this.stoppedState);
    } catch {
      // an observer's failure is not the log's
    }
  }

  /** The payload is written as it is, not copied: it must not change until the append settles. */
  append(payload: Uint8Array): Promise<number> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the log is closed'));
    if (this.failure !== null) return Promise.reject(new LogUnavailableError(`the log failed earlier and refuses appends until restart: ${this.failure.message}`, { cause: this.failure }));
    const index = ++this.assigned;
    const header = encodeFrameHeader(index, payload);
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ index, header, payload, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // appends made in the same tick join this first group
        queueMicrotask(() => void this.writeGroups());
      }
    });
  }

  replay(fromIndex: number, visit: (record: LogRecord) => void): void {
    const segments = listSegments(this.dir);
    const checked = this.checkedAtOpen;
    this.checkedAtOpen = new Map();
    let first = 0;
    while (first + 1 < segments.length && segments[first + 1].firstIndex <= fromIndex) first++;
    if (fromIndex <= this.durable && (segments.length === 0 || segments[first].firstIndex > fromIndex)) {
      const at = segments[first]?.path ?? this.dir;
      throw new LogDamagedError(at, 0, `records ${fromIndex} to ${segments.length === 0 ? this.durable : segments[first].firstIndex - 1} are missing (the log starts at ${segments[first]?.firstIndex ?? this.durable + 1})`, fromIndex);
    }
    let next = fromIndex;
    for (let i = first; i < segments.length; i++) {
      const segment = segments[i];
      const take = (index: number, payload: Uint8Array) => {
        if (index >= fromIndex && index <= this.durable) {
          visit({ index, payload });
          next = index + 1;
        }
      };
      const known = checked.get(segment.path);
      if (known !== undefined) {
        walkChecked(known, segment.firstIndex, take);
        continue;
      }
      const bytes = readFileSync(segment.path);
      const scan = scanSegment(bytes, segment.firstIndex, take, fromIndex - 1);
      if (scan.problem !== null && scan.lastIndex < this.durable) {
        throw new LogDamagedError(segment.path, scan.problem.offset, scan.problem.detail, scan.problem.index);
      }
    }
    if (next <= this.durable) throw new LogDamagedError(this.dir, 0, `replay from ${fromIndex} ended at record ${next - 1}, before the log's last record ${this.durable}`, next);
  }

  /**
   * A checkpoint covers records up to `index`: the next group starts a fresh segment,
   * and segments that hold nothing after `dropThrough` (default `index`; a caller that
   * keeps an older checkpoint to fall back on passes that one's index) are deleted.
   */
  async markCheckpoint(index: number, dropThrough: number = index): Promise<void> {
    this.appendedBytes = 0;
    if (this.segmentSize > 0) this.segmentSize = Number.MAX_SAFE_INTEGER; // rotate at the next write
    this.dropThrough(dropThrough);
  }

  /** The first record a segment still holds (lastIndex + 1 when there is none). */
  firstIndex(): number {
    const segments = listSegments(this.dir);
    return segments.length === 0 ? this.durable + 1 : Math.min(segments[0].firstIndex, this.durable + 1);
  }

  /** Deletes the segments (but the one appended to) that hold nothing after `dropThrough`. */
  dropThrough(dropThrough: number): void {
    const segments = listSegments(this.dir);
    let dropped = 0;
    try {
      for (let i = 0; i + 1 < segments.length; i++) {
        if (segments[i + 1].firstIndex <= dropThrough + 1 && segments[i].path !== this.segment.path) {
          this.storage.unlinkSync(segments[i].path);
          dropped++;
        }
      }
      if (dropped > 0 && this.fsync) this.storage.syncDirSync(this.dir);
    } catch {
      // a segment left behind is only disk space: the next checkpoint deletes it
    }
  }

  /** Waits for queued appends, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await new Promise((resolve) => setImmediate(resolve));
    if (this.file !== null) await this.file.close();
    this.file = null;
  }

  private async writeGroups(): Promise<void> {
    try {
      while (this.queue.length > 0 && this.failure === null) {
        const group = this.queue;
        this.queue = [];
        await this.writeGroup(group);
      }
    } finally {
      this.writing = false;
    }
  }

  private async writeGroup(group: Pending[]): Promise<void> {
    // one gathered write of every header and payload: no copy of the payloads into frames or into one buffer
    const parts: Uint8Array[] = [];
    let length = 0;
    for (const pending of group) {
      parts.push(pending.header, pending.payload);
      length += pending.header.length + pending.payload.length;
    }
    let position = 0;
    try {
      if (this.file === null || this.segmentSize < SEGMENT_HEADER_BYTES || this.segmentSize >= this.segmentBytes) await this.startSegment(group[0].index);
      position = this.segmentSize;
      const bytesWritten = await this.file!.writev(parts, position);
      if (bytesWritten < length) {
        // a short gathered write (a full disk at the edge, a signal): the rest as one
        // buffer; a write that makes no progress is an error (writeFully)
        await writeFully(this.file!, Buffer.concat(parts).subarray(bytesWritten), position + bytesWritten);
      }
    } catch (error) {
      await this.abandon(group, position, error);
      return;
    }
    this.groups++;
    let fsyncSeconds = -1;
    try {
      if (this.fsync) {
        const started = performance.now();
        await this.file!.datasync();
        fsyncSeconds = (performance.now() - started) / 1000;
      }
    } catch (error) {
      // the group is refused, so it must not come back on replay: cut it off (the
      // log stays refused, see the header)
      this.stop(error as Error, 'fsync');
      try {
        await this.file!.truncate(position);
      } catch {
        // reopening finds the frames; they were never acknowledged, only never refused in the file
      }
      this.rejectAll(group, error);
      return;
    }
    this.segmentSize = position + length;
    this.appendedBytes += length;
    this.durable = group[group.length - 1].index;
    if (this.onDurable !== null) {
      for (const pending of group) {
        try {
          this.onDurable(pending.index, pending.payload);
        } catch {
          // an observer's failure is not the log's; the archive reads the log back when it misses a record
        }
      }
    }
    for (const pending of group) pending.resolve(pending.index);
    if (fsyncSeconds >= 0 && this.onFsync !== null) {
      try {
        this.onFsync(fsyncSeconds, group.length);
      } catch {
        // an observer's failure is not the log's: the group is durable and acknowledged
      }
    }
  }

  /** A write failed: cut back to the durable end, refuse this group and the queue behind it. */
  private async abandon(group: Pending[], position: number, error: unknown): Promise<void> {
    try {
      if (this.file !== null && this.segmentSize >= 0) await this.file.truncate(position);
      else if (this.file !== null) await this.file.truncate(0); // the segment's header did not make it: start it again
    } catch (truncateError) {
      this.stop(truncateError as Error, 'truncate');
    }
    this.rejectAll(group, error);
    this.assigned = this.durable;
  }

  private rejectAll(group: Pending[], error: unknown): void {
    const queued = this.queue;
    this.queue = [];
    const reason = (error as Error)?.message ?? String(error);
    for (const pending of [...group, ...queued]) {
      pending.reject(new LogUnavailableError(`writing record ${pending.index} failed: ${reason}`, { cause: error }));
    }
  }

  private async startSegment(firstIndex: number): Promise<void> {
    const reuse = this.file === null && this.segmentSize >= 0 && this.segmentSize < this.segmentBytes;
    if (this.file !== null) {
      const closing = this.file;
      this.file = null;
      await closing.close();
    }
    if (!reuse) {
      this.segment = { path: join(this.dir, segmentName(firstIndex)), name: segmentName(firstIndex), firstIndex };
      this.segmentSize = -1;
    }
    this.file = await this.storage.open(this.segment.path, reuse ? 'r+' : 'w');
    if (this.segmentSize < SEGMENT_HEADER_BYTES) {
      // a new segment (or one a crash left without its whole header) begins with its header
      const header = encodeSegmentHeader(this.segment.firstIndex);
      await this.file.truncate(0);
      await writeFully(this.file, header, 0);
      if (this.fsync) await this.file.datasync();
      this.segmentSize = header.length;
      // the new name itself must survive a crash
      if (this.fsync) this.storage.syncDirSync(this.dir);
    }
  }
}

function cutFile(storage: Storage, path: string, length: number, sync: boolean): void {
  const fd = storage.openSync(path, 'r+');
  try {
    storage.ftruncateSync(fd, length);
    if (sync) storage.fsyncSync(fd);
  } finally {
    storage.closeSync(fd);
  }
}

export function syncDir(dir: string): void {
  nodeStorage.syncDirSync(dir);
}

/** Size of a file, or -1 when it does not exist. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}
