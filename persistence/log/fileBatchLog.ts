// BatchLog over segment files in DATA_DIR/wal (frame format: segments.ts).
//
// Group commit: appends are queued; one writer at a time takes the whole queue, writes
// it as one buffer and fsyncs once, then resolves every append of that group in index
// order. Appends that arrive while a write or fsync runs wait for the next group, so
// under load one fsync covers many batches. With fsync off (WAL_FSYNC=0) a record is
// acknowledged once the write returns (it survives a process crash, not a power cut).
//
// Failure: a failed write cuts the segment back to the last durable frame, rejects the
// group and everything queued behind it, and later appends go on. A failed fsync leaves
// the page cache in an unknown state (the kernel may have dropped the dirty pages), so
// the log refuses every later append until it is reopened, which re-reads the file.
//
// Opening scans every segment: a torn tail of the last segment is cut (and reported in
// `opened.tornTail`); any other bad frame throws LogDamagedError naming file and offset.

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, rmSync, statSync, ftruncateSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { LogDamagedError, LogUnavailableError, type BatchLog, type LogRecord } from './batchLog.ts';
import { encodeFrameHeader, listSegments, scanSegment, segmentName, walkChecked, type SegmentFile } from './segments.ts';

export interface FileBatchLogOptions {
  /** fsync each group before acknowledging it (default true; WAL_FSYNC=0 turns it off). */
  fsync?: boolean;
  /** A new segment starts once the current one holds this many bytes (default 64 MiB). */
  segmentBytes?: number;
  /** Keep the segments open() read until the first replay, which then neither reads nor checks them again (a start that replays at once). */
  keepForReplay?: boolean;
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
  private file: FileHandle | null = null;
  private segment: SegmentFile;
  private segmentSize: number;
  private readonly fsync: boolean;
  private readonly segmentBytes: number;
  /** Told the seconds of each group's fsync and how many records it made durable (metrics); null: nobody. */
  onFsync: ((seconds: number, records: number) => void) | null = null;

  private constructor(
    readonly dir: string,
    segments: SegmentFile[],
    lastIndex: number,
    lastSegmentSize: number,
    options: FileBatchLogOptions,
  ) {
    this.fsync = options.fsync ?? true;
    this.segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.assigned = lastIndex;
    this.durable = lastIndex;
    this.segment = segments.length > 0 ? segments[segments.length - 1] : { path: join(dir, segmentName(lastIndex + 1)), name: segmentName(lastIndex + 1), firstIndex: lastIndex + 1 };
    this.segmentSize = segments.length > 0 ? lastSegmentSize : -1; // -1: file not created yet
  }

  /**
   * Opens (creating) the log in `dir`: checks every frame, cuts a torn tail, and
   * throws LogDamagedError on damage before the end.
   */
  static open(dir: string, options: FileBatchLogOptions = {}): OpenedLog {
    mkdirSync(dir, { recursive: true });
    const segments = listSegments(dir);
    let lastIndex = 0;
    let lastSize = 0;
    let tornTail: TornTail | null = null;
    const checked = new Map<string, Uint8Array>();
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      if (i > 0 && segment.firstIndex !== lastIndex + 1) {
        throw new LogDamagedError(segment.path, 0, `segment starts at record ${segment.firstIndex} but the one before ends at ${lastIndex}`);
      }
      const bytes = readFileSync(segment.path);
      const scan = scanSegment(bytes, segment.firstIndex);
      const last = i === segments.length - 1;
      if (scan.problem !== null) {
        if (!last || !scan.problem.torn) throw new LogDamagedError(segment.path, scan.problem.offset, scan.problem.detail);
        tornTail = { file: segment.path, offset: scan.validEnd, droppedBytes: bytes.length - scan.validEnd, detail: scan.problem.detail };
        cutFile(segment.path, scan.validEnd, options.fsync ?? true);
      }
      lastIndex = scan.lastIndex;
      lastSize = scan.validEnd;
      if (options.keepForReplay === true) checked.set(segment.path, bytes.subarray(0, scan.validEnd));
    }
    const log = new FileBatchLog(dir, segments, lastIndex, lastSize, options);
    log.checkedAtOpen = checked;
    return { log, tornTail };
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
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      const next = segments[i + 1];
      if (next !== undefined && next.firstIndex <= fromIndex) continue; // wholly before fromIndex
      const known = checked.get(segment.path);
      if (known !== undefined) {
        walkChecked(known, segment.firstIndex, (index, payload) => {
          if (index >= fromIndex && index <= this.durable) visit({ index, payload });
        });
        continue;
      }
      const bytes = readFileSync(segment.path);
      const scan = scanSegment(bytes, segment.firstIndex, (index, payload) => {
        if (index >= fromIndex && index <= this.durable) visit({ index, payload });
      });
      if (scan.problem !== null && scan.lastIndex < this.durable) {
        throw new LogDamagedError(segment.path, scan.problem.offset, scan.problem.detail);
      }
    }
    if (fromIndex <= this.durable && segments.length > 0 && segments[0].firstIndex > fromIndex) {
      throw new LogDamagedError(segments[0].path, 0, `records ${fromIndex} to ${segments[0].firstIndex - 1} are missing (the log starts at ${segments[0].firstIndex})`);
    }
  }

  /**
   * Records up to `index` are covered by a checkpoint: the next group starts a fresh
   * segment, and segments that hold nothing after `index` are deleted.
   */
  async markCheckpoint(index: number): Promise<void> {
    this.appendedBytes = 0;
    if (this.segmentSize > 0) this.segmentSize = Number.MAX_SAFE_INTEGER; // rotate at the next write
    const segments = listSegments(this.dir);
    for (let i = 0; i + 1 < segments.length; i++) {
      if (segments[i + 1].firstIndex <= index + 1 && segments[i].path !== this.segment.path) rmSync(segments[i].path, { force: true });
    }
    if (this.fsync) syncDir(this.dir);
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
      if (this.file === null || this.segmentSize >= this.segmentBytes) await this.startSegment(group[0].index);
      position = this.segmentSize;
      const { bytesWritten } = await this.file!.writev(parts, position);
      if (bytesWritten < length) {
        // a short gathered write (a full disk at the edge, a signal): write the rest as one buffer
        const rest = Buffer.concat(parts).subarray(bytesWritten);
        let written = 0;
        while (written < rest.length) {
          const more = await this.file!.write(rest, written, rest.length - written, position + bytesWritten + written);
          written += more.bytesWritten;
        }
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
      this.failure = error as Error;
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
    } catch (truncateError) {
      this.failure = truncateError as Error;
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
      await this.file.close();
      this.file = null;
    }
    if (!reuse) {
      this.segment = { path: join(this.dir, segmentName(firstIndex)), name: segmentName(firstIndex), firstIndex };
      this.segmentSize = 0;
    }
    this.file = await open(this.segment.path, reuse ? 'r+' : 'w');
    if (!reuse && this.fsync) syncDir(this.dir); // the new name itself must survive a crash
  }
}

function cutFile(path: string, length: number, sync: boolean): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, length);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Size of a file, or -1 when it does not exist. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}
