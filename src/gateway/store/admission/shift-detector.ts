/**
 * Tells when popularity has shifted. The sketch ages after 30 repeated requests per entry
 * (frequency-sketch.ts), and until then the keys that were hot keep the counts that refuse the
 * ones that are hot now, so that only the window serves them; the store then clears the
 * sketch (windowed-lru.ts).
 *
 * Two signs must agree over three samples in a row (a sample is a sixteenth of a cache's worth of
 * requests, 10,000 at least): the hit ratio stays a fifth below its best since the last shift,
 * and one and a half times the usual share of the requests are for keys that admission refused a
 * little earlier (regrets: the filter keeps out what is asked for again). A scan, a burst of
 * one-off searches or a loop over more keys than the cache holds costs hits too, but its misses
 * are for keys that were not refused lately, so the regrets do not rise; clearing the sketch on
 * the hit ratio alone cost 7.7 and 11 points on two such traces (docs/performance.md).
 * "Lately", for a regret, is within half a cache's worth of lookups, while plain LRU could still
 * have hit the key. A loop a little longer than the cache asks each refused key again about a
 * cache's worth of lookups later; remembered for a cache's worth of refusals instead (a pass
 * refuses far fewer), its own misses would be regrets and every pass a shift, and each clear lets
 * the keys asked next be evicted (a candidate counted once beats victims not counted since): the
 * loop at 240–272 MiB read 38–50 % that way, against 67–74 % (docs/performance.md).
 *
 * Caffeine answers a shift by hill climbing the window's share (Einziger, Eytan, Friedman and
 * Manes, "Adaptive Software Cache Management", Middleware 2018); the replays measured that here
 * and it lost: it wanders on a stationary workload, and a larger window alone does not lift the
 * shift above LRU while the old counts stay. (The window is tuned, but by two miniature caches
 * on a sample of the keys, window-tuner.ts.)
 *
 * Counting is the only cost on a lookup; the rest runs when an entry is stored.
 */
import { powerOfTwoAtLeast, spread } from './frequency-sketch.ts';

/**
 * A sample is this many requests per entry the cache holds. A quarter took the shift as long to
 * see at the largest bounds as the drop it answers lasts: 96,000 requests after the shift at 256 MiB
 * (133,000 entries), where the replay then tied LRU (−0.03 points); an eighth saw it after 57,000
 * (+0.20 points), and took the phased block trace at 80,000 entries from 2.6 to 1.3 points below
 * LRU. With 139,000 entries at 256 MiB an eighth was late again (0.37 points below LRU, 0.67 below
 * ARC); a sixteenth is 0.25 above LRU and 0.06 below ARC, with every Zipf, crawler, loop, phases
 * and block trace within 0.02 points of an eighth (below about 160,000 entries the floor,
 * MIN_SAMPLE, decides; docs/performance.md).
 */
export const SAMPLE_PER_ENTRY = 1 / 16;
/** A sample is never shorter than this, so that its ratios are not mostly noise. */
const MIN_SAMPLE = 10_000;
/** How far below its best the hit ratio must fall. */
const DROP = 0.2;
/** How many times the usual share of regrets there must be. */
const REGRET_RISE = 1.5;
/**
 * For how many samples in a row both must hold. W-TinyLFU's hit ratio on a loop over somewhat more
 * keys than the cache holds swings from sample to sample, and so do its regrets: half a loop over
 * 1.5 times the entries held lost 9.2 points with two samples, 1.0 with three; four missed the
 * shift (docs/performance.md).
 */
const LASTING = 3;
/** Bits per entry of each generation of refused keys: at most about 3 % false regrets, both generations full. */
const BITS_PER_ENTRY = 16;
/**
 * The share of the misses that the generations' false positives alone can make regrets, both
 * full (BITS_PER_ENTRY): regrets no more frequent than that are no sign, however rare they usually
 * are. On a loop a fifth longer than the cache the usual share is about 0.01 % of the requests,
 * and a pass's missed tail, about three samples long, makes 0.06–0.16 % of false ones: read as a
 * shift, the sketch cleared within the tail let the rest of it (each key counted once since) evict
 * the keys asked next, a whole pass of misses, whenever three samples fitted in the tail. Replayed
 * from 250 to 262 MiB, the loop read 66.4–74.4 % as they fitted or not, 72.6–74.4 % with this floor.
 */
const FALSE_REGRETS = 0.03;

/**
 * One generation of refused keys: a Bloom filter of two bits a key, and which of its words were
 * set, while they are few, so that emptying it costs what was added, not its size. Generations
 * turn every half a cache's worth of lookups, which is every lookup while the cache holds one
 * entry: emptying all of a filter sized for a 256 MiB cache (128 KB) there would cost a hit
 * nearly twice its own work (131,000 instructions under callgrind, against about 75,000).
 */
class Generation {
  readonly bits: Uint32Array;
  /** The words set since it was last emptied, in the order they were, while no more than its length. */
  readonly #set: Uint32Array;
  #count = 0;

  constructor(words: number) {
    this.bits = new Uint32Array(words);
    this.#set = new Uint32Array(Math.max(1, words >>> SET_WORDS_SHIFT));
  }

