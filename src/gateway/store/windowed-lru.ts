/**
 * W-TinyLFU (Caffeine's policy) built from three lru-caches under one byte bound: a window LRU
 * that takes every new entry, and the main space (the rest) that an entry pushed out of the
 * window enters only when TinyLFU admits it against the main space's victims (admission.ts). The
 * window is 1 % of the bound while counts decide well; it grows toward all of it while plain LRU
 * would hit more, as two miniature caches on a sample of the keys tell (window-tuner.ts), which is
 * what recency-biased requests need. The window lets a key that is suddenly hot collect hits while its count grows,
 * so it is not refused on its first few requests; the filter keeps scans and one-off searches
 * out of the main space, where the entries that are asked again live.
 *
 * The main space is a segmented LRU, as Caffeine's is: an admitted entry starts on probation and
 * moves to the protected segment (80 % of the main space) when it is asked for again; the
 * protected segment's oldest go back to probation, and victims are taken from probation first.
 * An entry that was asked for once since admission so goes before one that proved itself, which
 * plain LRU order cannot tell apart (the replays in docs/performance.md measured the difference).
 *
 * Popularity that shifts is the sketch's blind spot: it ages after 30 repeated requests per entry, and
 * until then the old favourites' counts refuse the new ones. When the hit ratio falls and the
 * requests for keys the filter just refused rise together (shift-detector.ts), or when the
 * window tuner's verdict turns after it had been settled at one end (window-tuner.ts), the sketch
 * is cleared, and the protected segment's oldest are sampled as victims for a while.
 *
 * lru-cache stays the store: each segment is an LRUCache instance, the main space's two are kept
 * to its share here, so the sum never exceeds the bound, and the memory of the sketch, the shift
 * detector and the tuner is taken from the main space's share (1.4–1.6 % of the bound). Once the window
 * has settled at the top (all of the bound: LRU) the sketch counts only the tuner's sample and the
 * shift detector holds nothing, and that memory (0.16–0.33 % left) goes to the entries, so that a
 * recency-biased workload loses to LRU no more than the tuner costs. Victims are read from the LRU ends
 * (`rkeys()`, `info()`) before anything is inserted, in the order in which they are then evicted.
 */
import { LRUCache } from 'lru-cache';
import { TinyLfuAdmission, type Victim as Judged } from './admission.ts';
import { ALL_KEYS, FrequencySketch, keyHash } from './frequency-sketch.ts';
import { ShiftDetector } from './shift-detector.ts';
import { WindowTuner } from './window-tuner.ts';

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
  /** Called when popularity shifted and the sketch forgot its counts (shift-detector.ts, window-tuner.ts). */
  readonly onShift: () => void;
}

/**
 * Main-space entries, from the oldest, that a candidate's victims are chosen from by requests per
 * byte: a handful, as in Redis's sampled eviction, since a candidate is judged on every miss;
 * 4, 8 and 16 replayed within 0.05 points of each other.
 */
const VICTIM_SAMPLE = 8;

/**
 * For this many entries stored per entry held after popularity shifted (shift-detector.ts), the protected
 * segment's oldest are sampled as victims too: they are what was hot before, and would otherwise
 * leave only as entries on probation are promoted past them (without this, the shift at 128 MiB
 * in half-size replays stayed 0.7 points below LRU; 1, 2 and 4 replayed alike). Not sampled
 * otherwise: at small bounds that cost up to 0.9 points on the crawler trace.
 */
const AFTER_SHIFT_PER_ENTRY = 2;

/**
 * A regretted candidate wins a tie (admission.ts) only while fewer than this share of the
 * candidates judged lately were regretted. On a loop over more keys than the cache holds every
 * candidate was refused one turn earlier, and ties won there churn the main space as LRU would:
 * the block loop over 25,000 keys at 20,000 entries fell from 73.4 to 9.9 % with no such gate,
 * and stays at 72.5 % with it; Zipf 0.9 at 256 MiB, where fewer are regretted, keeps the gain.
 */
const MOST_REGRETTED = 0.5;
/** Candidates over which the share of regretted ones is averaged (exponentially). */
const REGRET_MEMORY = 1024;

/** The protected segment's share of the main space: Caffeine's. */
const PROTECTED_SHARE = 0.8;

/**
 * Bytes per entry the sketch is sized for. Catalog answers cost about 1–12 KiB in the cache (6 KiB on
 * average); sizing for small ones gives more counters than entries, which keeps collisions rare,
 * for 24 B (up to 48 B, as tables round up to powers of two) per 2 KiB of bound.
 */
