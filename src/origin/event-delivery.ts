/**
 * Delivers the outbox's events to their receivers the Standard Webhooks way: a signed `POST`
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`, signed with the `standardwebhooks`
 * package), at least once. A 2xx removes the event; anything else (a non-2xx, a refused
 * connection, a timeout) puts it back with exponential backoff, for `retryForSeconds`, after
 * which it is dropped and counted as abandoned. An event is signed afresh at each attempt, with
 * the same `webhook-id`, so receivers dedupe retries by id.
 *
 * Receivers do not wait on each other: at most a few deliveries to one registration are in flight
 * (circulation-db.ts, PER_RECEIVER), so a receiver that hangs or refuses holds back only its own
 * events. A registration to which every delivery failed for `disableAfterMs` (a replica that is
 * gone for good, say) is disabled and its queue dropped, so a fleet that scaled down leaves no
 * growing outbox behind; registering its URL again enables it.
 *
 * A commit wakes the worker at once; otherwise it sleeps until the next event falls due. The
 * outbox is the only state: a restarted origin picks up exactly what was not delivered.
 */
import { request } from 'undici';
import { Webhook } from 'standardwebhooks';
import type { Logger } from '../shared/logger.ts';
import type { CirculationDb, OutboxRow } from './circulation-db.ts';
import type { OriginMetrics } from './metrics.ts';

export interface DeliveryOptions {
  /** How long a failing event is retried before it is dropped. */
  readonly retryForMs: number;
  /** How long every delivery to a registration may fail before it is disabled. */
  readonly disableAfterMs: number;
  /** Time allowed for one attempt, connection to answer. */
  readonly attemptTimeoutMs: number;
  readonly now: () => number;
}

/** Events in flight at once, each for a different book (one book's events go one by one). */
const CONCURRENCY = 32;
const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 5 * 60_000;
/** An idle worker still looks this often, so a clock moved by hand in tests is noticed. */
const IDLE_POLL_MS = 1000;

/** Exponential backoff with jitter: 0.5 s, 1 s, 2 s … up to 5 min, each ±25 %. */
export function retryDelayMs(attempts: number): number {
  const base = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** attempts);
  return Math.round(base * (0.75 + Math.random() * 0.5));
}

export class EventDelivery {
  readonly #db: CirculationDb;
  readonly #metrics: OriginMetrics;
  readonly #logger: Logger;
  readonly #options: DeliveryOptions;
  readonly #inFlight = new Set<number>();
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(db: CirculationDb, metrics: OriginMetrics, logger: Logger, options: DeliveryOptions) {
    this.#db = db;
    this.#metrics = metrics;
    this.#logger = logger;
    this.#options = options;
  }

  /** Looks for due events now (after a commit, or at start). */
  wake(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const row of this.#db.due(CONCURRENCY * 2)) {
      if (this.#inFlight.size >= CONCURRENCY) break;
      if (this.#inFlight.has(row.seq)) continue;
      this.#inFlight.add(row.seq);
      void this.#attempt(row).finally(() => {
        this.#inFlight.delete(row.seq);
        this.wake();
      });
    }
    this.#sleep();
  }

  #sleep(): void {
    if (this.#stopped || this.#inFlight.size > 0) return;
    const next = this.#db.nextDue();
    const wait = next === undefined ? IDLE_POLL_MS : Math.min(IDLE_POLL_MS, Math.max(0, next - this.#options.now()));
    this.#timer = setTimeout(() => {
      this.wake();
    }, wait);
    this.#timer.unref();
  }

  async #attempt(row: OutboxRow): Promise<void> {
    const id = row.messageId;
    const sentAt = new Date(this.#options.now());
    let failure: string;
    try {
      const signature = new Webhook(row.secret).sign(id, sentAt, row.payload);
      const res = await request(row.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: row.payload,
        headersTimeout: this.#options.attemptTimeoutMs,
        bodyTimeout: this.#options.attemptTimeoutMs,
        signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#options.attemptTimeoutMs)]),
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        if (this.#stopped) return;
        this.#db.delivered(row.seq);
        this.#db.deliveredTo(row.webhookId);
        this.#metrics.eventDelivered('delivered', (this.#options.now() - row.createdMs) / 1000);
        return;
      }
      failure = `answered ${res.statusCode}`;
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
    if (this.#stopped) return;
    const disabled = this.#db.failedTo(row.webhookId, this.#options.now(), this.#options.disableAfterMs);
    if (disabled !== undefined) {
      this.#metrics.webhookDisabled(disabled.dropped);
      this.#logger.error(
        { webhook: `wh_${row.webhookId}`, url: row.url, failingForMs: this.#options.disableAfterMs, dropped: disabled.dropped, failure },
        'webhook disabled: every delivery failed for the disable time; its queued events are dropped',
      );
      return;
    }
    if (this.#options.now() - row.createdMs >= this.#options.retryForMs) {
      this.#db.delivered(row.seq);
      this.#metrics.eventDelivered('abandoned');
      this.#logger.error({ webhook: `wh_${row.webhookId}`, event: id, attempts: row.attempts + 1, failure }, 'event dropped after its retry window');
      return;
    }
    this.#db.retryAt(row.seq, this.#options.now() + retryDelayMs(row.attempts));
    this.#metrics.eventDelivered('failed');
    this.#logger.warn({ webhook: `wh_${row.webhookId}`, event: id, attempts: row.attempts + 1, failure }, 'event delivery failed; will retry');
  }

  /** Stops delivering; events in flight are abandoned to the outbox, to be sent again after a restart. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
  }
}