  add(index: number): void {
    const word = index >>> 5;
    const value = this.bits[word] ?? 0;
    if (value === 0) {
      if (this.#count < this.#set.length) this.#set[this.#count] = word;
      this.#count++;
    }
    this.bits[word] = value | (1 << (index & 31));
  }

  get holdsAny(): boolean {
    return this.#count > 0;
  }

  empty(): void {
    if (this.#count > this.#set.length) this.bits.fill(0);
    else for (let i = 0; i < this.#count; i++) this.bits[this.#set[i] ?? 0] = 0;
    this.#count = 0;
  }
}

/**
 * A generation remembers the words it set up to a sixteenth of its size: past that, emptying all
 * of it costs at most sixteen words for each word set.
 */
const SET_WORDS_SHIFT = 4;

/**
 * The keys refused lately, approximately: two generations, the older dropped once the younger has
 * lasted its owner's limit of events (`tick`).
 */
class RefusedKeys {
  #young: Generation;
  #old: Generation;
  readonly #mask: number;
  /** Events the younger generation has lasted. */
  #ticks = 0;

  constructor(capacity: number) {
    const bits = powerOfTwoAtLeast(Math.max(32, capacity * BITS_PER_ENTRY));
    this.#young = new Generation(bits / 32);
    this.#old = new Generation(bits / 32);
    this.#mask = bits - 1;
  }

  get bytes(): number {
    return 2 * (this.#young.bits.byteLength * (1 + 2 ** -SET_WORDS_SHIFT));
  }

  /** Counts one event (a lookup, a refusal); past `limit` of them the generations turn. */
  tick(limit: number): void {
    if (++this.#ticks <= limit) return;
    const older = this.#old;
    older.empty();
    this.#old = this.#young;
    this.#young = older;
    this.#ticks = 1;
  }

  get holdsAny(): boolean {
    return this.#young.holdsAny || this.#old.holdsAny;
  }

  add(h: number): void {
    this.#young.add(h & this.#mask);
    this.#young.add(spread(h ^ 0x5bd1e995) & this.#mask);
  }

  has(h: number): boolean {
    const a = h & this.#mask;
    const b = spread(h ^ 0x5bd1e995) & this.#mask;
    return (isSet(this.#young.bits, a) && isSet(this.#young.bits, b)) || (isSet(this.#old.bits, a) && isSet(this.#old.bits, b));
  }
}

function isSet(bits: Uint32Array, index: number): boolean {
  return (((bits[index >>> 5] ?? 0) >>> (index & 31)) & 1) === 1;
}

export class ShiftDetector {
  /** Refused within a cache's worth of refusals: what the admission's tie rule asks (`refusedLately`). */
  #refused: RefusedKeys;
  /** Refused within half a cache's worth of lookups: what a regret is. */
  #regrettable: RefusedKeys;
  #requests = 0;
  #hits = 0;
  #regrets = 0;
  /** The best sample's hit ratio since the last shift. */
  #best = 0;
  /** Regrets and requests of the samples since the last shift whose hit ratio had not fallen: the usual share. */
  #usualRegrets = 0;
  #usualRequests = 0;
  /** Samples in a row that looked like a shift. */
  #suspect = 0;

  /** `capacity`: how many entries the cache is expected to hold at most. */
  constructor(capacity: number) {
    this.#refused = new RefusedKeys(capacity);
    // Half as many lookups take no more refusals than that: half the bits give the same false regrets.
    this.#regrettable = new RefusedKeys(capacity / 2);
  }

  /**
   * Sized again for `capacity` entries, starting afresh: while the window is all of the bound
   * nothing is refused, and the store gives it no room (0) until it is not.
   */
  reshape(capacity: number): void {
    this.#refused = new RefusedKeys(capacity);
    this.#regrettable = new RefusedKeys(capacity / 2);
    this.#requests = 0;
    this.#hits = 0;
    this.#regrets = 0;
    this.#best = 0;
    this.#usualRegrets = 0;
    this.#usualRequests = 0;
    this.#suspect = 0;
  }

  /** What it holds in memory. */
  get bytes(): number {
    return this.#refused.bytes + this.#regrettable.bytes;
  }

  /** Counts a lookup (`entries`: what the cache holds now). */
  record(hit: boolean, entries: number): void {
    this.#regrettable.tick(entries / 2);
    this.#requests++;
    if (hit) this.#hits++;
  }

  /** Whether admission kept out the key hashed `h` lately (a regret when it is asked again). */
  refusedLately(h: number): boolean {
    return this.#refused.has(h);
  }

  /** Admission kept out the key hashed `h` (keyHash; `entries`: what the cache holds now). */
  refused(h: number, entries: number): void {
    this.#refused.tick(entries);
    this.#refused.add(h);
    this.#regrettable.add(h);
  }

  /**
   * Counts a store of the key hashed `h` (after a miss), and after a sample of requests tells
   * whether popularity shifted; then it starts again.
   */
  shifted(h: number, entries: number): boolean {
    if (this.#regrettable.has(h)) this.#regrets++;
    if (this.#requests < Math.max(MIN_SAMPLE, SAMPLE_PER_ENTRY * entries)) return false;
    const ratio = this.#hits / this.#requests;
    const regrets = this.#regrets / this.#requests;
    const fallen = ratio < this.#best * (1 - DROP);
    if (!fallen) {
      this.#best = Math.max(this.#best, ratio);
      this.#usualRegrets += this.#regrets;
      this.#usualRequests += this.#requests;
    }
    const usual = this.#usualRequests > 0 ? this.#usualRegrets / this.#usualRequests : Infinity;
    this.#requests = 0;
    this.#hits = 0;
    this.#regrets = 0;
    // With no key refused (the window at the top) no miss can be a regret, and a lasting fall
    // alone is a shift: usual and sampled regrets are both none.
    const falseRegrets = this.#regrettable.holdsAny ? FALSE_REGRETS * (1 - ratio) : 0;
    this.#suspect = fallen && regrets >= Math.max(REGRET_RISE * usual, falseRegrets) ? this.#suspect + 1 : 0;
    if (this.#suspect < LASTING) return false;
    this.#best = ratio;
    this.#usualRegrets = 0;
    this.#usualRequests = 0;
    this.#suspect = 0;
    return true;
  }
}
