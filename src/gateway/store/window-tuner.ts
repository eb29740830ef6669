/**
 * How large W-TinyLFU's window is, decided by dueling with plain LRU. A 1 % window is what
 * frequency-biased workloads want (Zipf searches, crawlers: the filter keeps one-off answers out),
 * but where what was asked lately is what is asked next, and counts say little, the filter refuses
 * the entries that would be hit: on recency-biased traces (a key re-asked some thousands of
 * requests after its last ask, rarely more often than before) a 1 % window replayed up to 19
 * points below LRU (docs/performance.md). A larger window is LRU's behaviour, so the window is
 * grown while LRU would do better and shrunk while it would do worse.
 *
 * What LRU would do is simulated on a sample of the keys (spatial sampling, as SHARDS does:
 * Waldspurger et al., FAST 2015): the keys whose hash falls in a 2^-k slice, held by an LRU of key
 * hashes and sizes (shadow-lru.ts) bounded to the same slice of the bytes, at most 4,096 keys. The
 * cache's own hits on the same keys are counted beside it, so both are measured on the same
 * requests; the window moves (doubled or halved, between 1 % and 99 %) only when the difference
 * is larger than chance would make it, by far when it is to shrink. Set dueling in CPU caches
 * (Qureshi et al., ISCA 2007) chooses an insertion policy the same way. Caffeine instead
 * hill-climbs its own hit ratio, which replayed here as noise on stationary traces (it cannot tell
 * a worse step from a worse minute).
 *
 * A lookup of a key outside the sample costs a comparison; the sample's share is looked up in
 * the shadow LRU as well.
 */
import { ShadowLru } from './shadow-lru.ts';

/** The share of the bound the window starts at and never goes below: Caffeine's. */
export const MIN_WINDOW_SHARE = 0.01;
/**
 * The largest share: the main space keeps 1 %, so that at the top the cache is nearly LRU (a cap of
 * 90 % stayed up to 1.1 points further below LRU at small bounds on the recency-biased traces).
 */
const MAX_WINDOW_SHARE = 0.99;
/** A move doubles or halves the share: seven moves go from 1 % to 99 %; fourfold steps replayed alike. */
const STEP = 2;
/**
 * At most this many keys in the shadow LRU: enough for its hit ratio to follow LRU's closely
 * (SHARDS). 8,192 replayed within 0.3 points of it, either way, at the bounds where the cap
 * holds (block traces at 20,000 and 80,000 entries, the synthetic ones at 256 MiB), for twice the memory.
 */
const SHADOW_KEYS = 4096;
/** At least this many, whatever the bound. */
const LEAST_SHADOW_KEYS = 256;
/**
 * And one per this many bytes of the bound, within those two: about 1 % of the bound, at 48 to
 * 64 B a key (shadow-lru.ts). When the shadow was an lru-cache at 128 B a key, 1 % held 2.5 times
 * fewer keys; the larger sample decides better where the bound is small (recency-biased block
 * traces at 2,000 and 5,000 entries: 0.2 to 0.5 points closer to LRU, docs/performance.md).
 */
const BOUND_BYTES_PER_SHADOW_KEY = 5_000;
/**
 * Room for this many times the keys the sample is expected to hold: the expectation is for
 * entries of the sketch's size, and an LRU of smaller ones holds more keys in the same bytes.
 */
const SHADOW_KEY_ROOM = 2;
/**
 * After this many decisions in a row without a clear difference, the window is halved anyway (a
 * probe): with a window as large as LRU's the cache hits as LRU does, so no difference would ever
 * show that a smaller one does better now (a recency-biased phase followed by a frequency-biased
 * one). The probe is kept only if the next decision finds the cache clearly ahead of LRU. Probes
 * kept unless LRU did clearly better let the window sink to where its loss was just too small to
 * tell, up to 1.8 points below LRU on the recency-biased traces; probing after 4 instead of 8
 * cost another 0.5 to 1 point.
 */
const PATIENCE = 8;
/**
 * A probe that LRU proved wrong doubles the patience, up to this (16 caches' worth of requests),
 * so that lasting recency is probed ever more rarely; any other outcome resets it.
 */
const MOST_PATIENCE = 64;
/**
 * Sampled requests between two decisions, per shadow key: a quarter of a cache's worth of
 * requests, so that the window reaches the top within about two caches' worth. A whole cache's
 * worth left the recency-biased traces up to 2.1 points below LRU (the climb took most of the
 * trace); an eighth replayed like a quarter.
 */
const DECISION_PER_KEY = 0.25;
/** Nor fewer than this: a decision on fewer is mostly noise. */
const MIN_DECISION_REQUESTS = 512;
/**
 * How many standard deviations of chance the difference in hits must exceed to move the window:
 * one toward LRU, which is the safe side (where the cache is no better than LRU a larger window
 * costs nothing), three away from it, and then by at least 1 % of the sampled requests. With two
 * either way and the 1 % for both, the window sat for whole stretches at half its size on the
 * recency-biased traces after a chance halving, up to 1.8 points below LRU; with these (and
 * BEHIND_IN_A_ROW), within 1.2 points, and the synthetic traces within 0.4 of the fixed window.
 */
const GROW_SIGNIFICANCE = 1;
const SHRINK_SIGNIFICANCE = 3;
const MIN_SHRINK_DIFFERENCE = 0.01;
/**
 * And toward LRU only when it is ahead this many decisions in a row: on a loop over more keys than
 * the cache holds, the cache's hits come in runs (the part of the loop it keeps), so a single
 * quarter-cache sample can favour LRU by chance of timing; growing on one cost 3.5 points on half
 * a loop over 30,000 blocks and half Zipf at 20,000 entries, on three 0.5 (0.2 to 0.4 more on the
 * recency-biased traces).
 */
