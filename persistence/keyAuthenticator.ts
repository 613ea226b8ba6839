// The SQLite-backed Authenticator the HTTP facade calls on every request. The
// interface is reproduced structurally from http/auth.ts (persistence/ does not import
// http/): it takes the key the request carried (X-Api-Key or Bearer), the route's
// designation from service-spec 5, and now.

import type { ApiKeys } from './apiKeys.ts';
import type { UsageMeter } from './usageMeter.ts';

export type RouteAuth = 'none' | 'key';

export type AuthResult =
  | { ok: true; headers: [string, string][] }
  | { ok: false; status: 401 | 429; code: 'missing_api_key' | 'invalid_api_key' | 'rate_limited'; detail: string; retryAfter?: number };

export interface Authenticator {
  check(key: string | null, routeAuth: RouteAuth, now: number): AuthResult;
}

export interface KeyAuthenticatorOptions {
  /** REQUIRE_KEY=1: key-designated routes refuse requests without a key. */
  requireKey?: boolean;
}

export class KeyAuthenticator implements Authenticator {
  readonly requireKey: boolean;

  constructor(
    private readonly keys: ApiKeys,
    private readonly meter: UsageMeter,
    options: KeyAuthenticatorOptions = {},
  ) {
    this.requireKey = options.requireKey ?? false;
  }

  /**
   * No key: anonymous, allowed (unless REQUIRE_KEY=1 on a 'key' route). A key that is
   * sent must be valid on every route, public ones included (decisions B); it is then
   * counted, and limited when enforcement is on. /account/usage never errors, so its
   * route should call keys.lookup + meter.accountUsage instead of this.
   */
  check(key: string | null, routeAuth: RouteAuth, now: number): AuthResult {
    if (key === null || key === '') {
      if (this.requireKey && routeAuth === 'key') {
        return { ok: false, status: 401, code: 'missing_api_key', detail: 'This endpoint needs an API key: send it in X-Api-Key or Authorization: Bearer.' };
      }
      return { ok: true, headers: [] };
    }
    const record = this.keys.lookup(key);
    if (record === null) {
      return { ok: false, status: 401, code: 'invalid_api_key', detail: 'The API key is unknown or has been revoked.' };
    }
    const usage = this.meter.check(record, now);
    if (!usage.allowed) {
      return {
        ok: false,
        status: 429,
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
