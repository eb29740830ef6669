/**
 * The two metrics every request updates, `catalog_gateway_http_requests_total` and
 * `catalog_gateway_request_duration_seconds`, counted in plain numbers on the request path and
 * turned into Prometheus samples only when scraped. prom-client's own Counter and Histogram
 * look up a label hash and walk an object per update, which was the largest cost of a cache hit
 * after the log line (docs/performance.md); everything else about the registry stays prom-client's.
 * The objects here are registered as collectors of their own: `get()` in prom-client's shape.
 */
import type { Metric, Registry } from 'prom-client';

export interface RequestSeriesOptions {
  readonly counter: { readonly name: string; readonly help: string };
  readonly histogram: { readonly name: string; readonly help: string; readonly buckets: readonly number[] };
}

class CounterCell {
  readonly labels: Readonly<Record<string, string | number>>;
  value = 0;
  constructor(labels: Readonly<Record<string, string | number>>) {
    this.labels = labels;
  }
}

class HistogramCell {
  readonly labels: Readonly<Record<string, string>>;
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(labels: Readonly<Record<string, string>>, buckets: number) {
    this.labels = labels;
    this.counts = new Float64Array(buckets);
  }
}

/** One label combination: what a request adds to, resolved once. */
export class RequestChild {
  readonly #counter: CounterCell;
  readonly #histogram: HistogramCell;
  readonly #buckets: readonly number[];

  constructor(counter: CounterCell, histogram: HistogramCell, buckets: readonly number[]) {
    this.#counter = counter;
    this.#histogram = histogram;
    this.#buckets = buckets;
  }

  observe(seconds: number): void {
    this.#counter.value++;
    const h = this.#histogram;
    h.sum += seconds;
    h.count++;
    const buckets = this.#buckets;
    for (let i = 0; i < buckets.length; i++) {
      if (seconds <= (buckets[i] ?? Infinity)) {
        h.counts[i] = (h.counts[i] ?? 0) + 1;
        return;
      }
    }
  }
}

export class RequestSeries {
  readonly #buckets: readonly number[];
  readonly #counters: CounterCell[] = [];
  readonly #histograms = new Map<string, HistogramCell>();
  /**
   * Each label combination's child, by route, cache result, method and status in turn: four
   * lookups in small maps whose keys are the route table's, the results' and the parser's own
   * strings, where one map would need a key string built for every request.
   */
  readonly #children = new Map<string, Map<string, Map<string, Map<number, RequestChild>>>>();

  constructor(registry: Registry, options: RequestSeriesOptions) {
    this.#buckets = options.histogram.buckets;
    const counters = this.#counters;
    const histograms = this.#histograms;
    const buckets = this.#buckets;
    const counter = {
      name: options.counter.name,
      help: options.counter.help,
      type: 'counter',
      aggregator: 'sum',
      get: () =>
        Promise.resolve({
          name: options.counter.name,
          help: options.counter.help,
          type: 'counter',
          aggregator: 'sum',
          values: counters.map((c) => ({ labels: c.labels, value: c.value })),
        }),
      reset: () => {
        for (const c of counters) c.value = 0;
      },
    };
    const histogram = {
      name: options.histogram.name,
      help: options.histogram.help,
      type: 'histogram',
      aggregator: 'sum',
      get: () =>
        Promise.resolve({
          name: options.histogram.name,
          help: options.histogram.help,
          type: 'histogram',
          aggregator: 'sum',
          values: [...histograms.values()].flatMap((h) => histogramSamples(options.histogram.name, h, buckets)),
        }),
      reset: () => {
        for (const h of histograms.values()) {
          h.counts.fill(0);
          h.sum = 0;
          h.count = 0;
        }
      },
    };
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }

  /** The child for one label combination; combinations are bounded (route templates × statuses × results). */
  child(route: string, method: string, status: number, cache: string): RequestChild {
    let byResult = this.#children.get(route);
    if (byResult === undefined) {
      byResult = new Map<string, Map<string, Map<number, RequestChild>>>();
      this.#children.set(route, byResult);
    }
    let byMethod = byResult.get(cache);
    if (byMethod === undefined) {
      byMethod = new Map<string, Map<number, RequestChild>>();
      byResult.set(cache, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map<number, RequestChild>();
      byMethod.set(method, byStatus);
    }
    return byStatus.get(status) ?? this.#added(byStatus, route, method, status, cache);
  }

  /** A new combination is a new counter; the histogram is shared by every method and status. */
  #added(byStatus: Map<number, RequestChild>, route: string, method: string, status: number, cache: string): RequestChild {
    const counter = new CounterCell({ route, method, status, cache });
    this.#counters.push(counter);
    const histogramKey = `${route} ${cache}`;
    let histogram = this.#histograms.get(histogramKey);
    if (histogram === undefined) {
      histogram = new HistogramCell({ route, cache }, this.#buckets.length);
      this.#histograms.set(histogramKey, histogram);
    }
    const child = new RequestChild(counter, histogram, this.#buckets);
    byStatus.set(status, child);
    return child;
  }
}

function histogramSamples(
  name: string,
  h: HistogramCell,
  buckets: readonly number[],
): { metricName: string; labels: Record<string, string | number>; value: number }[] {
  const samples: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
  let cumulative = 0;
  for (let i = 0; i < buckets.length; i++) {
    cumulative += h.counts[i] ?? 0;
    samples.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: buckets[i] ?? 0 }, value: cumulative });
  }
  samples.push({ metricName: `${name}_bucket`, labels: { ...h.labels, le: '+Inf' }, value: h.count });
  samples.push({ metricName: `${name}_sum`, labels: h.labels, value: h.sum });
  samples.push({ metricName: `${name}_count`, labels: h.labels, value: h.count });
  return samples;
}
