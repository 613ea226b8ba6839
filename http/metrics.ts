// HTTP request metrics, recorded by the server once per answered request:
//
//   odds_http_requests_total{route,status}             counter
//   odds_http_request_duration_seconds{route}          histogram (from the request's
//                                                       first byte read to its answer written),
//                                                       of one request in TIMING_EVERY
//   odds_http_not_modified_ratio                        gauge: 304s over all GET/HEAD answers
//
// Recording allocates nothing and looks nothing up by key: a route's row comes from its
// router index (CompiledRoute.index, fixed when the routes are compiled) through an
// Int32Array, a status's slot from a table indexed by the status, and counts go into
// Float64Arrays by row * width + slot; the label strings are only built when /metrics
// is scraped (metricsCollector.ts). Reading the clock (performance.now) costs about
// 100 ns here, as much as all the rest of the recording, and a request needs two
// readings; timing one request in 16 keeps the histogram's shape and makes the clock's
// share 1/16 (a counter picks them, no randomness). The start time handed to the server
// is whole microseconds in 30 bits (see clockMicros), a small integer, so the server's
// per-request record never holds a fractional number (V8 keeps such a field as a
// separately allocated box). With ACCESS_LOG on every request is timed and each request
// also writes one JSON log line, which does allocate: it is off by default for that reason.
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
  /** What timingStart() returned when the request was read (-1: not timed). */
  readonly startedAt: number;
}

export interface RequestObserver {
  /** Called as a request is read: a non-negative integer start time if this request is timed, else -1. */
  timingStart(): number;
  requestDone(request: ObservedRequest): void;
}

/** One request in this many is timed (a power of two). */
export const TIMING_EVERY = 16;

/** Statuses the service answers with; any other counts as "other". */
const STATUSES = [200, 204, 304, 400, 401, 404, 405, 429, 500, 503] as const;
const OTHER_SLOT = STATUSES.length;
const SLOTS = STATUSES.length + 1;
/**
 * Slot by status & 1023. Statuses have three digits (below 1024), so the mask changes
 * none of them; it keeps the index inside the table without a range check.
 */
const STATUS_SLOT = new Int8Array(1024).fill(OTHER_SLOT);
STATUSES.forEach((status, slot) => (STATUS_SLOT[status] = slot));

/** Seconds: a cached 304 takes tens of microseconds, a cold snapshot build seconds. */
export const DURATION_BOUNDS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BUCKETS = DURATION_BOUNDS.length + 1;
/** Start times are microseconds modulo 2^30 (about 17.9 minutes): always a small integer. */
const CLOCK_MASK = 0x3fffffff;

/**
 * performance.now() in whole microseconds, modulo 2^30. `&` truncates the product to
 * its low 32 bits exactly (it is far below 2^53), so the value wraps every 17.9
 * minutes; a duration is the difference modulo 2^30 and stays right for any request
 * shorter than that.
 */
function clockMicros(): number {
  return (performance.now() * 1000) & CLOCK_MASK;
}
const UNMATCHED = 'unmatched';

export interface HttpMetricsOptions {
  /** Called for every request when the access log is on. */
  accessLog?: ((request: ObservedRequest, seconds: number) => void) | null;
}

export class HttpMetrics implements RequestObserver {
  /** Route label per row; row 0 is every request no route matched. */
  private readonly labels: string[] = [UNMATCHED];
  /** By CompiledRoute.index: the route given that row (checked, so a route of another router sharing an index is not mistaken for it) and its row. */
  private readonly routeAt: (CompiledRoute | undefined)[] = [];
  private rowAt = new Int32Array(8);
  /** Rows of routes whose router index was already taken by another router's route (one observer told of two servers). */
  private readonly otherRoutes = new Map<CompiledRoute, number>();
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
    // Masked on every read, so the counter itself stays a small integer.
    this.reads = (this.reads + 1) & this.timingMask;
    return this.reads === 0 ? clockMicros() : -1;
  }

  requestDone(request: ObservedRequest): void {
    const route = request.route;
    const row = route === null ? 0 : this.routeAt[route.index] === route ? this.rowAt[route.index]! : this.addRoute(route);
    this.requests[row * SLOTS + STATUS_SLOT[request.status & 1023]!]!++;
    if (request.startedAt < 0) return;
    const seconds = ((clockMicros() - request.startedAt) & CLOCK_MASK) / 1e6;
    this.buckets[row * BUCKETS + bucketOf(this.bounds, seconds)]!++;
    this.sums[row]! += seconds;
    if (this.accessLog !== null) this.accessLog(request, seconds);
  }

  /** Requests counted for a route template (all statuses), or for one status. For tests and the bench. */
  count(routePath: string | null, status?: number): number {
    const row = this.labels.indexOf(routePath ?? UNMATCHED);
    if (row < 0) return 0;
    if (status !== undefined) return this.requests[row * SLOTS + STATUS_SLOT[status & 1023]!]!;
    let total = 0;
    for (let s = 0; s < SLOTS; s++) total += this.requests[row * SLOTS + s]!;
    return total;
  }

  /** A route's first request: gives it the next row (and its label). */
  private addRoute(route: CompiledRoute): number {
    const other = this.otherRoutes.get(route);
    if (other !== undefined) return other;
    const row = this.labels.length;
    this.labels.push(route.def.path);
    if (this.routeAt[route.index] === undefined) {
      this.routeAt[route.index] = route;
      if (this.rowAt.length <= route.index) this.rowAt = grownInt32(this.rowAt, Math.max(this.rowAt.length * 2, route.index + 1));
      this.rowAt[route.index] = row;
    } else {
      this.otherRoutes.set(route, row);
    }
    if (this.sums.length <= row) {
      this.requests = grown(this.requests, this.sums.length * 2 * SLOTS);
      this.buckets = grown(this.buckets, this.sums.length * 2 * BUCKETS);
      this.sums = grown(this.sums, this.sums.length * 2);
    }
    return row;
  }

  private requestValues(): LazyValue[] {
    const out: LazyValue[] = [];
    for (let row = 0; row < this.labels.length; row++) {
      for (let s = 0; s < SLOTS; s++) {
        const value = this.requests[row * SLOTS + s]!;
        if (value > 0) out.push({ labels: { route: this.labels[row]!, status: s === OTHER_SLOT ? 'other' : STATUSES[s]! }, value });
      }
    }
    return out;
  }

  private durationValues(): LazyValue[] {
    const out: LazyValue[] = [];
    for (let row = 0; row < this.labels.length; row++) {
      let seen = 0;
      for (let b = 0; b < BUCKETS; b++) seen += this.buckets[row * BUCKETS + b]!;
      if (seen === 0) continue;
      out.push(...histogramValues('odds_http_request_duration_seconds', { route: this.labels[row]! }, DURATION_BOUNDS, this.buckets, row * BUCKETS, this.sums[row]!));
    }
    return out;
  }

  private notModifiedRatio(): number {
    let all = 0;
    let notModified = 0;
    const slot304 = STATUS_SLOT[304]!;
    for (let row = 0; row < this.labels.length; row++) {
      for (let s = 0; s < SLOTS; s++) all += this.requests[row * SLOTS + s]!;
      notModified += this.requests[row * SLOTS + slot304]!;
    }
    return all === 0 ? 0 : notModified / all;
  }
}

function grownInt32(from: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const to = new Int32Array(length);
  to.set(from);
  return to;
}

function grown(from: Float64Array, length: number): Float64Array<ArrayBuffer> {
  const to = new Float64Array(length);
  to.set(from);
  return to;
}
