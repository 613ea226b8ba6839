// API key usage summed across every replica, through two JetStream key-value buckets:
// per-minute counts (<stream>_USAGE_MINUTE, entries expire after 3 minutes) and
// monthly counts (<stream>_USAGE_MONTH, entries expire after 62 days).
//
// Each replica counts its own requests in memory (the request path never waits on
// NATS) and publishes its absolute count per key and period every flush interval,
// under <key hash>.<period>.<replica id>: absolute, not a delta, so a publish repeated
// or reordered changes nothing. Every replica watches both buckets and keeps, per key
// and period, the sum of the other replicas' latest counts; a key's fleet count is
// that sum plus its own. A replica that restarts finds its own earlier monthly count in
// the bucket and continues from it.
//
// The limits hold across the fleet up to what the replicas have not published yet:
// with N replicas each sees the others' counts at most one flush interval (default
// 1 s) late, so a key can overrun a per-minute limit by at most what N - 1 replicas
// serve it in that interval. Wiring into the authenticator is for the start path that
// knows ROLE; this module only counts and sums.
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/transport-node';
import { isoMonth } from '../../engine/timeFormat.ts';

export interface FleetUsageOptions {
  /** This replica's name in the keys (letters, digits, '-', '_'); unique in the fleet. */
  replicaId: string;
  /** Bucket name prefix (default ODDS, the stream's name). */
  stream?: string;
  /** How often own counts are published (default 1000 ms; 0: only flush()). */
  flushIntervalMs?: number;
}

export interface FleetCounts {
  /** Requests of this key in the current UTC minute, every replica. */
  minute: number;
  /** Requests of this key in the current UTC month, every replica. */
  month: number;
}

const ID = /^[A-Za-z0-9_-]+$/;
const KEY_HASH = /^[A-Za-z0-9_-]+$/;

type Period = { bucket: 'minute' | 'month'; name: string };

function minutePeriod(now: number): string {
  return `m${Math.floor(now / 60_000)}`;
}

function monthPeriod(now: number): string {
  return `M${isoMonth(now)}`;
}

class PeriodCounts {
  /** Own counts by "<key hash>.<period>". */
  readonly own = new Map<string, number>();
  readonly dirty = new Set<string>();
  /** Other replicas' latest counts: "<key hash>.<period>" -> replica -> count. */
  readonly others = new Map<string, Map<string, number>>();
  readonly otherSums = new Map<string, number>();

  total(slot: string): number {
    return (this.own.get(slot) ?? 0) + (this.otherSums.get(slot) ?? 0);
  }

  setOther(slot: string, replica: string, count: number | null): void {
    let byReplica = this.others.get(slot);
    if (byReplica === undefined) {
      if (count === null) return;
      byReplica = new Map();
      this.others.set(slot, byReplica);
    }
    const before = byReplica.get(replica) ?? 0;
    if (count === null) byReplica.delete(replica);
    else byReplica.set(replica, count);
    const sum = (this.otherSums.get(slot) ?? 0) - before + (count ?? 0);
    if (byReplica.size === 0) {
      this.others.delete(slot);
      this.otherSums.delete(slot);
    } else {
      this.otherSums.set(slot, sum);
    }
  }
}

