/**
 * Request coalescing (Varnish's waiting list): while a fill for a key is in flight, every other
 * request for that key waits for the same outcome instead of asking the origin again. The fill
 * belongs to no client, so a client that goes away cannot cancel it for the others.
 */
import type { CacheKey } from './response-cache.ts';

export interface Joined<T> {
  readonly outcome: Promise<T>;
  /** True for the request that started the fill, false for those that joined it. */
  readonly leader: boolean;
}

export class Coalescer<T> {
  readonly #inFlight = new Map<CacheKey, Promise<T>>();

  /**
   * Joins the fill in flight for `key`, or starts one with `fill`. The key is released only once
   * the fill has settled, and fills store before they settle, so a request that arrives after
   * the release finds the stored response.
   */
  join(key: CacheKey, fill: () => Promise<T>): Joined<T> {
    const running = this.#inFlight.get(key);
    if (running !== undefined) return { outcome: running, leader: false };
    const outcome = fill().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, outcome);
    return { outcome, leader: true };
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }
}
