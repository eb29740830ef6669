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
 * requests; the window moves (doubled or halved, between 1 % and 99.8 %) only when the difference
 * is larger than chance would make it, by far when it is to shrink. Set dueling in CPU caches
 * (Qureshi et al., ISCA 2007) chooses an insertion policy the same way. Caffeine instead
 * hill-climbs its own hit ratio, which replayed here as noise on stationary traces (it cannot tell
 * a worse step from a worse minute).
 *
 * The shadow is plain LRU on the sample: a key the cache hit and the shadow lacked is taken into
 * it, as LRU would have fetched and kept it. It used to learn keys only when the cache stored
 * them, which made it an LRU of the cache's misses: a key the cache kept counted as a hit only
 * the cache made at every request, not once, and that lead halved the window now and then on
 * recency-biased requests (docs/performance.md, "Admission: W-TinyLFU").
 *
 * That same lead was what brought the window down after a popularity shift. With an honest
 * shadow nothing does, since a window as large as LRU's hits as LRU does, so a shift is answered
 * directly: when the cache's sketch is cleared (shift-detector.ts), or when LRU pulls far ahead
 * of a cache that had been clearly ahead of it at the smallest window (a reversal, which is a
 * shift seen sooner), the window goes back to 1 % and stays there while the cache relearns what
 * is asked now.
 *
 * A lookup of a key outside the sample costs a comparison; the sample's share is looked up in
 * the shadow LRU as well, and every FAST_CHECK of them the counts are compared.
 */
import { ShadowLru } from './shadow-lru.ts';

/** The share of the bound the window starts at and never goes below: Caffeine's. */
export const MIN_WINDOW_SHARE = 0.01;
/**
 * The largest share: the main space keeps 0.2 %, so that at the top the cache is nearly LRU. A cap
 * of 90 % stayed up to 1.1 points further below LRU at small bounds on the recency-biased traces;
 * 99.8 % instead of 99 % took the synthetic recency trace at 16 MiB 0.05 points closer to LRU.
 */
const MAX_WINDOW_SHARE = 0.998;
/** A move doubles or halves the share: seven moves go from 1 % to the top; fourfold steps replayed alike. */
const STEP = 2;
/**
 * A probe divides the share by this. A probe from the top moves the window's oldest part to the
 * main space, and what leaves it there is judged by counts that say little on recency-biased
 * requests: a halving put the synthetic recency trace at 64 MiB 0.5 to 1.7 points below LRU for
 * about 90,000 requests, even when undone at the next decision; a fifth off, 0.1 to 0.6.
 */
const PROBE_STEP = 1.25;
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
 * After this many decisions in a row without a clear difference, a fifth is taken off the
 * window anyway (a probe, PROBE_STEP): with a window as large as LRU's the cache hits as LRU does, so no difference would ever
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
 * Every this many sampled requests (a power of two) within a decision, the window grows at once
 * when LRU is already ahead by FAST_SIGNIFICANCE standard deviations and 1 % of the requests. The
 * climb from 1 % to the top took three decisions before the first doubling and one for each after,
 * about two caches' worth of requests, and that climb was most of what the recency-biased traces
 * lost to LRU. With the honest shadow a loop's runs no longer read as LRU ahead (docs/performance.md:
 * a fast growth with the shadow of the cache's misses lost up to 24 points on a loop block trace).
 */
const FAST_CHECK = 64;
const FAST_SIGNIFICANCE = 2;
const MIN_GROW_DIFFERENCE = 0.01;
/**
 * A cache that has been clearly ahead of LRU at the smallest window this many decisions in a row
 * is frequency-biased; when LRU then pulls far ahead (as FAST_CHECK tells), what is asked has
 * changed and the sketch's counts refuse it: that is a popularity shift, told from the tuner's
 * side, and answered as one (the sketch cleared, the window held at 1 %). Otherwise the window
 * would grow to the top within a cache's worth of requests after a shift, the hit ratio then
 * falls too little for the shift detector to see it, and the cache stays LRU for good (the shift
 * at 64 MiB: 4.8 points above LRU before, 2.7 so).
 */
