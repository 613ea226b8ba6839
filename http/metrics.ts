// HTTP request metrics, recorded by the server once per answered request:
//
//   odds_http_requests_total{route,status}             counter
//   odds_http_request_duration_seconds{route}          histogram (from the request's
//                                                       first byte read to its answer written),
//                                                       of one request in TIMING_EVERY
//   odds_http_not_modified_ratio                        gauge: 304s over all GET/HEAD answers
//
// Recording allocates nothing: a route's index comes from a Map keyed by the compiled
// route (assigned on its first request), counts go into Float64Arrays by
// index * width + slot, and the label strings are only built when /metrics is scraped
// (metricsCollector.ts). Reading the clock (performance.now) costs about 100 ns here,
// as much as all the rest of the recording, and a request needs two readings; timing one
// request in 16 keeps the histogram's shape and makes the clock's share 1/16 (a
// counter picks them, no randomness). With ACCESS_LOG on every request is timed and, each request also writes one JSON log line,
// which does allocate: it is off by default for that reason.
import type { Registry } from 'prom-client';
import { bucketOf, histogramValues, registerLazyMetric, type LazyValue } from './metricsCollector.ts';
import type { CompiledRoute } from './router.ts';

/** What the server tells about an answered request (its own per-request record satisfies it). */
export interface ObservedRequest {
  readonly method: string;
  readonly url: string;
  readonly rawQuery: string;
  readonly requestId: string;
  /** null: no route matched (404), or a preflight / refused method answered before matching. */
  readonly route: CompiledRoute | null;
  readonly status: number;
  /** What timingStart() returned when the request was read. */
  readonly startedAt: number;
}

export interface RequestObserver {
  /** Called as a request is read: performance.now() if this request is timed, else -1. */
  timingStart(): number;
  requestDone(request: ObservedRequest): void;
}

/** One request in this many is timed (a power of two). */
export const TIMING_EVERY = 16;

/** Statuses the service answers with; any other counts as "other". */
const STATUSES = [200, 204, 304, 400, 401, 404, 405, 429, 500, 503] as const;
const OTHER_SLOT = STATUSES.length;
const SLOTS = STATUSES.length + 1;
const STATUS_SLOT = new Int8Array(600).fill(OTHER_SLOT);
STATUSES.forEach((status, slot) => (STATUS_SLOT[status] = slot));

/** Seconds: a cached 304 takes tens of microseconds, a cold snapshot build seconds. */
export const DURATION_BOUNDS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BUCKETS = DURATION_BOUNDS.length + 1;
const UNMATCHED = 'unmatched';

export interface HttpMetricsOptions {
  /** Called for every request when the access log is on. */
  accessLog?: ((request: ObservedRequest, seconds: number) => void) | null;
}

export class HttpMetrics implements RequestObserver {
  private readonly indexes = new Map<CompiledRoute, number>();
  /** Route label per index; index 0 is every request no route matched. */
  private readonly labels: string[] = [UNMATCHED];
  private requests = new Float64Array(8 * SLOTS);
  private buckets = new Float64Array(8 * BUCKETS);
  private sums = new Float64Array(8);
  private readonly bounds = Float64Array.from(DURATION_BOUNDS);
  private readonly accessLog: ((request: ObservedRequest, seconds: number) => void) | null;
  private readonly timingMask: number;
  private reads = 0;

  constructor(registry: Registry, options: HttpMetricsOptions = {}) {
    this.accessLog = options.accessLog ?? null;
    this.timingMask = this.accessLog === null ? TIMING_EVERY - 1 : 0;
    registerLazyMetric(registry, {
      name: 'odds_http_requests_total',
      help: 'HTTP requests answered, by route template and status code.',
      type: 'counter',
      values: () => this.requestValues(),
    });
    registerLazyMetric(registry, {
      name: 'odds_http_request_duration_seconds',
      help: `Time from reading a request to writing its answer, by route template; one request in ${TIMING_EVERY} is timed (every one with the access log on).`,
      type: 'histogram',
      values: () => this.durationValues(),
    });
    registerLazyMetric(registry, {
      name: 'odds_http_not_modified_ratio',
      help: 'Share of answered requests that were 304 Not Modified (ETag revalidations).',
      type: 'gauge',
      values: () => [{ labels: {}, value: this.notModifiedRatio() }],
    });
  }

  timingStart(): number {
    return (++this.reads & this.timingMask) === 0 ? performance.now() : -1;
  }

  requestDone(request: ObservedRequest): void {
    const route = request.route;
    const index = route === null ? 0 : (this.indexes.get(route) ?? this.addRoute(route));
    this.requests[index * SLOTS + STATUS_SLOT[request.status < 600 ? request.status : 0]!]!++;
    if (request.startedAt < 0) return;
    const seconds = (performance.now() - request.startedAt) / 1000;
    this.buckets[index * BUCKETS + bucketOf(this.bounds, seconds)]!++;
    this.sums[index]! += seconds;
    if (this.accessLog !== null) this.accessLog(request, seconds);
  }

  /** Requests counted for a route template (all statuses), or for one status. For tests and the bench. */
  count(routePath: string | null, status?: number): number {
    const index = this.labels.indexOf(routePath ?? UNMATCHED);
    if (index < 0) return 0;
    if (status !== undefined) return this.requests[index * SLOTS + STATUS_SLOT[status]!]!;
    let total = 0;
    for (let s = 0; s < SLOTS; s++) total += this.requests[index * SLOTS + s]!;
    return total;
  }

  private addRoute(route: CompiledRoute): number {
    const index = this.labels.length;
    this.labels.push(route.def.path);
    this.indexes.set(route, index);
    if (this.sums.length <= index) {
      this.requests = grown(this.requests, this.sums.length * 2 * SLOTS);
      this.buckets = grown(this.buckets, this.sums.length * 2 * BUCKETS);
      this.sums = grown(this.sums, this.sums.length * 2);
    }
    return index;
  }

  private requestValues(): LazyValue[] {
    const out: LazyValue[] = [];
    for (let index = 0; index < this.labels.length; index++) {
      for (let s = 0; s < SLOTS; s++) {
        const value = this.requests[index * SLOTS + s]!;
        if (value > 0) out.push({ labels: { route: this.labels[index]!, status: s === OTHER_SLOT ? 'other' : STATUSES[s]! }, value });
      }
    }
    return out;
  }

  private durationValues(): LazyValue[] {
    const out: LazyValue[] = [];
    for (let index = 0; index < this.labels.length; index++) {
      let seen = 0;
      for (let b = 0; b < BUCKETS; b++) seen += this.buckets[index * BUCKETS + b]!;
      if (seen === 0) continue;
      out.push(...histogramValues('odds_http_request_duration_seconds', { route: this.labels[index]! }, DURATION_BOUNDS, this.buckets, index * BUCKETS, this.sums[index]!));
    }
    return out;
  }

  private notModifiedRatio(): number {
    let all = 0;
    let notModified = 0;
    const slot304 = STATUS_SLOT[304]!;
    for (let index = 0; index < this.labels.length; index++) {
      for (let s = 0; s < SLOTS; s++) all += this.requests[index * SLOTS + s]!;
      notModified += this.requests[index * SLOTS + slot304]!;
    }
    return all === 0 ? 0 : notModified / all;
  }
}

function grown(from: Float64Array, length: number): Float64Array<ArrayBuffer> {
  const to = new Float64Array(length);
  to.set(from);
  return to;
}