export class FleetUsage {
  private readonly counts = { minute: new PeriodCounts(), month: new PeriodCounts() };
  private readonly watches: QueuedIterator<KvWatchEntry>[] = [];
  private readonly timer: NodeJS.Timeout | null;
  private flushing: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly replicaId: string,
    private readonly buckets: { minute: KV; month: KV },
    flushIntervalMs: number,
  ) {
    this.timer = flushIntervalMs > 0 ? setInterval(() => void this.flush().catch(() => {}), flushIntervalMs) : null;
    this.timer?.unref();
  }

  static async open(nc: NatsConnection, options: FleetUsageOptions): Promise<FleetUsage> {
    if (!ID.test(options.replicaId)) throw new Error(`replica id must be letters, digits, '-' or '_', got ${JSON.stringify(options.replicaId)}`);
    const kvm = new Kvm(nc);
    const prefix = options.stream ?? 'ODDS';
    const minute = await kvm.create(`${prefix}_USAGE_MINUTE`, { ttl: 3 * 60_000, history: 1 });
    const month = await kvm.create(`${prefix}_USAGE_MONTH`, { ttl: 62 * 24 * 3600_000, history: 1 });
    const usage = new FleetUsage(options.replicaId, { minute, month }, options.flushIntervalMs ?? 1000);
    await usage.watch('minute');
    await usage.watch('month');
    return usage;
  }

  /** Counts one request of `keyHash` at `now` and returns the fleet's counts including it. */
  count(keyHash: string, now: number): FleetCounts {
    const minute = this.bump('minute', `${keyHash}.${minutePeriod(now)}`);
    const month = this.bump('month', `${keyHash}.${monthPeriod(now)}`);
    return { minute, month };
  }

  /** The fleet's counts of `keyHash` at `now`, without counting. */
  peek(keyHash: string, now: number): FleetCounts {
    return { minute: this.counts.minute.total(`${keyHash}.${minutePeriod(now)}`), month: this.counts.month.total(`${keyHash}.${monthPeriod(now)}`) };
  }

  /** Publishes the own counts that changed since the last flush. */
  flush(): Promise<void> {
    if (this.flushing !== null) return this.flushing;
    // the body yields first: with nothing to publish it would otherwise finish (and
    // clear the flag in its finally) before the assignment below, leaving the flag set
    // for good and every later flush a no-op
    this.flushing = (async () => {
      await Promise.resolve();
      try {
        for (const bucket of ['minute', 'month'] as const) {
          const counts = this.counts[bucket];
          const slots = [...counts.dirty];
          counts.dirty.clear();
          for (const slot of slots) {
            try {
              await this.buckets[bucket].put(`${slot}.${this.replicaId}`, String(counts.own.get(slot) ?? 0));
            } catch (error) {
              counts.dirty.add(slot); // published at the next flush
              throw error;
            }
          }
        }
      } finally {
        this.flushing = null;
      }
    })();
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.flush().catch(() => {});
    for (const watch of this.watches) watch.stop();
  }

  private bump(bucket: Period['bucket'], slot: string): number {
    if (!KEY_HASH.test(slot.slice(0, slot.indexOf('.')))) throw new Error('a key hash must be letters, digits, - or _');
    const counts = this.counts[bucket];
    counts.own.set(slot, (counts.own.get(slot) ?? 0) + 1);
    counts.dirty.add(slot);
    return counts.total(slot);
  }

  /** Follows a bucket: current values first, then every change. Resolves once the current values are in. */
  private async watch(bucket: Period['bucket']): Promise<void> {
    const counts = this.counts[bucket];
    let initialDone: () => void = () => {};
    const initial = new Promise<void>((resolve) => (initialDone = resolve));
    const status = await this.buckets[bucket].status();
    if (status.values === 0) initialDone();
    const watch = await this.buckets[bucket].watch({ key: '>' });
    this.watches.push(watch);
    void (async () => {
      for await (const entry of watch) {
        // the watch delivers the current values first; delta counts those still to come
        if (entry.delta === 0 || entry.isUpdate) queueMicrotask(initialDone);
        const lastDot = entry.key.lastIndexOf('.');
        const slot = entry.key.slice(0, lastDot);
        const replica = entry.key.slice(lastDot + 1);
        const value = entry.operation === 'PUT' ? Number(entry.string()) : null;
        if (value !== null && !Number.isSafeInteger(value)) continue;
        if (replica === this.replicaId) {
          // our own earlier count (a restart): continue from it
          if (value !== null && value > (counts.own.get(slot) ?? 0)) counts.own.set(slot, value);
          continue;
        }
        counts.setOther(slot, replica, value);
      }
    })();
    await initial;
  }
}