const BEHIND_IN_A_ROW = 3;
/**
 * And away from the largest share only when the cache is clearly ahead this many decisions in a
 * row. There the cache is LRU but for the main space's 1 %, whose frequent keys the shadow LRU
 * drops and does not take back while the cache keeps hitting them, so one decision now and then
 * favours the cache by far on recency-biased requests too; each such halving cost 2 to 4 points
 * for the time the window took to grow back (half-size replays of the recency trace: −1.8, −2.2,
 * −1.6 points below LRU with one decision, −1.3, −1.5, −1.1 with two). After a popularity shift
 * the cache is ahead at every decision, so the window still comes down (the shift within 0.02
 * points); with three the shift at 8 MiB lost 0.12.
 */
const AHEAD_AT_TOP_IN_A_ROW = 2;
export class WindowTuner {
  /** Keys hashed below this are in the sample (the high bits: the sketch indexes by the low ones). */
  readonly #below: number;
  readonly #shadow: ShadowLru;
  readonly #decideEvery: number;
  /** What the shadow holds in memory, at most: counted against the bound. */
  readonly bytes: number;
  #share = MIN_WINDOW_SHARE;
  #requests = 0;
  /** Sampled requests that only the shadow LRU hit, and that only the cache hit. */
  #lruOnly = 0;
  #cacheOnly = 0;
  /** Decisions in a row that saw no clear difference. */
  #undecided = 0;
  #patience = PATIENCE;
  /** Whether the last move was a probe: a halving without a clear difference, to be kept or undone. */
  #probing = false;
  /** Decisions in a row that found LRU ahead, and the cache. */
  #behind = 0;
  #ahead = 0;

  /** `maxSize`: the cache's bound in bytes; `capacity`: how many entries it is expected to hold at most. */
  constructor(maxSize: number, capacity: number) {
    const wanted = Math.min(SHADOW_KEYS, Math.max(LEAST_SHADOW_KEYS, Math.floor(maxSize / BOUND_BYTES_PER_SHADOW_KEY)));
    const k = Math.max(0, Math.ceil(Math.log2(capacity / wanted)));
    this.#below = 2 ** (32 - k);
    const keys = Math.ceil(capacity / 2 ** k);
    this.#decideEvery = Math.max(MIN_DECISION_REQUESTS, Math.ceil(keys * DECISION_PER_KEY));
    this.#shadow = new ShadowLru(Math.max(1, Math.floor(maxSize / 2 ** k)), keys * SHADOW_KEY_ROOM);
    this.bytes = this.#shadow.bytes;
  }

  /** The window's share of the bound now. */
  get share(): number {
    return this.#share;
  }

  /**
   * Counts a lookup of the key hashed `h` that the cache did or did not answer; true when the
   * window's share changed with it.
   */
  looked(h: number, hit: boolean): boolean {
    if (h >= this.#below) return false;
    const lruHit = this.#shadow.get(h);
    if (lruHit !== hit) {
      if (lruHit) this.#lruOnly++;
      else this.#cacheOnly++;
    }
    return ++this.#requests >= this.#decideEvery && this.#decide();
  }

  /** Counts a store of `size` bytes under the key hashed `h`: LRU keeps every one. */
  stored(h: number, size: number): void {
    if (h < this.#below && size > 0) this.#shadow.set(h, size);
  }

  /** Counts a removal (a purge): LRU loses the entry too. */
  deleted(h: number): void {
    if (h < this.#below) this.#shadow.delete(h);
  }

  #decide(): boolean {
    const difference = this.#lruOnly - this.#cacheOnly;
    const chance = Math.sqrt(this.#lruOnly + this.#cacheOnly);
    const lruBetter = difference > GROW_SIGNIFICANCE * chance;
    const cacheBetter = -difference > SHRINK_SIGNIFICANCE * chance && -difference > MIN_SHRINK_DIFFERENCE * this.#requests;
    this.#requests = 0;
    this.#lruOnly = 0;
    this.#cacheOnly = 0;
    if (this.#probing) {
      this.#probing = false;
      // A probe is kept only when the smaller window does clearly better than LRU; otherwise it
      // is undone, and the next one waits twice as long.
      if (!cacheBetter) {
        this.#patience = Math.min(MOST_PATIENCE, this.#patience * 2);
        return this.#move(this.#share * STEP);
      }
      this.#patience = PATIENCE;
    }
    this.#behind = lruBetter ? this.#behind + 1 : 0;
    this.#ahead = cacheBetter ? this.#ahead + 1 : 0;
    if (cacheBetter) return (this.#share < MAX_WINDOW_SHARE || this.#ahead >= AHEAD_AT_TOP_IN_A_ROW) && this.#move(this.#share / STEP);
    if (this.#behind >= BEHIND_IN_A_ROW) return this.#move(this.#share * STEP);
    if (lruBetter) return false;
    if (++this.#undecided < this.#patience) return false;
    this.#probing = this.#share > MIN_WINDOW_SHARE;
    return this.#move(this.#share / STEP);
  }

  #move(share: number): boolean {
    this.#undecided = 0;
    const bounded = Math.min(MAX_WINDOW_SHARE, Math.max(MIN_WINDOW_SHARE, share));
    if (bounded === this.#share) return false;
    this.#share = bounded;
    return true;
  }
}
