/**
 * How large W-TinyLFU's window is, decided by two miniature caches run on a sample of the keys:
 * plain LRU (shadow-lru.ts), which stands for the top of the window's range, and W-TinyLFU at the
 * smallest window (shadow-tinylfu.ts), which is what counts alone would do. The window moves
 * toward whichever of the two hits more, as soon as the difference is larger than chance would
 * make it. A 1 % window is what frequency-biased workloads want (Zipf searches, crawlers, loops:
 * the filter keeps one-off answers out), but where what was asked lately is what is asked next,
 * and counts say little, the filter refuses the entries that would be hit. At the top the cache
 * admits every entry: a segmented LRU whose window's hits are promoted (windowed-lru.ts), which
 * hits as LRU does where recency decides and keeps through it the keys asked twice, as ARC does.
 *
 * Both miniatures see the same sampled requests (spatial sampling, as SHARDS does: Waldspurger et
 * al., FAST 2015; miniature simulation, Waldspurger et al., USENIX ATC 2017): the keys whose hash
 * falls in a 2^-k slice, each miniature bounded to the same slice of the bytes, at most 4,096 keys.
 * Comparing them, rather than the cache with LRU, keeps telling which side is ahead wherever the
 * window stands: with the window at the top the cache hits about as LRU does, and no comparison of
 * the two could show when counts start to decide better again (a recency-biased phase followed by a
 * frequency-biased one). ARC adapts between the same two sides by its ghost lists' hits (Megiddo
 * and Modha, FAST 2003); Caffeine hill-climbs its own hit ratio, which replayed here as noise on
 * stationary traces (it cannot tell a worse step from a worse minute).
 *
 * The window grows eightfold (1 %, 8 %, 64 %, the top), except that until counts have won a verdict, LRU's first lead takes
 * it straight to the top: nothing says the requests were ever frequency-biased, and every step
 * short of the top costs what LRU would hit. It shrinks to 1 % at once: counts winning a verdict
 * say frequency decides again, and a step short of 1 % lets the window's one-off entries push out
 * what counts would keep. At the top the cache admits every entry, and once settled there
 * (SETTLED verdicts) it pays for the policy only this tuner's memory and a sketch of the sample's
 * keys (`settledAtTop`, windowed-lru.ts), which is what a recency-biased workload loses to LRU.
 *
 * When counts had been clearly ahead at the smallest window, and LRU suddenly pulls far ahead,
 * popularity has likely shifted and the sketch's counts refuse what is hot now: the sketch is
 * cleared (as the shift detector does, shift-detector.ts). If the requests did turn
 * recency-biased, LRU stays ahead and the window grows; if popularity only shifted, the
 * miniature W-TinyLFU, relearning with fresh counts, is ahead again within a sample.
 *
 * A lookup of a key outside the sample costs a comparison; the sample's share is looked up in
 * both miniatures, and every CHECK of them the counts are compared.
 */
import { ShadowLru } from './shadow-lru.ts';
import { ShadowTinyLfu } from './shadow-tinylfu.ts';

/** The share of the bound the window starts at and never goes below: Caffeine's. */
export const MIN_WINDOW_SHARE = 0.01;
/**
 * The largest share, the top: the cache admits every entry there (a segmented LRU, windowed-lru.ts),
 * and pays for the policy no more than the miniatures and a sketch of the sample's keys.
 */
export const MAX_WINDOW_SHARE = 1;
/**
 * A move up multiplies the share by this: 1 %, 8 %, 64 %, the top. Stepping down a step at a time
 * too, 16 did better than 4 (`phases` at 64 MiB 0.28 points below LRU with 4, 0.22 with 16). Going
 * down to 1 % in one move, 8 did better than 16 on eight of the ten cells of `phases` and the shift
 * at 16, 32, 64, 128 and 256 MiB, by up to 0.11 points, and lost at most 0.05 on two. 4 did
 * better still on some (the shift at 64 MiB 0.50 points above 8) and worse on others (`phases`
 * and the shift at 128 MiB 0.18 and 0.26 below 8); 2 took `phases` at 64 MiB to 0.13 below LRU.
 */
const STEP = 8;
/**
 * At most this many keys in each miniature: enough for its hit ratio to follow the full cache's
 * closely (SHARDS).
 */
const SHADOW_KEYS = 4096;
/** At least this many, whatever the bound. */
const LEAST_SHADOW_KEYS = 256;
/**
 * And one per this many bytes of the bound, within those two: since the sketch expects an entry
 * per 2,048 B, this sets the sample's share of the keys, a sixteenth below 4,096 keys. What the
 * miniatures hold is most of what the cache pays for the policy at the top, where it admits every entry; the
 * larger sample tells a turn of the requests twice as soon as a thirty-second (40,000 B): `phases`
 * at 64 MiB 0.07 points below LRU against 0.22, `recency` at 16 MiB 0.10 against 0.08, and with
 * room for twice the keys rec3 at 5,000 entries 0.11 below LRU, which room for 1.5 times takes
 * back to 0.09. (At one key per 5,000 B, 1.2 % of 16 MiB, `recency` was 0.31 points below LRU there.)
 */
