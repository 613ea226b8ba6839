// The durable log of accepted batches, as the write path sees it: opaque payloads
// (the ingest side encodes them) numbered by a record index that starts at 1 and has
// no gaps. A file backend (fileBatchLog.ts) implements it today; a replicated stream
// (a NATS JetStream subject, whose stream sequence would be the index) can implement
// the same interface later.
//
// Contract every backend keeps:
// - append(payload) resolves with the record's index once the record is durable
//   (fsync'd, or acknowledged by a quorum); records become durable in index order and
//   their promises resolve in that order. The backend may read the payload's bytes
//   until the append resolves and not after: the write path then writes its next
//   record in the same memory.
// - A failed append rejects with LogUnavailableError, and so does every append queued
//   behind it (the caller may have validated them on the assumption that the earlier
//   one lands). Nothing of a rejected append is replayed later.
// - replay(fromIndex, visit) calls visit for every durable record with index >=
//   fromIndex, in order, and throws LogDamagedError rather than skip one.

export interface LogRecord {
  index: number;
  payload: Uint8Array;
}

export interface BatchLog {
  /** Index of the last durable record (0 for an empty log). */
  readonly lastIndex: number;
  /** Bytes appended since the last markCheckpoint (what a size-triggered checkpoint watches). */
  readonly bytesSinceCheckpoint: number;
  append(payload: Uint8Array): Promise<number>;
  replay(fromIndex: number, visit: (record: LogRecord) => void): void;
  /** Records up to and including `index` are in a checkpoint: the log may drop them. */
  markCheckpoint(index: number, dropThrough?: number): Promise<void>;
  close(): Promise<void>;
}

/** The log cannot take the append (disk full, I/O error): answer 503 log_unavailable. */
export class LogUnavailableError extends Error {
  readonly code = 'log_unavailable';
  constructor(detail: string, options?: { cause?: unknown }) {
    super(detail, options);
    this.name = 'LogUnavailableError';
  }
}

/** A record before the end of the log is unreadable: start-up stops here (see npm run repair). */
export class LogDamagedError extends Error {
  readonly code = 'log_damaged';
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly detail: string,
    /** The first record that cannot be read (what a repair would drop from), when known. */
    readonly index: number | null = null,
  ) {
    super(`${file} at offset ${offset}${index === null ? '' : ` (record ${index})`}: ${detail}`);
    this.name = 'LogDamagedError';
  }
}
