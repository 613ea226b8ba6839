// The JetStream stream a board's log lives in, and how a record sits in it.
//
// One stream per board (NATS_STREAM, default ODDS), file storage, two subjects:
//   <prefix>.<board>.batches   one commit message per log record, in index order
//   <prefix>.<board>.parts     the pieces of a record too large for one message
// Retention is by age and by bytes (old messages are discarded first); a reader that
// needs a discarded record re-bootstraps from a checkpoint in the object store.
//
// A record whose message would exceed the server's max_payload (1 MiB by default) is
// cut into parts published just before its commit. Chunking rather than a size limit:
// the write path accepts batches up to 16 MiB and a checkpoint-sized backfill from a
// feed is legitimate, so refusing them on one transport but not the other would make
// LOG=nats change what the ingest API accepts; and raising max_payload server-wide
// makes every client of that server pay for it. The commit is the only message a
// reader acts on, so a record is applied whole or not at all: parts with no commit
// after them (a writer killed between them) are never read.
//
// Commit headers:
//   Odds-Index  the record index (1, 2, 3, ... without gaps)
//   Odds-Parts  how many part messages precede it (0: the payload is the commit's data)
//   Odds-Bytes  payload length;  Odds-Crc  CRC-32 of the payload (checked on reassembly)
// Part headers: Odds-Index and Odds-Part (0-based). The writer publishes every message
// with Nats-Expected-Last-Sequence set to the message before it, so nothing else is
// stored between them: a record's parts are exactly the Odds-Parts messages just
// before its commit.
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { nanos } from '@nats-io/transport-node';
import { DeliverPolicy, DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type Consumer, type JetStreamManager } from '@nats-io/jetstream';
import { crc32 } from '../log/crc32.ts';

export interface StreamOptions {
  /** Stream name (NATS_STREAM, default ODDS). */
  stream?: string;
  /** Subject prefix (default 'odds'). */
  subjectPrefix?: string;
  /** Board name in the subjects (default 'main'). */
  board?: string;
  /** Messages older than this are discarded (default 7 days). */
  maxAgeMs?: number;
  /** The stream keeps at most this many bytes, dropping the oldest (default 8 GiB). */
  maxBytes?: number;
  /** How long JetStream remembers a Nats-Msg-Id to drop a retried publish (default 2 minutes). */
  duplicateWindowMs?: number;
  /** Create the stream or set its limits (the writer, default); false only looks it up (a replica). */
  manage?: boolean;
}

export interface BoardStream {
  readonly nc: NatsConnection;
  readonly stream: string;
  readonly board: string;
  readonly batchesSubject: string;
  readonly partsSubject: string;
  readonly jsm: JetStreamManager;
}

export const HEADER_INDEX = 'Odds-Index';
export const HEADER_PARTS = 'Odds-Parts';
export const HEADER_PART = 'Odds-Part';
export const HEADER_BYTES = 'Odds-Bytes';
export const HEADER_CRC = 'Odds-Crc';

const DEFAULT_MAX_AGE_MS = 7 * 24 * 3600_000;
const DEFAULT_MAX_BYTES = 8 * 1024 ** 3;
const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;

const NAME_TOKEN = /^[A-Za-z0-9_-]+$/;

/** Creates the stream when it is missing (or brings its limits to `options`) and names its subjects. */
export async function openBoardStream(nc: NatsConnection, options: StreamOptions = {}): Promise<BoardStream> {
  const stream = options.stream ?? 'ODDS';
  const prefix = options.subjectPrefix ?? 'odds';
  const board = options.board ?? 'main';
  for (const [what, value] of [['stream', stream], ['subject prefix', prefix], ['board', board]]) {
    if (!NAME_TOKEN.test(value)) throw new Error(`the ${what} name must be letters, digits, '-' or '_', got ${JSON.stringify(value)}`);
  }
  const jsm = await jetstreamManager(nc);
  const config = {
    name: stream,
    subjects: [`${prefix}.${board}.batches`, `${prefix}.${board}.parts`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(options.maxAgeMs ?? DEFAULT_MAX_AGE_MS),
    max_bytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    duplicate_window: nanos(options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS),
  };
  let exists = true;
  try {
    await jsm.streams.info(stream);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    exists = false;
  }
  if (options.manage === false) {
    if (!exists) throw new Error(`the JetStream stream ${stream} does not exist yet: start the writer first`);
  } else if (exists) await jsm.streams.update(stream, config);
  else await jsm.streams.add(config);
  return { nc, stream, board, batchesSubject: `${prefix}.${board}.batches`, partsSubject: `${prefix}.${board}.parts`, jsm };
}

export function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { code?: number }; message?: string };
  return e?.api_error?.code === 404 || /not found/i.test(String(e?.message));
}