const SETTLED_DECISIONS = 4;
/**
 * After a shift, the window is held at 1 % for this many decisions (two caches' worth of
 * requests): LRU does better for a while after it, as the main space still holds what was hot
 * before, and growing on that took the window to the top again for good (the shift at 64 MiB 2.6
 * points above LRU with no hold, 5.3 with four decisions, 5.4 with eight).
 */
const HOLD_AFTER_SHIFT = 8;
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
 * row. Set when the shadow learnt keys only on the cache's misses: it then dropped the main
 * space's frequent keys and did not take them back while the cache kept hitting them, so one
 * decision now and then favoured the cache by far on recency-biased requests too, and each such
 * halving cost 2 to 4 points for the time the window took to grow back (half-size replays of the
 * recency trace: −1.8, −2.2, −1.6 points below LRU with one decision, −1.3, −1.5, −1.1 with two).
 * The honest shadow no longer makes that lead, and two in a row were not replayed against one
 * with it.
 */
const AHEAD_AT_TOP_IN_A_ROW = 2;
export class WindowTuner {
  readonly #onReversal: () => void;
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
  /** Decisions in a row at the smallest window that found the cache clearly ahead. */
  #settled = 0;
  /** Decisions left for which the window stays at 1 % after a shift. */
  #held = 0;

  /**
   * `maxSize`: the cache's bound in bytes; `capacity`: how many entries it is expected to hold at
   * most; `onReversal`: called when the tuner sees a popularity shift (SETTLED_DECISIONS), before
   * `looked` returns.
   */
  constructor(maxSize: number, capacity: number, onReversal: () => void) {
    this.#onReversal = onReversal;
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
      if (lruHit) {
        this.#lruOnly++;
      } else {
        this.#cacheOnly++;
        this.#shadow.learn(h);
      }
    }
    this.#requests++;
    if ((this.#requests & (FAST_CHECK - 1)) === 0 && this.#requests < this.#decideEvery && this.#held === 0 && this.#lruFarAhead()) return this.#growAtOnce();
    return this.#requests >= this.#decideEvery && this.#decide();
  }

  /**
   * Popularity shifted (the sketch was cleared): the window goes back to 1 % and is held there;
   * true when its share changed.
   */
  shifted(): boolean {
    this.#held = HOLD_AFTER_SHIFT;
    this.#restart();
    return this.#move(MIN_WINDOW_SHARE);
  }

  #lruFarAhead(): boolean {
    const difference = this.#lruOnly - this.#cacheOnly;
    return (
      this.#share < MAX_WINDOW_SHARE &&
      difference > FAST_SIGNIFICANCE * Math.sqrt(this.#lruOnly + this.#cacheOnly) &&
      difference > MIN_GROW_DIFFERENCE * this.#requests
    );
  }

  #growAtOnce(): boolean {
    if (this.#share <= MIN_WINDOW_SHARE && this.#settled >= SETTLED_DECISIONS) {
      this.#onReversal();
      return this.shifted();
    }
    this.#restart();
    return this.#move(this.#share * STEP);
  }

  /** Starts a new decision, with no probe pending and no streak. */
  #restart(): void {
    this.#requests = 0;
    this.#lruOnly = 0;
    this.#cacheOnly = 0;
    this.#probing = false;
    this.#behind = 0;
    this.#ahead = 0;
    this.#settled = 0;
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
    this.#settled = cacheBetter && this.#share <= MIN_WINDOW_SHARE ? this.#settled + 1 : 0;
    if (this.#held > 0) {
      this.#held--;
      return false;
    }
    if (this.#probing) {
      this.#probing = false;
      // A probe is kept only when the smaller window does clearly better than LRU; otherwise it
      // is undone, and the next one waits twice as long.
      if (!cacheBetter) {
        this.#patience = Math.min(MOST_PATIENCE, this.#patience * 2);
        return this.#move(this.#share * PROBE_STEP);
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
    return this.#move(this.#share / PROBE_STEP);
  }

  #move(share: number): boolean {
    this.#undecided = 0;
    const bounded = Math.min(MAX_WINDOW_SHARE, Math.max(MIN_WINDOW_SHARE, share));
    if (bounded === this.#share) return false;
    this.#share = bounded;
    return true;
  }
}
