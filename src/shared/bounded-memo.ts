/**
 * What a computation gave for a key, kept up to a bound and then forgotten all at once: one
 * `clear` costs a burst of recomputation and nothing else, and no order has to be kept per lookup
 * (an LRU's bookkeeping on a hit). For values that are cheap to make again and keys that mostly
 * repeat (targets, field values, header shapes); values already handed out stay valid.
 */
export class BoundedMemo<K, V> {
  readonly #limit: number;
  readonly #kept = new Map<K, V>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: K): V | undefined {
    return this.#kept.get(key);
  }

  /** Keeps `value` for `key`, first forgetting everything when the bound is reached; returns `value`. */
  keep(key: K, value: V): V {
    if (this.#kept.size >= this.#limit) this.#kept.clear();
    this.#kept.set(key, value);
    return value;
  }

  get size(): number {
    return this.#kept.size;
  }
}
