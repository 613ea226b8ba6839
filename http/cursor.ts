// Keyset cursors: opaque base64url tokens carrying the position of the
// last row served, a fingerprint of the filters of the walk and, on /odds/updated,
// the as-of time of the first page. A 12-byte HMAC-SHA256 tag under a process
// secret (CURSOR_SECRET from the app's environment, read by service/app.ts, with a
// fixed default so cursors survive restarts) makes tampering detectable; the
// fingerprint makes replay under other filters detectable.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { invalidCursor } from './errors.ts';

export interface CursorPayload {
  key: unknown;
  fingerprint: string;
  asOf?: number;
}

const TAG_BYTES = 12;
const DEFAULT_SECRET = 'odds-engine-cursor-secret-v1';

/** Signs the cursors it encodes and refuses those it did not sign; one per process, built where the app is configured. */
export class CursorCodec {
  private readonly secret: Buffer;

  /** secret: CURSOR_SECRET; undefined or empty falls back to the fixed default. */
  constructor(secret?: string) {
    this.secret = Buffer.from(secret || DEFAULT_SECRET);
  }

  encode(payload: CursorPayload): string {
    const wire: unknown[] = payload.asOf === undefined ? [payload.key, payload.fingerprint] : [payload.key, payload.fingerprint, payload.asOf];
    const body = Buffer.from(JSON.stringify(wire));
    return Buffer.concat([this.tagOf(body), body]).toString('base64url');
  }

  /** Throws 400 invalid_cursor when the token is undecodable, tampered, or from another filter set. */
  decode(token: string, expectedFingerprint: string): CursorPayload {
    if (!BASE64URL.test(token)) throw invalidCursor('cursor is not a cursor issued by this service');
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length <= TAG_BYTES) throw invalidCursor('cursor is not a cursor issued by this service');
    const body = bytes.subarray(TAG_BYTES);
    if (!timingSafeEqual(bytes.subarray(0, TAG_BYTES), this.tagOf(body))) throw invalidCursor('cursor has been altered');
    const wire = parseWire(body);
    if (wire[1] !== expectedFingerprint) {
      throw invalidCursor('cursor belongs to a walk with different filters; restart without cursor');
    }
    return wire.length > 2 ? { key: wire[0], fingerprint: wire[1], asOf: wire[2] as number } : { key: wire[0], fingerprint: wire[1] };
  }

  private tagOf(payload: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, TAG_BYTES);
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function parseWire(body: Buffer): [unknown, string, unknown?] {
  let wire: unknown;
  try {
    wire = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidCursor('cursor is not a cursor issued by this service');
  }
  const ok = Array.isArray(wire) && (wire.length === 2 || (wire.length === 3 && typeof wire[2] === 'number')) && typeof wire[1] === 'string';
  if (!ok) throw invalidCursor('cursor is not a cursor issued by this service');
  return wire as [unknown, string, unknown?];
}

/**
 * A short stable digest of a route and its filters. Keys are sorted; undefined and
 * null values, `cursor` and `limit` (which do not change the walk) are left out.
 */
export function fingerprintOf(route: string, filters: Record<string, unknown>): string {
  const names = Object.keys(filters).filter((name) => name !== 'cursor' && name !== 'limit' && filters[name] != null).sort();
  const canonical: unknown[] = [route];
  for (const name of names) canonical.push(name, filters[name]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 16);
}
