// The tick archive: every change the write-ahead log acknowledged, moved into Parquet
// files (zstd) under ARCHIVE_DIR, one directory per UTC day (archiveFiles.ts), written
// and read with DuckDB, whose queries and COPY run on its own threads.
//
// Flow. The log hands over each record once it is durable (take: a copy of its bytes
// joins `pending`, nothing else on the ingest path). Every ARCHIVE_INTERVAL_MS a flush
// turns the pending records into rows (ArchiveSource: the write path's decoding, in
// slices between which the event loop runs), appends them to an in-memory staging
// table and writes one file per day they fall in: COPY to a temporary name, read back
// (row count, first and last seq must be what was staged), fsync, rename, fsync the
// directory. Only then does the archive tell the log (ArchiveLog.archived) that those
// records may go; the log keeps every segment holding a record the archive lacks.
//
// Failure. A flush that fails (a full disk, an I/O error, a file that reads back
// wrong) deletes its temporary, is reported (warn, failures, lastError) and leaves
// the log as it was; the archive then drops its pending copies and, at the next
// flush, reads the records after the last archived one back from the log, so nothing
// acknowledged is lost and nothing is archived twice. Pending copies past
// ARCHIVE_MAX_PENDING_BYTES are dropped the same way (the log still holds them).
//
// Exactly once. A file's name holds its first and last record; opening the archive
// deletes temporaries and files a merged file covers (tidyArchive), and the archive
// continues after the largest last record of any file: a crash before a rename
// leaves no file (the records are archived again from the log), after it the file is
// whole and its records are not taken again.
//
// Compaction. Days before the newest one are merged into one split day each, in the
// merged layout (MERGED_LAYOUT, marked in each file's key-value metadata): sorted by
// event_key (archiveSchema.ts), odds_id, seq, pos, in small row groups, and cut by
// event_key's first two hex digits into SPLIT_PARTS part files (archiveFiles.ts), so a
// query for one event reads one part per day and DuckDB reads only the row groups of
// that event in it. The day is sorted into one temporary file (written and checked like
// any other), cut into parts in a temporary directory with a manifest (each part's rows,
// bytes and sha256), fsync'd, and installed by renaming the directory; only then are its
// inputs deleted. A finished day's only entry in another layout (a single flush, a day
// merged into one file by an older version) is rewritten the same way, at most one every
// rewriteEveryMs. One day per maintenance pass.
//
// Maintenance does not hold the queue. A merge (seconds to minutes: it sorts a day)
// runs after the flush that asked for it, on a DuckDB instance of its own with one
// thread, while flushes and queries go on in the queue with the other. Only its last
// step waits for its turn in the queue: the day's files checked unchanged, the merged
// file renamed into place, its inputs deleted. No query is running then, and a query
// never sees a merged file and its inputs both (a file another one of its day covers is
// skipped: liveFiles in archiveFiles.ts). Retention deletes days in the queue too.
//
// Reading. One DuckDB instance for the archive's life (flushes and queries), with its
// Parquet metadata cache on: a file's footer is parsed once, not at every query. A
// query reads only the day directories its time range can touch; merged files are
// asked by event_key as well, which DuckDB checks against each row group's min/max
// before reading it.

