// A read replica: a board restored from a checkpoint (local, else the object store;
// replicaRestore.ts) that follows the writer's JetStream stream and applies each
// record at its logged time, so at the same board seq it holds the writer's state
// exactly and every route serves the same bytes.
//
// Following: an ordered consumer of the commit messages from the one after the last
// applied record. For each commit the record's payload is gathered first (its parts
// fetched and checked when it was chunked), and only then applied, synchronously: a
// reader of the engine sees the board before the record or after it, never between.
// A commit whose index is not the next one, or a record whose parts are gone (the
// stream dropped records this replica had not read: it fell behind retention), stops
// the replica with FellBehindRetentionError; `stale` says so and `onStale` is called.
// Such a replica cannot catch up from the stream any more: the service restarts its
// board in process (service/main.ts), which re-bootstraps from the object store.
//
// Lag for /readyz: records the stream holds beyond the applied one. The newest index
// known to be in the stream moves with the consumer's pending count after each record
// and with measureLag(), which reads the stream's newest commit (the start path calls
// it on a timer, so a replica that receives nothing still learns it is behind).
import type { Clock } from '../engine/clock.ts';
import type { EngineOptions, OddsEngine } from '../engine/engine.ts';
import { encodeEngineState } from '../engine/checkpoint.ts';
import { writeCheckpoint, writeCheckpointInBackground } from '../persistence/log/checkpointFiles.ts';
import { writeStreamPosition, type NatsCheckpointStore } from '../persistence/nats/natsCheckpoints.ts';
import { CONSUME_OPTIONS, headerInt, HEADER_INDEX, lastCommit, orderedCommits, recordPayload, RecordUnreadableError, type BoardStream } from '../persistence/nats/natsStream.ts';
import type { ConsumerMessages } from '@nats-io/jetstream';
import { applyCold, type ColdStore } from './ingest.ts';
import { decodeRecord, engineChanges } from './record.ts';
import { restoreReplicated, type ReplicatedRestore } from './replicaRestore.ts';

export interface ReplicaOptions {
  board: BoardStream;
  checkpoints: NatsCheckpointStore;
  /** The replica's own DATA_DIR (its checkpoints). */
  dataDir: string;
  clock: Clock;
  cold: ColdStore;
  engineOptions?: EngineOptions;
  fsync?: boolean;
  warn?: (line: string) => void;
  /** Called after each applied record. */
  afterApply?: (index: number) => void;
  /**
   * Called with the engine once it holds a restored board (a checkpoint, or a log to
   * replay onto an empty one), before the log after it replays: what follows the engine
   * and keeps state the board does not determine (the steam detector) subscribes here,
   * so it sees every replayed batch as the writer did. Not called for a fresh start
   * (nothing restored: the caller builds such listeners once the board is loaded).
   */
  restored?: (engine: OddsEngine) => void;
}

/** The stream no longer holds records this replica has not applied: only a checkpoint newer than them lets it go on. */
export class FellBehindRetentionError extends Error {
  readonly code = 'fell_behind_retention';
  constructor(detail: string) {
    super(`${detail}: the replica fell behind the stream's retention and must re-bootstrap from the object store`);
    this.name = 'FellBehindRetentionError';
  }
}

export class Replica {
  readonly engine: OddsEngine;
  readonly restore: ReplicatedRestore;
  private applied: number;
  private appliedSeq: number;
  /** The newest record index known to be in the stream. */
  private knownLast: number;
  private messages: ConsumerMessages | null = null;
  private following: Promise<void> | null = null;
  private failure: Error | null = null;
  private stopped = false;
  private checkpointing: Promise<{ logIndex: number; bytes: number }> | null = null;
  private readonly warn: (line: string) => void;
  /** Called after each applied record (options.afterApply; the bench sets it to time the lag). */
  afterApply: ((index: number) => void) | null;
  /** Called once when following stops on a failure (the error `stale` then holds). */
  onStale: ((error: Error) => void) | null = null;

