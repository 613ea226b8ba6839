// The write path's log on a JetStream stream (layout: natsStream.ts). append() resolves
// only once JetStream acknowledged every message of the record, in index order.
//
// Pipelining: a record's messages are published at once, without waiting for the acks
// of the records before it (one connection keeps them in order). Every message carries
// Nats-Expected-Last-Sequence, the stream sequence the message before it will get, so
// the stream stores a prefix of what this writer sent and never a record after a gap:
// if one message is refused, everything sent after it is refused too. The same check
// fences a second writer on the stream: its first publish finds another last sequence.
//
// Dedup: a commit's Nats-Msg-Id is <board>-<index>. open() reads the newest commit, so
// a restarted writer continues at the next index and never publishes an index twice;
// a publish retried inside the duplicate window (the same id) is stored once.
//
// Failure: when an ack fails (timeout, refused, connection lost) the outcome of that
// record and of the ones behind it is unknown. The log waits for every outstanding ack
// to settle, reads the newest commit back from the stream, resolves the appends up to
// it (they are durable: replicas will apply them, so the writer must too) and rejects
// the rest with LogUnavailableError. The log then refuses appends until it is reopened
// (a restart: the stream's content is the truth, replayed like any restore).
//
// Replay is asynchronous (the records come over the network), so this class offers
// replayRecords() rather than the file log's synchronous replay; the write path only
// appends (Ingest takes an append-only log).
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient, type PubAck } from '@nats-io/jetstream';
import { LogUnavailableError, type LogRecord } from '../log/batchLog.ts';
import { crc32 } from '../log/crc32.ts';
import {
  HEADER_BYTES, HEADER_CRC, HEADER_INDEX, HEADER_PART, HEADER_PARTS, lastCommit, lastStreamSeq, openBoardStream, orderedCommits, recordPayload, CONSUME_OPTIONS,
  type BoardStream, type StreamOptions,
} from './natsStream.ts';

export interface NatsBatchLogOptions extends StreamOptions {
  /** How long to wait for one publish ack (default 10 s). */
  ackTimeoutMs?: number;
  /** Largest message this log publishes, headers included (default: the server's max_payload). */
  maxMessageBytes?: number;
}

/** Room left in each message for the headers (the ids and Nats-* headers take well under 1 KiB). */
const HEADER_ROOM = 1024;

interface Outstanding {
  index: number;
  /** Stream sequence its commit gets when stored. */
  commitSeq: number;
  acks: Promise<PubAck[]>;
  resolve: (index: number) => void;
  reject: (error: Error) => void;
}

export class NatsBatchLog {
  private readonly js: JetStreamClient;
  private assigned: number;
  private durable: number;
  private durableCommitSeq: number;
  /** The stream sequence the last published message gets (what the next one expects). */
  private sentSeq: number;
  private appendedBytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private outstanding = new Set<Promise<unknown>>();
  private failure: Error | null = null;
  private failedAt = 0;
  /** Told once, when a publish fails and the log stops taking appends until a restart; null: nobody. */
  onStopped: ((stopped: { since: number; error: string; durableIndex: number }) => void) | null = null;
  /** After a failure: the newest index the stream holds (appends up to it resolve). */
  private reconciled = -1;
  private closed = false;
  private readonly chunkBytes: number;
  private readonly ackTimeoutMs: number;

  private constructor(
    readonly nc: NatsConnection,
    readonly board: BoardStream,
    last: { index: number; seq: number },
    streamSeq: number,
    options: NatsBatchLogOptions,
  ) {
    this.js = jetstream(nc);
    this.assigned = last.index;
    this.durable = last.index;
    this.durableCommitSeq = last.seq;
    this.sentSeq = streamSeq;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 10_000;
    const maxPayload = options.maxMessageBytes ?? nc.info?.max_payload ?? 1024 * 1024;
    this.chunkBytes = maxPayload - HEADER_ROOM;
    if (this.chunkBytes < 1024) throw new Error(`max message size ${maxPayload} leaves no room for records`);
  }

  /** Creates or updates the stream and reads where the log ends. */
  static async open(nc: NatsConnection, options: NatsBatchLogOptions = {}): Promise<NatsBatchLog> {
    const board = await openBoardStream(nc, options);
    const last = await lastCommit(board);
    const streamSeq = await lastStreamSeq(board);
    return new NatsBatchLog(nc, board, last, streamSeq, options);
  }

  /**
   * The stream retains no commit (retention expired them all) and a checkpoint covers
   * records up to `index`: the log continues at index + 1, so indexes never repeat.
   */
  continueAfterCheckpoint(index: number): void {
    if (this.durable !== 0 || this.assigned !== 0) throw new Error('the stream holds records: the log continues after them');
    this.assigned = index;
    this.durable = index;
  }

  /** Index of the last record JetStream acknowledged. */
  get lastIndex(): number {
    return this.durable;
  }

  /** Stream sequence of the last acknowledged commit (where a replica at lastIndex resumes after). */
  get lastCommitSeq(): number {
    return this.durableCommitSeq;
  }

  get bytesSinceCheckpoint(): number {
    return this.appendedBytes;
  }

  /** True after a failed publish: appends are refused until the log is reopened. */
  get broken(): boolean {
    return this.failure !== null;
  }

  /** Why and since when the log refuses appends until a restart; null while it takes them. */
  get stopped(): { since: number; error: string; durableIndex: number } | null {
    return this.failure === null ? null : { since: this.failedAt, error: this.failure.message, durableIndex: this.durable };
  }

