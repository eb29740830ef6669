/**
 * The gateway's Prometheus metrics, on a registry of its own (never prom-client's global one) so
 * several gateways can run in one process. Every label has bounded cardinality: route templates,
 * methods folded to GET/HEAD/other, status codes, cache results; never a URL or a query.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RouteLabel } from '../shared/request-target.ts';

/** How a request was answered, as the access log and the metrics name it. */
export type CacheResult = 'hit' | 'miss' | 'collapsed' | 'pass' | 'none';

/** Metric label of pass-through requests: one value, whatever the path. */
export const PASS_THROUGH_ROUTE = 'pass-through';
export type MetricRoute = RouteLabel | typeof PASS_THROUGH_ROUTE;

export interface CacheGauges {
  readonly entries: number;
  readonly bytes: number;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function methodLabel(method: string): string {
  return method === 'GET' || method === 'HEAD' ? method : 'other';
}

export class GatewayMetrics {
  readonly registry: Registry;
  readonly #requests: Counter<'route' | 'method' | 'status' | 'cache'>;
  readonly #duration: Histogram<'route' | 'cache'>;
  readonly #evictions: Counter;
  readonly #originRequests: Counter<'status'>;
  readonly #originDuration: Histogram;
  readonly #coalesced: Counter;
  /**
   * Label children resolved once per combination (bounded: routes × methods × statuses × cache
   * results), so a request increments without prom-client hashing its labels again.
   */
  readonly #children = new Map<string, { readonly requests: Counter.Internal; readonly duration: Histogram.Internal<'route' | 'cache'> }>();

  constructor(registry: Registry, cache: () => CacheGauges) {
    this.registry = registry;
    collectDefaultMetrics({ register: registry });
    const registers = [registry];
    this.#requests = new Counter({
      name: 'catalog_gateway_http_requests_total',
      help: 'Requests answered by the gateway, by route template, method, status and cache result.',
      labelNames: ['route', 'method', 'status', 'cache'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'catalog_gateway_request_duration_seconds',
      help: 'Time from request arrival to the last byte of the response, by route template and cache result.',
      labelNames: ['route', 'cache'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'catalog_gateway_cache_entries',
      help: 'Responses currently stored in the cache.',
      registers,
      collect() {
        this.set(cache().entries);
      },
    });
    new Gauge({
      name: 'catalog_gateway_cache_bytes',
      help: 'Bytes currently counted against gateway.cache.maxBytes (bodies, headers and keys).',
      registers,
      collect() {
        this.set(cache().bytes);
      },
    });
    this.#evictions = new Counter({
      name: 'catalog_gateway_cache_evictions_total',
      help: 'Stored responses pushed out of the cache to make room for new ones.',
      registers,
    });
    this.#originRequests = new Counter({
      name: 'catalog_gateway_origin_requests_total',
      help: 'Requests the gateway sent to the origin to fill the cache, by origin status, or "error" when no answer came.',
      labelNames: ['status'],
      registers,
    });
    this.#originDuration = new Histogram({
      name: 'catalog_gateway_origin_request_duration_seconds',
      help: 'Time the origin took to answer a fill, whole body included.',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#coalesced = new Counter({
      name: 'catalog_gateway_coalesced_requests_total',
      help: 'Requests that waited for a fill already in flight instead of asking the origin themselves.',
      registers,
    });
  }

  request(route: MetricRoute, method: string, status: number, cache: CacheResult, seconds: number): void {
    const folded = methodLabel(method);
    const key = `${route} ${folded} ${status} ${cache}`;
    let child = this.#children.get(key);
    if (child === undefined) {
      child = { requests: this.#requests.labels({ route, method: folded, status, cache }), duration: this.#duration.labels({ route, cache }) };
      this.#children.set(key, child);
    }
    child.requests.inc();
    child.duration.observe(seconds);
  }

  originAnswer(status: number | 'error', seconds: number): void {
    this.#originRequests.inc({ status });
    this.#originDuration.observe(seconds);
  }

  evicted(): void {
    this.#evictions.inc();
  }

  coalesced(): void {
    this.#coalesced.inc();
  }
}
