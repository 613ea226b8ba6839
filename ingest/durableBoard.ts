// A board kept in DATA_DIR: opening restores it (the newest valid checkpoint plus the
// log after it), then an Ingest writes to it and a checkpoint policy folds the log
// into a new checkpoint every CHECKPOINT_INTERVAL_MS (default 60 s) or every
// CHECKPOINT_LOG_BYTES of log (default 256 MiB), and on request (checkpointNow).
//
// Layout of DATA_DIR:
//   lock.db, lock.pid                                  (the one-writer lock: persistence/log/dataDirLock.ts)
//   checkpoint-<last record index, 16 digits>.ckpt   (persistence/log/checkpointFiles.ts)
//   wal/wal-<first record index, 16 digits>.log      (persistence/log/segments.ts)
//
// A checkpoint is taken between two applied batches (applies wait while the board is
// copied in steps, so no batch applies halfway through it; a worker thread packs the
// copy, the thread pool writes it) and names the last record it includes. The two
// newest checkpoints are kept, and the log back to the older of them: a newest
// checkpoint found damaged at a start falls back to the older one plus the log. A
// checkpoint that fails to write (a full disk, an I/O error) leaves the files as they
// were, is reported (warn line, onCheckpointFailed) and is tried again later.
//
// Restore order: take the DATA_DIR lock; read the newest checkpoint that passes its
// checks (an older one only if the log still holds every record after it up to the
// damaged newer ones); open the log from the record after it (a torn tail is cut and
// reported; damage the checkpoint covers is stepped over; other damage throws
// LogDamagedError with file, offset and record); replay every record after the
// checkpoint at its logged time. Anything else refuses the start with
// RestoreRefusedError, which says what `npm run repair` would keep and drop.

import type { Clock } from '../engine/clock.ts';
import { CHECKPOINT_PACK_OPTIONS, EngineStateCopy, packStateHere, readEngineState, restoreEngine, type EngineState } from '../engine/checkpoint.ts';
import { blockBody, planBlocks, type BlockBody } from '../engine/checkpointBlocks.ts';
import { OddsEngine, type Change, type EngineOptions } from '../engine/engine.ts';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { LogDamagedError } from '../persistence/log/batchLog.ts';
import { CheckpointBodyReader, CheckpointDamagedError, listCheckpoints, writeCheckpointInBackground, type CheckpointFile, type CheckpointMeta } from '../persistence/log/checkpointFiles.ts';
import { DataDirLock } from '../persistence/log/dataDirLock.ts';
import type { ArchiveLog } from '../persistence/archive/tickArchive.ts';
import { FileBatchLog, fsyncFromEnv, walDir, type OpenedLog, type TornTail } from '../persistence/log/fileBatchLog.ts';
import { repairDataDir } from '../persistence/log/repair.ts';
import { nodeStorage, type Storage } from '../persistence/log/storage.ts';
import { packInWorker } from '../persistence/log/packInWorker.ts';
import { Ingest, applyCold, type ColdStore } from './ingest.ts';
import { decodeRecord, engineChanges } from './record.ts';
import { TickSlots } from './tickSlots.ts';

export interface DurableBoardOptions {
  dataDir: string;
  clock: Clock;
  cold: ColdStore;
  engineOptions?: EngineOptions;
  /** Default: WAL_FSYNC (fsync unless it is '0'). */
  fsync?: boolean;
  /** Default CHECKPOINT_INTERVAL_MS or 60 s; 0 turns the timer off. */
  checkpointIntervalMs?: number;
  /** Default CHECKPOINT_LOG_BYTES or 256 MiB. */
  checkpointLogBytes?: number;
  segmentBytes?: number;
  /** Bytes of the board a checkpoint copies per step (default 4 MiB; between steps the event loop serves reads). */
  checkpointCopyStepBytes?: number;
  env?: NodeJS.ProcessEnv;
  warn?: (line: string) => void;
  /** Reports the restore's two long steps (reading the checkpoint, replaying the log); default: silent. */
  progress?: StepProgress;
  /**
   * The DATA_DIR lock, taken already by the caller (service/servedBoard.ts takes it
   * before anything reads DATA_DIR), who releases it once every file it opened there is
   * closed (its SQLite file too). Default: taken here, and released by close() after the
   * log is closed.
   */
  lock?: DataDirLock;
  /** Where the log's and the checkpoints' writes go (default node:fs; tests inject faults). */
  storage?: Storage;
  /**
   * Called with the engine once it holds a restored board (a checkpoint, or a log to
   * replay onto an empty one), before the log after it replays: what follows the engine
   * and keeps state the board does not determine (the steam detector) subscribes here,
   * so it sees every replayed batch as the writer did. Not called for a fresh start
   * (nothing restored: the caller builds such listeners once the board is loaded).
   */
  restored?: (engine: OddsEngine) => void;
}