  append(payload: Uint8Array): Promise<number> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the log is closed'));
    if (this.failure !== null) return Promise.reject(new LogUnavailableError(`a publish failed earlier; the log refuses appends until restart: ${this.failure.message}`));
    const index = ++this.assigned;
    const { acks, commitSeq } = this.publishRecord(index, payload);
    const settled = acks.then(
      () => undefined,
      () => undefined,
    );
    this.outstanding.add(settled);
    void settled.then(() => this.outstanding.delete(settled));
    return new Promise<number>((resolve, reject) => {
      const entry: Outstanding = { index, commitSeq, acks, resolve, reject };
      this.chain = this.chain.then(() => this.settle(entry, payload.length));
    });
  }

  /** Records up to `index` are in a checkpoint. The stream keeps them (replicas may still need them): retention, not the writer, drops old records. */
  async markCheckpoint(_index: number): Promise<void> {
    this.appendedBytes = 0;
  }

  /** Visits every record from `fromIndex` to the newest, in order (from the commit at or after `fromSeq` when known). */
  async replayRecords(fromIndex: number, visit: (record: LogRecord & { seq: number }) => void, fromSeq = 1): Promise<number> {
    return replayStream(this.board, fromIndex, this.durable, visit, fromSeq);
  }

  /** Waits for outstanding appends; the connection stays the caller's. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
  }

  private publishRecord(index: number, payload: Uint8Array): { acks: Promise<PubAck[]>; commitSeq: number } {
    const total = payload.length;
    const parts = total > this.chunkBytes ? Math.ceil(total / this.chunkBytes) : 0;
    const sends: Promise<PubAck>[] = [];
    const expectSeq = (seq: number) => ({ lastSequence: seq });
    for (let i = 0; i < parts; i++) {
      const h = headers();
      h.set(HEADER_INDEX, String(index));
      h.set(HEADER_PART, String(i));
      const piece = payload.subarray(i * this.chunkBytes, Math.min(total, (i + 1) * this.chunkBytes));
      sends.push(this.js.publish(this.board.partsSubject, piece, { headers: h, expect: expectSeq(this.sentSeq), timeout: this.ackTimeoutMs }));
      this.sentSeq++;
    }
    const h = headers();
    h.set(HEADER_INDEX, String(index));
    h.set(HEADER_PARTS, String(parts));
    h.set(HEADER_BYTES, String(total));
    h.set(HEADER_CRC, String(crc32(payload) >>> 0));
    sends.push(
      this.js.publish(this.board.batchesSubject, parts === 0 ? payload : new Uint8Array(0), {
        headers: h,
        msgID: `${this.board.board}-${index}`,
        expect: expectSeq(this.sentSeq),
        timeout: this.ackTimeoutMs,
      }),
    );
    this.sentSeq++;
    const acks = Promise.all(sends);
    acks.catch(() => {}); // observed in settle(); this keeps an early rejection from being reported as unhandled
    return { acks, commitSeq: this.sentSeq };
  }

  /** Resolves or rejects one append, in index order (called through the chain). */
  private async settle(entry: Outstanding, bytes: number): Promise<void> {
    if (this.failure === null) {
      try {
        const acks = await entry.acks;
        const commit = acks[acks.length - 1];
        if (acks.some((ack) => ack.duplicate) || commit.seq !== entry.commitSeq) {
          throw new Error(`record ${entry.index} was stored at sequence ${commit.seq} (expected ${entry.commitSeq}${acks.some((a) => a.duplicate) ? ', as a duplicate' : ''})`);
        }
        this.durable = entry.index;
        this.durableCommitSeq = commit.seq;
        this.appendedBytes += bytes;
        entry.resolve(entry.index);
        return;
      } catch (error) {
        this.failure = error as Error;
        this.failedAt = Date.now();
        try {
          this.onStopped?.(this.stopped!);
        } catch {
          // an observer's failure is not the log's
        }
        await this.reconcile();
      }
    }
    if (entry.index <= this.reconciled) {
      this.durable = entry.index;
      this.appendedBytes += bytes;
      entry.resolve(entry.index);
    } else {
      entry.reject(new LogUnavailableError(`publishing record ${entry.index} to JetStream failed: ${this.failure!.message}`, { cause: this.failure }));
    }
  }

  /** After a failure: let every sent message settle, then read what the stream holds. */
  private async reconcile(): Promise<void> {
    await Promise.all([...this.outstanding]);
    try {
      const last = await lastCommit(this.board);
      this.reconciled = last.index;
      if (last.index > this.durable) this.durableCommitSeq = last.seq;
    } catch {
      // the stream cannot be read: nothing more is known to be durable (a restart reads it)
      this.reconciled = this.durable;
    }
  }
}

/**
 * Reads records fromIndex..toIndex from the stream in order, over an ordered consumer
 * of the commits from `fromSeq` (a commit sequence at or before fromIndex's, or 1).
 */
export async function replayStream(board: BoardStream, fromIndex: number, toIndex: number, visit: (record: LogRecord & { seq: number }) => void, fromSeq = 1): Promise<number> {
  let expected = fromIndex;
  if (expected > toIndex) return toIndex;
  const messages = await (await orderedCommits(board, fromSeq)).consume(CONSUME_OPTIONS);
  try {
    for await (const commit of messages) {
      const { index, payload } = await recordPayload(board, commit);
      if (index < expected) continue;
      if (index > expected) throw new Error(`the stream holds record ${index} where ${expected} was expected (records before it are no longer retained)`);
      visit({ index, payload, seq: commit.seq });
      expected++;
      if (expected > toIndex) break;
    }
  } finally {
    messages.stop();
  }
  return expected - 1;
}