const BOUND_BYTES_PER_SHADOW_KEY = 20_000;
/**
 * Room for this many times the keys the sample is expected to hold: the expectation is for
 * entries of the sketch's size, and a miniature of smaller ones holds more keys in the same bytes.
 */
const SHADOW_KEY_ROOM = 1.5;
/**
 * Sampled requests between two comparisons (a power of two): the test runs on counts, so checking
 * often only decides sooner. Against 64, 16 took `phases` from 0.31 to 0.15 points below LRU at
 * 256 MiB and from 0.43 below ARC to 0.01 above at 16 MiB, `recency` at 256 MiB from 0.11 to 0.10
 * below LRU, for the shift at 64 MiB 4.7 points above LRU instead of 5.4 (docs/performance.md).
 */
const CHECK = 16;
/**
 * The counts start again after this many sampled requests per shadow key without a clear
 * difference, so that what they compare is recent: at the turn from a frequency-biased stretch to
 * a recency-biased one, LRU's lead must first outweigh what counts won since the last start.
 * Against 1 (and 512 at least), a quarter (128) took `phases` at 64 MiB from 0.41 to 0.28 points
 * below LRU, rec1 at 80,000 entries from 0.11 to 0.08, `recency` at 256 MiB from 0.10 to 0.09,
 * the shift at 64 MiB 0.2 points higher; Zipf 0.9 and the shift at 256 MiB within 0.01.
 */
const DECISION_PER_KEY = 0.25;
/** Nor fewer than this. */
const MIN_DECISION_REQUESTS = 128;
/**
 * How many standard deviations of chance the difference in hits between the miniatures must
 * exceed to move the window, and by at least this share of the sampled requests.
 */
const SIGNIFICANCE = 3;
const MIN_DIFFERENCE = 0.01;
/**
 * After a shift the shift detector saw, this many verdicts for LRU are ignored: LRU does better for
 * a while after it, as the main space still holds what was hot before, and growing on that lost
 * what the cleared sketch would have won back (the shift at 256 MiB: 0.4 points below LRU with
 * none, at LRU with 2; 4 and 8 held the window at 1 % into recency-biased phases, `phases` at 64
 * MiB 0.10 and 0.21 points below 2).
 */
const HOLD_AFTER_SHIFT = 2;
/**
 * Comparisons in a row won by one side at its end of the window's range after which the other side
 * far ahead reads as a change of the requests. Against 4, 3 took `phases` at 256 MiB from 0.15
 * below LRU to 0.24 above (1.38 and 0.99 below ARC), at 64 MiB 0.03 points lower, every other
 * trace within 0.01; 2 and 6 were 0.10 and 0.53 below LRU there.
 */
const SETTLED = 3;

export class WindowTuner {
  readonly #onReversal: () => void;
  /** Keys hashed below this are in the sample (the high bits: the sketch indexes by the low ones). */
  readonly #below: number;
  readonly #lru: ShadowLru;
  readonly #counts: ShadowTinyLfu;
  readonly #decideEvery: number;
  readonly #sampleKeys: number;
  /** What the miniatures hold in memory, at most: counted against the bound. */
  readonly bytes: number;
  #share = MIN_WINDOW_SHARE;
  #requests = 0;
  /** Sampled requests that only the miniature LRU hit, and that only the miniature W-TinyLFU. */
  #lruOnly = 0;
  #countsOnly = 0;
  /** Comparisons in a row won by one side at its end of the window's range. */
  #settled = 0;
  /** Whether a verdict ever went to the W-TinyLFU miniature. */
  #countsWon = false;
  /** Verdicts for LRU still to be ignored after a shift. */
  #held = 0;

  /**
   * `maxSize`: the cache's bound in bytes; `capacity`: how many entries it is expected to hold at
   * most; `frequency`: the cache's sketch's estimate for a key hash; `onReversal`: called when
   * the tuner sees a popularity shift (SETTLED), before `looked` returns.
   */
  constructor(maxSize: number, capacity: number, frequency: (h: number) => number, onReversal: () => void) {
    this.#onReversal = onReversal;
    const wanted = Math.min(SHADOW_KEYS, Math.max(LEAST_SHADOW_KEYS, Math.floor(maxSize / BOUND_BYTES_PER_SHADOW_KEY)));
    const k = Math.max(0, Math.ceil(Math.log2(capacity / wanted)));
    this.#below = 2 ** (32 - k);
    const keys = Math.ceil(capacity / 2 ** k);
    this.#sampleKeys = keys;
    this.#decideEvery = Math.max(MIN_DECISION_REQUESTS, Math.ceil(keys * DECISION_PER_KEY));
    const bytes = Math.max(1, Math.floor(maxSize / 2 ** k));
    this.#lru = new ShadowLru(bytes, keys * SHADOW_KEY_ROOM);
    this.#counts = new ShadowTinyLfu(bytes, keys * SHADOW_KEY_ROOM, frequency);
    this.bytes = this.#lru.bytes + this.#counts.bytes;
  }

