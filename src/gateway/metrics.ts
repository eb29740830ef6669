/**
 * The gateway's Prometheus metrics, on a registry of its own (never prom-client's global one) so
 * several gateways can run in one process. Every label has bounded cardinality: route templates,
 * methods folded to GET/HEAD/other, status codes, cache results; never a URL or a query.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics, type ProcessMetricsOptions } from '../shared/process-metrics.ts';
import type { CacheResult, RevalidationOutcome, StaleReason } from './cache-outcome.ts';
import { INVALIDATION_CAUSES, type InvalidationCause, type PurgeSelector } from './purge/purge-log.ts';
import { RequestSeries } from './request-series.ts';

/** A route label: a catalog route template, or the prefix of a configured route; bounded either way. */
export type MetricRoute = string;

export interface CacheGauges {
  readonly entries: number;
  readonly bytes: number;
  /** Entries pushed out to make room, since the start. */
  readonly evictions: number;
  /** New entries the admission filter let in, and kept out, since the start. */
  readonly admitted: number;
  readonly refused: number;
  /** Times the admission filter saw popularity shift and forgot its counts, since the start. */
  readonly shifts: number;
  /** The admission window's share of the bound now; undefined without admission. */
  readonly windowShare: number | undefined;
}

/** What the gauges read at scrape time. */
export interface LiveState {
  readonly cache: () => CacheGauges;
  /** Requests being answered now. */
  readonly inFlight: () => number;
  /** Requests waiting on a fill another request leads (Flights#waiting). */
  readonly fillWaiting: () => number;
  /** The last origin health probe's verdict. */
  readonly originUp: () => boolean;
  /** The origin connections (OriginClient#connections). */
  readonly originConnections: () => { readonly open: number; readonly waiting: number };
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function methodLabel(method: string): string {
  return method === 'GET' || method === 'HEAD' ? method : 'other';
}

export class GatewayMetrics {
  readonly registry: Registry;
  readonly #requests: RequestSeries;
  readonly #originRequests: Counter<'status'>;
  readonly #originDuration: Histogram;
  readonly #coalesced: Counter;
  readonly #revalidations: Counter<'outcome'>;
  readonly #staleServed: Counter<'reason'>;
  readonly #invalidations: Counter<'cause'>;
  readonly #purges: Counter<'kind' | 'mode'>;
  readonly #purged: Counter;
  readonly #eventPurges: Counter<'source' | 'result'>;
  readonly #refused: Counter<'reason'>;
  /** Body bytes by coding, counted in plain numbers on every send and handed to prom-client when scraped. */
  readonly #bodyBytes = new Map<string, number>();
  readonly #compression: Counter<'encoding' | 'stage'>;

