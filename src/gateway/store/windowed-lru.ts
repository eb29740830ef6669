/**
 * W-TinyLFU (Caffeine's policy) built from two lru-caches under one byte bound: a small window
 * LRU (1 % of the bound) that takes every new entry, and the main LRU (the rest) that an entry
 * pushed out of the window enters only when TinyLFU admits it against the main LRU's victims
 * (admission.ts). The window lets a key that is suddenly hot collect hits while its count grows,
 * so it is not refused on its first few requests; the filter keeps scans and one-off searches
 * out of the main LRU, where the entries that are asked again live.
 *
 * lru-cache stays the store: both segments are LRUCache instances bounded in bytes, so the sum
 * never exceeds the bound, and the sketch's own memory is taken from the main segment's share.
 * The main segment's victims are read from its LRU end (`rkeys()`, `info()`) before anything is
 * inserted, in the order in which lru-cache would evict them when the candidate is set.
 */
import { LRUCache } from 'lru-cache';
import { TinyLfuAdmission, type Victim } from './admission.ts';
import { FrequencySketch } from './frequency-sketch.ts';

/** What ResponseCache asks of its LRU: lru-cache's LRUCache, or WindowedLru in front of two of them. */
export interface EntryLru<K, V> {
  get(key: K): V | undefined;
  peek(key: K): V | undefined;
  set(key: K, value: V, options: { size: number }): unknown;
  delete(key: K): boolean;
  keys(): Iterable<K>;
  readonly size: number;
  readonly calculatedSize: number;
}

export interface WindowedLruOptions<K, V> {
  /** Bound in bytes for both segments and the sketch together. */
  readonly maxSize: number;
  /** Called once for an entry that leaves, as lru-cache's `disposeAfter` is: after the operation. */
  readonly disposeAfter: (value: V, key: K, reason: LRUCache.DisposeReason) => void;
  /** Called for each candidate the filter judged, with its verdict. */
  readonly onAdmission: (admitted: boolean) => void;
}

/** The window's share of the bound: Caffeine's starting point; 10 % replayed slightly worse on every trace. */
const WINDOW_SHARE = 0.01;

/**
 * Bytes per entry the sketch is sized for. Catalog answers cost about 1–12 KiB in the cache (6 KiB on
 * average); sizing for small ones gives more counters than entries, which keeps collisions rare,
 * for 16 B (up to 32 B, as tables round up to powers of two) per 2 KiB of bound.
 */
const SKETCH_BYTES_PER_ENTRY = 2048;

export class WindowedLru<K extends string, V extends object> implements EntryLru<K, V> {
  readonly #window: LRUCache<K, V>;
  readonly #main: LRUCache<K, V>;
  readonly #windowBytes: number;
  readonly #mainBytes: number;
  readonly #sketch: FrequencySketch;
  readonly #admission: TinyLfuAdmission;
  readonly #disposeAfter: WindowedLruOptions<K, V>['disposeAfter'];
  readonly #onAdmission: (admitted: boolean) => void;
  readonly sketchBytes: number;
  /** Set while an entry moves between segments or is replaced in the window: no removal to report. */
  #moving = false;

  constructor(options: WindowedLruOptions<K, V>) {
    this.#sketch = new FrequencySketch(Math.ceil(options.maxSize / SKETCH_BYTES_PER_ENTRY));
    this.sketchBytes = this.#sketch.bytes;
    this.#admission = new TinyLfuAdmission(this.#sketch);
    this.#disposeAfter = options.disposeAfter;
    this.#onAdmission = options.onAdmission;
    this.#windowBytes = Math.max(1, Math.floor(options.maxSize * WINDOW_SHARE));
    this.#mainBytes = Math.max(1, options.maxSize - this.#windowBytes - this.sketchBytes);
    const forward = (value: V, key: K, reason: LRUCache.DisposeReason): void => {
      if (!this.#moving) this.#disposeAfter(value, key, reason);
    };
    this.#window = new LRUCache<K, V>({ maxSize: this.#windowBytes, disposeAfter: forward });
    this.#main = new LRUCache<K, V>({ maxSize: this.#mainBytes, disposeAfter: forward });
  }

  get(key: K): V | undefined {
    this.#admission.record(key);
    return this.#main.get(key) ?? this.#window.get(key);
  }

  peek(key: K): V | undefined {
    return this.#main.peek(key) ?? this.#window.peek(key);
  }

  /**
   * An entry in the main segment is replaced there. Any other goes into the window, pushing the
   * window's oldest out to be judged; one larger than the whole window is judged at once, and is
   * not kept when refused (`peek` then finds nothing).
   */
  set(key: K, value: V, { size }: { size: number }): this {
    if (this.#main.has(key)) {
      this.#main.set(key, value, { size });
      return this;
    }
    const old = this.#window.peek(key);
    if (old !== undefined) this.#quietly(() => this.#window.delete(key));
    if (size <= this.#windowBytes) {
      this.#makeRoomInWindow(size);
      this.#window.set(key, value, { size });
    } else {
      this.#offer(key, value, size);
    }
    if (old !== undefined) this.#disposeAfter(old, key, 'set');
    return this;
  }

  delete(key: K): boolean {
    return this.#main.delete(key) || this.#window.delete(key);
  }

  *keys(): Generator<K> {
    yield* this.#main.keys();
    yield* this.#window.keys();
  }

  get size(): number {
    return this.#main.size + this.#window.size;
  }

  get calculatedSize(): number {
    return this.#main.calculatedSize + this.#window.calculatedSize;
  }

  #makeRoomInWindow(size: number): void {
    while (this.#window.calculatedSize + size > this.#windowBytes) {
      const oldest = this.#window.rkeys().next();
      if (oldest.done === true) return;
      const entry = this.#window.info(oldest.value);
      if (entry === undefined) return;
      this.#quietly(() => this.#window.delete(oldest.value));
      if (!this.#offer(oldest.value, entry.value, entry.size ?? 0)) this.#disposeAfter(entry.value, oldest.value, 'evict');
    }
  }

  /** Judges a candidate for the main segment and moves it in when admitted; lru-cache then evicts the victims judged. */
  #offer(key: K, value: V, size: number): boolean {
    this.#sketch.resample(this.size);
    const admitted = size <= this.#mainBytes && this.#admission.admits(key, this.#main.calculatedSize + size - this.#mainBytes, this.#victims());
    this.#onAdmission(admitted);
    if (admitted) this.#main.set(key, value, { size });
    return admitted;
  }

  *#victims(): Generator<Victim> {
    for (const key of this.#main.rkeys()) yield { key, size: this.#main.info(key)?.size ?? 0 };
  }

  #quietly(move: () => void): void {
    this.#moving = true;
    try {
      move();
    } finally {
      this.#moving = false;
    }
  }
}