/** A start that would not restore exactly what was acknowledged: what is wrong, and what repair would do. */
export class RestoreRefusedError extends Error {
  readonly code = 'restore_refused';
  constructor(
    readonly dataDir: string,
    readonly problem: string,
    /** What `npm run repair -- DATA_DIR` (dry run) says it would keep and drop. */
    readonly repairSays: string[],
    options?: { cause?: unknown },
  ) {
    super(`refusing to start from ${dataDir}: ${problem}. Nothing acknowledged is skipped silently. \`npm run repair -- ${dataDir}\` says: ${repairSays.join('; ')}`, options);
    this.name = 'RestoreRefusedError';
  }
}

/** Starts a step that reports how far it got (the service prints it as a progress bar, or one line per step). */
export type StepProgress = (label: string, total: number | null, unit: string) => { update(done: number): void; finish(note?: string): void };

export interface RestoreReport {
  /** The checkpoint restored from, or null (no checkpoint: the log replays onto an empty board). */
  checkpoint: CheckpointFile | null;
  /** Newer checkpoints that failed their check and were passed over (and set aside as *.damaged). */
  skippedCheckpoints: string[];
  tornTail: TornTail | null;
  /** Log segments with damage in records the checkpoint covers (stepped over, not needed). */
  coveredDamage: string[];
  replayedRecords: number;
  replayedChanges: number;
  /** Reading and decoding the checkpoint and opening the log after it (0 without a checkpoint); the rest of ms is the replay. */
  checkpointMs: number;
  ms: number;
}

export interface CheckpointReport {
  path: string;
  logIndex: number;
  bytes: number;
  /** Copy, encode, write, fsync and rename. */
  ms: number;
  /** Copy and encode (the encode runs in a worker thread while batches apply). */
  encodeMs: number;
  /** How long applies waited while the board was copied (the event loop served reads between the steps). */
  appliesHeldMs: number;
  /** The longest single step of the copy: the longest the checkpoint held the event loop at once. */
  longestStepMs: number;
  /** Steps the copy took. */
  copySteps: number;
}

/** Bytes of the board copied per step of a checkpoint: a few milliseconds of memory copying. */
const COPY_STEP_BYTES = 4 * 1024 * 1024;

const DEFAULT_INTERVAL_MS = 60_000;
/** Below this many row slots a checkpoint is packed on the event loop (well under a millisecond a thousand rows) rather than in a worker thread (tens of milliseconds to start one). */
const PACK_IN_PROCESS_ROWS = 20_000;

/**
 * A copy's body (format 2, engine/checkpointBlocks.ts): its manifest packed and the CRCs
 * taken in a worker thread, which has the copy's arrays meanwhile and hands them back.
 */
async function packInBackground(copy: EngineStateCopy): Promise<BlockBody> {
  const plan = planBlocks(copy.state);
  const packed = await packInWorker(plan.manifest, plan.blocks, copy.buffers(), CHECKPOINT_PACK_OPTIONS);
  return blockBody(packed.body, packed.crc, packed.blocks, packed.blocksCrc);
}

/**
 * The engine a checkpoint file holds: its body read block by block into the arrays the
 * board keeps (engine/checkpoint.ts, readEngineState), the body CRC and trailer checked
 * before anything read is used. A body that fails to read or decode is damage when its
 * CRC fails (the rest is read to know), else a bug or a foreign file: refused either way.
 */
