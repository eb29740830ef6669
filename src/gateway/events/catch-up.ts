/**
 * Replays the origin's event log (`GET /v1/events?after=<seq>`, contract "Events") into the
 * purger: the availability events the gateway missed while it was stopped or cut off from its
 * webhooks, and any whose delivery was lost. Each is applied as the receiver applies a delivery
 * (availability.ts: the same tags, soft or hard as `gateway.events.softPurge` says), under its
 * `webhook-id`, so that an event that is both replayed and delivered purges once (the Purger
 * dedupes by id).
 *
 * The caller keeps the cursor, the seq of the last event applied, and says what to do with each
 * outcome: `caught-up` (every event up to `cursor` applied), `gap` (the origin answered 410: the
 * log no longer reaches the cursor, or the cursor is another database's; events were missed that
 * no replay gives back, so entries stored before now must be revalidated, as after a partition)
 * or `unreachable` (the log could not be read: network error, timeout, an error status or an
 * answer that is not the log; the same remedy until a later catch-up succeeds).
 *
 * `start` polls the log as a backstop to the webhooks (`gateway.events.pollMs`), one catch-up at
 * a time, and reports each advance of the cursor and each gap.
 */
import { request } from 'undici';
import type { Logger } from '../../shared/logger.ts';
import type { PurgeTaker } from '../purge/purger.ts';
import { AVAILABILITY_CHANGED, availabilitySelector, isAvailabilityChanged } from './availability.ts';
import type { CatchUpMetrics } from './catch-up-metrics.ts';

export interface EventCatchUpOptions {
  /** Base URL of the origin (`gateway.origin`). */
  readonly origin: string;
  /** A `catalog:admin` bearer token for the origin, made afresh for each request. */
  readonly token: () => Promise<string>;
  readonly purger: PurgeTaker;
  /** Mark stale instead of removing (`gateway.events.softPurge`), as for a delivered event. */
  readonly soft: boolean;
  readonly metrics: CatchUpMetrics;
  readonly logger: Logger;
  readonly now: () => number;
  /** Time one request to the origin may take, connection to last byte. Default 5000. */
  readonly timeoutMs?: number;
  /** Events asked for at once. Default 1000, the origin's most: the fewest round trips after a long downtime. */
  readonly pageSize?: number;
}

export type CatchUpOutcome =
  { readonly kind: 'caught-up'; readonly cursor: number } | { readonly kind: 'gap'; readonly cursor: number } | { readonly kind: 'unreachable' };

/** What the poll reports: a cursor that advanced, or a gap (with the cursor to go on from). */
export type OnCursor = (cursor: number, outcome: 'caught-up' | 'gap') => void;

interface LoggedEvent {
  readonly seq: number;
  readonly id: string;
  readonly event: unknown;
}

type Read =
  | { readonly kind: 'page'; readonly events: readonly LoggedEvent[]; readonly last: number }
  | { readonly kind: 'expired' }
  | { readonly kind: 'failed'; readonly why: string };

const DEFAULT_PAGE_SIZE = 1000;
const DEFAULT_TIMEOUT_MS = 5000;

function isSeq(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The page of an answer, or why it is not one; seqs must rise past `after`, or paging would not end. */
function parsePage(text: string, after: number | undefined): Read {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: 'failed', why: 'the answer is not JSON' };
  }
  const { events, last } = (body ?? {}) as { events?: unknown; last?: unknown };
  if (!Array.isArray(events) || !isSeq(last)) return { kind: 'failed', why: 'the answer is not an event log page' };
  const page: LoggedEvent[] = [];
  let previous = after ?? 0;
  for (const entry of events as unknown[]) {
    const { seq, id, ...event } = (entry ?? {}) as { seq?: unknown; id?: unknown };
    if (!isSeq(seq) || seq <= previous || typeof id !== 'string' || id === '') return { kind: 'failed', why: 'an event without a rising seq or an id' };
    if ((event as { type?: unknown }).type === AVAILABILITY_CHANGED && !isAvailabilityChanged(event))
      return { kind: 'failed', why: `event ${seq} is not a (book, branch, available) change` };
    page.push({ seq, id, event });
    previous = seq;
  }
  return { kind: 'page', events: page, last };
}

export class EventCatchUp {
  readonly #o: EventCatchUpOptions;
  readonly #timeoutMs: number;
  readonly #pageSize: number;
  readonly #abort = new AbortController();
  #reachable = true;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;

