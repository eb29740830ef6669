/**
 * The one place a purge happens, whoever asked (the purge API, an availability event, another
 * process of the fleet): the store removes or marks the entries, the fills in flight are let go so
 * that a request arriving after the purge asks the origin afresh instead of joining a fill that
 * may carry the purged content, and the purge is counted. A purge taken here is then handed to the
 * fan-out (the fleet's purge stream, or the primary of this host's workers) so that every other
 * process applies it too.
 */
import type { Coalescer } from '../fill/coalescer.ts';
import type { FillOutcome } from '../fill/fill.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { PurgeSelector } from '../store/purge-log.ts';
import type { ResponseCache } from '../store/response-cache.ts';

/** Takes a purge from the admin API or an event: this process's Purger, or a primary handing it to its workers. */
export interface PurgeTaker {
  /** Resolves to the number of entries purged. */
  purge(selector: PurgeSelector, soft: boolean): number | Promise<number>;
}

/** Carries a purge this process took to the processes it shares a cache with. */
export type PurgeFanOut = (selector: PurgeSelector, soft: boolean) => void;

export class Purger implements PurgeTaker {
  readonly #cache: ResponseCache;
  readonly #coalescer: Coalescer<FillOutcome>;
  readonly #metrics: GatewayMetrics;
  readonly #now: () => number;
  readonly #fanOut: PurgeFanOut | undefined;

  constructor(cache: ResponseCache, coalescer: Coalescer<FillOutcome>, metrics: GatewayMetrics, now: () => number, fanOut?: PurgeFanOut) {
    this.#cache = cache;
    this.#coalescer = coalescer;
    this.#metrics = metrics;
    this.#now = now;
    this.#fanOut = fanOut;
  }

  /** Purges here and everywhere this process shares its cache with; returns the entries purged here. */
  purge(selector: PurgeSelector, soft: boolean): number {
    const purged = this.apply(selector, soft);
    this.#fanOut?.(selector, soft);
    return purged;
  }

  /** Applies a purge another process took, here only. */
  apply(selector: PurgeSelector, soft: boolean): number {
    const purged = this.#cache.purge(selector, soft, this.#now());
    this.#coalescer.detachAll();
    this.#metrics.purge(selector.kind, soft, purged);
    return purged;
  }
}