  constructor(registry: Registry, live: LiveState, processMetrics: ProcessMetricsOptions) {
    const cache = live.cache;
    this.registry = registry;
    collectProcessMetrics(registry, 'catalog_gateway', processMetrics);
    const registers = [registry];
    this.#requests = new RequestSeries(registry, {
      counter: { name: 'catalog_gateway_http_requests_total', help: 'Requests answered by the gateway, by route template, method, status and cache result.' },
      histogram: {
        name: 'catalog_gateway_request_duration_seconds',
        help: 'Time from request arrival to the last byte of the response, by route template and cache result.',
        buckets: DURATION_BUCKETS,
      },
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
    // Read from the cache's own running totals at scrape time, so the cache needs no callback into metrics.
    const cacheTotal = (name: string, help: string, total: (gauges: CacheGauges) => number): void => {
      let counted = 0;
      new Counter({
        name,
        help,
        registers,
        collect() {
          const now = total(cache());
          this.inc(now - counted);
          counted = now;
        },
      });
    };
    cacheTotal('catalog_gateway_cache_evictions_total', 'Stored responses pushed out of the cache to make room for new ones.', (c) => c.evictions);
    const admissionsCounted = { admitted: 0, refused: 0 };
    new Counter({
      name: 'catalog_gateway_cache_admissions_total',
      help: 'New entries the admission filter judged against the entries they would push out: admitted or refused.',
      labelNames: ['decision'],
      registers,
      collect() {
        const now = cache();
        for (const decision of ['admitted', 'refused'] as const) {
          this.inc({ decision }, now[decision] - admissionsCounted[decision]);
          admissionsCounted[decision] = now[decision];
        }
      },
    });
    cacheTotal(
      'catalog_gateway_cache_popularity_shifts_total',
      'Times the admission filter saw popularity shift (hit ratio down, requests for keys it had just refused up) and forgot its counts.',
      (c) => c.shifts,
    );
    new Gauge({
      name: 'catalog_gateway_cache_admission_window_ratio',
      help: "The admission window's share of the cache bound: 0.01 while frequency decides, growing toward 1 (all of the bound: plain LRU) while plain LRU would hit more (recency-biased requests). Absent without admission.",
      registers,
      collect() {
        const share = cache().windowShare;
        if (share !== undefined) this.set(share);
      },
    });
    this.#originRequests = new Counter({
      name: 'catalog_gateway_origin_requests_total',
      help: 'Requests the gateway sent to the origin (fills and relays), by origin status, or "error" when no complete answer came.',
      labelNames: ['status'],
      registers,
    });
    this.#originDuration = new Histogram({
      name: 'catalog_gateway_origin_request_duration_seconds',
      help: 'Time the origin took to answer a fill or a relay, whole body included.',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#coalesced = new Counter({
      name: 'catalog_gateway_coalesced_requests_total',
      help: 'Requests that waited for a fill already in flight instead of asking the origin themselves.',
      registers,
    });
    this.#revalidations = new Counter({
      name: 'catalog_gateway_revalidations_total',
      help: 'Stored responses validated with the origin, by outcome: not-modified (304, no body), replaced (a full answer), failed.',
      labelNames: ['outcome'],
      registers,
    });
    this.#staleServed = new Counter({
      name: 'catalog_gateway_stale_served_total',
      help: 'Stale stored responses sent, by why it was allowed: stale-while-revalidate, stale-if-error, max-stale.',
      labelNames: ['reason'],
      registers,
    });
    this.#invalidations = new Counter({
      name: 'catalog_gateway_invalidations_total',
      help: 'Stored targets invalidated, by cause: unsafe-request (the answer to an unsafe request, RFC 9111 §4.4), validation (a validation retired the stored response: a newer answer that may not be stored, §4.3.3, or a 304 that makes it unstorable).',
      labelNames: ['cause'],
      registers,
    });
    for (const cause of INVALIDATION_CAUSES) this.#invalidations.inc({ cause }, 0);
    this.#purges = new Counter({
      name: 'catalog_gateway_purges_total',
      help: 'Purges applied, by selector kind (tags, urls, prefix, all) and mode (hard: removed, soft: marked stale).',
      labelNames: ['kind', 'mode'],
      registers,
    });
    this.#purged = new Counter({
      name: 'catalog_gateway_purged_entries_total',
      help: 'Cache entries removed or marked stale by purges.',
      registers,
    });
    this.#eventPurges = new Counter({
      name: 'catalog_gateway_event_purges_total',
      help: "An availability event's purge reaching this process, by source (delivery: the origin's webhook; stream: another host's copy) and result (applied, or repeat: that event was applied here already and is not again). Applied per event is applied over catalog_gateway_events_received_total.",
      labelNames: ['source', 'result'],
      registers,
    });
    for (const source of ['delivery', 'stream']) for (const result of ['applied', 'repeat']) this.#eventPurges.inc({ source, result }, 0);
    new Gauge({
      name: 'catalog_gateway_in_flight_requests',
      help: 'Requests being answered now.',
      registers,
      collect() {
        this.set(live.inFlight());
      },
    });
    new Gauge({
      name: 'catalog_gateway_fill_waiting_requests',
      help: 'Requests waiting on a fill already in flight for their key, until its answer serves them or sends them to ask on their own.',
      registers,
      collect() {
        this.set(live.fillWaiting());
      },
    });
    new Gauge({
      name: 'catalog_gateway_origin_up',
      help: "1 when the origin's health check (gateway.upstream.probe) last found it up, else 0.",
      registers,
      // Across workers: up only when every worker sees it up.
      aggregator: 'min',
      collect() {
        this.set(live.originUp() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'catalog_gateway_origin_connections',
      help: 'Origin connections open (gateway.upstream.connections at most).',
      registers,
      collect() {
        this.set(live.originConnections().open);
      },
    });
    new Gauge({
      name: 'catalog_gateway_origin_requests_waiting',
      help: 'Requests to the origin waiting for a connection: above zero for long, every origin connection is busy, or lost to the pool.',
      registers,
      collect() {
        this.set(live.originConnections().waiting);
      },
    });
    this.#refused = new Counter({
      name: 'catalog_gateway_refused_requests_total',
      help: "Requests refused before a handler saw them, by reason: the HTTP parser's error code (bad framing, oversized headers, timeouts), CONNECT, or expectation (an Expect other than 100-continue).",
      labelNames: ['reason'],
      registers,
    });
    const bodyBytes = this.#bodyBytes;
    new Counter({
      name: 'catalog_gateway_response_body_bytes_total',
      help: 'Body bytes sent to clients as they went on the wire, by content coding (identity, gzip, br, zstd).',
      labelNames: ['encoding'],
      registers,
      // prom-client's `inc` hashes its labels on every call: a cost on every hit.
      collect() {
        this.reset();
        for (const [encoding, bytes] of bodyBytes) this.inc({ encoding }, bytes);
      },
    });
    this.#compression = new Counter({
      name: 'catalog_gateway_compression_bytes_total',
      help: 'Bodies compressed at fill, by coding: bytes in (identity) and out (compressed); in / out is the compression ratio.',
      labelNames: ['encoding', 'stage'],
      registers,
    });
  }

  /** A body sent, in bytes on the wire, by its content coding (`identity` for none). */
  bodySent(encoding: string, bytes: number): void {
    if (bytes > 0) this.#bodyBytes.set(encoding, (this.#bodyBytes.get(encoding) ?? 0) + bytes);
  }

  /** An answer compressed at fill: its size before and after, whose ratio is the compression ratio. */
  compressed(encoding: string, before: number, after: number): void {
    this.#compression.inc({ encoding, stage: 'in' }, before);
    this.#compression.inc({ encoding, stage: 'out' }, after);
  }

  /** A request refused before a handler saw it (parser error code, `CONNECT`). */
  refused(reason: string): void {
    this.#refused.inc({ reason });
  }

  /** A purge taken here (by the API or an event), once, whatever processes it reaches. */
  purge(kind: PurgeSelector['kind'], soft: boolean): void {
    this.#purges.inc({ kind, mode: soft ? 'soft' : 'hard' });
  }

  /** Entries this process's cache removed or marked stale for a purge, its own or another's. */
  purgedEntries(entries: number): void {
    this.#purged.inc(entries);
  }

  eventPurge(source: 'delivery' | 'stream', applied: boolean): void {
    this.#eventPurges.inc({ source, result: applied ? 'applied' : 'repeat' });
  }

  request(route: MetricRoute, method: string, status: number, cache: CacheResult, seconds: number): void {
    this.#requests.child(route, methodLabel(method), status, cache).observe(seconds);
  }

  originAnswer(status: number | 'error', seconds: number): void {
    this.#originRequests.inc({ status });
    this.#originDuration.observe(seconds);
  }

  coalesced(): void {
    this.#coalesced.inc();
  }

  revalidation(outcome: RevalidationOutcome): void {
    this.#revalidations.inc({ outcome });
  }

  staleServed(reason: StaleReason): void {
    this.#staleServed.inc({ reason });
  }

  invalidated(cause: InvalidationCause, targets: number): void {
    this.#invalidations.inc({ cause }, targets);
  }
}
