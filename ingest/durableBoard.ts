// A board kept in DATA_DIR: opening restores it (the newest valid checkpoint plus the
// log after it), then an Ingest writes to it and a checkpoint policy folds the log
// into a new checkpoint every CHECKPOINT_INTERVAL_MS (default 60 s) or every
// CHECKPOINT_LOG_BYTES of log (default 256 MiB), and on request (checkpointNow).
//
// Layout of DATA_DIR:
//   checkpoint-<last record index, 16 digits>.ckpt   (persistence/log/checkpointFiles.ts)
//   wal/wal-<first record index, 16 digits>.log      (persistence/log/segments.ts)
//
// A checkpoint is taken between two applied batches (applies wait while the board is
// copied in steps, so no batch applies halfway through it; a worker thread packs the
// copy, the thread pool writes it) and names the last record it includes; the log
// segments wholly before it are then deleted. Restore order: read the newest checkpoint
// that passes its CRC (an older one only if the log still reaches back to it), open
// the log (a torn tail is cut and reported; damage before the end throws
// LogDamagedError with file and offset), then replay every record after the checkpoint
// at its logged time.

import type { Clock } from '../engine/clock.ts';
import { CHECKPOINT_PACK_OPTIONS, EngineStateCopy, decodeEngineState } from '../engine/checkpoint.ts';
import { OddsEngine, type Change, type EngineOptions } from '../engine/engine.ts';
import { CheckpointDamagedError, listCheckpoints, readCheckpoint, writeCheckpointInBackground, type CheckpointFile } from '../persistence/log/checkpointFiles.ts';
import { FileBatchLog, fsyncFromEnv, walDir, type TornTail } from '../persistence/log/fileBatchLog.ts';
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
}

/** Starts a step that reports how far it got (the service prints it as a progress bar, or one line per step). */
export type StepProgress = (label: string, total: number | null, unit: string) => { update(done: number): void; finish(note?: string): void };

export interface RestoreReport {
  /** The checkpoint restored from, or null (no checkpoint: the log replays onto an empty board). */
  checkpoint: CheckpointFile | null;
  /** Newer checkpoints that failed their check and were passed over. */
  skippedCheckpoints: string[];
  tornTail: TornTail | null;
  replayedRecords: number;
  replayedChanges: number;
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
  /** Told of every checkpoint written (metrics); null: nobody. */
  onCheckpoint: ((report: CheckpointReport) => void) | null = null;

  private constructor(private readonly options: DurableBoardOptions, engine: OddsEngine, log: FileBatchLog, appliedIndex: number, restore: RestoreReport, fresh: boolean) {
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
        if (this.log.bytesSinceCheckpoint >= this.logBytes) void this.checkpointNow().catch((error: unknown) => this.warn(`checkpoint failed: ${String(error)}`));
      },
    });
    const interval = options.checkpointIntervalMs ?? intFrom(env, 'CHECKPOINT_INTERVAL_MS', DEFAULT_INTERVAL_MS);
    if (interval > 0) {
      this.timer = setInterval(() => {
        if (this.ingest.appliedIndex > this.lastCheckpointIndex) void this.checkpointNow().catch((error: unknown) => this.warn(`checkpoint failed: ${String(error)}`));
      }, interval);
      this.timer.unref();
    }
    this.lastCheckpointIndex = restore.checkpoint?.logIndex ?? -1;
  }

  private lastCheckpointIndex: number;

  /** Restores what DATA_DIR holds (or starts empty) and opens the log for appends. */
  static open(options: DurableBoardOptions): DurableBoard {
    const started = performance.now();
    const env = options.env ?? process.env;
    const fsync = options.fsync ?? fsyncFromEnv(env);
    const skipped: string[] = [];
    let engine: OddsEngine | null = null;
    let checkpoint: CheckpointFile | null = null;
    for (const file of listCheckpoints(options.dataDir)) {
      const step = options.progress?.(`loading checkpoint ${file.path.slice(file.path.lastIndexOf('/') + 1)}`, null, 'rows');
      try {
        engine = decodeEngineState(readCheckpoint(file), options.clock, options.engineOptions);
        checkpoint = file;
        step?.update(engine.liveRows);
        step?.finish();
        break;
      } catch (error) {
        step?.finish('damaged: passed over');
        if (!(error instanceof CheckpointDamagedError)) throw error;
        skipped.push(error.message);
      }
    }
    const opened = FileBatchLog.open(walDir(options.dataDir), { fsync, segmentBytes: options.segmentBytes, keepForReplay: true });
    const log = opened.log;
    engine ??= new OddsEngine(options.clock, options.engineOptions);
    const from = (checkpoint?.logIndex ?? 0) + 1;
    let records = 0;
    let changes = 0;
    let applied = from - 1;
    const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
    const target = engine;
    // ticks name the same rows over and over: their slots are remembered while only
    // ticks replay (as the write path does; anything else clears them)
    const tickSlots = new TickSlots();
    const slots: number[] = [];
    const replaying = log.lastIndex >= from ? options.progress?.('replaying the log', log.lastIndex - from + 1, 'records') : undefined;
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
    replaying?.finish(`${changes.toLocaleString('en-US')} changes`);
    if (applied !== log.lastIndex) {
      throw new Error(`the log ends at record ${log.lastIndex} but replay stopped at ${applied}`);
    }
    const fresh = checkpoint === null && log.lastIndex === 0;
    const report: RestoreReport = {
      checkpoint,
      skippedCheckpoints: skipped,
      tornTail: opened.tornTail,
      replayedRecords: records,
      replayedChanges: changes,
      ms: performance.now() - started,
    };
    return new DurableBoard(options, engine, log, applied, report, fresh);
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
        const packed = await packInWorker(copy.state, copy.buffers(), CHECKPOINT_PACK_OPTIONS);
        const encodeMs = performance.now() - started;
        const written = await writeCheckpointInBackground(this.options.dataDir, index, packed.body, { fsync: this.fsync, crc: packed.crc });
        this.lastCheckpointIndex = index;
        // records a failed cold write still needs stay in the log until a restart replays them
        if (this.ingest.coldWritesFailed === 0) await this.log.markCheckpoint(index);
        const report = { path: written.path, logIndex: index, bytes: written.bytes, ms: performance.now() - started, encodeMs, appliesHeldMs, longestStepMs, copySteps: steps };
        try {
          this.onCheckpoint?.(report);
        } catch (error) {
          this.warn(`checkpoint observer failed: ${String(error)}`);
        }
        return report;
      } finally {
        this.checkpointing = null;
      }
    });
    return this.checkpointing;
  }

  /** Stops the timer and closes the log (after its queued appends). No checkpoint: call checkpointNow first for one. */
  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.checkpointing !== null) await this.checkpointing;
    await this.log.close();
  }
}