  constructor(options: EventCatchUpOptions) {
    this.#o = options;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  }

  /**
   * Applies every event after `after`, page by page. `undefined`: the caller has applied none and
   * holds nothing an event could concern; it learns where the log stands (a caller that holds
   * entries but lost its cursor must take that for a gap itself). Rejects only when the purger does.
   */
  async catchUp(after: number | undefined): Promise<CatchUpOutcome> {
    const outcome = await this.#replay(after);
    this.#o.metrics.caughtUp(outcome.kind);
    if (outcome.kind !== 'unreachable' && !this.#reachable) {
      this.#reachable = true;
      this.#o.logger.info({ cursor: outcome.cursor }, "the origin's event log is readable again");
    }
    return outcome;
  }

  async #replay(after: number | undefined): Promise<CatchUpOutcome> {
    let cursor = after;
    let replayed = 0;
    let oldest: string | undefined;
    for (;;) {
      const read = await this.#read(cursor);
      if (read.kind === 'failed') return this.#unreachable(read.why, cursor);
      if (read.kind === 'expired') return this.#gap(cursor);
      for (const { seq, id, event } of read.events) {
        // Kinds this gateway does not act on are passed over, as the receiver acknowledges them.
        if (isAvailabilityChanged(event)) {
          await this.#o.purger.purge(availabilitySelector(event), this.#o.soft, { kind: 'event', id });
          oldest ??= event.timestamp;
          replayed++;
          this.#o.metrics.replayed(1);
        }
        cursor = seq;
      }
      if (cursor === undefined || read.events.length < this.#pageSize) {
        if (replayed > 0)
          this.#o.logger.info(
            { replayed, after, cursor, behindMs: oldest === undefined ? undefined : Math.max(0, this.#o.now() - Date.parse(oldest)) },
            "replayed events missed from the origin's event log",
          );
        return { kind: 'caught-up', cursor: cursor ?? read.last };
      }
    }
  }

  async #gap(cursor: number | undefined): Promise<CatchUpOutcome> {
    // The 410 says only that events were missed; where to go on from is where the log stands now.
    const now = await this.#read(undefined);
    if (now.kind !== 'page') return this.#unreachable(now.kind === 'failed' ? now.why : 'the log refused a request without a cursor', cursor);
    this.#o.logger.warn({ after: cursor, last: now.last }, "the origin's event log no longer reaches the last event applied: events were missed");
    return { kind: 'gap', cursor: now.last };
  }

  #unreachable(why: string, cursor: number | undefined): CatchUpOutcome {
    if (this.#reachable && !this.#abort.signal.aborted) {
      this.#reachable = false;
      this.#o.logger.warn({ why, cursor }, "the origin's event log could not be read");
    }
    return { kind: 'unreachable' };
  }

  async #read(after: number | undefined): Promise<Read> {
    const query = after === undefined ? '' : `?after=${after}&limit=${this.#pageSize}`;
    try {
      const res = await request(`${this.#o.origin.replace(/\/$/, '')}/v1/events${query}`, {
        headers: { authorization: `Bearer ${await this.#o.token()}` },
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
      const text = await res.body.text();
      if (res.statusCode === 410) return { kind: 'expired' };
      if (res.statusCode !== 200) return { kind: 'failed', why: `the origin answered ${res.statusCode}` };
      return parsePage(text, after);
    } catch (err) {
      return { kind: 'failed', why: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * Catches up every `everyMs` from `cursor` on (0: never), the next catch-up `everyMs` after the
   * last one ended; reports each advance of the cursor, and each gap, to `onCursor`. Without a
   * cursor, the first poll learns where the log stands.
   */
  start(cursor: number | undefined, onCursor: OnCursor, everyMs: number): void {
    if (everyMs === 0 || this.#abort.signal.aborted) return;
    let at = cursor;
    const poll = async (): Promise<void> => {
      try {
        const outcome = await this.catchUp(at);
        if (this.#abort.signal.aborted || outcome.kind === 'unreachable') return;
        if (outcome.kind === 'gap' || outcome.cursor !== at) {
          at = outcome.cursor;
          onCursor(at, outcome.kind);
        }
      } catch (err) {
        this.#o.logger.error({ err }, "replaying the origin's event log failed");
      }
    };
    const schedule = (): void => {
      this.#timer = setTimeout(() => {
        this.#polling = poll().finally(() => {
          this.#polling = undefined;
          if (!this.#abort.signal.aborted) schedule();
        });
      }, everyMs);
      this.#timer.unref();
    };
    schedule();
  }

  /** Stops the poll and any catch-up under way (which ends `unreachable`); resolves once it has. */
  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#timer);
    await this.#polling;
  }
}
