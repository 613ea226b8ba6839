// Batch bodies: NDJSON (one change per line; blank lines are skipped and do not count)
// or msgpack (one array of changes). A line that is not JSON is a bad change at its
// index like any other (its place in `changes` holds UNDECODED, which the validator
// passes over); the first MAX_LISTED_BAD_CHANGES are worded, the rest only counted,
// so a body of a million bad lines is answered small and fast.

import { unpack } from 'msgpackr';
import type { ChangeError } from './changes.ts';

export type BatchFormat = 'ndjson' | 'msgpack';

export interface DecodedBatch {
  changes: unknown[];
  /** The errors of the first MAX_LISTED_BAD_CHANGES bad changes. */
  errors: ChangeError[];
  /** Bad changes in all (errors words the first of them). */
  badChanges: number;
}

/** An error body names at most this many bad changes; the rest are counted (IngestError.errorsOmitted). */
export const MAX_LISTED_BAD_CHANGES = 100;

/** What a change that could not be decoded is in `changes`: the validator passes over it (its error is the decoder's). */
export const UNDECODED: unique symbol = Symbol('undecoded change');

export function decodeNdjson(body: Uint8Array): DecodedBatch {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const changes: unknown[] = [];
  const errors: ChangeError[] = [];
  let bad = 0;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const index = changes.length;
    if (bad >= MAX_LISTED_BAD_CHANGES && (trimmed.charCodeAt(0) !== 0x7b || trimmed.charCodeAt(trimmed.length - 1) !== 0x7d)) {
      // past the listed ones a line that is not {...} is a bad change whatever it is
      // (not JSON, or JSON that is not an object): counted without the cost of a
      // thrown SyntaxError (~10 µs each, a million of them in a 16 MiB body)
      changes.push(UNDECODED);
      bad++;
      continue;
    }
    try {
      changes.push(JSON.parse(line));
    } catch (error) {
      changes.push(UNDECODED);
      if (bad++ < MAX_LISTED_BAD_CHANGES) errors.push({ index, code: 'invalid_json', field: null, detail: `line ${index + 1} is not JSON: ${(error as Error).message}` });
    }
  }
  return { changes, errors, badChanges: bad };
}

export function decodeMsgpack(body: Uint8Array): DecodedBatch {
  let value: unknown;
  try {
    value = unpack(body);
  } catch (error) {
    return { changes: [], errors: [{ index: 0, code: 'invalid_msgpack', field: null, detail: `the body is not msgpack: ${(error as Error).message}` }], badChanges: 1 };
  }
  if (!Array.isArray(value)) {
    return { changes: [], errors: [{ index: 0, code: 'invalid_msgpack', field: null, detail: 'a msgpack batch is one array of changes' }], badChanges: 1 };
  }
  return { changes: value, errors: [], badChanges: 0 };
}

export function decodeBatch(body: Uint8Array, format: BatchFormat): DecodedBatch {
  return format === 'ndjson' ? decodeNdjson(body) : decodeMsgpack(body);
}
