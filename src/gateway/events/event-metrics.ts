/**
 * The event receiver's metrics, registered by whichever process receives events: the gateway
 * itself, or the primary of its workers (the purges an event causes are counted where they are
 * applied, by GatewayMetrics).
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** `purged`: a verified new event, purged; `duplicate`: a retry of one already handled; `refused`: not verified, or replayed. */
export type EventOutcome = 'purged' | 'duplicate' | 'refused';

export class EventMetrics {
  readonly #events: Counter<'outcome'>;
  readonly #purgeLag: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#purgeLag = new Histogram({
      name: 'catalog_gateway_purge_lag_seconds',
      help: 'Time from the change an event reports (its timestamp) to the purge it caused.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600],
      registers,
    });
    this.#events = new Counter({
      name: 'catalog_gateway_events_received_total',
      help: 'Webhook events received on the admin listener, by outcome: purged, duplicate (a retry already handled), refused.',
      labelNames: ['outcome'],
      registers,
    });
  }

  eventReceived(outcome: EventOutcome, lagSeconds?: number): void {
    this.#events.inc({ outcome });
    if (lagSeconds !== undefined) this.#purgeLag.observe(lagSeconds);
  }
}
