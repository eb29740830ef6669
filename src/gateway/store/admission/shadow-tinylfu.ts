/**
 * W-TinyLFU at its smallest window over a sample of the keys, for the window tuner
 * (window-tuner.ts): what the cache would hit if counts alone decided, measured beside what plain
 * LRU would hit (shadow-lru.ts) on the same requests. Comparing the two miniature caches tells the
 * tuner which way to move the real window wherever it stands; comparing the real cache with LRU
 * alone could not say, once the window had grown to LRU's size, when counts started to decide
 * better again (miniature simulation: Waldspurger et al., USENIX ATC 2017).
 *
 * It is the real policy in miniature: a window of 1 % of its bound, then a main space of
 * probation and a protected segment (80 %), and admission of the window's oldest against the
 * main space's oldest by the real cache's own frequency sketch (the sampled keys are counted
 * there with every other), the victims' counts summed (admission.ts). Keys and sizes only, in
 * typed arrays (hash-lists.ts).
 */
import { HashLists, NONE } from './hash-lists.ts';

const WINDOW = 0;
const PROBATION = 1;
const PROTECTED = 2;

/** The window's share of the bound, and the protected segment's of the main space: the real cache's at its smallest window. */
const WINDOW_SHARE = 0.01;
const PROTECTED_SHARE = 0.8;

export class ShadowTinyLfu {
  readonly #lists: HashLists;
  readonly #frequency: (h: number) => number;
  readonly #windowBytes: number;
  readonly #mainBytes: number;
  readonly #protectedBytes: number;

  /**
   * `maxBytes`: the bound on the sizes held; `maxKeys`: the most keys held; `frequency`: the
   * estimated requests for a key hash (FrequencySketch.frequencyOf).
   */
  constructor(maxBytes: number, maxKeys: number, frequency: (h: number) => number) {
    this.#lists = new HashLists(maxKeys, 3);
    this.#frequency = frequency;
    this.#windowBytes = Math.max(1, Math.floor(maxBytes * WINDOW_SHARE));
    this.#mainBytes = Math.max(1, maxBytes - this.#windowBytes);
    this.#protectedBytes = Math.floor(this.#mainBytes * PROTECTED_SHARE);
  }

  get bytes(): number {
    return this.#lists.bytes;
  }

  get size(): number {
    return this.#lists.count;
  }

  get calculatedSize(): number {
    return this.#lists.totalBytes;
  }

  /** Whether `h` is held; a hit on probation promotes it to the protected segment. */
  get(h: number): boolean {
    const node = this.#lists.find(h);
    if (node === NONE) return false;
    const list = this.#lists.listOf(node);
    this.#lists.moveTo(node, list === PROBATION ? PROTECTED : list);
    if (list === PROBATION) this.#fitProtected();
    return true;
  }

  /** Holds `h` with `size`: a new key enters the window, whose oldest are judged for the main space. */
  set(h: number, size: number): void {
    const node = this.#lists.find(h);
    if (node !== NONE) {
      this.#lists.resize(node, size);
      this.#lists.moveTo(node, this.#lists.listOf(node));
    } else {
      if (this.#lists.full) this.#lists.remove(this.#oldestInMain() === NONE ? this.#lists.oldest(WINDOW) : this.#oldestInMain());
      this.#lists.add(h, size, WINDOW);
    }
    while (this.#lists.listBytes(WINDOW) > this.#windowBytes) this.#offer(this.#lists.oldest(WINDOW));
    this.#fitProtected();
    while (this.#mainSize() > this.#mainBytes) this.#lists.remove(this.#oldestInMain());
  }

  /** Holds `h`, not held, at the mean size of the keys held (ShadowLru.learn). */
  learn(h: number): void {
    if (this.#lists.count > 0) this.set(h, Math.round(this.#lists.totalBytes / this.#lists.count));
  }

  /**
   * Popularity shifted and the sketch forgot its counts: what the protected segment holds was hot
   * before, and goes first, as the real cache's oldest protected are sampled as victims then.
   */
  forget(): void {
    this.#lists.appendOldest(PROTECTED, PROBATION);
  }

  delete(h: number): boolean {
    const node = this.#lists.find(h);
    if (node === NONE) return false;
    this.#lists.remove(node);
    return true;
  }

  #mainSize(): number {
    return this.#lists.listBytes(PROBATION) + this.#lists.listBytes(PROTECTED);
  }

  #oldestInMain(): number {
    const oldest = this.#lists.oldest(PROBATION);
    return oldest === NONE ? this.#lists.oldest(PROTECTED) : oldest;
  }

  /** The window's oldest goes on probation if it is asked more than the main space's oldest it would push out together. */
  #offer(candidate: number): void {
    const size = this.#lists.sizeOf(candidate);
    const needed = this.#mainSize() + size - this.#mainBytes;
    if (size > this.#mainBytes) {
      this.#lists.remove(candidate);
      return;
    }
    if (needed > 0) {
      const gain = this.#frequency(this.#lists.hashOf(candidate));
      let cost = 0;
      let freed = 0;
      for (let victim = this.#oldestInMain(); freed < needed; victim = this.#nextVictim(victim)) {
        if (victim === NONE) break;
        cost += this.#frequency(this.#lists.hashOf(victim));
        if (cost >= gain) {
          this.#lists.remove(candidate);
          return;
        }
        freed += this.#lists.sizeOf(victim);
      }
    }
    while (this.#mainSize() + size > this.#mainBytes) this.#lists.remove(this.#oldestInMain());
    this.#lists.moveTo(candidate, PROBATION);
  }

  /** The victim after `victim`: the next newer on its list, then the protected segment's oldest. */
  #nextVictim(victim: number): number {
    const newer = this.#lists.newer(victim);
    if (newer !== NONE || this.#lists.listOf(victim) === PROTECTED) return newer;
    return this.#lists.oldest(PROTECTED);
  }

  #fitProtected(): void {
    while (this.#lists.listBytes(PROTECTED) > this.#protectedBytes) this.#lists.moveTo(this.#lists.oldest(PROTECTED), PROBATION);
  }
}
