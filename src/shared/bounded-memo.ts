/**
 * What a computation gave for a key, kept up to a bound and then forgotten all at once: one
 * `clear` costs a burst of recomputation and nothing else, and no order has to be kept per lookup
 * (an LRU's bookkeeping on a hit). For values that are cheap to make again and keys that mostly
 * repeat (targets, field values, header shapes); values already handed out stay valid.
 *
 * The key last found is compared before the table: the keys are mostly strings a request brings,
 * new each time, whose lookup hashes every character (a 60-character target: about 85 ns) where
 * comparing them with the last one costs a few, and a client repeats its target, its Host and its
 * User-Agent from one request to the next.
 */
export class BoundedMemo<K, V> {
  readonly #limit: number;
  readonly #kept = new Map<K, V>();
  #lastKey: K | undefined;
  #lastValue: V | undefined;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: K): V | undefined {
    if (key === this.#lastKey) return this.#lastValue;
    const value = this.#kept.get(key);
    if (value !== undefined) {
      this.#lastKey = key;
      this.#lastValue = value;
    }
    return value;
  }

  /** Keeps `value` for `key`, first forgetting everything when the bound is reached; returns `value`. */
  keep(key: K, value: V): V {
    if (this.#kept.size >= this.#limit) {
      this.#kept.clear();
      this.#lastKey = undefined;
    }
    this.#kept.set(key, value);
    if (key === this.#lastKey) this.#lastValue = value;
    return value;
  }

  get size(): number {
    return this.#kept.size;
  }
}