const SKETCH_BYTES_PER_ENTRY = 2048;

/** A main-space entry that may make way, under the store's key type. */
interface Victim<K extends string> extends Judged {
  readonly key: K;
}

export class WindowedLru<K extends string, V extends number | object> implements EntryLru<K, V> {
  readonly #window: LRUCache<K, V>;
  readonly #probation: LRUCache<K, V>;
  readonly #protected: LRUCache<K, V>;
  readonly #maxSize: number;
  #windowBytes = 0;
  #mainBytes = 0;
  #protectedBytes = 0;
  readonly #sketch: FrequencySketch;
  /** Entries the sketch is sized for while it counts every key. */
  readonly #capacity: number;
  /** Whether the window has settled at the top (all of the bound), and the sketch counts only the tuner's sample. */
  #lru = false;
  readonly #admission: TinyLfuAdmission;
  readonly #shifts: ShiftDetector;
  readonly #tuner: WindowTuner;
  /** Entries stored since popularity last shifted. */
  #sinceShift = Infinity;
  /** The share of the candidates judged lately that admission had refused lately (a moving average). */
  #regretted = 0;
  readonly #disposeAfter: WindowedLruOptions<K, V>['disposeAfter'];
  readonly #onAdmission: (admitted: boolean) => void;
  readonly #onShift: () => void;
  /**
   * Options for every lookup, passed so that lru-cache does not make an empty object per call (it
   * writes its diagnostics `status` into them, so they cannot be frozen).
   */
  readonly #lookup: LRUCache.GetOptions<K, V, unknown> & LRUCache.PeekOptions<K, V, unknown> = {};
  /** Set while an entry moves between segments or is replaced or evicted here: no removal to report, or one reported here. */
  #moving = false;

  constructor(options: WindowedLruOptions<K, V>) {
    const capacity = Math.ceil(options.maxSize / SKETCH_BYTES_PER_ENTRY);
    this.#capacity = capacity;
    this.#sketch = new FrequencySketch(capacity);
    this.#shifts = new ShiftDetector(capacity);
    this.#tuner = new WindowTuner(
      options.maxSize,
      capacity,
      (h) => this.#sketch.frequencyOf(h),
      () => {
        this.#forget();
      },
    );
    this.#admission = new TinyLfuAdmission(this.#sketch);
    this.#disposeAfter = options.disposeAfter;
    this.#onAdmission = options.onAdmission;
    this.#onShift = options.onShift;
    this.#maxSize = options.maxSize;
    const forward = (value: V, key: K, reason: LRUCache.DisposeReason): void => {
      if (!this.#moving) this.#disposeAfter(value, key, reason);
    };
    // Every segment is bounded by the whole bound, as the window's share moves; what each may hold is kept here.
    this.#window = new LRUCache<K, V>({ maxSize: this.#maxSize, disposeAfter: forward });
    this.#probation = new LRUCache<K, V>({ maxSize: this.#maxSize, disposeAfter: forward });
    this.#protected = new LRUCache<K, V>({ maxSize: this.#maxSize, disposeAfter: forward });
    this.#windowMoved();
  }

  /**
   * The window first: a working set smaller than it (a few hundred answers at the default
   * bound) never leaves it, and a hit there is one lookup; then the protected segment, where a
   * large cache's hits are; a hit on probation promotes the entry.
   */
  get(key: K): V | undefined {
    const h = this.#admission.record(key);
    const found = this.#window.get(key, this.#lookup) ?? this.#protected.get(key, this.#lookup);
    if (found !== undefined) {
      this.#counted(h, true);
      return found;
    }
    const proving = this.#probation.peek(key, this.#lookup);
    if (proving !== undefined) this.#promote(key, proving);
    this.#counted(h, proving !== undefined);
    return proving;
  }

  /** Counts a lookup for the shift detector and the window's tuner, and moves the window when the tuner says so. */
  #counted(h: number, hit: boolean): void {
    this.#shifts.record(hit);
    if (this.#tuner.looked(h, hit)) this.#windowMoved();
  }