  private constructor(
    private readonly options: ReplicaOptions,
    restore: ReplicatedRestore,
  ) {
    this.engine = restore.engine;
    this.restore = restore;
    this.applied = restore.appliedIndex;
    this.appliedSeq = restore.appliedSeq;
    this.knownLast = restore.appliedIndex;
    this.afterApply = options.afterApply ?? null;
    this.warn = options.warn ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** Restores the board (checkpoint + the stream up to its current end); call follow() to keep up. */
  static async open(options: ReplicaOptions): Promise<Replica> {
    let attached = false;
    const restored = options.restored;
    const restore = await restoreReplicated({ ...options, restored: restored === undefined ? undefined : (engine) => ((attached = true), restored(engine)) });
    // a replica never loads a board of its own: what follows the engine attaches before
    // the stream is followed even when nothing was restored (an empty board)
    if (!attached) restored?.(restore.engine);
    return new Replica(options, restore);
  }

  get appliedIndex(): number {
    return this.applied;
  }

  /** Records the stream is known to hold after the applied one. */
  get lagRecords(): number {
    return Math.max(0, this.knownLast - this.applied);
  }

  /** Why following stopped (fell behind retention, an unreadable record), or null while it runs. */
  get stale(): Error | null {
    return this.failure;
  }

  /** Records the stream holds after the applied one (reads the stream's newest commit). */
  async measureLag(): Promise<number> {
    const last = await lastCommit(this.options.board);
    if (last.index > this.knownLast) this.knownLast = last.index;
    return this.lagRecords;
  }

  /**
   * Whether the replica serves a current board, for /readyz: not while following stopped
   * (it must be restarted) nor while more than `maxLag` records behind the stream;
   * `info` gives the figures either way.
   */
  readiness(maxLag: number): { ready: boolean; reason: string; info: { role: 'replica'; applied: number; lag: number } } {
    const lag = this.lagRecords;
    const info = { role: 'replica' as const, applied: this.applied, lag };
    if (this.failure !== null) return { ready: false, reason: `stopped following the stream: ${this.failure.message}`, info };
    if (lag > maxLag) return { ready: false, reason: `catching up: ${lag} records behind the stream (more than REPLICA_MAX_LAG=${maxLag})`, info };
    return { ready: true, reason: '', info };
  }

  /** Starts applying the stream's records as they come. */
  async follow(): Promise<void> {
    if (this.following !== null) return;
    const consumer = await orderedCommits(this.options.board, this.appliedSeq + 1);
    const messages = await consumer.consume(CONSUME_OPTIONS);
    this.messages = messages;
    this.following = (async () => {
      try {
        for await (const commit of messages) {
          if (this.stopped) break;
          const index = headerInt(commit, HEADER_INDEX);
          if (index <= this.applied) continue; // before the checkpoint's record (a lower-bound start)
          if (index !== this.applied + 1) throw new FellBehindRetentionError(`the stream holds record ${index} after ${this.applied}: records in between are no longer retained`);
          const { payload } = await recordPayload(this.options.board, commit).catch((error: unknown) => {
            // the commit came but retention dropped its parts meanwhile
            if (error instanceof RecordUnreadableError && error.missing) throw new FellBehindRetentionError(error.message);
            throw error;
          });
          if (this.stopped) break;
          const record = decodeRecord(payload);
          this.engine.apply(engineChanges(record.changes), record.time);
          applyCold(this.options.cold, record, index, this.warn);
          this.applied = index;
          this.appliedSeq = commit.seq;
          const known = index + commit.info.pending;
          if (known > this.knownLast) this.knownLast = known;
          this.afterApply?.(index);
        }
      } catch (error) {
        if (!this.stopped) {
          this.failure = error as Error;
          this.warn(`replica stopped following the stream: ${this.failure.message}`);
          this.onStale?.(this.failure);
        }
      } finally {
        messages.stop();
      }
    })();
  }

  /** Waits until the applied record reaches `index` (or following stopped). */
  async caughtUpTo(index: number, timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.applied < index && this.failure === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    return this.applied >= index;
  }

  /** A local checkpoint of the board as it is now (between records), with its stream position. */
  checkpointNow(): { logIndex: number; bytes: number } {
    const body = encodeEngineState(this.engine);
    const written = writeCheckpoint(this.options.dataDir, this.applied, body, { fsync: this.options.fsync });
    writeStreamPosition(this.options.dataDir, this.applied, this.appliedSeq);
    return { logIndex: this.applied, bytes: written.bytes };
  }

  /**
   * The same checkpoint without holding the event loop for the write: the state is
   * encoded between records (synchronously), then written and fsync'd on the thread pool
   * while records go on applying. Concurrent calls share one.
   */
  checkpointInBackground(): Promise<{ logIndex: number; bytes: number }> {
    if (this.checkpointing !== null) return this.checkpointing;
    const index = this.applied;
    const seq = this.appliedSeq;
    const body = encodeEngineState(this.engine);
    this.checkpointing = (async () => {
      try {
        const written = await writeCheckpointInBackground(this.options.dataDir, index, body, { fsync: this.options.fsync });
        writeStreamPosition(this.options.dataDir, index, seq);
        return { logIndex: index, bytes: written.bytes };
      } finally {
        this.checkpointing = null;
      }
    })();
    return this.checkpointing;
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.checkpointing !== null) await this.checkpointing.catch(() => {});
    this.messages?.stop();
    await this.following;
  }
}
