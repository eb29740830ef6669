/**
 * The one way to forget an entry, whoever asks: the purge API, an availability event, RFC 9111
 * §4.4 invalidation by an unsafe request, a validation that retires the stored response (§4.3.3),
 * another worker of this host or another process of the fleet. Applying a purge records it in the
 * purge log (so a fill already under way cannot undo it), removes or marks stale what the local
 * cache holds, and lets go of the fills in flight (a request after the purge asks the origin
 * afresh instead of joining a fill that may carry what was purged). A purge taken here is then
 * handed to every fan-out (this host's other workers, the fleet's purge stream), and `purge`
 * resolves once they have it, so the next request through any of them cannot be answered with
 * what was purged.
 *
 * An availability event reaches a host of a fleet more than once: the origin delivers it to every
 * registration under one `webhook-id` (Standard Webhooks' message id; ../../origin/circulation-db.ts),
 * and each host that applied it hands it on through the purge stream. The first arrival, by
 * whichever way, is applied and handed on; a later one with the same id is counted and dropped,
 * so each event is applied once per host and not once per host per host.
 */
import { growingLru } from '../../shared/growing-lru.ts';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../metrics.ts';
import type { Tiers } from '../store/tiers.ts';
import type { InvalidationCause, Purge, PurgeLog, PurgeSelector } from './purge-log.ts';

/**
 * Who asked for a purge: the purge API (with the token's subject), an availability event, an
 * unsafe request's answer (§4.4), or a validation whose answer retired the stored response
 * (§4.3.3, or a 304 that makes it unstorable: fill/flight.ts). Only the first two are an
 * operator's purges, logged and counted as such; the last two are invalidations, with a counter
 * of their own and the access-log line of the request that caused them.
 */
export type PurgeCause =
  | { readonly kind: 'api'; readonly sub: string }
  | { readonly kind: 'event'; readonly id: string }
  | { readonly kind: 'invalidation' }
  | { readonly kind: 'retired' };

/** Takes a purge: this process's Purger, or a primary handing one from the admin API or an event to its workers. */
export interface PurgeTaker {
  /** Resolves to the number of entries purged, on every process of this host. */
  purge(selector: PurgeSelector, soft: boolean, cause: PurgeCause): Promise<number>;
}

/**
 * Carries a purge this process took to processes it shares a cache with; resolves, once they have
 * it, to the entries they purged (0 where they do not say), within a bound of their own.
 */
export type PurgeFanOut = (purge: Purge, generation: number) => Promise<number>;

/** What holds fills in flight that a purge must let go of (the single flight, fill/flight.ts). */
export interface InFlight {
  detachAll(): void;
}

export interface PurgerParts {
  readonly tiers: Tiers;
  readonly log: PurgeLog;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  readonly now: () => number;
}

/** The causes that make a purge an invalidation, counted as one (metrics.ts). */
const INVALIDATION_CAUSES: Readonly<Partial<Record<PurgeCause['kind'], InvalidationCause>>> = { invalidation: 'unsafe-request', retired: 'validation' };

/** Event ids remembered, and for how long: far longer than deliveries and the stream take to agree. */
const REMEMBERED_EVENTS = 100_000;
const REMEMBER_EVENT_MS = 10 * 60_000;

export class Purger implements PurgeTaker {
  readonly #p: PurgerParts;
  readonly #fanOuts: PurgeFanOut[] = [];
  readonly #inFlight: InFlight[] = [];
  readonly #events = growingLru<string, true>(REMEMBERED_EVENTS, REMEMBER_EVENT_MS);
  /** Whether one fan-out is the fleet's stream, whose purges are read back into the log. */
  #streamed = false;

  constructor(parts: PurgerParts) {
    this.#p = parts;
  }

  /** Adds fills in flight that every purge lets go of. */
  detaches(inFlight: InFlight): void {
    this.#inFlight.push(inFlight);
  }

  /** Adds a place purges taken here go to; `streamed` for the fleet's stream. */
  fanOutTo(fanOut: PurgeFanOut, streamed = false): void {
    this.#fanOuts.push(fanOut);
    this.#streamed ||= streamed;
  }

  async purge(selector: PurgeSelector, soft: boolean, cause: PurgeCause): Promise<number> {
    if (cause.kind === 'event' && !this.#firstOf(cause.id, 'delivery')) return 0;
    const invalidation = INVALIDATION_CAUSES[cause.kind];
    const purge: Purge = {
      selector,
      soft,
      at: this.#p.now(),
      ...(cause.kind === 'event' ? { event: cause.id } : {}),
      ...(invalidation === undefined ? {} : { invalidation }),
    };
    const generation = this.#p.log.applied(purge, this.#streamed);
    const here = this.#applyToCache(purge);
    const elsewhere = await Promise.all(this.#fanOuts.map((fanOut) => fanOut(purge, generation)));
    const purged = elsewhere.reduce((sum, n) => sum + n, here);
    if (invalidation !== undefined) {
      if (here > 0) this.#p.metrics.invalidated(invalidation, here);
    } else if (cause.kind === 'api' || cause.kind === 'event') {
      this.#p.metrics.purge(selector.kind, soft);
      this.#p.metrics.purgedEntries(here);
      this.#p.logger.info(
        { purge: selector, mode: soft ? 'soft' : 'hard', purged, ...(cause.kind === 'api' ? { sub: cause.sub } : { event: cause.id }) },
        'purge',
      );
    }
    return purged;
  }

  /**
   * Applies a purge another process took (a worker of this gateway, or another host through the
   * fleet's stream), here only; returns the entries it purged here. Each process counts the
   * entries a purge removed from its own cache, so a scrape summed over workers counts each once;
   * an invalidation is counted by the process that took it alone (docs/operations.md).
   */
  apply(purge: Purge): number {
    if (purge.event !== undefined && !this.#firstOf(purge.event, 'stream')) return 0;
    this.#p.log.applied(purge, false);
    const purged = this.#applyToCache(purge);
    if (purge.invalidation === undefined) this.#p.metrics.purgedEntries(purged);
    return purged;
  }

  /** Whether event `id` arrives here for the first time; counts the arrival either way. */
  #firstOf(id: string, source: 'delivery' | 'stream'): boolean {
    const first = !this.#events.has(id);
    if (first) this.#events.set(id, true);
    this.#p.metrics.eventPurge(source, first);
    return first;
  }

  #applyToCache(purge: Purge): number {
    const purged = this.#p.tiers.purge(purge);
    for (const inFlight of this.#inFlight) inFlight.detachAll();
    return purged;
  }
}
