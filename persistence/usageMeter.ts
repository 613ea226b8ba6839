// Usage metering. Every keyed request is counted in memory, per
// UTC minute and per UTC month; nothing touches SQLite on the request path except the
// first request of a key in a month, which reads that month's stored count. Month
// deltas are added to SQLite in one transaction by an unref'd timer and by flush() on
// close, so counts survive a restart. Per-minute counts are not stored: a restart
// forgets at most one minute of them.

import type { Statement } from 'better-sqlite3';
import type { ApiKeyRecord } from './apiKeys.ts';
import type { Db } from './database.ts';
import type { PlanName } from './plans.ts';
import { isoMonth } from '../engine/timeFormat.ts';
import { startOfNextMinute, startOfNextMonth } from './usagePeriods.ts';

export interface UsageCheck {
  allowed: boolean;
  /** The limit of the binding window: per minute, or the monthly cap once that is the tighter one. */
  limit: number;
  remaining: number;
  /** Which window the numbers describe. */
  window: 'minute' | 'month';
  /** Epoch seconds when the binding window resets. */
  reset: number;
  /** Seconds to wait, present when not allowed. */
  retryAfter?: number;
}

/** The /account/usage record, fields in served order. */
export interface AccountUsage {
  plan: PlanName;
  monthlyUsed: number | null;
  monthlyCap: number | null;
  rateLimitPerMinute: number | null;
  key: string | null;
}

export const ANONYMOUS_USAGE: Readonly<AccountUsage> = Object.freeze({
  plan: 'ENTERPRISE',
  monthlyUsed: null,
  monthlyCap: null,
  rateLimitPerMinute: null,
  key: null,
});

export interface UsageMeterOptions {
  /** RATE_LIMIT_ENFORCE=1: exhaustion makes check() answer not allowed. Default: count only. */
  enforce?: boolean;
  /** How often counts go to SQLite; 0 disables the timer (flush() still works). Default 5 s. */
  flushIntervalMs?: number;
}

interface Counter {
  keyHash: string;
  minuteEnd: number;
  minuteCount: number;
  month: string;
  monthStart: number;
  monthEnd: number;
  monthCount: number;
  /** Counted in `month` but not yet added to SQLite. */
  pending: number;
}

export class UsageMeter {
  readonly enforce: boolean;
  private readonly counters = new Map<string, Counter>();
  /** Deltas of months that ended before they were flushed. */
  private readonly carried: { keyHash: string; month: string; count: number }[] = [];
  private readonly readMonth: Statement;
  private readonly addMonth: Statement;
  private readonly timer: NodeJS.Timeout | null;
  private closed = false;

  constructor(
    private readonly db: Db,
    options: UsageMeterOptions = {},
  ) {
    this.enforce = options.enforce ?? false;
    this.readMonth = db.prepare('SELECT count FROM api_usage WHERE key_hash = ? AND month = ?').pluck();
    this.addMonth = db.prepare(
      `INSERT INTO api_usage (key_hash, month, count) VALUES (?, ?, ?)
       ON CONFLICT (key_hash, month) DO UPDATE SET count = count + excluded.count`,
    );
    const every = options.flushIntervalMs ?? 5_000;
    this.timer = every > 0 ? setInterval(() => this.flushFromTimer(), every) : null;
    this.timer?.unref();
  }

