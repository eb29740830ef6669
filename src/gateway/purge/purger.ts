/**
 * The one place a purge happens, whoever asked (the purge API, an availability event): the store
 * removes or marks the entries, the fills in flight are let go so that a request arriving after
 * the purge asks the origin afresh instead of joining a fill that may carry the purged content,
 * and the purge is counted.
 */
import type { Coalescer } from '../fill/coalescer.ts';
import type { FillOutcome } from '../fill/fill.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { PurgeSelector } from '../store/purge-log.ts';
import type { ResponseCache } from '../store/response-cache.ts';

export class Purger {
  readonly #cache: ResponseCache;
  readonly #coalescer: Coalescer<FillOutcome>;
  readonly #metrics: GatewayMetrics;
  readonly #now: () => number;

  constructor(cache: ResponseCache, coalescer: Coalescer<FillOutcome>, metrics: GatewayMetrics, now: () => number) {
    this.#cache = cache;
    this.#coalescer = coalescer;
    this.#metrics = metrics;
    this.#now = now;
  }

  /** Returns the number of entries purged. */
  purge(selector: PurgeSelector, soft: boolean): number {
    const purged = this.#cache.purge(selector, soft, this.#now());
    this.#coalescer.detachAll();
    this.#metrics.purge(selector.kind, soft, purged);
    return purged;
  }
}