  /** Keys hashed below this are the sample the miniatures see. */
  get below(): number {
    return this.#below;
  }

  /** How many keys the sample is expected to hold. */
  get sampleKeys(): number {
    return this.#sampleKeys;
  }

  /**
   * Whether the window is at the top and has stayed there for SETTLED verdicts: the requests are
   * recency-biased for now, and the cache admits every entry until the tuner's verdict turns.
   */
  get settledAtTop(): boolean {
    return this.#share === MAX_WINDOW_SHARE && this.#settled >= SETTLED;
  }

  /** The window's share of the bound now. */
  get share(): number {
    return this.#share;
  }

  /**
   * Counts a lookup of the key hashed `h` that the cache did or did not answer; true when the
   * window's share changed with it, or whether it is settled at the top (`settledAtTop`).
   */
  looked(h: number, hit: boolean): boolean {
    if (h >= this.#below) return false;
    const lruHit = this.#lru.get(h);
    const countsHit = this.#counts.get(h);
    // A key the cache hit is not stored again: a miniature that lacked it would have fetched and kept it.
    if (hit && !lruHit) this.#lru.learn(h);
    if (hit && !countsHit) this.#counts.learn(h);
    if (lruHit !== countsHit) {
      if (lruHit) this.#lruOnly++;
      else this.#countsOnly++;
    }
    this.#requests++;
    return (this.#requests & (CHECK - 1)) === 0 && this.#compare();
  }

  /**
   * Popularity shifted, as the shift detector saw (the sketch was cleared): the window goes back to
   * 1 % and is held there for HOLD_AFTER_SHIFT verdicts that LRU is ahead, while the cache and the
   * W-TinyLFU miniature relearn what is asked now; true when the share changed.
   */
  shifted(): boolean {
    this.#counts.forget();
    this.#restart();
    this.#settled = 0;
    this.#held = HOLD_AFTER_SHIFT;
    return this.#move(MIN_WINDOW_SHARE);
  }

  /** Counts a store of `size` bytes under the key hashed `h`, after a miss: both miniatures take it. */
  stored(h: number, size: number): void {
    if (h >= this.#below || size <= 0) return;
    this.#lru.set(h, size);
    this.#counts.set(h, size);
  }

  /** Counts a removal (a purge): the miniatures lose the entry too. */
  deleted(h: number): void {
    if (h >= this.#below) return;
    this.#lru.delete(h);
    this.#counts.delete(h);
  }

  #compare(): boolean {
    const difference = this.#lruOnly - this.#countsOnly;
    const clear = Math.max(SIGNIFICANCE * Math.sqrt(this.#lruOnly + this.#countsOnly), MIN_DIFFERENCE * this.#requests);
    if (Math.abs(difference) <= clear) {
      if (this.#requests >= this.#decideEvery) this.#restart();
      return false;
    }
    this.#restart();
    const lruAhead = difference > 0;
    if (lruAhead && this.#held > 0) {
      this.#held--;
      return false;
    }
    if (!lruAhead) this.#countsWon = true;
    const extreme = lruAhead ? MAX_WINDOW_SHARE : MIN_WINDOW_SHARE;
    if (this.#share === extreme) {
      this.#settled++;
      return lruAhead && this.#settled === SETTLED;
    }
    if (this.#settled >= SETTLED && (this.#share === MIN_WINDOW_SHARE || this.#share === MAX_WINDOW_SHARE)) {
      this.#onReversal();
      this.#counts.forget();
    }
    this.#settled = 0;
    // Down in one move: stepping down sixteenfold from the top left the window at 6.25 % for most
    // of some of `phases`' Zipf stretches at 256 MiB, which then ended 0.12 points below LRU and
    // 1.35 below ARC (0.11 above and 1.13 below in one move; the shift at 64 MiB 0.23 points
    // higher, `phases` at 64 MiB 0.05 lower, every other trace the same).
    if (!lruAhead) return this.#move(MIN_WINDOW_SHARE);
    // Until counts have won a verdict, LRU's lead says the requests are recency-biased, and every
    // step short of the top costs what the top would hit (`recency` at 16 MiB: 0.05 of the 0.13
    // points it stayed below LRU with fourfold steps up from the start). Once counts have won, LRU's
    // lead may be a shift's or a passing phase's, which stepping rides out better (jumping every
    // time replayed `shift` at 256 MiB 0.4 points below stepping, `phases` at 64 MiB 0.1).
    return this.#move(this.#countsWon ? this.#share * STEP : MAX_WINDOW_SHARE);
  }

  #restart(): void {
    this.#requests = 0;
    this.#lruOnly = 0;
    this.#countsOnly = 0;
  }

  #move(share: number): boolean {
    const bounded = Math.min(MAX_WINDOW_SHARE, Math.max(MIN_WINDOW_SHARE, share));
    if (bounded === this.#share) return false;
    this.#share = bounded;
    return true;
  }
}
