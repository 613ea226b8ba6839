// The key check of a node in a replicated fleet: the key is looked up in this node's
// SQLite file as usual and the request is counted locally (its month goes to SQLite,
// as on a stand-alone server), but whether the key is within its limits, and what
// X-RateLimit-Remaining says, come from the fleet's counts (fleetUsage.ts): the sum of
// every node's requests of that key this minute and this month. So a key's limits
// hold across the fleet, not per node (up to what the other nodes have not published
// yet: one flush interval). /account/usage reports the fleet's monthly count too, so a
// key sees the same figure whichever node answers.
import type { ApiKeys } from '../apiKeys.ts';
import { KeyChecker } from '../keyCheck.ts';
import type { AccountUsage, UsageCheck, UsageMeter } from '../usageMeter.ts';
import { startOfNextMinute, startOfNextMonth } from '../usagePeriods.ts';
import type { FleetUsage } from './fleetUsage.ts';

export class FleetKeyChecker extends KeyChecker {
  constructor(
    private readonly apiKeys: ApiKeys,
    private readonly usageMeter: UsageMeter,
    private readonly fleet: FleetUsage,
  ) {
    super(apiKeys, usageMeter);
  }

  override check(key: string, now: number): UsageCheck | null {
    const record = this.apiKeys.lookup(key);
    if (record === null) return null;
    const before = this.fleet.peek(record.keyHash, now);
    const minuteFull = before.minute >= record.rateLimitPerMinute;
    const monthFull = before.month >= record.monthlyCap;
    const minuteEnd = startOfNextMinute(now);
    const monthEnd = startOfNextMonth(now);
    if (this.usageMeter.enforce && (minuteFull || monthFull)) {
      // refused requests are not counted (as on a stand-alone server)
      const resetMs = monthFull ? monthEnd : minuteEnd;
      return {
        allowed: false,
        limit: monthFull ? record.monthlyCap : record.rateLimitPerMinute,
        remaining: 0,
        window: monthFull ? 'month' : 'minute',
        reset: Math.ceil(resetMs / 1000),
        retryAfter: Math.max(1, Math.ceil((resetMs - now) / 1000)),
      };
    }
    this.usageMeter.check(record, now); // this node's own count, kept in SQLite for /account/usage and restarts
    const counts = this.fleet.count(record.keyHash, now);
    const minuteLeft = Math.max(0, record.rateLimitPerMinute - counts.minute);
    const monthLeft = Math.max(0, record.monthlyCap - counts.month);
    if (monthLeft < minuteLeft) return { allowed: true, limit: record.monthlyCap, remaining: monthLeft, window: 'month', reset: Math.ceil(monthEnd / 1000) };
    return { allowed: true, limit: record.rateLimitPerMinute, remaining: minuteLeft, window: 'minute', reset: Math.ceil(minuteEnd / 1000) };
  }

  override accountUsage(key: string | null, now: number): AccountUsage {
    const record = key === null ? null : this.apiKeys.lookup(key);
    const usage = this.usageMeter.accountUsage(record, now);
    if (record !== null) usage.monthlyUsed = this.fleet.peek(record.keyHash, now).month;
    return usage;
  }
}
