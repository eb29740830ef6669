/**
 * Plain LRU over a sample of the keys, for the window tuner (window-tuner.ts): key hashes and
 * sizes under a byte bound, on one recency list (hash-lists.ts). It only ever answers whether
 * plain LRU would still hold a sampled key.
 */
import { HashLists, NONE } from './hash-lists.ts';

export class ShadowLru {
  readonly #maxBytes: number;
  readonly #lists: HashLists;

  /** `maxBytes`: the bound on the sizes held; `maxKeys`: the most keys held, whatever their sizes. */
  constructor(maxBytes: number, maxKeys: number) {
    this.#maxBytes = maxBytes;
    this.#lists = new HashLists(maxKeys, 1);
  }

  /** What its arrays hold in memory. */
  get bytes(): number {
    return this.#lists.bytes;
  }

  /** Keys held. */
  get size(): number {
    return this.#lists.count;
  }

  /** Sum of the sizes held. */
  get calculatedSize(): number {
    return this.#lists.totalBytes;
  }

  /** Whether `h` is held; a held key becomes the most recently used. */
  get(h: number): boolean {
    const node = this.#lists.find(h);
    if (node === NONE) return false;
    this.#lists.moveTo(node, 0);
    return true;
  }

  /**
   * Holds `h` with `size` as the most recently used, pushing out the least recently used while
   * the bound is passed. A size larger than the whole bound is not held (nor is an older `h`), as
   * lru-cache does.
   */
  set(h: number, size: number): void {
    const node = this.#lists.find(h);
    if (size > this.#maxBytes) {
      if (node !== NONE) this.#lists.remove(node);
      return;
    }
    if (node === NONE) {
      if (this.#lists.full) this.#lists.remove(this.#lists.oldest(0));
      this.#lists.add(h, size, 0);
    } else {
      this.#lists.resize(node, size);
      this.#lists.moveTo(node, 0);
    }
    while (this.#lists.totalBytes > this.#maxBytes) this.#lists.remove(this.#lists.oldest(0));
  }

  /**
   * Holds `h`, not held, at the mean size of the keys held: for a key plain LRU would have fetched
   * and kept, whose size the caller does not know without a lookup that allocates. Nothing while
   * nothing is held.
   */
  learn(h: number): void {
    if (this.#lists.count > 0) this.set(h, Math.round(this.#lists.totalBytes / this.#lists.count));
  }

  /** Forgets `h`; true when it was held. */
  delete(h: number): boolean {
    const node = this.#lists.find(h);
    if (node === NONE) return false;
    this.#lists.remove(node);
    return true;
  }
}
