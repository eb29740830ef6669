/**
 * Plain LRU under a byte bound, the memory tier's policy when admission is off
 * (`gateway.cache.admission: false`): lru-cache's behaviour (the same `disposeAfter` reasons; a
 * value set over itself keeps its size and is not reported), on the slots W-TinyLFU keeps its entries in
 * (slot-index.ts, slot-lists.ts). lru-cache finds its entries in a V8 `Map`, which rebuilds its
 * table in the old generation as keys come and go: with memory full every entry that enters
 * evicts one, and a disk hit promoted into a full memory left 48 B of table there, more than half
 * of what it left in all (docs/performance.md, "A disk hit's tail").
 */
import type { LRUCache } from 'lru-cache';
import { keyHash } from '../admission/frequency-sketch.ts';
import { SlotIndex } from './slot-index.ts';
import { NONE, SlotLists } from './slot-lists.ts';
import type { EntryLru } from './windowed-lru.ts';

export interface SlotLruOptions<K, V> {
  /** Bound in bytes of the sizes set. */
  readonly maxSize: number;
  /** Called once for a value that leaves or is not kept, as lru-cache's `disposeAfter`. */
  readonly disposeAfter: (value: V, key: K, reason: LRUCache.DisposeReason) => void;
}

/** The one list: least recently used at its oldest end. */
const ALL = 0;

export class SlotLru<K extends string, V> implements EntryLru<K, V> {
  readonly #index = new SlotIndex<K, V>();
  readonly #lists = new SlotLists(1);
  readonly #maxSize: number;
  readonly #disposeAfter: SlotLruOptions<K, V>['disposeAfter'];

  constructor(options: SlotLruOptions<K, V>) {
    this.#maxSize = options.maxSize;
    this.#disposeAfter = options.disposeAfter;
  }

  get(key: K): V | undefined {
    const slot = this.#index.find(key, keyHash(key));
    if (slot === NONE) return undefined;
    this.#lists.move(slot, ALL);
    return this.#index.valueOf(slot);
  }

  peek(key: K): V | undefined {
    const slot = this.#index.find(key, keyHash(key));
    return slot === NONE ? undefined : this.#index.valueOf(slot);
  }

  /** Keeps `value` as the newest, evicting the oldest while over the bound; a value larger than the bound is not kept, and the key's old value leaves. */
  set(key: K, value: V, { size }: { size: number }): this {
    const h = keyHash(key);
    let slot = this.#index.find(key, h);
    const old = slot === NONE ? undefined : this.#index.valueOf(slot);
    if (size > this.#maxSize) {
      if (slot !== NONE) this.#disposeAfter(this.#drop(slot), key, 'set');
      if (value !== old) this.#disposeAfter(value, key, 'set');
      return this;
    }
    if (slot === NONE) {
      slot = this.#lists.take();
      this.#index.add(key, h, slot);
      this.#lists.push(ALL, slot, size);
    } else {
      // As lru-cache does: a value set over itself keeps the size it came with.
      this.#lists.move(slot, ALL, old === value ? this.#lists.sizeOf(slot) : size);
    }
    this.#index.setValue(slot, value);
    while (this.#lists.bytes(ALL) > this.#maxSize) {
      const oldest = this.#lists.oldest(ALL);
      const evicted = this.#index.keyOf(oldest) as K;
      this.#disposeAfter(this.#drop(oldest), evicted, 'evict');
    }
    if (old !== undefined && old !== value) this.#disposeAfter(old, key, 'set');
    return this;
  }

  delete(key: K): boolean {
    const slot = this.#index.find(key, keyHash(key));
    if (slot === NONE) return false;
    this.#disposeAfter(this.#drop(slot), key, 'delete');
    return true;
  }

  /** From the most recently used. */
  *keys(): Generator<K> {
    for (let slot = this.#lists.newest(ALL); slot !== NONE; slot = this.#lists.older(slot)) yield this.#index.keyOf(slot) as K;
  }

  get size(): number {
    return this.#lists.count(ALL);
  }

  get calculatedSize(): number {
    return this.#lists.bytes(ALL);
  }

  #drop(slot: number): V {
    const value = this.#index.remove(slot);
    this.#lists.release(slot);
    return value;
  }
}
