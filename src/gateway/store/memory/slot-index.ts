/**
 * Keys to slots, and each slot's key and value, in an open-addressed table of typed arrays (linear probing, found by the key's
 * 32-bit hash, which the caller has already computed for the frequency sketch). windowed-lru.ts
 * finds its entries' slots here rather than in a V8 `Map`: a `Map` whose keys come and go takes
 * back a deleted key's place only when it rebuilds its table, once the table is used up, and it
 * allocates the new table where the old one lives, in the old generation; with memory full, every
 * entry that enters evicts one, so the rebuilds came at the rate entries entered (about 30–38 B
 * into the old generation a request with admission), and what reaches the old generation sets how
 * often full collections run (docs/performance.md, "A disk hit's tail"). Here a key that leaves
 * frees its bucket at once (backward-shift deletion: the buckets after it that belong before it
 * move back, so no tombstones pile up), and the table is allocated anew only when the count of
 * keys doubles, outside V8's heap.
 */
import { NONE } from './slot-lists.ts';

/** Buckets the table starts with; it doubles while more than half of them are used. */
const INITIAL_BUCKETS = 1024;

export class SlotIndex<K extends string, V> {
  /** Each bucket's slot + 1; 0 for an empty bucket. */
  #buckets = new Int32Array(INITIAL_BUCKETS);
  #mask = INITIAL_BUCKETS - 1;
  /** Each slot's key hash, and its key (undefined while the slot holds no key). */
  #hashes = new Uint32Array(INITIAL_BUCKETS / 2);
  readonly #keys: (K | undefined)[] = [];
  readonly #values: (V | undefined)[] = [];
  #count = 0;

  get size(): number {
    return this.#count;
  }

  /** The slot of `key` (whose hash is `h`), or NONE. */
  find(key: K, h: number): number {
    const buckets = this.#buckets;
    const mask = this.#mask;
    for (let b = h & mask; ; b = (b + 1) & mask) {
      const held = buckets[b] as number;
      if (held === 0) return NONE;
      const slot = held - 1;
      if (this.#hashes[slot] === h && this.#keys[slot] === key) return slot;
    }
  }

  /** Files `key` (hash `h`, not in the index) under `slot`, which holds no key. */
  add(key: K, h: number, slot: number): void {
    if (slot >= this.#hashes.length) this.#growSlots(slot);
    this.#hashes[slot] = h;
    this.#keys[slot] = key;
    if (++this.#count * 2 > this.#buckets.length) this.#rehash(this.#buckets.length * 2);
    else this.#place(slot);
  }

  /** Takes the key of `slot` out of the index: its value, which the slot no longer holds. */
  remove(slot: number): V {
    const buckets = this.#buckets;
    const mask = this.#mask;
    let hole = (this.#hashes[slot] as number) & mask;
    while (buckets[hole] !== slot + 1) hole = (hole + 1) & mask;
    // Each later bucket of the run moves back into the hole unless its home lies after the hole (cyclically).
    for (let b = (hole + 1) & mask; buckets[b] !== 0; b = (b + 1) & mask) {
      const home = (this.#hashes[(buckets[b] as number) - 1] as number) & mask;
      if (((b - home) & mask) >= ((b - hole) & mask)) {
        buckets[hole] = buckets[b] as number;
        hole = b;
      }
    }
    buckets[hole] = 0;
    const value = this.#values[slot] as V;
    this.#keys[slot] = undefined;
    this.#values[slot] = undefined;
    this.#count--;
    return value;
  }

  keyOf(slot: number): K | undefined {
    return this.#keys[slot];
  }

  valueOf(slot: number): V | undefined {
    return this.#values[slot];
  }

  setValue(slot: number, value: V): void {
    this.#values[slot] = value;
  }

  hashOf(slot: number): number {
    return this.#hashes[slot] as number;
  }

  #place(slot: number): void {
    const buckets = this.#buckets;
    const mask = this.#mask;
    let b = (this.#hashes[slot] as number) & mask;
    while (buckets[b] !== 0) b = (b + 1) & mask;
    buckets[b] = slot + 1;
  }

  #rehash(length: number): void {
    this.#buckets = new Int32Array(length);
    this.#mask = length - 1;
    for (let slot = 0; slot < this.#keys.length; slot++) if (this.#keys[slot] !== undefined) this.#place(slot);
  }

  #growSlots(slot: number): void {
    let length = this.#hashes.length * 2;
    while (length <= slot) length *= 2;
    const hashes = new Uint32Array(length);
    hashes.set(this.#hashes);
    this.#hashes = hashes;
  }
}
