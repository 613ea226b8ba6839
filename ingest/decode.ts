// Batch bodies: NDJSON (one change per line; blank lines are skipped and do not count)
// or msgpack (one array of changes). A line that is not JSON is a bad change at its
// index like any other, so a feed hears about every bad line at once.

import { unpack } from 'msgpackr';
import type { ChangeError } from './changes.ts';

export type BatchFormat = 'ndjson' | 'msgpack';

export interface DecodedBatch {
  changes: unknown[];
  errors: ChangeError[];
}

export function decodeNdjson(body: Uint8Array): DecodedBatch {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const changes: unknown[] = [];
  const errors: ChangeError[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const index = changes.length;
    try {
      changes.push(JSON.parse(line));
    } catch (error) {
      changes.push(undefined);
      errors.push({ index, code: 'invalid_json', field: null, detail: `line ${index + 1} is not JSON: ${(error as Error).message}` });
    }
  }
  return { changes, errors };
}

export function decodeMsgpack(body: Uint8Array): DecodedBatch {
  let value: unknown;
  try {
    value = unpack(body);
  } catch (error) {
    return { changes: [], errors: [{ index: 0, code: 'invalid_msgpack', field: null, detail: `the body is not msgpack: ${(error as Error).message}` }] };
  }
  if (!Array.isArray(value)) {
    return { changes: [], errors: [{ index: 0, code: 'invalid_msgpack', field: null, detail: 'a msgpack batch is one array of changes' }] };
  }
  return { changes: value, errors: [] };
}

export function decodeBatch(body: Uint8Array, format: BatchFormat): DecodedBatch {
  return format === 'ndjson' ? decodeNdjson(body) : decodeMsgpack(body);
}
