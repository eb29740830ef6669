/**
 * Request coalescing (Varnish's waiting list): while a fill for a key is in flight, every other
 * request for that key waits for the same outcome instead of asking the origin again. The fill
 * belongs to no client, so a client that goes away cannot cancel it for the others.
 *
 * The leader announces as soon as it can (when the origin's header fields are in) whether its
 * outcome may be shared. When it may not (a private answer, say), waiters are released at once to
 * ask on their own, instead of waiting for the leader's body first, and the key is freed.
 */
import type { CacheKey } from '../store/response-cache.ts';

export interface Flight<T> {
  /** Whether waiters may reuse the outcome; known before the outcome itself. */
  readonly shareable: Promise<boolean>;
  readonly outcome: Promise<T>;
}

export interface Joined<T> {
  readonly flight: Flight<T>;
  /** True for the request that started the fill, false for those that joined it. */
  readonly leader: boolean;
}

/** Called by a fill once it knows whether its outcome may be shared; an unannounced fill is shared. */
export type Announce = (shareable: boolean) => void;

export class Coalescer<T> {
  readonly #inFlight = new Map<CacheKey, Flight<T>>();

  /**
   * Joins the fill in flight for `key`, or starts one with `fill`. The key is released once the
   * fill has settled (fills store before they settle, so a request that arrives after the release
   * finds the stored response), or as soon as the fill says its outcome is not to be shared.
   */
  join(key: CacheKey, fill: (announce: Announce) => Promise<T>): Joined<T> {
    const running = this.#inFlight.get(key);
    if (running !== undefined) return { flight: running, leader: false };
    let resolveShareable: (shareable: boolean) => void = () => undefined;
    const shareable = new Promise<boolean>((resolve) => {
      resolveShareable = resolve;
    });
    const release = (): void => {
      if (this.#inFlight.get(key) === flight) this.#inFlight.delete(key);
    };
    const announce: Announce = (canShare) => {
      resolveShareable(canShare);
      if (!canShare) release();
    };
    const outcome = fill(announce).finally(() => {
      resolveShareable(true);
      release();
    });
    const flight: Flight<T> = { shareable, outcome };
    this.#inFlight.set(key, flight);
    return { flight, leader: true };
  }

  /**
   * Lets every fill in flight go on for the requests already waiting on it, but makes the next
   * request for its key start a fill of its own (after a purge, what is in flight may be stale).
   */
  detachAll(): void {
    this.#inFlight.clear();
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }
}