/** The position of the newest record: its index and its commit's stream sequence (0, 0 when there is none). */
export async function lastCommit(board: BoardStream): Promise<{ index: number; seq: number }> {
  const last = await board.jsm.streams.getMessage(board.stream, { last_by_subj: board.batchesSubject });
  if (last === null) return { index: 0, seq: 0 };
  return { index: headerInt(last, HEADER_INDEX), seq: last.seq };
}

/** The oldest record the stream still holds (index and commit sequence), or null when it holds none. */
export async function firstCommit(board: BoardStream): Promise<{ index: number; seq: number } | null> {
  const first = await board.jsm.streams.getMessage(board.stream, { seq: 0, next_by_subj: board.batchesSubject } as never).catch((error: unknown) => {
    if (isNotFound(error)) return null;
    throw error;
  });
  if (first === null) return null;
  return { index: headerInt(first, HEADER_INDEX), seq: first.seq };
}

/** The stream's last sequence (every subject). */
export async function lastStreamSeq(board: BoardStream): Promise<number> {
  const info = await board.jsm.streams.info(board.stream);
  return info.state.last_seq;
}

export function headerInt(message: { seq: number; header?: MsgHdrs; headers?: MsgHdrs }, name: string): number {
  const text = (message.header ?? message.headers)?.get(name) ?? '';
  if (!/^\d+$/.test(text)) throw new RecordUnreadableError(message.seq, `header ${name} is ${JSON.stringify(text)}`);
  return Number(text);
}

/** A commit (or its parts) the stream no longer holds, or holds damaged. */
export class RecordUnreadableError extends Error {
  readonly code = 'record_unreadable';
  constructor(
    readonly seq: number,
    detail: string,
    /** The message is not in the stream (retention dropped it), rather than damaged. */
    readonly missing = false,
  ) {
    super(`stream message ${seq}: ${detail}`);
    this.name = 'RecordUnreadableError';
  }
}

/** A commit as a consumer delivers it (headers) or a direct read returns it (header). */
export interface CommitMessage {
  seq: number;
  data: Uint8Array;
  header?: MsgHdrs;
  headers?: MsgHdrs;
}

/**
 * The payload of the record a commit message closes: its own data, or its parts
 * fetched (the Odds-Parts messages just before it) and joined; length and CRC checked.
 */
export async function recordPayload(board: BoardStream, commit: CommitMessage): Promise<{ index: number; payload: Uint8Array }> {
  const index = headerInt(commit, HEADER_INDEX);
  const parts = headerInt(commit, HEADER_PARTS);
  const bytes = headerInt(commit, HEADER_BYTES);
  const crc = headerInt(commit, HEADER_CRC);
  let payload: Uint8Array;
  if (parts === 0) {
    payload = commit.data;
  } else {
    const pieces: Uint8Array[] = [];
    for (let i = 0; i < parts; i++) {
      const seq = commit.seq - parts + i;
      const part = await board.jsm.streams.getMessage(board.stream, { seq }).catch((error: unknown) => {
        if (isNotFound(error)) return null;
        throw error;
      });
      if (part === null) throw new RecordUnreadableError(seq, `part ${i} of record ${index} is no longer in the stream`, true);
      if (part.subject !== board.partsSubject || headerInt(part, HEADER_INDEX) !== index || headerInt(part, HEADER_PART) !== i) {
        throw new RecordUnreadableError(seq, `expected part ${i} of record ${index}`);
      }
      pieces.push(part.data);
    }
    payload = Buffer.concat(pieces);
  }
  if (payload.length !== bytes || crc32(payload) >>> 0 !== crc) throw new RecordUnreadableError(commit.seq, `record ${index} fails its length or CRC check`);
  return { index, payload };
}

/**
 * How commits are pulled: 5 s pull requests rather than the client's 30 s. After the
 * server restarts, the client recreates the ordered consumer but may wait for its old
 * pull request to expire before it asks for more (seen with nats.js 3.4 against
 * nats-server 2.9): the expiry bounds that stall.
 */
export const CONSUME_OPTIONS = { max_messages: 256, expires: 5_000 };

/** An ordered consumer of the commit messages from stream sequence `fromSeq` on (in order, gap-free, recreated by the client after a disconnect). */
export function orderedCommits(board: BoardStream, fromSeq: number): Promise<Consumer> {
  return jetstream(board.nc).consumers.get(board.stream, {
    filter_subjects: board.batchesSubject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: Math.max(1, fromSeq),
  });
}
