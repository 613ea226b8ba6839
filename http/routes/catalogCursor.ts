// Keyset cursors of the cold-data lists: the position of the last row
// served plus a fingerprint of the walk's filters, signed (http/cursor.ts). Each list
// says what its key looks like, so a well-signed cursor of another list shape is
// still refused as invalid_cursor.
import { fingerprintOf, type CursorCodec } from '../cursor.ts';
import { invalidCursor } from '../errors.ts';

export interface KeysetWalk<K> {
  fingerprint: string;
  after: K | undefined;
  /** The as-of instant the first page of the walk fixed, when the list has one. */
  asOf: number | undefined;
}

/**
 * Decodes `cursor` (if any) for a walk of `route` under `filters`.
 * isKey checks the decoded position; needsAsOf refuses cursors without an as-of.
 */
export function keysetWalk<K>(
  cursors: CursorCodec,
  route: string,
  filters: Record<string, unknown>,
  cursor: string | undefined,
  isKey: (key: unknown) => key is K,
  needsAsOf = false,
): KeysetWalk<K> {
  const fingerprint = fingerprintOf(route, filters);
  if (cursor === undefined) return { fingerprint, after: undefined, asOf: undefined };
  const payload = cursors.decode(cursor, fingerprint);
  if (!isKey(payload.key) || (needsAsOf && payload.asOf === undefined)) throw invalidCursor('cursor is not a cursor issued by this service');
  return { fingerprint, after: payload.key, asOf: payload.asOf };
}

export function nextCursor(cursors: CursorCodec, fingerprint: string, key: unknown, asOf?: number): string {
  return cursors.encode(asOf === undefined ? { key, fingerprint } : { key, fingerprint, asOf });
}

export function isIdKey(key: unknown): key is string {
  return typeof key === 'string' && key !== '';
}
