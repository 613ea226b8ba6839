// Restoring a board whose log is a JetStream stream (what a writer and a replica both do
// at start): pick a checkpoint, then apply every record the stream holds after it.
//
// Which checkpoint: the newest valid one on the local disk if the stream still holds
// the record after it (a restart resumes from its own checkpoint); otherwise the newest
// in the object store (an empty disk, or a machine that fell behind the stream's
// retention), written to the local disk as well; otherwise, when the stream still
// starts at record 1, an empty board. A checkpoint newer than the stream's end means
// the stream was replaced: start-up stops rather than serve a board nobody logged. A
// stream whose records all expired (it stored messages but retains no commit) holds
// nothing after the newest checkpoint: that one is the state, and the log goes on from it.
import { decodeEngineState } from '../engine/checkpoint.ts';
import type { Clock } from '../engine/clock.ts';
import { OddsEngine, type EngineOptions } from '../engine/engine.ts';
import { CheckpointDamagedError, listCheckpoints, readCheckpoint, writeCheckpoint } from '../persistence/log/checkpointFiles.ts';
import { replayStream } from '../persistence/nats/natsBatchLog.ts';
import { readStreamPosition, writeStreamPosition, type NatsCheckpointStore } from '../persistence/nats/natsCheckpoints.ts';
import { firstCommit, lastCommit, lastStreamSeq, type BoardStream } from '../persistence/nats/natsStream.ts';
import { applyCold, type ColdStore } from './ingest.ts';
import { decodeRecord, engineChanges } from './record.ts';

export interface ReplicatedRestoreOptions {
  board: BoardStream;
  checkpoints: NatsCheckpointStore;
  dataDir: string;
  clock: Clock;
  cold: ColdStore;
  engineOptions?: EngineOptions;
  fsync?: boolean;
  warn?: (line: string) => void;
  /**
   * Called with the engine once it holds a restored board (a checkpoint, or a log to
   * replay onto an empty one), before the log after it replays: what follows the engine
   * and keeps state the board does not determine (the steam detector) subscribes here,
   * so it sees every replayed batch as the writer did. Not called for a fresh start
   * (nothing restored: the caller builds such listeners once the board is loaded).
   */
  restored?: (engine: OddsEngine) => void;
}

export type CheckpointSource = 'local' | 'object store' | 'none';

export interface ReplicatedRestore {
  engine: OddsEngine;
  /** The last record applied. */
  appliedIndex: number;
  /** Stream sequence of that record's commit (0 when none). */
  appliedSeq: number;
  source: CheckpointSource;
  checkpointIndex: number;
  replayedRecords: number;
  /** Time to find, read and decode the checkpoint (ms; from the object store includes the download). */
  checkpointMs: number;
  /** The whole restore: checkpoint, then the replay of the stream after it (ms). */
  ms: number;
}

export class NoUsableCheckpointError extends Error {
  readonly code = 'no_usable_checkpoint';
  constructor(detail: string) {
    super(detail);
    this.name = 'NoUsableCheckpointError';
  }
}

export async function restoreReplicated(options: ReplicatedRestoreOptions): Promise<ReplicatedRestore> {
  const started = performance.now();
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const first = await firstCommit(options.board);
  const last = await lastCommit(options.board);
  // no commit retained although messages were stored: retention expired them all (a quiet
  // board); the newest checkpoint then is the whole state and the log continues after it
  const expired = first === null && (await lastStreamSeq(options.board)) > 0;
  const newestStored = expired ? await options.checkpoints.newest() : null;
  // a checkpoint at `index` is usable when the stream holds every record after it
  const reaches = (index: number) => (first !== null ? first.index <= index + 1 : !expired || newestStored === null || index >= newestStored.logIndex);
  const checkAhead = (index: number, where: string) => {
    if (index > last.index && !expired) throw new NoUsableCheckpointError(`the ${where} checkpoint covers record ${index} but the stream ends at ${last.index}: is NATS_STREAM the stream this board was written to?`);
  };

  let engine: OddsEngine | null = null;
  let source: CheckpointSource = 'none';
  let index = 0;
  let seq = 0;
  for (const file of listCheckpoints(options.dataDir)) {
    if (!reaches(file.logIndex)) break; // older ones reach back even less
    try {
      engine = decodeEngineState(readCheckpoint(file), options.clock, options.engineOptions);
    } catch (error) {
      if (!(error instanceof CheckpointDamagedError)) throw error;
      warn(`replica restore: ${error.message}; trying an older checkpoint`);
      continue;
    }
    checkAhead(file.logIndex, 'local');
    source = 'local';
    index = file.logIndex;
    // without a recorded position, a lower bound: a record's commit sequence is at least its index
    seq = readStreamPosition(options.dataDir, index) ?? index;
    break;
  }
  if (engine === null) {
    const stored = await options.checkpoints.newest();
    if (stored !== null && reaches(stored.logIndex)) {
      checkAhead(stored.logIndex, 'object store');
      const body = await options.checkpoints.read(stored);
      engine = decodeEngineState(body, options.clock, options.engineOptions);
      writeCheckpoint(options.dataDir, stored.logIndex, body, { fsync: options.fsync });
      writeStreamPosition(options.dataDir, stored.logIndex, stored.streamSeq);
      source = 'object store';
      index = stored.logIndex;
      seq = stored.streamSeq > 0 ? stored.streamSeq : stored.logIndex;
    } else if ((first !== null && first.index > 1) || expired) {
      throw new NoUsableCheckpointError(
        `the stream ${first === null ? 'retains no record' : `starts at record ${first.index}`} and no checkpoint (local or in the object store${stored === null ? ', which is empty' : `, newest ${stored.logIndex}`}) reaches it`,
      );
    }
  }
  engine ??= new OddsEngine(options.clock, options.engineOptions);
  const checkpointMs = performance.now() - started;
  const checkpointIndex = index;
  const target = engine;
  if (source !== 'none' || last.index > index) options.restored?.(engine);
  let replayed = 0;
  await replayStream(
    options.board,
    index + 1,
    last.index,
    ({ index: recordIndex, payload, seq: commitSeq }) => {
      const record = decodeRecord(payload);
      target.apply(engineChanges(record.changes), record.time);
      applyCold(options.cold, record, recordIndex, warn);
      index = recordIndex;
      seq = commitSeq;
      replayed++;
    },
    seq + 1,
  );
  if (index !== last.index && !(expired && last.index === 0)) throw new Error(`the stream ends at record ${last.index} but its replay stopped at ${index}`);
  return { engine, appliedIndex: index, appliedSeq: seq, source, checkpointIndex, replayedRecords: replayed, checkpointMs, ms: performance.now() - started };
}
