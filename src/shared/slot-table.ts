/**
 * A small table of the entries a long-lived owner holds for a short while each (a connection's
 * streams), kept in two arrays of slots that never shrink: an entry deleted empties its slot, and
 * the next one added takes the first empty slot. It reads as a Map, or as a Set with `add`.
 *
 * Why not a Map or a Set: V8 keeps their entries in a hash table that it rebuilds every few
 * additions once deletions have filled it, and a table it gives up keeps the entries it held (for
 * an iterator that may still walk it) until the next full collection. A connection's Map lives in
 * the old generation, and so does each table it makes and gives up, dead but not yet collected:
 * the young collector takes every stream such a table still names as live. Nearly every stream,
 * with its request and everything they refer to, was copied into the old generation, and a full
 * collection ran every few thousand requests (docs/performance.md, "HTTP/2 streams kept out of the
 * old generation"). Slots hold an entry only while it is in the table; the arrays are reallocated
 * only to grow, up to the most entries held at once.
 *
 * A lookup is a linear search over the entries a connection holds at once: nghttp2 bounds its open
 * streams to `http.http2.maxConcurrentStreams`, and a stream leaves as Node destroys it. Measured
 * (a lookup that misses, an addition and a deletion, as each new stream makes): 0.05 µs with 16
 * entries, 0.5 µs with 128, 2.3 µs with 1,000; a Map's hash is about as fast at 16 and faster past
 * it, and what the young collector copied for it cost a hit about 4 µs. The configuration bounds
 * `maxConcurrentStreams` at 1,000 for that reason.
 */
export class SlotTable<K, V> {
  /** `undefined` marks an empty slot: no key is undefined. */
  readonly #keys: (K | undefined)[] = [];
  readonly #values: (V | undefined)[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(key: K): V | undefined {
    const at = this.#keys.indexOf(key);
    return at === -1 ? undefined : this.#values[at];
  }

  set(key: K, value: V): this {
    let at = this.#keys.indexOf(key);
    if (at === -1) {
      at = this.#keys.indexOf(undefined);
      if (at === -1) at = this.#keys.length;
      this.#keys[at] = key;
      this.#size++;
    }
    this.#values[at] = value;
    return this;
  }

  /** Adds `key` as its own value: the table as a Set. */
  add(this: SlotTable<K, K>, key: K): SlotTable<K, K> {
    return this.set(key, key);
  }

  delete(key: K): boolean {
    const at = this.#keys.indexOf(key);
    if (at === -1) return false;
    this.#keys[at] = undefined;
    this.#values[at] = undefined;
    this.#size--;
    return true;
  }

  /** Calls `visit` for each entry, in slot order; entries deleted meanwhile are skipped, and those added may be visited. */
  forEach(visit: (value: V, key: K) => void): void {
    const keys = this.#keys;
    for (let at = 0; at < keys.length; at++) {
      const key = keys[at];
      if (key !== undefined) visit(this.#values[at] as V, key);
    }
  }
}
