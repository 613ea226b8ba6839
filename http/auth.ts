// The authentication hook (X-Api-Key or Bearer keys, usage limits). The facade extracts the key
// and asks an Authenticator what to answer. KeyAuthenticator is the real one: it asks
// persistence about the key (persistence/keyCheck.ts: found or not, the usage window
// with its limit, remaining requests and reset, exceeded or not) and turns those facts
// into error codes (each with its status in http/errors.ts) and headers. Without an authenticator, every request is
// anonymous and allowed.
import type { KeyChecker } from '../persistence/keyCheck.ts';
import type { RouteAuth } from './router.ts';
import type { ErrorCode } from './errors.ts';

export type AuthResult =
  | { ok: true; headers: [string, string][] }
  | { ok: false; code: ErrorCode; detail: string; retryAfter?: number };

export interface Authenticator {
  /** key: the presented API key or null; now: epoch ms. Synchronous (runs on the request path). */
  check(key: string | null, routeAuth: RouteAuth, now: number): AuthResult;
}

const ALLOWED: AuthResult = { ok: true, headers: [] };

export const anonymousAuthenticator: Authenticator = {
  check: () => ALLOWED,
};

export interface KeyAuthenticatorOptions {
  /** REQUIRE_KEY=1: key-designated routes refuse requests without a key. */
  requireKey: boolean;
}

export class KeyAuthenticator implements Authenticator {
  constructor(
    private readonly keys: KeyChecker,
    private readonly options: KeyAuthenticatorOptions,
  ) {}

  /**
   * No key: anonymous, allowed (unless REQUIRE_KEY=1 on a 'key' route). A key that is
   * sent must be valid on every route, public ones included (else 401 invalid_api_key); it is then
   * counted, and refused with 429 once its window is exceeded under enforcement.
   */
  check(key: string | null, routeAuth: RouteAuth, now: number): AuthResult {
    if (key === null || key === '') {
      if (this.options.requireKey && routeAuth === 'key') {
        return { ok: false, code: 'missing_api_key', detail: 'This endpoint needs an API key: send it in X-Api-Key or Authorization: Bearer.' };
      }
      return ALLOWED;
    }
    const usage = this.keys.check(key, now);
    if (usage === null) {
      return { ok: false, code: 'invalid_api_key', detail: 'The API key is unknown or has been revoked.' };
    }
    if (!usage.allowed) {
      return {
        ok: false,
        code: 'rate_limited',
        detail: `Rate limit of ${usage.limit} requests per ${usage.window} reached; retry in ${usage.retryAfter} s.`,
        retryAfter: usage.retryAfter,
      };
    }
    return {
      ok: true,
      headers: [
        ['X-RateLimit-Limit', String(usage.limit)],
        ['X-RateLimit-Remaining', String(usage.remaining)],
        ['X-RateLimit-Reset', String(usage.reset)],
      ],
    };
  }
}

/** X-Api-Key wins over Authorization: Bearer; blank values count as absent. */
export function apiKeyFrom(xApiKey: string, authorization: string): string | null {
  const direct = xApiKey.trim();
  if (direct !== '') return direct;
  if (authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ') {
    const bearer = authorization.slice(7).trim();
    if (bearer !== '') return bearer;
  }
  return null;
}

/**
 * The `key` query parameter, for clients that cannot set headers (a browser's
 * WebSocket or EventSource); null when absent or blank.
 */
export function keyFromQuery(rawQuery: string): string | null {
  if (!rawQuery.includes('key=')) return null;
  const value = new URLSearchParams(rawQuery).get('key');
  const key = value === null ? '' : value.trim();
  return key === '' ? null : key;
}
