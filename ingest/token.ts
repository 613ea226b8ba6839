// The ingest listener's bearer token: INGEST_TOKEN when set, else the one kept in
// DATA_DIR/ingest-token (mode 0600), generated on the first start that needs it. The
// token itself is never logged; the ready line names the file. A presented token is
// compared in constant time: both sides are hashed to 32 bytes first, so
// timingSafeEqual sees equal lengths and the comparison time says nothing about the
// token's length or its first differing byte.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Authenticator, AuthResult } from '../http/auth.ts';

export const TOKEN_FILE = 'ingest-token';

export interface IngestToken {
  token: string;
  /** Where it came from: the environment, or the file (read or just generated). */
  source: 'env' | 'file' | 'generated';
  /** The token file, when the token lives in one. */
  file: string | null;
}

/** INGEST_TOKEN, else DATA_DIR/ingest-token (read, or generated and written with mode 0600). */
export function resolveIngestToken(dataDir: string, env: NodeJS.ProcessEnv): IngestToken {
  const fromEnv = env.INGEST_TOKEN;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return { token: fromEnv.trim(), source: 'env', file: null };
  const file = join(dataDir, TOKEN_FILE);
  let existing = '';
  try {
    existing = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existing !== '') return { token: existing, source: 'file', file };
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // the mode of writeFileSync is masked by the umask
  return { token, source: 'generated', file };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True when `presented` is the token; constant time in both inputs. */
export function tokenMatches(expectedDigest: Buffer, presented: string): boolean {
  return timingSafeEqual(expectedDigest, digest(presented));
}

const ALLOWED: AuthResult = { ok: true, headers: [] };

/** The ingest listener's authenticator: every route and WebSocket handshake needs the bearer token. */
export function tokenAuthenticator(token: string): Authenticator {
  const expected = digest(token);
  return {
    check(key) {
      if (key !== null && tokenMatches(expected, key)) return ALLOWED;
      return {
        ok: false,
        code: 'invalid_token',
        detail: key === null ? 'send the ingest token in Authorization: Bearer <token>' : 'the ingest token is wrong',
      };
    },
  };
}
