// A Prometheus metric whose values are read only when scraped. The hot paths count into
// plain typed arrays (an index and an increment, no allocation, no label lookup) and
// this adapter turns those arrays into prom-client's exposition at scrape time, so a
// request pays for a few array writes and the scrape pays for the formatting.
import type { Metric, Registry } from 'prom-client';

export type LazyMetricType = 'counter' | 'gauge' | 'histogram';

export interface LazyValue {
  value: number;
  labels: Record<string, string | number>;
  /** For histograms: name_bucket, name_sum, name_count. Default: the metric's name. */
  metricName?: string;
}

export interface LazyMetricSpec {
  name: string;
  help: string;
  type: LazyMetricType;
  /** Called once per scrape. */
  values(): LazyValue[];
}

/** Registers a metric read from spec.values() at each scrape. */
export function registerLazyMetric(registry: Registry, spec: LazyMetricSpec): void {
  const metric = {
    name: spec.name,
    help: spec.help,
    type: spec.type,
    aggregator: 'sum',
    collect() {},
    reset() {},
    async get() {
      return { name: spec.name, help: spec.help, type: spec.type, aggregator: 'sum', values: spec.values() };
    },
  };
  registry.registerMetric(metric as unknown as Metric);
}

/**
 * Histogram rows of one label set from cumulative-to-be bucket counts: counts[offset + b]
 * holds observations in (bounds[b-1], bounds[b]], the last slot those above every bound.
 */
export function histogramValues(name: string, labels: Record<string, string>, bounds: readonly number[], counts: Float64Array, offset: number, sum: number): LazyValue[] {
  const out: LazyValue[] = [];
  let cumulative = 0;
  for (let b = 0; b < bounds.length; b++) {
    cumulative += counts[offset + b]!;
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bounds[b]! }, value: cumulative });
  }
  cumulative += counts[offset + bounds.length]!;
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
  out.push({ metricName: `${name}_sum`, labels, value: sum });
  out.push({ metricName: `${name}_count`, labels, value: cumulative });
  return out;
}

/** Index of the bucket value falls in: the first bound it does not exceed, or bounds.length. */
export function bucketOf(bounds: Float64Array, value: number): number {
  let b = 0;
  while (b < bounds.length && value > bounds[b]!) b++;
  return b;
}

/** One histogram without labels, kept in typed arrays. */
export class LazyHistogram {
  private readonly bounds: Float64Array;
  private readonly counts: Float64Array;
  private sum = 0;

  constructor(registry: Registry, name: string, help: string, bounds: readonly number[]) {
    this.bounds = Float64Array.from(bounds);
    this.counts = new Float64Array(bounds.length + 1);
    registerLazyMetric(registry, { name, help, type: 'histogram', values: () => histogramValues(name, {}, bounds, this.counts, 0, this.sum) });
  }

  observe(value: number): void {
    this.counts[bucketOf(this.bounds, value)]++;
    this.sum += value;
  }
}

/** Histograms kept in typed arrays, one per value of a single label fixed up front (e.g. variant: plain, history). */
export class LazyHistogramByLabel {
  private readonly bounds: Float64Array;
  /** by label value * (bounds + 1) + bucket */
  private readonly counts: Float64Array;
  private readonly sums: Float64Array;

  constructor(registry: Registry, name: string, help: string, bounds: readonly number[], label: string, labelValues: readonly string[]) {
    this.bounds = Float64Array.from(bounds);
    this.counts = new Float64Array(labelValues.length * (bounds.length + 1));
    this.sums = new Float64Array(labelValues.length);
    registerLazyMetric(registry, {
      name,
      help,
      type: 'histogram',
      values: () => labelValues.flatMap((value, i) => histogramValues(name, { [label]: value }, bounds, this.counts, i * (bounds.length + 1), this.sums[i]!)),
    });
  }

  /** labelIndex: the label value's position in labelValues. */
  observe(labelIndex: number, value: number): void {
    this.counts[labelIndex * (this.bounds.length + 1) + bucketOf(this.bounds, value)]!++;
    this.sums[labelIndex]! += value;
  }
}
