/**
 * One autocannon run, used as a library by the load test and the bench. On top of autocannon's
 * result it keeps its own latency histogram (autocannon's rounds to whole milliseconds) and
 * per-second samples of throughput and latency for the charts, both fed from the `response`
 * event, and it counts request errors by their code.
 */
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { LatencyHistogram } from './latency-histogram.ts';
import type { SecondSample } from './result.ts';

export interface PlannedRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * What each connection sends. A fixed request or fixed per-connection lists are built into bytes
 * once, the cheapest for the generator; a source is drawn from on every request (shared by all
 * connections, so it can hand out targets that are never repeated).
 */
export type RequestSource = PlannedRequest | { readonly next: () => PlannedRequest } | { readonly perConnection: readonly (readonly PlannedRequest[])[] };

export interface LoadRunOptions {
  /**
   * Base URLs of the servers under load: one, or a fleet's members, each given its share of the
   * connections (and of `amount` and `rate`) by its own autocannon instance, all counted together.
   */
  readonly urls: readonly string[];
  readonly connections: number;
  /** Seconds; ignored when `amount` is set. */
  readonly duration?: number;
  readonly amount?: number;
  /** Requests per second over all connections. */
  readonly rate?: number;
  /** See RequestSource. */
  readonly requests: RequestSource;
  /** Renders autocannon's progress bar on stderr. */
  readonly progress?: boolean;
  /** Called once a second while the run lasts, with the second just completed (from 1). */
  readonly onSecond?: (second: number) => void;
}

export interface LoadRunResult {
  readonly durationSeconds: number;
  readonly responses: number;
  readonly requestsPerSecond: number;
  readonly bytes: number;
  readonly latency: LatencyHistogram;
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly non2xx: number;
  /** Requests that got no response (connection refused or reset, timeout), by error code. */
  readonly errors: Readonly<Record<string, number>>;
  readonly errorCount: number;
  readonly timeline: readonly SecondSample[];
}

interface Bucket {
  responses: number;
  non2xx: number;
  errors: number;
  readonly latency: LatencyHistogram;
}

function errorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.name : 'unknown';
}

function asRequest(planned: PlannedRequest): autocannon.Request {
  return { method: 'GET', path: planned.path, headers: { ...planned.headers } };
}

/** The `requests` and `setupClient` options for a source. */
function autocannonRequests(source: RequestSource): Pick<autocannon.Options, 'requests' | 'setupClient'> {
  if ('perConnection' in source) {
    let connection = 0;
    const lists = source.perConnection.filter((list) => list.length > 0);
    return {
      requests: [asRequest(lists[0]?.[0] ?? { path: '/', headers: {} })],
      setupClient: (client) => {
        client.setRequests((lists[connection++ % lists.length] ?? []).map(asRequest));
      },
    };
  }
  if (!('next' in source)) return { requests: [asRequest(source)] };
  return {
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => {
          const planned = source.next();
          request.path = planned.path;
          request.headers = { ...request.headers, ...planned.headers };
          return request;
        },
      },
    ],
  };
}

export async function runLoad(options: LoadRunOptions): Promise<LoadRunResult> {
  const latency = new LatencyHistogram();
  const buckets: Bucket[] = [];
  const statusCounts: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let errorCount = 0;
  let bytes = 0;
  let start = performance.now();
  const shares = options.urls.map((url, i) => ({
    url,
    part: (total: number): number => Math.floor(total / options.urls.length) + (i < total % options.urls.length ? 1 : 0),
  }));
  if (shares.some((share) => share.part(options.connections) === 0))
    throw new Error(`${options.connections} connections cannot be shared by ${options.urls.length} targets`);
  const runs = shares.map(({ url, part }) => {
    let settle: (outcome: { err: unknown; result: autocannon.Result }) => void = () => undefined;
    const finished = new Promise<{ err: unknown; result: autocannon.Result }>((resolve) => {
      settle = resolve;
    });
    const settings: autocannon.Options = {
      url,
      connections: part(options.connections),
      pipelining: 1,
      ...(options.amount === undefined ? { duration: options.duration ?? 10 } : { amount: part(options.amount) }),
      ...(options.rate === undefined ? {} : { overallRate: Math.max(1, part(options.rate)) }),
      ...autocannonRequests(options.requests),
    };
    return {
      instance: autocannon(settings, (err: unknown, result) => {
        settle({ err, result });
      }),
      finished,
    };
  });
  const first = runs[0];
  if (first === undefined) throw new Error('no target to load');
  first.instance.on('start', () => {
    start = performance.now();
  });
  const bucketNow = (): Bucket => {
    const index = Math.floor((performance.now() - start) / 1000);
    let bucket = buckets[index];
    if (bucket === undefined) {
      bucket = { responses: 0, non2xx: 0, errors: 0, latency: new LatencyHistogram() };
      buckets[index] = bucket;
    }
    return bucket;
  };
  const onResponse = (_client: unknown, status: number, resBytes: number, responseTime: number): void => {
    const bucket = bucketNow();
    bucket.responses++;
    if (status < 200 || status > 299) bucket.non2xx++;
    bucket.latency.record(responseTime);
    latency.record(responseTime);
    bytes += resBytes;
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
  };
  const onError = (err: unknown): void => {
    const code = errorCode(err);
    errors[code] = (errors[code] ?? 0) + 1;
    errorCount++;
    bucketNow().errors++;
  };
  for (const { instance } of runs) {
    instance.on('response', onResponse);
    instance.on('reqError', onError);
  }
  let second = 0;
  const ticker =
    options.onSecond === undefined
      ? undefined
      : setInterval(() => {
          options.onSecond?.(++second);
        }, 1000);
  if (options.progress === true) autocannon.track(first.instance, { renderResultsTable: false, renderLatencyTable: false });
  try {
    const outcomes = await Promise.all(runs.map((r) => r.finished));
    for (const { err } of outcomes)
      if (err !== null && err !== undefined) throw err instanceof Error ? err : new Error(`autocannon failed: ${JSON.stringify(err)}`);
    const durationSeconds = (performance.now() - start) / 1000;
    const timeline: SecondSample[] = [];
    // Only whole seconds: answers that land after the last full second would plot as a collapse
    // of throughput that never happened.
    const seconds = Math.min(buckets.length, Math.max(1, Math.floor(durationSeconds)));
    for (let i = 0; i < seconds; i++) {
      const bucket = buckets[i];
      timeline.push({
        second: i + 1,
        responses: bucket?.responses ?? 0,
        non2xx: bucket?.non2xx ?? 0,
        errors: bucket?.errors ?? 0,
        p50Ms: bucket?.latency.percentile(50) ?? 0,
        p90Ms: bucket?.latency.percentile(90) ?? 0,
        p99Ms: bucket?.latency.percentile(99) ?? 0,
      });
    }
    return {
      durationSeconds,
      responses: latency.count,
      requestsPerSecond: durationSeconds > 0 ? latency.count / durationSeconds : 0,
      bytes,
      latency,
      statusCounts,
      non2xx: outcomes.reduce((n, { result }) => n + result.non2xx, 0),
      errors,
      errorCount,
      timeline,
    };
  } finally {
    if (ticker !== undefined) clearInterval(ticker);
  }
}
