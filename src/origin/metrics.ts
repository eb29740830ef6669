/**
 * The origin's Prometheus metrics, registered once per origin on its own registry. Labels are
 * bounded: the route is a template or "unmatched", never a raw path.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { collectProcessMetrics } from '../shared/process-metrics.ts';
import type { RouteLabel } from '../shared/request-target.ts';
import type { CirculationRoute } from './circulation.ts';
import type { SearchPlan } from './fts-query.ts';

export class OriginMetrics {
  readonly #requests: Counter<'route' | 'status'>;
  readonly #duration: Histogram<'route'>;
  readonly #dbTime: Histogram<'plan'>;
  readonly #deliveries: Counter<'outcome'>;
  readonly #refused: Counter<'reason'>;
  readonly #deliveryLag: Histogram;
  readonly #disabled: Counter;
  readonly #dropped: Counter;

  /** `outboxDepth` is read at scrape time, so the gauge is never stale. */
  constructor(registry: Registry, outboxDepth: () => number) {
    collectProcessMetrics(registry, 'catalog_origin', { gcDurations: true });
    this.#requests = new Counter({
      name: 'catalog_origin_http_requests_total',
      help: 'HTTP requests answered by the origin, by route template and status.',
      labelNames: ['route', 'status'],
      registers: [registry],
    });
    this.#duration = new Histogram({
      name: 'catalog_origin_request_duration_seconds',
      help: 'Time from request to the end of the response, by route template.',
      labelNames: ['route'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    });
    this.#dbTime = new Histogram({
      name: 'catalog_origin_db_query_duration_seconds',
      help: 'Database time of one search (ranked ids and the page of books), by plan: term index or FTS5 match.',
      labelNames: ['plan'],
      buckets: [0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05],
      registers: [registry],
    });
    this.#deliveries = new Counter({
      name: 'catalog_origin_event_deliveries_total',
      help: 'Webhook delivery attempts, by outcome: delivered (2xx), failed (to be retried), abandoned (retry window over).',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.#refused = new Counter({
      name: 'catalog_origin_refused_requests_total',
      help: "Requests refused before a handler saw them, by reason: the HTTP parser's error code (bad framing, oversized headers, timeouts), CONNECT, or expectation (an Expect other than 100-continue).",
      labelNames: ['reason'],
      registers: [registry],
    });
    this.#deliveryLag = new Histogram({
      name: 'catalog_origin_event_delivery_lag_seconds',
      help: 'Time from the commit of a change to the 2xx of its event delivery.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers: [registry],
    });
    this.#disabled = new Counter({
      name: 'catalog_origin_webhooks_disabled_total',
      help: 'Registrations disabled because every delivery to them failed for origin.events.disableAfterSeconds.',
      registers: [registry],
    });
    this.#dropped = new Counter({
      name: 'catalog_origin_events_dropped_total',
      help: 'Queued events dropped with the registration they were for, when it was disabled.',
      registers: [registry],
    });
    new Gauge({
      name: 'catalog_origin_outbox_depth',
      help: 'Events committed and not yet delivered, over all registrations.',
      registers: [registry],
      collect() {
        this.set(outboxDepth());
      },
    });
  }

  /** A request refused before a handler saw it (parser error code, `CONNECT`). */
  refused(reason: string): void {
    this.#refused.inc({ reason });
  }

  eventDelivered(outcome: 'delivered' | 'failed' | 'abandoned', lagSeconds?: number): void {
    this.#deliveries.inc({ outcome });
    if (lagSeconds !== undefined) this.#deliveryLag.observe(lagSeconds);
  }

  webhookDisabled(dropped: number): void {
    this.#disabled.inc();
    this.#dropped.inc(dropped);
  }

  request(route: RouteLabel | CirculationRoute, status: number, seconds: number): void {
    this.#requests.inc({ route, status: String(status) });
    this.#duration.observe({ route }, seconds);
  }

  search(plan: SearchPlan['kind'], seconds: number): void {
    this.#dbTime.observe({ plan }, seconds);
  }
}
