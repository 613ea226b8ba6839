// What persistence knows of an API key a request presented: whether it is a live key
// (unknown and revoked keys are not), and if so the request is counted and the
// usage window that binds it is reported: its limit, what remains, when it resets and
// whether the limit is exceeded (only when RATE_LIMIT_ENFORCE=1; otherwise exhaustion
// is counted and allowed). These are facts: what a request without a key may do, and
// which statuses and headers a refusal or a count becomes, is the HTTP facade's
// business (http/auth.ts).

import type { ApiKeys } from './apiKeys.ts';
import type { AccountUsage, UsageCheck, UsageMeter } from './usageMeter.ts';

export class KeyChecker {
  constructor(
    private readonly keys: ApiKeys,
    private readonly meter: UsageMeter,
  ) {}

  /**
   * null: the key is unknown or revoked (nothing counted). Otherwise the request is
   * counted against the key and its binding window is returned. /account/usage is not
   * counted: its route calls accountUsage() instead.
   */
  check(key: string, now: number): UsageCheck | null {
    const record = this.keys.lookup(key);
    if (record === null) return null;
    return this.meter.check(record, now);
  }

  /** The plan, this month's count and the limits of `key` (the anonymous plan when unknown, revoked or null), without counting a request. */
  accountUsage(key: string | null, now: number): AccountUsage {
    return this.meter.accountUsage(key === null ? null : this.keys.lookup(key), now);
  }
}