  /**
   * Counts one request of `key` at `now` (epoch ms) and says whether it may proceed.
   * A refused request is not counted, so hammering a closed window does not keep it closed.
   */
  check(key: ApiKeyRecord, now: number): UsageCheck {
    const c = this.counterAt(key.keyHash, now);
    const minuteFull = c.minuteCount >= key.rateLimitPerMinute;
    const monthFull = c.monthCount >= key.monthlyCap;
    if (this.enforce && (minuteFull || monthFull)) {
      const limit = monthFull ? key.monthlyCap : key.rateLimitPerMinute;
      const resetMs = monthFull ? c.monthEnd : c.minuteEnd;
      const retryAfter = Math.max(1, Math.ceil((resetMs - now) / 1000));
      return { allowed: false, limit, remaining: 0, window: monthFull ? 'month' : 'minute', reset: Math.ceil(resetMs / 1000), retryAfter };
    }
    c.minuteCount++;
    c.monthCount++;
    c.pending++;
    const minuteLeft = Math.max(0, key.rateLimitPerMinute - c.minuteCount);
    const monthLeft = Math.max(0, key.monthlyCap - c.monthCount);
    if (monthLeft < minuteLeft) {
      return { allowed: true, limit: key.monthlyCap, remaining: monthLeft, window: 'month', reset: Math.ceil(c.monthEnd / 1000) };
    }
    return { allowed: true, limit: key.rateLimitPerMinute, remaining: minuteLeft, window: 'minute', reset: Math.ceil(c.minuteEnd / 1000) };
  }

  /** Requests counted for `key` in the UTC month holding `now`, flushed or not. */
  monthlyUsed(key: ApiKeyRecord, now: number): number {
    return this.counterAt(key.keyHash, now).monthCount;
  }

  /** The usage record for a key, or the anonymous plan for null. Does not count a request. */
  accountUsage(key: ApiKeyRecord | null, now: number): AccountUsage {
    if (key === null) return { ...ANONYMOUS_USAGE };
    return {
      plan: key.plan,
      monthlyUsed: this.monthlyUsed(key, now),
      monthlyCap: key.monthlyCap,
      rateLimitPerMinute: key.rateLimitPerMinute,
      key: key.last4,
    };
  }

  /** Adds every unflushed count to SQLite in one transaction. Returns how many requests it wrote. */
  flush(): number {
    if (this.closed || !this.db.open) return 0;
    let written = 0;
    this.db.transaction(() => {
      for (const c of this.carried) {
        this.addMonth.run(c.keyHash, c.month, c.count);
        written += c.count;
      }
      for (const c of this.counters.values()) {
        if (c.pending === 0) continue;
        this.addMonth.run(c.keyHash, c.month, c.pending);
        written += c.pending;
      }
    }).immediate();
    // Only once the transaction committed: a failed flush keeps its counts for the next one.
    this.carried.length = 0;
    for (const c of this.counters.values()) c.pending = 0;
    return written;
  }

  // A failed timed flush (say the database is locked past busy_timeout) must not take
  // the server down: the counts stay pending and the next flush retries them.
  private flushFromTimer(): void {
    try {
      this.flush();
    } catch (err) {
      process.stderr.write(`usage flush failed, will retry: ${(err as Error).message}\n`);
    }
  }

  /** Stops the timer and flushes. Call before closing the database. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.flush();
    this.closed = true;
  }

  private counterAt(keyHash: string, now: number): Counter {
    let c = this.counters.get(keyHash);
    if (c === undefined) {
      c = this.freshCounter(keyHash, now);
      this.counters.set(keyHash, c);
    } else if (now >= c.monthEnd || now < c.monthStart) {
      if (c.pending > 0) this.carried.push({ keyHash, month: c.month, count: c.pending });
      Object.assign(c, this.freshCounter(keyHash, now));
    }
    if (now >= c.minuteEnd || now < c.minuteEnd - 60_000) {
      c.minuteEnd = startOfNextMinute(now);
      c.minuteCount = 0;
    }
    return c;
  }

  private freshCounter(keyHash: string, now: number): Counter {
    const month = isoMonth(now);
    const d = new Date(now);
    let stored = (this.readMonth.get(keyHash, month) as number | undefined) ?? 0;
    for (const c of this.carried) if (c.keyHash === keyHash && c.month === month) stored += c.count;
    return {
      keyHash,
      minuteEnd: startOfNextMinute(now),
      minuteCount: 0,
      month,
      monthStart: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
      monthEnd: startOfNextMonth(now),
      monthCount: stored,
      pending: 0,
    };
  }
}
