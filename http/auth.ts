// The authentication hook (service-spec 5, decisions G). The facade extracts the key
// and asks an Authenticator; the real one (SQLite keys, usage metering) lives in
// persistence/ and matches this interface structurally. Without one, every request
// is anonymous and allowed.
import type { RouteAuth } from './router.ts';
import type { ErrorCode } from './errors.ts';

export type AuthResult =
  | { ok: true; headers: [string, string][] }
  | { ok: false; status: 401 | 429; code: ErrorCode; detail: string; retryAfter?: number };

export interface Authenticator {
  /** key: the presented API key or null; now: epoch ms. Synchronous (runs on the request path). */
  check(key: string | null, routeAuth: RouteAuth, now: number): AuthResult;
}

const ALLOWED: AuthResult = { ok: true, headers: [] };

export const anonymousAuthenticator: Authenticator = {
  check: () => ALLOWED,
};

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
