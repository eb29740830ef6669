/**
 * The catch-up's metrics (catch-up.ts): events replayed from the origin's event log, and how each
 * catch-up ended. A gap means events were missed that no replay can give back, so entries stored
 * before it were revalidated; it is worth an alert when it is not a restart after a long downtime.
 */
import { Counter, type Registry } from 'prom-client';

export type CatchUpKind = 'caught-up' | 'gap' | 'unreachable';

const KINDS: readonly CatchUpKind[] = ['caught-up', 'gap', 'unreachable'];

export class CatchUpMetrics {
  readonly #replayed: Counter;
  readonly #catchUps: Counter<'outcome'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#replayed = new Counter({
      name: 'catalog_gateway_events_replayed_total',
      help: "Availability events read from the origin's event log (GET /v1/events) and applied: missed while the gateway was stopped or cut off, or lost as webhooks. One that also arrives by webhook purges once.",
      registers,
    });
    this.#catchUps = new Counter({
      name: 'catalog_gateway_event_catchups_total',
      help: "Catch-ups with the origin's event log, by outcome: caught-up, gap (the log no longer has events this gateway missed: 410), unreachable (the log could not be read).",
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of KINDS) this.#catchUps.inc({ outcome }, 0);
  }

  replayed(events: number): void {
    this.#replayed.inc(events);
  }

  caughtUp(outcome: CatchUpKind): void {
    this.#catchUps.inc({ outcome });
  }
}