  /**
   * The tuner moved the window. At the top the cache is LRU and the sketch is read only by the
   * tuner's miniature W-TinyLFU: it shrinks to count the sample's keys alone, and the bytes it
   * gives back go to the entries; below the top it counts every key again, from nothing (as after
   * a shift: what it would have counted meanwhile was judged by recency).
   */
  #windowMoved(): void {
    const lru = this.#tuner.settledAtTop;
    if (lru !== this.#lru) {
      this.#lru = lru;
      this.#sketch.reshape(lru ? this.#tuner.sampleKeys : this.#capacity, lru ? this.#tuner.below : ALL_KEYS);
      this.#shifts.reshape(lru ? 0 : this.#capacity);
    }
    this.#resize(this.#tuner.share);
  }

  /** Popularity shifted, as the shift detector or the window's tuner saw: the sketch forgets its counts. */
  #forget(): void {
    this.#sketch.clear();
    this.#sinceShift = 0;
    this.#onShift();
  }

  peek(key: K): V | undefined {
    return this.#protected.peek(key) ?? this.#probation.peek(key) ?? this.#window.peek(key);
  }

  /**
   * An entry in the main space is replaced in its segment. Any other goes into the window,
   * pushing the window's oldest out to be judged; one larger than the whole window is judged at
   * once, and is not kept when refused (`peek` then finds nothing).
   */
  set(key: K, value: V, { size }: { size: number }): this {
    // Hashed once, for both the shift detector and the tuner.
    const h = keyHash(key);
    if (this.#shifts.shifted(h, this.size)) {
      this.#forget();
      if (this.#tuner.shifted()) this.#windowMoved();
    }
    this.#sinceShift++;
    this.#tuner.stored(h, size);
    const segment = this.#protected.has(key) ? this.#protected : this.#probation.has(key) ? this.#probation : undefined;
    if (segment !== undefined) {
      segment.set(key, value, { size });
      this.#evictMain(0);
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
    // As lru-cache does: a value set again over itself has not left.
    if (old !== undefined && old !== value) this.#disposeAfter(old, key, 'set');
    return this;
  }

  delete(key: K): boolean {
    this.#tuner.deleted(keyHash(key));
    return this.#protected.delete(key) || this.#probation.delete(key) || this.#window.delete(key);
  }

  *keys(): Generator<K> {
    yield* this.#protected.keys();
    yield* this.#probation.keys();
    yield* this.#window.keys();
  }

  get size(): number {
    return this.#protected.size + this.#probation.size + this.#window.size;
  }

  /** What the sketch, the shift detector and the window's tuner hold in memory now, taken from the main space's share. */
  get sketchBytes(): number {
    return this.#sketch.bytes + this.#shifts.bytes + this.#tuner.bytes;
  }

  /** The window's share of the bound now (window-tuner.ts). */
  get windowShare(): number {
    return this.#tuner.share;
  }

  get calculatedSize(): number {
    return this.#mainSize + this.#window.calculatedSize;
  }

  get #mainSize(): number {
    return this.#protected.calculatedSize + this.#probation.calculatedSize;
  }

  /** An entry on probation asked for again: it moves to the protected segment, whose oldest go back on probation. */
  #promote(key: K, value: V): void {
    const size = this.#probation.info(key)?.size ?? 0;
    this.#quietly(() => {
      this.#probation.delete(key);
      this.#protected.set(key, value, { size });
    });
    this.#fitProtected();
  }

  #fitProtected(): void {
    while (this.#protected.calculatedSize > this.#protectedBytes) {
      const oldest = this.#takeOldest(this.#protected);
      if (oldest === undefined) return;
      this.#quietly(() => this.#probation.set(oldest.key, oldest.value, { size: oldest.size }));
    }
  }

  /** The window's share of the bound, and the main space's and protected segment's that follow from it. */
  #share(share: number): void {
    const entries = Math.max(2, this.#maxSize - this.sketchBytes);
    this.#windowBytes = Math.max(1, Math.floor(entries * share));
    this.#mainBytes = entries - this.#windowBytes;
    this.#protectedBytes = Math.floor(this.#mainBytes * PROTECTED_SHARE);
  }

  /**
   * Moves the boundary between window and main space without evicting to do it,
   * as Caffeine does: a larger window takes the main space's oldest (probation first), a smaller
   * one offers its oldest to the main space, through admission.
   */
  #resize(share: number): void {
    this.#share(share);
    while (this.#mainSize > this.#mainBytes) {
      const oldest = this.#takeOldest(this.#probation.size > 0 ? this.#probation : this.#protected);
      if (oldest === undefined) break;
      this.#quietly(() => this.#window.set(oldest.key, oldest.value, { size: oldest.size }));
    }
    this.#fitProtected();
    this.#makeRoomInWindow(0);
  }

  #makeRoomInWindow(size: number): void {
    while (this.#window.calculatedSize + size > this.#windowBytes) {
      const oldest = this.#takeOldest(this.#window);
      if (oldest === undefined) return;
      // With no main space (the window at the top) there is nothing to judge for: LRU evicts.
      if (this.#mainBytes === 0 || !this.#offer(oldest.key, oldest.value, oldest.size)) this.#disposeAfter(oldest.value, oldest.key, 'evict');
    }
  }

  /** Judges a candidate for the main space and puts it on probation when admitted, evicting the victims judged. */
  #offer(key: K, value: V, size: number): boolean {
    this.#sketch.resample(this.size);
    const needed = this.#mainSize + size - this.#mainBytes;
    const victims = needed > 0 && size <= this.#mainBytes ? this.#victims(needed) : [];
    const h = keyHash(key);
    const regretted = this.#shifts.refusedLately(h);
    this.#regretted += ((regretted ? 1 : 0) - this.#regretted) / REGRET_MEMORY;
    const admitted = size <= this.#mainBytes && this.#admission.admits(key, needed, victims, regretted && this.#regretted < MOST_REGRETTED);
    this.#onAdmission(admitted);
    if (!admitted) this.#shifts.refused(h, this.size);
    if (admitted) {
      for (const victim of victims) this.#evictVictim(victim.key);
      this.#evictMain(size);
      this.#probation.set(key, value, { size });
    }
    return admitted;
  }

  #evictVictim(key: K): void {
    const segment = this.#probation.has(key) ? this.#probation : this.#protected;
    const value = segment.peek(key, this.#lookup);
    if (value === undefined) return;
    this.#quietly(() => segment.delete(key));
    this.#disposeAfter(value, key, 'evict');
  }

  /** Evicts from the main space, victims first, until `incoming` more bytes fit in its share. */
  #evictMain(incoming: number): void {
    while (this.#mainSize + incoming > this.#mainBytes) {
      const oldest = this.#takeOldest(this.#probation.size > 0 ? this.#probation : this.#protected);
      if (oldest === undefined) return;
      this.#disposeAfter(oldest.value, oldest.key, 'evict');
    }
  }

  /** Takes a segment's least recently used entry out of it, reporting nothing: the caller moves it or reports it. */
  #takeOldest(segment: LRUCache<K, V>): { readonly key: K; readonly value: V; readonly size: number } | undefined {
    const oldest = segment.rkeys().next();
    if (oldest.done === true) return undefined;
    const entry = segment.info(oldest.value);
    if (entry === undefined) return undefined;
    this.#quietly(() => segment.delete(oldest.value));
    return { key: oldest.value, value: entry.value, size: entry.size ?? 0 };
  }

  /**
   * The entries that would make way for a candidate, freeing `needed` bytes: of the VICTIM_SAMPLE
   * oldest in the main space (probation first), those with the fewest requests per byte first,
   * then the older ones in LRU order. Taking strictly the oldest lets one entry that was popular
   * once, demoted to the end of probation, refuse every candidate until the sketch ages; and of
   * two entries asked equally often the larger goes first, as it frees more room for the hits it
   * takes away.
   */
  #victims(needed: number): Victim<K>[] {
    const oldest = this.#oldestInMain();
    const sample: (Victim<K> & { readonly density: number })[] = [];
    while (sample.length < VICTIM_SAMPLE) {
      const next = oldest.next();
      if (next.done === true) break;
      sample.push(this.#sampled(next.value));
    }
    if (this.#sinceShift < AFTER_SHIFT_PER_ENTRY * this.size) {
      let taken = 0;
      for (const key of this.#protected.rkeys()) {
        if (taken++ >= VICTIM_SAMPLE) break;
        if (!sample.some((s) => s.key === key)) sample.push(this.#sampled({ key, size: this.#protected.info(key)?.size ?? 0 }));
      }
    }
    sample.sort((a, b) => a.density - b.density);
    const victims: Victim<K>[] = [];
    let freed = 0;
    const take = (victim: Victim<K>): boolean => {
      victims.push({ key: victim.key, size: victim.size });
      freed += victim.size;
      return freed < needed;
    };
    for (const victim of sample) if (!take(victim)) return victims;
    for (let next = oldest.next(); next.done !== true; next = oldest.next()) {
      const key = next.value.key;
      if (sample.some((s) => s.key === key)) continue;
      if (!take(next.value)) return victims;
    }
    return victims;
  }

  #sampled(victim: Victim<K>): Victim<K> & { readonly density: number } {
    return { ...victim, density: this.#sketch.frequency(victim.key) / Math.max(1, victim.size) };
  }

  *#oldestInMain(): Generator<Victim<K>, void, undefined> {
    for (const segment of [this.#probation, this.#protected]) for (const key of segment.rkeys()) yield { key, size: segment.info(key)?.size ?? 0 };
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
