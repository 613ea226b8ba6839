// The writer of a replicated board: the write path (Ingest) over the JetStream log.
// Opening restores the board as a replica does (checkpoint + the stream after it), so a
// restarted writer holds every record the stream acknowledged, each applied once, and
// the log continues at the next index. Checkpoints go to the local DATA_DIR and to the
// object store, where new replicas and replicas that fell behind find them.
import { encodeEngineState } from '../engine/checkpoint.ts';
import type { Clock } from '../engine/clock.ts';
import type { EngineOptions, OddsEngine } from '../engine/engine.ts';
import { writeCheckpointInBackground } from '../persistence/log/checkpointFiles.ts';
import { NatsBatchLog } from '../persistence/nats/natsBatchLog.ts';
import { writeStreamPosition, type NatsCheckpointStore } from '../persistence/nats/natsCheckpoints.ts';
import { Ingest, type ColdStore } from './ingest.ts';
import { restoreReplicated, type ReplicatedRestore } from './replicaRestore.ts';

export interface ReplicaWriterOptions {
  log: NatsBatchLog;
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

export interface WriterCheckpoint {
  logIndex: number;
  streamSeq: number;
  bytes: number;
}

export class ReplicaWriter {
  readonly engine: OddsEngine;
  readonly ingest: Ingest;
  readonly restore: ReplicatedRestore;
  /** True when there was no checkpoint and no record anywhere (the caller loads a board and checkpoints it). */
  readonly fresh: boolean;
  private checkpointing: Promise<WriterCheckpoint | null> | null = null;
  private lastCheckpointIndex: number;

  private constructor(
    private readonly options: ReplicaWriterOptions,
    restore: ReplicatedRestore,
  ) {
    this.engine = restore.engine;
    this.restore = restore;
    this.fresh = restore.source === 'none' && restore.appliedIndex === 0;
    this.lastCheckpointIndex = restore.source === 'none' ? -1 : restore.checkpointIndex;
    this.ingest = new Ingest({ engine: this.engine, log: options.log, cold: options.cold, clock: options.clock, appliedIndex: restore.appliedIndex, warn: options.warn });
  }

  static async open(options: ReplicaWriterOptions): Promise<ReplicaWriter> {
    const restore = await restoreReplicated({ ...options, board: options.log.board });
    if (options.log.lastIndex === 0 && restore.appliedIndex > 0) options.log.continueAfterCheckpoint(restore.appliedIndex); // every record expired
    if (restore.appliedIndex !== options.log.lastIndex) {
      throw new Error(`the restore applied records up to ${restore.appliedIndex} but the log ends at ${options.log.lastIndex} (another writer on the stream?)`);
    }
    return new ReplicaWriter(options, restore);
  }

  get log(): NatsBatchLog {
    return this.options.log;
  }

  /** A checkpoint of the board as it is now, to the local disk and the object store; null when nothing is new. */
  checkpointNow(): Promise<WriterCheckpoint | null> {
    if (this.checkpointing !== null) return this.checkpointing;
    this.checkpointing = (async () => {
      // yield first: with nothing new the body would finish (and clear the flag in its
      // finally) before the assignment, leaving the flag set and every later call a no-op
      await Promise.resolve();
      try {
        const index = this.ingest.appliedIndex;
        if (index === this.lastCheckpointIndex) return null;
        const seq = index === this.options.log.lastIndex ? this.options.log.lastCommitSeq : 0;
        const body = encodeEngineState(this.engine); // synchronous: no batch applies during it
        // a copy of the state: written and fsync'd off the event loop while batches go on applying
        const written = await writeCheckpointInBackground(this.options.dataDir, index, body, { fsync: this.options.fsync });
        writeStreamPosition(this.options.dataDir, index, seq);
        await this.options.checkpoints.put(index, seq, body);
        this.lastCheckpointIndex = index;
        await this.options.log.markCheckpoint(index);
        return { logIndex: index, streamSeq: seq, bytes: written.bytes };
      } finally {
        this.checkpointing = null;
      }
    })();
    return this.checkpointing;
  }

  async close(): Promise<void> {
    if (this.checkpointing !== null) await this.checkpointing;
    await this.options.log.close();
  }
}