function restoreCheckpoint(file: CheckpointFile, clock: Clock, engineOptions: EngineOptions | undefined, warn: (line: string) => void): { engine: OddsEngine; meta: CheckpointMeta } {
  const reader = CheckpointBodyReader.open(file);
  try {
    let state: EngineState;
    try {
      state = readEngineState(reader);
    } catch (error) {
      if (error instanceof CheckpointDamagedError) throw error;
      reader.drain();
      throw notDecoded(file, error);
    }
    let engine: OddsEngine;
    try {
      engine = restoreEngine(state, clock, engineOptions);
    } catch (error) {
      throw notDecoded(file, error);
    }
    // the saved id table and posting lists did not fit the rows: rebuilt (exact, slower), but a bug to report
    if (state.derived !== undefined && engine.derivedFrom === 'rebuilt') warn(`restore: the id table and posting lists saved in ${file.path} do not fit its rows; rebuilt from the rows instead`);
    return { engine, meta: reader.meta };
  } finally {
    reader.close();
  }
}

/** Its CRCs check but it does not decode: a bug or a foreign file, damage either way. */
function notDecoded(file: CheckpointFile, error: unknown): CheckpointDamagedError {
  return new CheckpointDamagedError(file.path, 0, 'body', `passes its checks but does not decode: ${(error as Error).message}`);
}
/** After a failed checkpoint, the next size-triggered one waits this long (the interval timer tries on its own schedule). */
const CHECKPOINT_RETRY_MS = 5_000;
const DEFAULT_LOG_BYTES = 256 * 1024 * 1024;

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a non-negative integer, got ${text}`);
  return Number(text);
}

export class DurableBoard {
  readonly engine: OddsEngine;
  readonly log: FileBatchLog;
  readonly ingest: Ingest;
  readonly restore: RestoreReport;
  /** True when DATA_DIR held neither a checkpoint nor a log record (the caller loads a board and checkpoints it). */
  readonly fresh: boolean;
  private timer: NodeJS.Timeout | null = null;
  private checkpointing: Promise<CheckpointReport | null> | null = null;
  private readonly fsync: boolean;
  private readonly logBytes: number;
  private readonly warn: (line: string) => void;
  private readonly lock: DataDirLock;
  private readonly storage: Storage;
  /** No size-triggered checkpoint before this time (performance.now()) after a failed one: a full disk is not hammered after every batch. */
  private retryAfter = 0;
  /** Told of every checkpoint written (metrics); null: nobody. */
  onCheckpoint: ((report: CheckpointReport) => void) | null = null;
  /** Told of every checkpoint that failed (metrics); null: nobody. */
  onCheckpointFailed: ((error: Error) => void) | null = null;
  /** Checkpoints that failed since the start. */
  checkpointFailures = 0;
  /**
   * Written into every checkpoint's header and read back by the restore (persistence/
   * log/checkpointFiles.ts, CheckpointMeta): the board's id, and the place for other
   * small values that must survive restarts with the board (e.g. a stream clock's epoch).
   */
  readonly checkpointMeta: CheckpointMeta;

  private constructor(private readonly options: DurableBoardOptions, engine: OddsEngine, log: FileBatchLog, appliedIndex: number, restore: RestoreReport, fresh: boolean, lock: DataDirLock, meta: CheckpointMeta) {
    this.lock = lock;
    this.storage = options.storage ?? nodeStorage;
    this.checkpointMeta = meta;
    const env = options.env ?? process.env;
    this.fsync = options.fsync ?? fsyncFromEnv(env);
    this.logBytes = options.checkpointLogBytes ?? intFrom(env, 'CHECKPOINT_LOG_BYTES', DEFAULT_LOG_BYTES);
    this.warn = options.warn ?? ((line) => process.stderr.write(`${line}\n`));
    this.engine = engine;
    this.log = log;
    this.restore = restore;
    this.fresh = fresh;
    this.ingest = new Ingest({
      engine,
      log,
      cold: options.cold,
      clock: options.clock,
      appliedIndex,
      warn: this.warn,
      afterApply: () => {
        if (this.log.bytesSinceCheckpoint >= this.logBytes && this.checkpointing === null && performance.now() >= this.retryAfter) void this.checkpointNow().catch(() => {});
      },
    });
    const interval = options.checkpointIntervalMs ?? intFrom(env, 'CHECKPOINT_INTERVAL_MS', DEFAULT_INTERVAL_MS);
    if (interval > 0) {
      this.timer = setInterval(() => {
        if (this.ingest.appliedIndex > this.lastCheckpointIndex) void this.checkpointNow().catch(() => {});
      }, interval);
      this.timer.unref();
    }
    this.lastCheckpointIndex = restore.checkpoint?.logIndex ?? -1;
  }

  private lastCheckpointIndex: number;
  /** The last record the tick archive holds, once one is attached (archiveLog): the log keeps every record after it. */
  private archivedThrough: number | null = null;

  /** Through how far the log may be deleted: the older kept checkpoint, and no further than the archive holds. */
  private dropLimit(olderCheckpoint: number): number {
    return this.archivedThrough === null ? olderCheckpoint : Math.min(olderCheckpoint, this.archivedThrough);
  }

  /**
   * The log as the tick archive (persistence/archive/tickArchive.ts) sees it: from the
   * moment this is called, no log record the archive lacks is deleted (a checkpoint
   * keeps them); archived() lets the log drop what both the archive and the older kept
   * checkpoint hold.
   */
  archiveLog(): ArchiveLog {
    this.archivedThrough ??= 0;
    const log = this.log;
    return {
      get lastIndex() {
        return log.lastIndex;
      },
      firstIndex: () => log.firstIndex(),
      replay: (from, visit) => log.replay(from, (record) => visit(record.index, record.payload)),
      archived: (through) => {
        this.archivedThrough = through;
        if (this.ingest.coldWritesFailed > 0) return;
        const older = listCheckpoints(this.options.dataDir)[1];
        log.dropThrough(this.dropLimit(older?.logIndex ?? 0));
      },
    };
  }

  /** Restores what DATA_DIR holds (or starts empty) and opens the log for appends; throws RestoreRefusedError rather than restore less than was acknowledged. */
  static open(options: DurableBoardOptions): DurableBoard {
    mkdirSync(options.dataDir, { recursive: true });
    const lock = options.lock ?? DataDirLock.acquire(options.dataDir);
    try {
      return DurableBoard.restoreLocked(options, lock);
    } catch (error) {
      if (options.lock === undefined) lock.release(); // a caller's lock is the caller's to release
      throw error;
    }
  }

  private static restoreLocked(options: DurableBoardOptions, lock: DataDirLock): DurableBoard {
    const started = performance.now();
    const env = options.env ?? process.env;
    const fsync = options.fsync ?? fsyncFromEnv(env);
    const storage = options.storage ?? nodeStorage;
    const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
    const refuse = (problem: string, cause?: unknown): never => {
      throw new RestoreRefusedError(options.dataDir, problem, repairDataDir(options.dataDir, { dryRun: true }).lines, { cause });
    };
    const skipped: CheckpointDamagedError[] = [];
    let engine: OddsEngine | null = null;
    let checkpoint: CheckpointFile | null = null;
    let meta: CheckpointMeta | null = null;
    let opened: OpenedLog | null = null;
    const files = listCheckpoints(options.dataDir);
    for (const file of files) {
      const step = options.progress?.(`loading checkpoint ${file.path.slice(file.path.lastIndexOf('/') + 1)}`, null, 'rows');
      try {
        const restored = restoreCheckpoint(file, options.clock, options.engineOptions, warn);
        engine = restored.engine;
        meta = restored.meta;
        step?.update(engine.liveRows);
        step?.finish();
      } catch (error) {
        step?.finish('damaged: passed over');
        if (!(error instanceof CheckpointDamagedError)) throw error;
        skipped.push(error);
        continue;
      }
      // past damaged newer checkpoints, the log must hold every record up to the newest one's
      const needThrough = skipped.length > 0 ? files[0].logIndex : file.logIndex;
      try {
        opened = FileBatchLog.open(walDir(options.dataDir), { fsync, segmentBytes: options.segmentBytes, keepForReplay: true, needFrom: file.logIndex + 1, storage });
      } catch (error) {
        if (!(error instanceof LogDamagedError)) throw error;
        const passed = skipped.length > 0 ? `the newer checkpoint(s) are damaged (${skipped.map((e) => e.message).join('; ')}) and ` : '';
        refuse(`${passed}the log after ${file.path} is damaged at ${error.message}`, error);
      }
      if (opened!.log.lastIndex < needThrough) {
        void opened!.log.close();
        refuse(`the newest checkpoint is damaged (${skipped.map((e) => e.message).join('; ')}) and the log after the older ${file.path} ends at record ${opened!.log.lastIndex}, before the ${needThrough} the damaged one covers`);
      }
      checkpoint = file;
      break;
    }
    if (checkpoint === null && files.length > 0) {
      refuse(`every checkpoint is damaged (${skipped.map((e) => e.message).join('; ')}); the board a checkpoint held is not in the log`);
    }
    if (opened === null) {
      try {
        opened = FileBatchLog.open(walDir(options.dataDir), { fsync, segmentBytes: options.segmentBytes, keepForReplay: true, storage });
      } catch (error) {
        if (!(error instanceof LogDamagedError)) throw error;
        refuse(`the log is damaged at ${error.message}`, error);
      }
    }
    const log = opened!.log;
    const checkpointMs = performance.now() - started;
    engine ??= new OddsEngine(options.clock, options.engineOptions);
    const from = (checkpoint?.logIndex ?? 0) + 1;
    let records = 0;
    let changes = 0;
    let applied = from - 1;
    const target = engine;
    // ticks name the same rows over and over: their slots are remembered while only
    // ticks replay (as the write path does; anything else clears them)
    const tickSlots = new TickSlots();
    const slots: number[] = [];
    if (checkpoint !== null || log.lastIndex > 0) {
      try {
        options.restored?.(engine);
      } catch (error) {
        void log.close();
        throw error;
      }
    }
    const replaying = log.lastIndex >= from ? options.progress?.('replaying the log', log.lastIndex - from + 1, 'records') : undefined;
    try {
      log.replay(from, ({ index, payload }) => {
        const record = decodeRecord(payload);
        const batch = record.changes;
        slots.length = 0;
        for (let i = 0; i < batch.length; i++) {
          const change = batch[i];
          if (change.op !== 'priceById') {
            slots.length = 0;
            break;
          }
          let slot = tickSlots.get(change.id);
          if (slot < 0) {
            slot = target.slotOf(change.id);
            if (slot >= 0) tickSlots.note(change.id, slot);
          }
          slots.push(slot);
        }
        if (slots.length === batch.length) target.apply(batch as Change[], record.time, slots);
        else {
          tickSlots.clear();
          target.apply(engineChanges(batch), record.time);
        }
        applyCold(options.cold, record, index, warn);
        applied = index;
        records++;
        changes += record.changes.length;
        replaying?.update(records);
      });
    } catch (error) {
      void log.close();
      if (error instanceof LogDamagedError) refuse(`the log is damaged at ${error.message}`, error);
      throw error;
    }
    replaying?.finish(`${changes.toLocaleString('en-US')} changes`);
    if (applied !== log.lastIndex) {
      void log.close();
      refuse(`the log ends at record ${log.lastIndex} but replay stopped at ${applied}`);
    }
    // damaged checkpoints passed over are set aside, so that keeping the two newest
    // checkpoints keeps two valid ones
    for (const damage of skipped) {
      try {
        storage.renameSync(damage.file, `${damage.file}.damaged`);
        warn(`restore: ${damage.message}; restored from the older ${checkpoint?.path} and the log instead, and set the damaged file aside as ${damage.file}.damaged`);
      } catch (error) {
        warn(`restore: could not set aside the damaged checkpoint ${damage.file}: ${(error as Error).message}`);
      }
    }
    if (opened!.coveredDamage.length > 0) warn(`restore: damage in log records checkpoint ${checkpoint?.path} covers was stepped over in ${opened!.coveredDamage.join(', ')} (not needed; \`npm run repair\` deletes such segments)`);
    const fresh = checkpoint === null && log.lastIndex === 0;
    const report: RestoreReport = {
      checkpoint,
      skippedCheckpoints: skipped.map((e) => e.message),
      tornTail: opened!.tornTail,
      coveredDamage: opened!.coveredDamage,
      replayedRecords: records,
      replayedChanges: changes,
      checkpointMs: checkpoint === null ? 0 : checkpointMs,
      ms: performance.now() - started,
    };
    return new DurableBoard(options, engine, log, applied, report, fresh, lock, { ...meta, boardId: typeof meta?.boardId === 'string' ? meta.boardId : randomUUID() });
  }

  /**
   * Writes a checkpoint of the board as it is now (between batches) and drops the log
   * before it. Concurrent calls share one checkpoint. Null when there is nothing new.
   */
  checkpointNow(): Promise<CheckpointReport | null> {
    if (this.checkpointing !== null) return this.checkpointing;
    this.checkpointing = Promise.resolve().then(async () => {
      try {
        if (this.ingest.appliedIndex === this.lastCheckpointIndex) return null;
        const started = performance.now();
        // the board is copied between two applied batches: applies wait (batches are
        // still validated, logged and fsync'd meanwhile), the copy runs in steps between
        // which the event loop serves reads, then applies resume
        const release = this.ingest.holdApplies();
        let index: number;
        let copy: EngineStateCopy;
        let longestStepMs = 0;
        let steps = 1;
        try {
          index = this.ingest.appliedIndex;
          let step = performance.now();
          copy = new EngineStateCopy(this.engine);
          while (!copy.copyStep(this.options.checkpointCopyStepBytes ?? COPY_STEP_BYTES)) {
            longestStepMs = Math.max(longestStepMs, performance.now() - step);
            await new Promise((resolve) => setImmediate(resolve));
            step = performance.now();
            steps++;
          }
          longestStepMs = Math.max(longestStepMs, performance.now() - step);
        } finally {
          release();
        }
        const appliesHeldMs = performance.now() - started;
        // the copy owns its arrays: a worker thread packs it and takes its CRC while
        // batches apply here; then the write and its fsync run on the thread pool
        // a small board packs here in less time than a worker thread takes to start
        // (format 2: the manifest packed, the copy's arrays written as they are)
        const packed = this.engine.store.size < PACK_IN_PROCESS_ROWS ? packStateHere(copy.state) : await packInBackground(copy);
        const encodeMs = performance.now() - started;
        // checked, fsync'd, read back and renamed before anything older is deleted; the
        // two newest are kept (a damaged newest one falls back to the older plus the log)
        const written = await writeCheckpointInBackground(this.options.dataDir, index, packed.parts, { fsync: this.fsync, crc: packed.crc, meta: this.checkpointMeta, keep: 2, storage: this.storage });
        this.lastCheckpointIndex = index;
        // the log back to the older kept checkpoint stays; records a failed cold write
        // still needs stay in the log until a restart replays them
        const older = listCheckpoints(this.options.dataDir).find((file) => file.logIndex < index);
        if (this.ingest.coldWritesFailed === 0) await this.log.markCheckpoint(index, this.dropLimit(older?.logIndex ?? 0));
        const report = { path: written.path, logIndex: index, bytes: written.bytes, ms: performance.now() - started, encodeMs, appliesHeldMs, longestStepMs, copySteps: steps };
        try {
          this.onCheckpoint?.(report);
        } catch (error) {
          this.warn(`checkpoint observer failed: ${String(error)}`);
        }
        return report;
      } catch (error) {
        // the previous checkpoints and the log are as they were: a restart restores from them
        this.checkpointFailures++;
        this.retryAfter = performance.now() + CHECKPOINT_RETRY_MS;
        this.warn(`checkpoint failed (the previous checkpoint and the log are kept; tried again later): ${(error as Error).message}`);
        try {
          this.onCheckpointFailed?.(error as Error);
        } catch {
          // an observer's failure is not the checkpoint's
        }
        throw error;
      } finally {
        this.checkpointing = null;
      }
    });
    return this.checkpointing;
  }

  /** Stops the timer, closes the log (after its queued appends) and releases the DATA_DIR lock if it took it (options.lock absent). No checkpoint: call checkpointNow first for one. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.checkpointing !== null) await this.checkpointing.catch(() => {});
    try {
      await this.log.close();
    } finally {
      if (this.options.lock === undefined) this.lock.release();
    }
  }
}
