// Named error codes for the snapshot gzip machinery: callers branch on `code`, not on text.

export type SnapshotGzipErrorCode =
  | 'invalid_crc'
  | 'invalid_length'
  | 'invalid_level'
  | 'invalid_index'
  | 'piece_not_aligned';

export class SnapshotGzipError extends Error {
  readonly code: SnapshotGzipErrorCode;
  constructor(code: SnapshotGzipErrorCode, detail: string) {
    super(`${code}: ${detail}`);
    this.name = 'SnapshotGzipError';
    this.code = code;
  }
}