import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { copyFileSync, existsSync, linkSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { nodeStorage, writeFully, type Storage } from '../log/storage.ts';
import { concatParquet } from './parquetConcat.ts';
import { ARCHIVE_COLUMNS, COLUMN_LIST, eventKey, MERGED_KEY_COLUMNS, TICK_COLUMNS, type ArchiveColumn, type ArchiveRow, type TickRow } from './archiveSchema.ts';
import {
  archiveFileName,
  checkSplitDay,
  dayOf,
  dayStart,
  ensureDayDir,
  isCovered,
  listArchiveFiles,
  listArchiveFilesBetween,
  listDayFiles,
  listDays,
  liveFiles,
  MANIFEST_FORMAT,
  MANIFEST_NAME,
  manifestText,
  parquetPaths,
  parquetPathsFor,
  partFileName,
  partFrom,
  partIndexOf,
  partRangeSql,
  readParquetSql,
  sha256File,
  splitDirName,
  sqlString,
  tidyArchive,
  type ArchiveFile,
  type SplitManifest,
  type SplitPart,
} from './archiveFiles.ts';

/** Turns one log record into archive rows (the write path's decoding; persistence knows no record format). */
export interface ArchiveSource {
  rowsOf(index: number, payload: Uint8Array, out: ArchiveRow[]): void;
}

/** What the archive needs of the write-ahead log. */
export interface ArchiveLog {
  /** Index of the last durable record. */
  readonly lastIndex: number;
  /** The first record the log still holds (lastIndex + 1 when it holds none). */
  firstIndex(): number;
  /** Every durable record from `from` on, in order (throws when one is unreadable). */
  replay(from: number, visit: (index: number, payload: Uint8Array) => void): void;
  /** Records up to `through` are archived: the log may delete them once no checkpoint needs them. */
  archived(through: number): void;
}

export interface TickArchiveOptions {
  dir: string;
  /** Days kept (the current one included); older day directories are deleted. */
  retentionDays: number;
  /** How often pending records are written (0: only when flush() is called). */
  intervalMs: number;
  /** Pending copies past this many bytes are dropped and read back from the log later. */
  maxPendingBytes?: number;
  fsync?: boolean;
  storage?: Storage;
  now: () => number;
  warn: (line: string) => void;
  source: ArchiveSource;
  log: ArchiveLog;
  /** How today's files are gathered into runs, and how often older files are rewritten (defaults: COMPACTION). */
  compaction?: Partial<Compaction>;
}

/**
 * Today's flush files (one per ARCHIVE_INTERVAL_MS, 8,640 a day at 10 s) are gathered
 * as they come into runs in the merged layout, so a query reaching into today opens tens
 * of files, not thousands, and asks each by event_key: `runFiles` flush files make a run
 * of level 1, `runsPerLevel` runs of level 1 a run of level 2. A finished day's files are
 * then merged into one (level 3). `rewriteEveryMs`: a finished day's only file written in
 * another layout (an upgrade's) is rewritten at most this often, so converting an old
 * archive does not hold the archive's queue merge after merge.
 */
export interface Compaction {
  runFiles: number;
  runsPerLevel: number;
  rewriteEveryMs: number;
  /** Parts a finished day is split into by event_key (16, 64 or 256): SPLIT_PARTS. */
  splitParts: 16 | 64 | 256;
}

/**
 * Parts of a finished day. Measured at full size (17,280,000 changes over 2,000 events,
 * bench/archive.bench.ts with ARCHIVE_BENCH_SPLIT; docs/archive.md): more parts, fewer
 * row groups a one-event query pays for; fewer parts, fewer files a whole-day read (the
 * export, the replay window) opens.
 */
export const SPLIT_PARTS = 256;

export const COMPACTION: Compaction = { runFiles: 30, runsPerLevel: 12, rewriteEveryMs: 300_000, splitParts: SPLIT_PARTS };

export interface FlushReport {
  records: number;
  rows: number;
  files: string[];
  archivedThrough: number;
  ms: number;
}

/** Rows of the archive and of the records not written yet, oldest first, and whether they are all there. */
export interface ArchiveRows<Row = ArchiveRow> {
  rows: Row[];
  /** False while the archive is behind the log (after a failure): the newest changes may be missing. */
  complete: boolean;
  archivedThrough: number;
}

const DEFAULT_MAX_PENDING_BYTES = 256 * 1024 * 1024;
/** Rows decoded and appended between two turns of the event loop (the appender runs on this thread). */
const SLICE_ROWS = 1000;
const STAGE = 'stage';

/** The staging table: BIGINT columns are staged as DOUBLE (exact below 2^53, and the appender takes a number), cast on COPY. */
const STAGE_COLUMNS = ARCHIVE_COLUMNS.map((c) => `${c.name} ${c.type === 'BIGINT' ? 'DOUBLE' : c.type}`).join(', ');
const COPY_SELECT = ARCHIVE_COLUMNS.map((c) => (c.type === 'BIGINT' ? `CAST(${c.name} AS BIGINT) AS ${c.name}` : c.name)).join(', ');
/**
 * The row's columns over files that have `present` between them (read by name): a column
 * none of them has (written before it was added) reads as null. `asNumbers`: BIGINT
 * columns as DOUBLE, so rows read back hold numbers, not bigints.
 */
function rowSelect(present: ReadonlySet<string>, asNumbers: boolean, columns: readonly ArchiveColumn[] = ARCHIVE_COLUMNS): string {
  return columns.map((c) => {
    const type = asNumbers && c.type === 'BIGINT' ? 'DOUBLE' : c.type;
    if (!present.has(c.name)) return `CAST(NULL AS ${type}) AS ${c.name}`;
    return type === c.type ? c.name : `CAST(${c.name} AS ${type}) AS ${c.name}`;
  }).join(', ');
}
const ALL_COLUMNS: ReadonlySet<string> = new Set(ARCHIVE_COLUMNS.map((c) => c.name));
/** The columns of a TickRow, in schema order. */
const TICK_ARCHIVE_COLUMNS: readonly ArchiveColumn[] = ARCHIVE_COLUMNS.filter((c) => (TICK_COLUMNS as readonly string[]).includes(c.name));

/** Rows per row group of a flush's file (DuckDB's default): a flush file is read whole by the queries that touch its day. */
const FLUSH_ROW_GROUP_ROWS = 122_880;
/**
 * Rows per row group of a merged file. A one-event query reads the row groups its
 * event_key falls in, each whole: smaller groups read less per query, for a larger footer
 * (parsed once, then in DuckDB's metadata cache) and a little less compression.
 */
export const MERGED_ROW_GROUP_ROWS = 16_384;
/** The key columns a merged file has after the row's (archiveSchema.ts), each as SQL over the row's columns: what it is sorted by first. */
export const MERGED_KEYS: readonly { name: string; sql: string }[] = MERGED_KEY_COLUMNS;
/** A merged file's columns: the row's, then the keys. */
export const MERGED_COLUMNS = `${COLUMN_LIST}, ${MERGED_KEYS.map((key) => key.name).join(', ')}`;
const MERGED_ORDER = `${MERGED_KEYS.map((key) => key.name).join(', ')}, odds_id, seq, pos`;
/** The key-value metadata key a merged file's layout is stored under. */
export const LAYOUT_KEY = 'odds_archive_layout';
/**
 * The merged layout, as stored in the file: a file without this exact value (a flush's,
 * or one merged by a version with other columns or row groups) is read as a plain file
 * (all its row groups, by column name) and rewritten at the next maintenance once its day
 * is finished.
 */
export const MERGED_LAYOUT = `sorted by ${MERGED_ORDER}; row groups of ${MERGED_ROW_GROUP_ROWS} rows; columns ${MERGED_COLUMNS}`;
const FLUSH_COPY = `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${FLUSH_ROW_GROUP_ROWS}`;
/**
 * The merges' DuckDB instance: one thread (queries keep the other core), its own memory
 * limit (a day's sort spills past it), and no insertion-order bookkeeping: with it, a
 * COPY of a sort cuts row groups where the sort's batches end (a merge of 18,001 rows
 * made one row group); without it, one thread writes the sorted rows in order and cuts a
 * row group every MERGED_ROW_GROUP_ROWS (archive-layout.test.ts checks the cuts).
 */
const MAINTENANCE_DUCKDB = { threads: '1', memory_limit: '384MB', preserve_insertion_order: 'false' };
/** A day whose merge failed (a full disk, an unreadable file) is tried again after this long, or as soon as its files change. */
const MERGE_RETRY_MS = 3_600_000;

/** The rows of `files` (any layouts, with `present` columns between them; `where` over them), in the merged layout's columns and order. */
function mergedSelect(files: readonly string[], present: ReadonlySet<string>, where: string): string {
  return `SELECT * FROM (SELECT ${rowSelect(present, false)}, ${MERGED_KEYS.map((key) => `${key.sql} AS ${key.name}`).join(', ')} FROM ${readParquetSql(files)} ${where}) ORDER BY ${MERGED_ORDER}`;
}

/**
 * What the archive knows of one version of a file: whether it is in MERGED_LAYOUT, its
 * level (0: a flush's, or a file of another layout; 1, 2: a run of today's files; 3: a
 * finished day's file) and its columns.
 */
interface FileInfo {
  merged: boolean;
  level: number;
  columns: ReadonlySet<string>;
}
const FLUSH_FILE: FileInfo = { merged: false, level: 0, columns: ALL_COLUMNS };
const MERGED_FILE_COLUMNS: ReadonlySet<string> = new Set([...ALL_COLUMNS, ...MERGED_KEYS.map((key) => key.name)]);
/** The key-value metadata key a merged file's level is stored under. */
export const LEVEL_KEY = 'odds_archive_level';
const DAY_LEVEL = 3;
/** A split day in MERGED_LAYOUT (its manifest says so). */
const SPLIT_DAY: FileInfo = { merged: true, level: DAY_LEVEL, columns: MERGED_FILE_COLUMNS };

/** COPY options of a file in the merged layout at `level`. */
export function mergedCopy(level: number): string {
  return `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${MERGED_ROW_GROUP_ROWS}, KV_METADATA {${LAYOUT_KEY}: ${sqlString(MERGED_LAYOUT)}, ${LEVEL_KEY}: '${level}'}`;
}

/** The columns files have between them (what a union by name reads). */
function columnsOf(infos: readonly FileInfo[]): Set<string> {
  const present = new Set<string>();
  for (const info of infos) for (const name of info.columns) present.add(name);
  return present;
}

/** A file (or a split day's directory) written under its temporary name, checked and fsync'd, not yet in place. */
interface WrittenFile {
  temp: string;
  final: string;
  dayDir: string;
  level: number;
  /** A split day's directory (its infos come from its manifest). */
  split: boolean;
}

/** A finished day's store is damaged (a part or the manifest of a split day missing or cut): refused at start, with what moving it away would drop. */
export class ArchiveDamagedError extends Error {
  readonly code = 'archive_damaged';
  constructor(detail: string) {
    super(detail);
    this.name = 'ArchiveDamagedError';
  }
}

/** What identifies one version of a file: a merge may rewrite a day's only file under its name. */
function versionOf(file: { path: string; bytes: number; mtimeMs: number }): string {
  return `${file.path}\n${file.bytes}\n${file.mtimeMs}`;
}

/** The event ids a query for these odds ids is about (null when one is not an odds id: no event_key filter then). */
function eventIdsOf(ids: readonly string[]): string[] | null {
  const events = new Set<string>();
  for (const id of ids) {
    const colon = id.indexOf(':');
    if (colon <= 0) return null;
    events.add(id.slice(0, colon));
  }
  return [...events];
}

/**
 * A condition on a key column that DuckDB checks against each row group's min/max before
 * reading it ('' when `keys` is null: any), followed by AND. One key: an equality;
 * several: their range, then the list.
 */
function keyFilter(column: string, keys: readonly string[] | null): string {
  if (keys === null) return '';
  const sorted = [...new Set(keys)].sort();
  if (sorted.length === 1) return `${column} = ${sqlString(sorted[0])} AND `;
  return `${column} >= ${sqlString(sorted[0])} AND ${column} <= ${sqlString(sorted[sorted.length - 1])} AND ${column} IN (${sorted.map(sqlString).join(', ')}) AND `;
}

/** What a read asks of the archive: the columns it reads, a filter over the row's columns, the events it is about (null: any), and the time range it can touch. */
interface RowQuery {
  columns: readonly ArchiveColumn[];
  where: string;
  eventIds: readonly string[] | null;
  fromMs: number;
  toMs: number;
}

/**
 * Refuses a start over a damaged split day: installed by one rename, a split day always
 * has its manifest and every part it lists, so one missing or cut was damaged at rest
 * (a disk, an operator), and reading on would leave its changes out without a word.
 */
function checkSplitDays(dir: string): void {
  for (const day of listDays(dir)) {
    let entries: ArchiveFile[];
    try {
      entries = listDayFiles(dir, day);
    } catch (error) {
      throw new ArchiveDamagedError(`${(error as Error).message}. Restore it from a backup, or move ${join(dir, day)} away (that day's changes leave the archive; the log no longer holds them) and start again.`);
    }
    for (const entry of entries) {
      // a temporary name is tidied at start: only installed split days count
      const problem = checkSplitDay(entry);
      if (problem !== '') throw new ArchiveDamagedError(`${entry.path} (records ${entry.first} to ${entry.last}, ${day}) is damaged: ${problem}. Restore it from a backup, or move it away (its changes leave the archive; the log no longer holds them) and start again.`);
    }
  }
}

/** ARCHIVE_DIR holds records the log never had: refused at start rather than mixing two logs' seqs. */
export class ArchiveMismatchError extends Error {
  readonly code = 'archive_mismatch';
  constructor(detail: string) {
    super(detail);
    this.name = 'ArchiveMismatchError';
  }
}

export class TickArchive {
  private pendingIndex: number[] = [];
  private pendingPayload: Uint8Array[] = [];
  private pendingBytes = 0;
  /** True when `pending` does not run from archivedThrough + 1 (dropped after a failure or an overflow, or not read yet): the next flush reads the log. */
  private behind = true;
  private through: number;
  /** The record take() expects next (while not behind). */
  private next = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly storage: Storage;
  private readonly fsync: boolean;
  private readonly maxPendingBytes: number;
  failures = 0;
  lastError: string | null = null;
  /** Wall-clock ms since which records have waited for a file (the oldest waiting record's arrival, at most), null when none waits: the lag metric. */
  private waitingSince: number | null = null;
  /** Files and bytes under the archive directory, read at most once a second (the metrics scrape). */
  private sizeMemo: { at: number; files: number; bytes: number } | null = null;
  lastFlush: FlushReport | null = null;
  /** Told of each written flush (metrics, tests). */
  onFlush: ((report: FlushReport) => void) | null = null;
  /** Awaited when a merge's file is written and checked, before its installation waits for the queue (tests: what goes on meanwhile). */
  onMergeWritten: ((day: string, temp: string) => Promise<void>) | null = null;
  /** Each file version's layout and columns (versionOf): read once from its metadata, or known from writing it. */
  private readonly infos = new Map<string, FileInfo>();
  /** The time of each file version's first record (removalsSince). */
  private readonly firstTimes = new Map<string, number>();
  /** When a day's files (by version) failed to merge: tried again when they change, or an hour later. */
  private readonly unmergeable = new Map<string, number>();
  /** Temporaries written by this process (their names' serial). */
  private temporaries = 0;
  private readonly compaction: Compaction;
  /** When a finished day's only file was last rewritten in the merged layout. */
  private lastRewriteAt = -Infinity;
  /** Maintenance passes, one after another, outside `chain`. */
  private maintenanceChain: Promise<void> = Promise.resolve();
  /** A pass asked for and not started yet: later asks share it. */
  private queuedPass: Promise<void> | null = null;
  /** The merges' DuckDB (MAINTENANCE_DUCKDB), opened at the first merge. */
  private maintenanceDuckDB: { instance: DuckDBInstance; connection: DuckDBConnection } | null = null;

  private constructor(
    private readonly options: TickArchiveOptions,
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    archivedThrough: number,
  ) {
    this.storage = options.storage ?? nodeStorage;
    this.fsync = options.fsync ?? true;
    this.maxPendingBytes = options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
    this.compaction = { ...COMPACTION, ...options.compaction };
    this.through = archivedThrough;
    if (options.log.lastIndex > archivedThrough) this.waitingSince = Date.now();
  }

  /**
   * Opens the archive in options.dir: tidies what a crash left, finds the last
   * archived record, and starts the flush timer. The records the log holds after it
   * are read at the first flush.
   */
  static async open(options: TickArchiveOptions): Promise<TickArchive> {
    mkdirSync(options.dir, { recursive: true });
    checkSplitDays(options.dir);
    const removed = tidyArchive(options.dir);
    if (removed.length > 0) options.warn(`archive: removed ${removed.length} file(s) a crash left (temporaries, or inputs of a finished merge): ${removed.join(', ')}`);
    let through = 0;
    let newest: ArchiveFile | null = null;
    for (const file of listArchiveFiles(options.dir)) {
      if (file.last > through) newest = file;
      through = Math.max(through, file.last);
    }
    // an archive ahead of the log was written from another log (another DATA_DIR, or one
    // wiped since): its seqs would collide with this log's, so the start stops here
    if (newest !== null && through > options.log.lastIndex) {
      throw new ArchiveMismatchError(`${newest.path} holds log records up to ${through}, but the log in DATA_DIR ends at record ${options.log.lastIndex}: this ARCHIVE_DIR was written from another log. Point ARCHIVE_DIR at an empty directory (or move this one away) and start again.`);
    }
    // records the log no longer holds (deleted before the archive was enabled) cannot be archived: start at its first
    through = Math.max(through, options.log.firstIndex() - 1);
    const instance = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '512MB' });
    const connection = await instance.connect();
    // footers parsed once per file version (checked against its modification time), not at every query
    await connection.run('SET parquet_metadata_cache = true');
    // a day's merge sorts more than the memory limit: it spills next to the archive, not into the working directory
    await connection.run(`SET temp_directory = ${sqlString(join(options.dir, '.spill'))}`);
    await connection.run(`CREATE TABLE ${STAGE} (${STAGE_COLUMNS})`);
    const archive = new TickArchive(options, instance, connection, through);
    // the log may drop what the archive holds already
    options.log.archived(through);
    if (options.intervalMs > 0) {
      archive.timer = setInterval(() => void archive.flush().catch(() => {}), options.intervalMs);
      archive.timer.unref();
    }
    return archive;
  }

  /** The last record whose changes are all in archive files. */
  get archivedThrough(): number {
    return this.through;
  }

  /** Seconds the oldest record not yet in a file has waited (0 when none waits). */
  lagSeconds(now = Date.now()): number {
    return this.waitingSince === null || this.pendingRecords === 0 ? 0 : Math.max(0, now - this.waitingSince) / 1000;
  }

  /** Parquet files under the archive directory and their bytes (read at most once a second). */
  size(): { files: number; bytes: number } {
    const now = Date.now();
    if (this.sizeMemo !== null && now - this.sizeMemo.at < 1000) return this.sizeMemo;
    let bytes = 0;
    let count = 0;
    for (const file of listArchiveFiles(this.options.dir)) {
      count += parquetPaths(file).length;
      bytes += file.bytes;
    }
    this.sizeMemo = { at: now, files: count, bytes };
    return this.sizeMemo;
  }

  /** Records acknowledged but not yet in a file. */
  get pendingRecords(): number {
    return this.behind ? this.options.log.lastIndex - this.through : this.pendingIndex.length;
  }

  /** A durable log record (the log calls this in index order); its bytes are copied. */
  take(index: number, payload: Uint8Array): void {
    if (this.closed) return;
    this.waitingSince ??= Date.now();
    if (this.behind) return;
    if (index !== this.next) {
      this.dropPending(`record ${index} came where ${this.next} was expected`);
      return;
    }
    this.next = index + 1;
    this.pendingIndex.push(index);
    this.pendingPayload.push(Uint8Array.prototype.slice.call(payload));
    this.pendingBytes += payload.length;
    if (this.pendingBytes > this.maxPendingBytes) this.dropPending(`more than ${this.maxPendingBytes} bytes wait to be archived`);
  }

  private dropPending(why: string): void {
    if (!this.behind) this.options.warn(`archive: pending records dropped (${why}); they stay in the log and are read back from it at the next flush`);
    this.behind = true;
    this.pendingIndex = [];
    this.pendingPayload = [];
    this.pendingBytes = 0;
  }

  /** Reads the records after the last archived one back from the log (at most maxPendingBytes of them). */
  private catchUp(): void {
    this.pendingIndex = [];
    this.pendingPayload = [];
    this.pendingBytes = 0;
    const stop = new Error('enough');
    let full = false;
    try {
      this.options.log.replay(this.through + 1, (index, payload) => {
        this.pendingIndex.push(index);
        this.pendingPayload.push(Uint8Array.prototype.slice.call(payload));
        this.pendingBytes += payload.length;
        if (this.pendingBytes > this.maxPendingBytes) {
          full = true;
          throw stop;
        }
      });
    } catch (error) {
      if (error !== stop) throw error;
    }
    // with all of them read, later records come through take()
    this.behind = full;
    this.next = this.pendingIndex.length === 0 ? this.through + 1 : this.pendingIndex[this.pendingIndex.length - 1] + 1;
  }

  /**
   * Writes the pending records (one flush or query at a time), then has a maintenance
   * pass run (outside that queue: queries do not wait for it). Settles when both are
   * done; a failed flush rejects and asks for no pass.
   */
  async flush(): Promise<FlushReport | null> {
    const report = await this.exclusive(() => this.flushNow());
    await this.maintenance();
    return report;
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => {});
    return run;
  }

  private async flushNow(): Promise<FlushReport | null> {
    if (this.closed) return null;
    const started = performance.now();
    const flushStartedAt = Date.now();
    try {
      if (this.behind) this.catchUp();
    } catch (error) {
      this.fail(`reading the log after record ${this.through} failed: ${(error as Error).message}`);
      throw error;
    }
    const indexes = this.pendingIndex;
    const payloads = this.pendingPayload;
    this.pendingIndex = [];
    this.pendingPayload = [];
    this.pendingBytes = 0;
    if (indexes.length === 0) return null;
    const written: string[] = [];
    let rows = 0;
    try {
      rows = await this.stage(indexes, payloads);
      written.push(...(await this.writeStaged()));
    } catch (error) {
      this.dropPending('a flush failed');
      this.fail(`writing records ${indexes[0]} to ${indexes[indexes.length - 1]} failed (the log keeps them; tried again at the next flush): ${(error as Error).message}`);
      // files of the days written before the failure stay: they are whole, and the archive continues after them
      for (const file of listArchiveFiles(this.options.dir)) this.through = Math.max(this.through, file.last);
      this.options.log.archived(this.through);
      throw error;
    } finally {
      await this.connection.run(`DELETE FROM ${STAGE}`).catch(() => {});
    }
    this.through = indexes[indexes.length - 1];
    this.options.log.archived(this.through);
    // records that came during the flush have waited since it started, at most
    this.waitingSince = this.options.log.lastIndex > this.through ? flushStartedAt : null;
    // a catch-up that stopped at maxPendingBytes goes on at once
    if (this.behind && !this.closed) setImmediate(() => void this.flush().catch(() => {}));
    const report: FlushReport = { records: indexes.length, rows, files: written, archivedThrough: this.through, ms: performance.now() - started };
    this.lastFlush = report;
    try {
      this.onFlush?.(report);
    } catch {
      // an observer's failure is not the archive's
    }
    return report;
  }

  private fail(message: string): void {
    this.failures++;
    this.lastError = message;
    this.options.warn(`archive: ${message}`);
  }

  /** Decodes the records into the staging table, a slice at a time; returns the row count. */
  private async stage(indexes: number[], payloads: Uint8Array[]): Promise<number> {
    const appender = await this.connection.createAppender(STAGE);
    const rows: ArchiveRow[] = [];
    let count = 0;
    try {
      for (let i = 0; i < indexes.length; i++) {
        this.options.source.rowsOf(indexes[i], payloads[i], rows);
        if (rows.length >= SLICE_ROWS || i === indexes.length - 1) {
          for (let r = 0; r < rows.length; r++) {
            appendRow(appender, rows[r]);
            // a turn of the event loop every SLICE_ROWS rows, even inside one large record
            if ((r + 1) % SLICE_ROWS === 0) await new Promise((resolve) => setImmediate(resolve));
          }
          count += rows.length;
          rows.length = 0;
          if (i < indexes.length - 1) await new Promise((resolve) => setImmediate(resolve));
        }
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    return count;
  }

  /** Writes the staged rows, one file per day, oldest day first; returns the files. */
  private async writeStaged(): Promise<string[]> {
    const days = (await this.connection.runAndReadAll(`SELECT CAST(floor(time_ms / 86400000) AS INTEGER) AS d, count(*) AS n, CAST(min(seq) AS DOUBLE) AS first, CAST(max(seq) AS DOUBLE) AS last FROM ${STAGE} GROUP BY d ORDER BY d`)).getRowObjects();
    const files: string[] = [];
    for (const day of days) {
      const start = Number(day.d) * 86_400_000;
      const select = `SELECT ${COPY_SELECT} FROM ${STAGE} WHERE time_ms >= ${start} AND time_ms < ${start + 86_400_000} ORDER BY seq, pos`;
      files.push(await this.writeFile(dayOf(start), select, Number(day.first), Number(day.last), Number(day.n), 0));
    }
    return files;
  }

  /** Writes a file and puts it in place (writeTemp, then install), on the queue's connection. */
  private async writeFile(day: string, select: string, first: number, last: number, rows: number, level: number): Promise<string> {
    return this.install(await this.writeTemp(this.connection, day, select, first, last, rows, level));
  }

  /**
   * COPY `select` to a temporary file in the day's directory (a flush's at level 0, else
   * in the merged layout at `level`), check it reads back with `rows` rows from `first`
   * to `last`, and fsync it. A failure deletes the temporary.
   */
  private async writeTemp(connection: DuckDBConnection, day: string, select: string, first: number, last: number, rows: number, level: number, sync = this.fsync): Promise<WrittenFile> {
    const newDay = !existsSync(join(this.options.dir, day));
    const dayDir = ensureDayDir(this.options.dir, day);
    if (newDay && this.fsync) this.storage.syncDirSync(this.options.dir);
    const final = join(dayDir, archiveFileName(first, last));
    // a temporary's name is never used twice: DuckDB's metadata cache must not answer for an earlier file of the same name
    const temp = `${final}.${++this.temporaries}.tmp`;
    try {
      await connection.run(`COPY (${select}) TO ${sqlString(temp)} (${level > 0 ? mergedCopy(level) : FLUSH_COPY})`);
      const check = (await connection.runAndReadAll(`SELECT count(*) AS n, CAST(min(seq) AS DOUBLE) AS first, CAST(max(seq) AS DOUBLE) AS last FROM read_parquet(${sqlString(temp)})`)).getRowObjects()[0];
      if (Number(check.n) !== rows || Number(check.first) !== first || Number(check.last) !== last) {
        throw new Error(`${temp} read back ${check.n} rows from ${check.first} to ${check.last}, not ${rows} rows from ${first} to ${last}`);
      }
      if (sync) await this.syncFile(temp);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    return { temp, final, dayDir, level, split: false };
  }

  private async syncFile(path: string): Promise<void> {
    const file = await this.storage.open(path, 'r+');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
  }

  /**
   * A finished day as a split day under a temporary directory name: `select` (the day's
   * rows in the merged order) written to one temporary file and checked (writeTemp), then
   * cut by event_key into parts (each part a range of that file's row groups, read in
   * order by the one thread), each read back with its row count, fsync'd and hashed, the
   * manifest written and fsync'd, and the directory fsync'd. A failure (or closing)
   * deletes the directory; the sorted file is deleted either way.
   */
  private async writeSplit(connection: DuckDBConnection, day: string, select: string, first: number, last: number, rows: number): Promise<WrittenFile> {
    const parts = this.compaction.splitParts;
    const sorted = await this.writeTemp(connection, day, select, first, last, rows, DAY_LEVEL, false);
    const final = join(sorted.dayDir, splitDirName(first, last));
    const temp = `${final}.${++this.temporaries}.tmp`;
    try {
      mkdirSync(temp);
      const source = `read_parquet(${sqlString(sorted.temp)})`;
      const counts = new Map<string, number>();
      for (const row of (await connection.runAndReadAll(`SELECT substr(event_key, 1, 2) AS p, count(*) AS n FROM ${source} GROUP BY p`)).getRowObjects()) {
        const from = partFrom(partIndexOf(String(row.p), parts), parts);
        counts.set(from, (counts.get(from) ?? 0) + Number(row.n));
      }
      const files: SplitPart[] = [];
      for (let i = 0; i < parts; i++) {
        const from = partFrom(i, parts);
        const n = counts.get(from);
        if (n === undefined) continue;
        if (this.closed) throw new Error('the archive is closing');
        const name = partFileName(from);
        await connection.run(`COPY (SELECT * FROM ${source} WHERE ${partRangeSql(i, parts)}) TO ${sqlString(join(temp, name))} (${mergedCopy(DAY_LEVEL)})`);
        files.push({ from, name, rows: n, bytes: 0, sha256: '' });
      }
      const total = files.reduce((sum, file) => sum + file.rows, 0);
      if (total !== rows) throw new Error(`${sorted.temp} holds ${total} rows by event_key, not ${rows}`);
      // each part's footer read back: the rows the sorted file has in its range
      const back = new Map<string, number>();
      for (const row of (await connection.runAndReadAll(`SELECT file_name, CAST(num_rows AS DOUBLE) AS n FROM parquet_file_metadata([${files.map((file) => sqlString(join(temp, file.name))).join(', ')}])`)).getRowObjects()) back.set(String(row.file_name), Number(row.n));
      for (const file of files) {
        const path = join(temp, file.name);
        if (back.get(path) !== file.rows) throw new Error(`${path} read back ${back.get(path)} rows, not ${file.rows}`);
        if (this.fsync) await this.syncFile(path);
        file.sha256 = await sha256File(path);
        file.bytes = statSync(path).size;
      }
      const manifest: SplitManifest = { format: MANIFEST_FORMAT, layout: MERGED_LAYOUT, first, last, rows, parts, files };
      await this.writeWhole(join(temp, MANIFEST_NAME), Buffer.from(manifestText(manifest)));
      if (this.fsync) this.storage.syncDirSync(temp);
    } catch (error) {
      rmSync(temp, { recursive: true, force: true });
      throw error;
    } finally {
      rmSync(sorted.temp, { force: true });
    }
    return { temp, final, dayDir: sorted.dayDir, level: DAY_LEVEL, split: true };
  }

  /** Writes a small file whole (every write's length checked) and fsyncs it. */
  private async writeWhole(path: string, bytes: Uint8Array): Promise<void> {
    const file = await this.storage.open(path, 'w');
    try {
      await writeFully(file, bytes, 0);
      if (this.fsync) await file.sync();
    } finally {
      await file.close();
    }
  }

  /** Deletes an entry: a file, or a split day (renamed to a temporary name first, so a crash never leaves part of one under its name). */
  private removeEntry(file: ArchiveFile): void {
    if (file.split === null) {
      this.storage.unlinkSync(file.path);
      return;
    }
    const away = `${file.path}.${++this.temporaries}.tmp`;
    this.storage.renameSync(file.path, away);
    rmSync(away, { recursive: true, force: true });
  }

  /**
   * Renames a written file to its final name (replacing a file of that name: a rewrite
   * in place) and fsyncs the directory: from then on it is whole and counted. A failed
   * rename deletes the temporary.
   */
  private async install(file: WrittenFile): Promise<string> {
    try {
      await this.storage.rename(file.temp, file.final);
    } catch (error) {
      rmSync(file.temp, { force: true, recursive: true });
      throw error;
    }
    if (this.fsync) this.storage.syncDirSync(file.dayDir);
    // a split day's infos come from its manifest
    if (file.split) return file.final;
    try {
      const stat = statSync(file.final);
      this.infos.set(versionOf({ path: file.final, bytes: stat.size, mtimeMs: stat.mtimeMs }), file.level > 0 ? { merged: true, level: file.level, columns: MERGED_FILE_COLUMNS } : FLUSH_FILE);
    } catch {
      // read from its metadata when next asked
    }
    return file.final;
  }

  /** Each file's layout and columns (its key-value metadata and schema, read once per file version, on `connection`). */
  private async fileInfos(files: readonly ArchiveFile[], connection: DuckDBConnection = this.connection): Promise<FileInfo[]> {
    // versions of files deleted or rewritten since are never asked again
    if (this.infos.size > 4 * files.length + 10_000) this.infos.clear();
    // a split day in this layout: known from its manifest
    for (const file of files) if (file.split !== null && file.split.manifest.layout === MERGED_LAYOUT) this.infos.set(versionOf(file), SPLIT_DAY);
    const unknown = files.filter((file) => !this.infos.has(versionOf(file)));
    if (unknown.length > 0) {
      const list = `[${unknown.flatMap(parquetPaths).map(sqlString).join(', ')}]`;
      const marked = new Set<string>();
      const levels = new Map<string, number>();
      const keys = `key IN (encode(${sqlString(LAYOUT_KEY)}), encode(${sqlString(LEVEL_KEY)}))`;
      for (const row of (await connection.runAndReadAll(`SELECT file_name, decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${list}) WHERE ${keys}`)).getRowObjects()) {
        const file = String(row.file_name);
        if (row.k === LAYOUT_KEY && row.v === MERGED_LAYOUT) marked.add(file);
        if (row.k === LEVEL_KEY) levels.set(file, Number(row.v));
      }
      const columns = new Map<string, Set<string>>();
      for (const row of (await connection.runAndReadAll(`SELECT file_name, name FROM parquet_schema(${list})`)).getRowObjects()) {
        const file = String(row.file_name);
        let names = columns.get(file);
        if (names === undefined) columns.set(file, (names = new Set()));
        names.add(String(row.name));
      }
      for (const file of unknown) {
        // a split day in another layout (a later version's): read by name, its parts' columns together
        const names = new Set<string>();
        for (const path of parquetPaths(file)) {
          const of = columns.get(path);
          // never guessed: a file read with a wrong column set would answer nulls
          if (of === undefined) throw new Error(`the schema of ${path} could not be read`);
          for (const name of of) names.add(name);
        }
        const merged = file.split === null && marked.has(file.path);
        const level = levels.get(file.path);
        this.infos.set(versionOf(file), { merged, level: !merged ? 0 : level !== undefined && Number.isInteger(level) && level > 0 ? level : DAY_LEVEL, columns: names });
      }
    }
    return files.map((file) => this.infos.get(versionOf(file)) ?? FLUSH_FILE);
  }

  /** The merges' connection (opened at the first merge; only maintenance passes, one at a time, ask for it). */
  private async maintenanceConnection(): Promise<DuckDBConnection> {
    if (this.maintenanceDuckDB === null) {
      const instance = await DuckDBInstance.create(':memory:', MAINTENANCE_DUCKDB);
      try {
        const connection = await instance.connect();
        // its own spill directory: two instances' temporary files must not share names
        await connection.run(`SET temp_directory = ${sqlString(join(this.options.dir, '.spill-maintenance'))}`);
        this.maintenanceDuckDB = { instance, connection };
      } catch (error) {
        instance.closeSync();
        throw error;
      }
    }
    return this.maintenanceDuckDB.connection;
  }

  /** Files' infos read in the queue, on its connection (quick: their footers, once per version). */
  private infosInQueue(files: readonly ArchiveFile[]): Promise<FileInfo[]> {
    return this.exclusive(() => this.fileInfos(files));
  }

  /** Asks for a maintenance pass (one at a time; a pass asked for and not started yet is shared); settles when it is done, never rejects. */
  private maintenance(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.queuedPass !== null) return this.queuedPass;
    const pass = this.maintenanceChain.then(() => {
      this.queuedPass = null;
      return this.maintain();
    });
    this.queuedPass = pass;
    this.maintenanceChain = pass;
    return pass;
  }

  /**
   * One maintenance pass: deletes days past the retention, gathers today's files into
   * runs (one run per pass, when enough wait), and brings one finished day (if any needs
   * it) to a single file in the merged layout: its files merged, or its only file
   * rewritten. Failures are reported per day; a pass never throws.
   */
  private async maintain(): Promise<void> {
    if (this.closed) return;
    let days: string[];
    try {
      days = listDays(this.options.dir);
    } catch (error) {
      this.options.warn(`archive: listing ${this.options.dir} failed: ${(error as Error).message}`);
      return;
    }
    const newest = dayOf(this.options.now());
    const oldestKept = dayOf(dayStart(newest) - (this.options.retentionDays - 1) * 86_400_000);
    const expired = days.filter((day) => day < oldestKept);
    if (expired.length > 0) {
      try {
        // in the queue: no query is reading them then
        await this.exclusive(async () => {
          for (const day of expired) rmSync(join(this.options.dir, day), { recursive: true, force: true });
          if (this.fsync) this.storage.syncDirSync(this.options.dir);
        });
      } catch (error) {
        this.options.warn(`archive: deleting days past the retention failed: ${(error as Error).message}`);
      }
    }
    let mergedOne = false;
    for (const day of days) {
      if (this.closed) return;
      // a day after the clock's (a clock set back) is left as it is
      if (day < oldestKept || day > newest) continue;
      let versions = '';
      try {
        const listed = listDayFiles(this.options.dir, day);
        const files = liveFiles(listed);
        if (files.length < listed.length) await this.dropCovered(day);
        if (files.length === 0) continue;
        let group: ArchiveFile[] = files;
        let level = DAY_LEVEL;
        let rewrite = false;
        if (day === newest) {
          // today: a run of the flush files, or of the runs, once enough of them wait
          const infos = await this.infosInQueue(files);
          const flushes = files.filter((_, i) => infos[i].level === 0);
          const runs = files.filter((_, i) => infos[i].level === 1);
          if (flushes.length >= this.compaction.runFiles) [group, level] = [flushes, 1];
          else if (runs.length >= this.compaction.runsPerLevel) [group, level] = [runs, 2];
          else continue;
        } else {
          // a finished day (it gets files only from a catch-up, and is merged again then): one per pass
          if (mergedOne) continue;
          if (files.length === 1) {
            // a split day is done; a day's only file (a flush, a run, or a day an older version merged into one file) is rewritten as one, spaced out
            if (files[0].split !== null) continue;
            if (Date.now() - this.lastRewriteAt < this.compaction.rewriteEveryMs) continue;
            rewrite = true;
          }
        }
        versions = group.map(versionOf).join('\n');
        const failedAt = this.unmergeable.get(versions);
        if (failedAt !== undefined && Date.now() - failedAt < MERGE_RETRY_MS) continue;
        if (level === DAY_LEVEL) mergedOne = true;
        if (rewrite) this.lastRewriteAt = Date.now();
        await this.merge(day, group, files, level);
      } catch (error) {
        // closing interrupts a merge: not a failure of its files
        if (this.closed) return;
        if (versions !== '') this.unmergeable.set(versions, Date.now());
        this.options.warn(`archive: maintaining ${day} failed (its files are kept as they are, and read as they are; tried again when they change or in an hour): ${(error as Error).message}`);
      }
    }
  }

  /** Deletes the files of a day another file of it covers (a merge's inputs left by a deletion that failed), in the queue. */
  private dropCovered(day: string): Promise<void> {
    return this.exclusive(async () => {
      const listed = listDayFiles(this.options.dir, day);
      const covered = listed.filter((file) => isCovered(file, listed));
      for (const file of covered) this.removeEntry(file);
      if (covered.length > 0 && this.fsync) this.storage.syncDirSync(join(this.options.dir, day));
    });
  }

  /**
   * Merges `group` (some of the day's live files, `all`) into one file in the merged
   * layout at `level`, then deletes the group. The merged file is written and fsync'd on
   * the maintenance connection while queries go on; only its installation waits for the
   * queue, and is refused (the temporary deleted) when the day's files changed meanwhile.
   */
  private async merge(day: string, group: ArchiveFile[], all: readonly ArchiveFile[], level: number): Promise<void> {
    // the group's entries (files, split days), and the Parquet files they read
    const entries = group.map((f) => f.path);
    const paths = group.flatMap(parquetPaths);
    const first = Math.min(...group.map((f) => f.first));
    const last = Math.max(...group.map((f) => f.last));
    // the merged file's name covers [first, last]: a file of the day in that range left out of the group would be taken
    // for one of its inputs (skipped by reads, deleted at the next start)
    const inside = (files: readonly ArchiveFile[]): ArchiveFile[] => files.filter((f) => !entries.includes(f.path) && f.last >= first && f.first <= last);
    const outside = inside(all);
    if (outside.length > 0) throw new Error(`not merging ${paths.length} file(s) of ${day}: ${outside.map((f) => f.path).join(', ')} lies in their range ${first}-${last}`);
    const connection = await this.maintenanceConnection();
    if (this.closed) throw new Error('the archive is closing');
    const counted = (await connection.runAndReadAll(`SELECT count(*) AS n FROM ${readParquetSql(paths)}`)).getRowObjects()[0];
    const present = columnsOf(await this.fileInfos(group, connection));
    const select = mergedSelect(paths, present, '');
    // a finished day is split by event_key; today's runs are single files
    const written = level === DAY_LEVEL ? await this.writeSplit(connection, day, select, first, last, Number(counted.n)) : await this.writeTemp(connection, day, select, first, last, Number(counted.n), level);
    try {
      await this.onMergeWritten?.(day, written.temp);
      await this.exclusive(async () => {
        if (this.closed) throw new Error('the archive is closing');
        // the inputs as they were read (a rewrite in place of one could have come in between), and nothing new in the range
        const now = listDayFiles(this.options.dir, day);
        const current = new Set(now.map(versionOf));
        const changed = group.filter((f) => !current.has(versionOf(f)));
        if (changed.length > 0) throw new Error(`not installing the merge of ${day}: ${changed.map((f) => f.path).join(', ')} changed or went while it was written`);
        const arrived = inside(now);
        if (arrived.length > 0) throw new Error(`not installing the merge of ${day}: ${arrived.map((f) => f.path).join(', ')} came into its range ${first}-${last} while it was written`);
        const final = await this.install(written);
        // (a run of one file has the file's name: the rename replaced it)
        for (const file of group) if (file.path !== final) this.removeEntry(file);
        if (this.fsync) this.storage.syncDirSync(join(this.options.dir, day));
      });
    } finally {
      // gone after an installation; after a refusal, the temporary
      rmSync(written.temp, { force: true, recursive: true });
    }
  }

  /** Rows (their TICK_COLUMNS) of the given odds ids with time_ms <= toMs, oldest first (archive, then the records not written yet). */
  rowsOfIds(ids: readonly string[], toMs: number): Promise<ArchiveRows<TickRow>> {
    if (ids.length === 0) return Promise.resolve({ rows: [], complete: !this.behind, archivedThrough: this.through });
    const set = new Set(ids);
    const sorted = [...set].sort();
    // one id: an equality DuckDB checks against row-group statistics; several: their range too, then the list
    const byId = sorted.length === 1 ? `odds_id = ${sqlString(sorted[0])}` : `odds_id >= ${sqlString(sorted[0])} AND odds_id <= ${sqlString(sorted[sorted.length - 1])} AND odds_id IN (${sorted.map(sqlString).join(', ')})`;
    const where = `${byId} AND time_ms <= ${Math.floor(toMs)}`;
    return this.rowsWhere({ columns: TICK_ARCHIVE_COLUMNS, where, eventIds: eventIdsOf(sorted), fromMs: -Infinity, toMs }, (row) => row.odds_id !== null && set.has(row.odds_id) && row.time_ms <= toMs);
  }

  /** Every row of one event's market (all books, all selections) with time_ms <= toMs. */
  rowsOfMarket(eventId: string, marketSubtype: string, toMs: number): Promise<ArchiveRows> {
    const where = `event_id = ${sqlString(eventId)} AND market_subtype = ${sqlString(marketSubtype)} AND time_ms <= ${Math.floor(toMs)}`;
    return this.rowsWhere({ columns: ARCHIVE_COLUMNS, where, eventIds: [eventId], fromMs: -Infinity, toMs }, (row) => row.event_id === eventId && row.market_subtype === marketSubtype && row.time_ms <= toMs);
  }

  /** Every row of one event with time_ms <= toMs. */
  rowsOfEvent(eventId: string, toMs: number): Promise<ArchiveRows> {
    const where = `event_id = ${sqlString(eventId)} AND time_ms <= ${Math.floor(toMs)}`;
    return this.rowsWhere({ columns: ARCHIVE_COLUMNS, where, eventIds: [eventId], fromMs: -Infinity, toMs }, (row) => row.event_id === eventId && row.time_ms <= toMs);
  }

  /**
   * The removals (remove rows, and the status rows that ended an event) with time_ms >=
   * fromMs, oldest first, and the first record the archive holds with its time: every
   * record after it is in the archive or pending (when `complete`), none before it is.
   */
  removalsSince(fromMs: number): Promise<ArchiveRows & { firstRecord: number; firstRecordTime: number }> {
    const removal = `(kind = 'remove' OR (kind = 'status' AND event_status IN ('final', 'cancelled')))`;
    const from = Math.floor(fromMs);
    return this.exclusive(async () => {
      const found = await this.rowsWhereNow({ columns: ARCHIVE_COLUMNS, where: `${removal} AND time_ms >= ${from}`, eventIds: null, fromMs: from, toMs: Infinity }, (row) => row.time_ms >= from && (row.kind === 'remove' || (row.kind === 'status' && (row.event_status === 'final' || row.event_status === 'cancelled'))));
      let firstRecord = this.through + 1;
      let firstRecordTime = Infinity;
      const files = listArchiveFiles(this.options.dir);
      if (files.length > 0) {
        const first = files.reduce((a, b) => (b.first < a.first ? b : a));
        // a merged file is not in seq order: finding its first record reads its seq column whole, once per file version
        let time = this.firstTimes.get(versionOf(first));
        if (time === undefined) {
          const row = (await this.connection.runAndReadAll(`SELECT CAST(max(time_ms) AS DOUBLE) AS t FROM read_parquet([${parquetPaths(first).map(sqlString).join(', ')}]) WHERE seq = ${first.first}`)).getRowObjects()[0];
          time = Number(row?.t ?? Infinity);
          if (this.firstTimes.size > 1000) this.firstTimes.clear();
          this.firstTimes.set(versionOf(first), time);
        }
        firstRecord = first.first;
        firstRecordTime = time;
      } else if (!this.behind && this.pendingIndex.length > 0) {
        firstRecord = this.pendingIndex[0];
        const scratch: ArchiveRow[] = [];
        this.options.source.rowsOf(this.pendingIndex[0], this.pendingPayload[0], scratch);
        firstRecordTime = scratch.length > 0 ? scratch[0].time_ms : Infinity;
      }
      return { ...found, firstRecord, firstRecordTime };
    });
  }

  private rowsWhere(query: RowQuery, keep: (row: ArchiveRow) => boolean): Promise<ArchiveRows> {
    return this.exclusive(() => this.rowsWhereNow(query, keep));
  }

  /** The rows (query.columns of them: the others are left out) of the archive's files, then of the records not written yet. */
  private async rowsWhereNow(query: RowQuery, keep: (row: ArchiveRow) => boolean): Promise<ArchiveRows> {
    const files = listArchiveFilesBetween(this.options.dir, query.fromMs, query.toMs);
    const rows: ArchiveRow[] = [];
    if (files.length > 0) {
      const infos = await this.fileInfos(files);
      const keys = query.eventIds?.map(eventKey) ?? null;
      // a split day: only the parts its events' keys fall in (one per day for one event)
      const keyed = files.filter((_, i) => infos[i].merged).flatMap((f) => parquetPathsFor(f, keys));
      const plain = files.filter((_, i) => !infos[i].merged).flatMap(parquetPaths);
      const parts: string[] = [];
      if (keyed.length > 0) {
        // merged files all have MERGED_COLUMNS: no union by name; event_key picks the row groups to read
        const byKey = keyFilter('event_key', keys);
        parts.push(`SELECT ${rowSelect(ALL_COLUMNS, true, query.columns)} FROM read_parquet([${keyed.map(sqlString).join(', ')}]) WHERE ${byKey}(${query.where})`);
      }
      if (plain.length > 0) parts.push(`SELECT ${rowSelect(columnsOf(infos.filter((info) => !info.merged)), true, query.columns)} FROM ${readParquetSql(plain)} WHERE ${query.where}`);
      if (parts.length > 0) {
        const sql = parts.length === 1 ? `${parts[0]} ORDER BY seq, pos` : `SELECT * FROM (${parts.join(' UNION ALL ')}) ORDER BY seq, pos`;
        const reader = await this.connection.runAndReadAll(sql);
        for (const row of reader.getRowObjects()) rows.push(row as unknown as ArchiveRow);
      }
    }
    // the records not written yet, from their copies (with the same columns as the files' rows)
    const scratch: ArchiveRow[] = [];
    const whole = query.columns.length === ARCHIVE_COLUMNS.length;
    if (!this.behind) {
      for (let i = 0; i < this.pendingIndex.length; i++) {
        scratch.length = 0;
        this.options.source.rowsOf(this.pendingIndex[i], this.pendingPayload[i], scratch);
        for (const row of scratch) if (keep(row)) rows.push(whole ? row : (Object.fromEntries(query.columns.map((c) => [c.name, row[c.name]])) as unknown as ArchiveRow));
      }
    }
    return { rows, complete: !this.behind, archivedThrough: this.through };
  }

  /**
   * Writes one day's rows (optionally one league's) to `outPath` as one Parquet file (zstd)
   * in the merged layout: MERGED_COLUMNS, sorted by event_key, odds_id, seq, pos. Returns
   * the row count. A finished day is in that order already: its parts are joined in key
   * order, their bytes as they are (parquetConcat.ts: no row decoded), and a league's
   * export reads them in that order keeping its rows; a day an older version merged into
   * one file is that file (a hard link, or a copy across file systems). Today's (or a day
   * not merged yet) are sorted. Only archived records: the newest ARCHIVE_INTERVAL_MS of
   * today are not in it yet.
   */
  exportDay(day: string, league: string | null, outPath: string): Promise<{ rows: number; files: number }> {
    return this.exclusive(async () => {
      const files = liveFiles(listDayFiles(this.options.dir, day));
      if (files.length === 0) return { rows: 0, files: 0 };
      const paths = files.flatMap(parquetPaths);
      const infos = await this.fileInfos(files);
      const mergedDay = files.length === 1 && infos[0].merged;
      if (mergedDay && league === null && files[0].split === null) {
        try {
          linkSync(paths[0], outPath);
        } catch {
          copyFileSync(paths[0], outPath);
        }
      } else if (mergedDay && league === null) {
        const joined = await concatParquet(paths, outPath);
        const expected = files[0].split?.manifest.rows;
        if (joined.rows !== expected) throw new Error(`joining the parts of ${day} gave ${joined.rows} rows, its manifest says ${expected}`);
      } else {
        const where = league === null ? '' : `WHERE league = ${sqlString(league)}`;
        // a merged day read in its order (DuckDB keeps a scan's order, files in the list's order, into COPY): no sort
        const select = mergedDay ? `SELECT ${MERGED_COLUMNS} FROM read_parquet([${paths.map(sqlString).join(', ')}]) ${where}` : mergedSelect(paths, columnsOf(infos), where);
        await this.connection.run(`COPY (${select}) TO ${sqlString(outPath)} (${mergedCopy(DAY_LEVEL)})`);
      }
      const n = (await this.connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlString(outPath)})`)).getRowObjects()[0].n;
      return { rows: Number(n), files: files.length };
    });
  }

  /** Days with archive files, oldest first. */
  days(): string[] {
    return listDays(this.options.dir).filter((day) => listDayFiles(this.options.dir, day).length > 0);
  }

  /** Writes what is pending (no maintenance after it), stops the timer and closes DuckDB. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    try {
      await this.exclusive(() => this.flushNow());
    } catch {
      // reported by the flush; the log keeps the records for the next start
    }
    await this.abandon();
  }

  /** Closes without writing what is pending (the log keeps it for the next start); a merge under way is stopped and its temporary deleted. */
  async abandon(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.closed) return;
    this.closed = true;
    // interrupted until the pass ends: a statement it starts after one interrupt is stopped by the next
    const interrupt = (): void => this.maintenanceDuckDB?.connection.interrupt();
    const interrupting = setInterval(interrupt, 20);
    interrupt();
    try {
      await this.maintenanceChain;
    } finally {
      clearInterval(interrupting);
    }
    await this.chain;
    if (this.maintenanceDuckDB !== null) {
      this.maintenanceDuckDB.connection.closeSync();
      this.maintenanceDuckDB.instance.closeSync();
    }
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

function appendRow(appender: DuckDBAppender, row: ArchiveRow): void {
  appender.appendDouble(row.seq);
  appender.appendInteger(row.pos);
  appender.appendDouble(row.time_ms);
  appender.appendVarchar(row.kind);
  appendText(appender, row.odds_id);
  appender.appendVarchar(row.event_id);
  appendText(appender, row.league);
  appendText(appender, row.book);
  appendText(appender, row.market);
  appendText(appender, row.market_subtype);
  appendText(appender, row.selection_id);
  appendText(appender, row.selection);
  appendNumber(appender, row.line);
  if (row.price_american === null) appender.appendNull();
  else appender.appendInteger(row.price_american);
  appendNumber(appender, row.dfs_multiplier);
  if (row.suspended === null) appender.appendNull();
  else appender.appendBoolean(row.suspended);
  appendText(appender, row.event_status);
  appendNumber(appender, row.event_start_ms);
  appendText(appender, row.removed_rows);
  appender.endRow();
}

function appendText(appender: DuckDBAppender, value: string | null): void {
  if (value === null) appender.appendNull();
  else appender.appendVarchar(value);
}

function appendNumber(appender: DuckDBAppender, value: number | null): void {
  if (value === null) appender.appendNull();
  else appender.appendDouble(value);
}
