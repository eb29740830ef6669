/**
 * `POST /events` on the admin listener: the origin's webhook deliveries (contract, "Events"),
 * verified the Standard Webhooks way with the `standardwebhooks` package (signature over id,
 * timestamp and body; timestamp within 5 minutes), and turned into a purge of the tags the
 * change concerns (availability.ts), as a replay of the origin's event log is (catch-up.ts).
 *
 * Deliveries are at least once. A retry (same `webhook-id`, signed afresh) is acknowledged with
 * 200 and purges nothing again; the very same message seen twice (same id, timestamp and
 * signature: a capture played back) is refused with 409. Ids are remembered for 10 minutes,
 * longer than the timestamp tolerance, after which a replay fails the timestamp check instead.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { growingLru } from '../../shared/growing-lru.ts';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { sendJson } from '../../shared/admin-server.ts';
import type { Logger } from '../../shared/logger.ts';
import { problem, sendProblem, type Problem } from '../../shared/problem.ts';
import { readJsonText } from '../../shared/request-body.ts';
import { AVAILABILITY_CHANGED, availabilitySelector, isAvailabilityChanged } from './availability.ts';
import type { EventMetrics } from './event-metrics.ts';
import type { PurgeTaker } from '../purge/purger.ts';

export interface EventReceiverOptions {
  /** The registration's secret (`whsec_…`); undefined while the gateway is not registered. */
  readonly secret: () => string | undefined;
  /** Mark stale instead of removing. */
  readonly soft: boolean;
  readonly now: () => number;
}

const INSTANCE = '/events';
const MAX_BODY_BYTES = 64 * 1024;
const REMEMBERED_IDS = 100_000;
const REMEMBER_MS = 10 * 60_000;
/** Longest `webhook-id` a refusal logs: the sender of a refused event is anyone who reaches the admin port. */
const LOGGED_ID_CHARS = 128;

function loggedId(id: string | string[] | undefined): string | undefined {
  if (id === undefined) return undefined;
  const text = String(id);
  return text.length <= LOGGED_ID_CHARS ? text : `${text.slice(0, LOGGED_ID_CHARS)}…`;
}

export class EventReceiver {
  readonly #options: EventReceiverOptions;
  readonly #purger: PurgeTaker;
  readonly #metrics: EventMetrics;
  readonly #logger: Logger;
  /** `webhook-id` → the `timestamp signature` it was first accepted with. */
  readonly #seen = growingLru<string, string>(REMEMBERED_IDS, REMEMBER_MS);

  constructor(options: EventReceiverOptions, purger: PurgeTaker, metrics: EventMetrics, logger: Logger) {
    this.#options = options;
    this.#purger = purger;
    this.#metrics = metrics;
    this.#logger = logger;
  }

  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const answer = await this.#receive(req);
    if ('problem' in answer) {
      this.#metrics.eventReceived('refused');
      this.#logger.warn({ webhookId: loggedId(req.headers['webhook-id']), detail: answer.problem.detail }, 'event refused');
      sendProblem(res, answer.problem, INSTANCE, false);
    } else {
      sendJson(res, 200, answer.ok);
    }
  };

  async #receive(req: IncomingMessage): Promise<{ readonly problem: Problem } | { readonly ok: Record<string, unknown> }> {
    const body = await readJsonText(req, MAX_BODY_BYTES);
    if (!body.ok) return body;
    const secret = this.#options.secret();
    if (secret === undefined) return { problem: problem('not-ready', 'the gateway has no event registration yet') };
    const id = String(req.headers['webhook-id'] ?? '');
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let event: unknown;
    try {
      event = new Webhook(secret).verify(body.text, headers);
    } catch (err) {
      if (err instanceof WebhookVerificationError) return { problem: problem('webhook-signature', `the event is not accepted: ${err.message}`) };
      return { problem: problem('invalid-body', 'the event is not valid JSON') };
    }
    const fingerprint = `${headers['webhook-timestamp']} ${headers['webhook-signature']}`;
    const seen = this.#seen.get(id);
    if (seen === fingerprint) return { problem: problem('webhook-replayed', `event ${id.slice(0, 64)} was received before`) };
    if (seen !== undefined) {
      this.#metrics.eventReceived('duplicate');
      return { ok: { purged: 0, duplicate: true } };
    }
    if (!isAvailabilityChanged(event)) {
      if ((event as { type?: unknown } | null)?.type === AVAILABILITY_CHANGED)
        return { problem: problem('invalid-body', 'the event data is not a (book, branch, available) change') };
      // A kind this gateway does not act on: acknowledged, so the sender does not retry it forever.
      this.#seen.set(id, fingerprint);
      return { ok: { purged: 0 } };
    }
    const purged = await this.#purger.purge(availabilitySelector(event), this.#options.soft, { kind: 'event', id });
    this.#seen.set(id, fingerprint);
    const changedAt = Date.parse(event.timestamp);
    this.#metrics.eventReceived('purged', Number.isNaN(changedAt) ? undefined : Math.max(0, this.#options.now() - changedAt) / 1000);
    return { ok: { purged } };
  }
}
