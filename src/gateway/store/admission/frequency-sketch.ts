/**
 * How often each key was asked for lately, approximately, in a few bytes per cached entry: the
 * TinyLFU sketch (Einziger, Friedman and Manes, ACM TOS 2017), shaped like Caffeine's
 * `FrequencySketch`. A count-min sketch of 4-bit counters (four of them per key, the estimate is
 * their minimum, so a collision can only overestimate; 16 B per entry), in front of it a
 * doorkeeper (a Bloom filter that takes a key's first sighting, so the one-hit wonders that make
 * up most of a search workload never reach the counters), and aging: after a sample of 30 increments per entry in the
 * cache every counter is halved and the doorkeeper cleared, so that yesterday's popularity fades.
 * Only requests that pass the doorkeeper count toward the sample: a crawler paging through
 * searches asked once each would otherwise age away what the counters learnt of the searches that
 * are asked again, as fast as it asks.
 *
 * Counting runs on every cache lookup, so it allocates nothing: the key is hashed in place
 * (FNV-1a over its UTF-16 code units) and the counters live in typed arrays.
 */

/** Counters per 32-bit word of the table. */
const COUNTERS_PER_WORD = 8;
/**
 * Counters per entry: twice Caffeine's 16. With only repeated requests ageing the sketch, a
 * sample spans more distinct keys, and the estimates of keys at the edge of what the cache holds
 * (asked two or three times in a sample) are what collisions blur; 32 replayed up to 0.3 points
 * above 16 on the Zipf and crawler traces at the smaller bounds, 8 0.5–0.7 below
 * (docs/performance.md, "Admission: W-TinyLFU").
 */
const COUNTERS_PER_ENTRY = 32;
/**
 * Counted increments (those past the doorkeeper) per entry between two halvings. TinyLFU's paper
 * and Caffeine take 10; the replays (`npm run bench -- --hit-ratio`, docs/performance.md; every
 * request counted then) chose 30: catalog searches at the edge of
 * what a cache holds are asked once or twice in 10 × its entries, too few to tell them from
 * one-off searches, and 40 closed twice as much of LRU's gap to the optimum on Zipf traces
 * (α 0.9: 55 % against 24 % at ~700 entries), at the price of a slower turn when popularity
 * shifts; with the segmented main space, 30 kept the Zipf figures within 0.3 points of 40's and
 * turned soon enough after a shift to stay above LRU at the largest bound. Counting only repeated
 * requests, 20, 30 and 45 replayed within 0.1 points of each other on the crawler trace (20
 * 0.3 below 30 on Zipf 0.9 at the smallest bound).
 */
const SAMPLE_PER_ENTRY = 30;
/** A sample is never shorter than this many entries' worth: a nearly empty cache would age at every step. */
const MIN_SAMPLE_ENTRIES = 64;
/** Doorkeeper bits per entry sized for: ~5 bits per distinct key of a sample of 6 KiB catalog answers. */
const DOORKEEPER_BITS_PER_ENTRY = 64;
/** A counter saturates at 15; a frequency is the counters' estimate plus the doorkeeper's 1. */
export const MAX_FREQUENCY = 16;

export function powerOfTwoAtLeast(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(2, n)));
}

/** FNV-1a (32-bit) of the key's code units, then a finalising mix so that low bits are usable. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return spread(h);
}

/** murmur3's 32-bit finaliser: every input bit moves every output bit. */
export function spread(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Every 32-bit key hash is below this: a sketch that counts every key. */
export const ALL_KEYS = 2 ** 32;

export class FrequencySketch {
  #table = new Uint32Array(1);
  #tableMask = 0;
  #doorkeeper = new Uint32Array(1);
  #doorkeeperMask = 0;
  /** Only keys hashed below this are counted. */
  #below = ALL_KEYS;
  /** The share of the keys counted, by which the store's entries are scaled when the sample is sized. */
  #counted = 1;
  #sampleSize = 0;
  #additions = 0;

  /** `capacity`: how many entries the cache is expected to hold; the sketch is sized for it. */
  constructor(capacity: number) {
    this.reshape(capacity, ALL_KEYS);
  }

  /**
   * Sizes the tables for `capacity` keys and counts from now on only the keys hashed below
   * `below` (a slice of them, as the window tuner samples, or ALL_KEYS), forgetting every count:
   * a sketch that only the tuner's miniature W-TinyLFU reads needs no more than its sample.
   */
  reshape(capacity: number, below: number): void {
    const counters = powerOfTwoAtLeast(capacity) * COUNTERS_PER_ENTRY;
    this.#table = new Uint32Array(counters / COUNTERS_PER_WORD);
    this.#tableMask = this.#table.length - 1;
    const bits = powerOfTwoAtLeast(capacity * DOORKEEPER_BITS_PER_ENTRY);
    this.#doorkeeper = new Uint32Array(bits / 32);
    this.#doorkeeperMask = bits - 1;
    this.#below = below;
    this.#counted = below / ALL_KEYS;
    this.#sampleSize = SAMPLE_PER_ENTRY * powerOfTwoAtLeast(capacity);
    this.#additions = 0;
  }

  /**
   * Ages after a sample of SAMPLE_PER_ENTRY counted increments (past the doorkeeper) per entry
   * the cache holds now: a cache bounded in bytes holds a number of entries that depends on their
   * sizes, so its store says.
   */
  resample(entries: number): void {
    this.#sampleSize = SAMPLE_PER_ENTRY * Math.max(entries * this.#counted, MIN_SAMPLE_ENTRIES);
  }

  /** What the sketch holds in memory: its two tables (the object around them is a few dozen bytes). */
  get bytes(): number {
    return this.#table.byteLength + this.#doorkeeper.byteLength;
  }

  /** Counts one request for `key`; returns its hash, for the store's other per-key bookkeeping. */
  increment(key: string): number {
    const h = keyHash(key);
    if (h < this.#below && this.#doorkeeperAdd(h)) {
      // Counters are incremented only where they equal the minimum (conservative update), which
      // keeps a colliding key from inflating the estimates of the others.
      const min = this.#estimate(h);
      if (min < 15) {
        let step = h;
        for (let i = 0; i < 4; i++) {
          step = this.#probe(step, i);
          const word = (step >>> 3) & this.#tableMask;
          const shift = (step & 7) << 2;
          const value = (this.#table[word] ?? 0) >>> shift;
          if ((value & 15) === min) this.#table[word] = (this.#table[word] ?? 0) + (1 << shift);
        }
      }
      if (++this.#additions >= this.#sampleSize) this.#age();
    }
    return h;
  }

  /** Estimated requests for `key` since about the last halving, from 0 to MAX_FREQUENCY. */
  frequency(key: string): number {
    return this.frequencyOf(keyHash(key));
  }

  /** The same for the key hashed `h` (keyHash). */
  frequencyOf(h: number): number {
    return this.#estimate(h) + (this.#doorkeeperHas(h) ? 1 : 0);
  }

  #estimate(h: number): number {
    let min = 15;
    let step = h;
    for (let i = 0; i < 4; i++) {
      step = this.#probe(step, i);
      const value = ((this.#table[(step >>> 3) & this.#tableMask] ?? 0) >>> ((step & 7) << 2)) & 15;
      if (value < min) min = value;
    }
    return min;
  }

  /** The i-th of four counter positions: each a fresh mix of the previous, seeded by its row. */
  #probe(previous: number, row: number): number {
    return spread((previous + Math.imul(row + 1, 0x9e3779b9)) | 0);
  }

  /** Sets the key's two doorkeeper bits; true when both were set already (the key was seen). */
  #doorkeeperAdd(h: number): boolean {
    const a = h & this.#doorkeeperMask;
    const b = spread(h ^ 0x5bd1e995) & this.#doorkeeperMask;
    const seen = this.#bit(a) && this.#bit(b);
    if (!seen) {
      this.#doorkeeper[a >>> 5] = (this.#doorkeeper[a >>> 5] ?? 0) | (1 << (a & 31));
      this.#doorkeeper[b >>> 5] = (this.#doorkeeper[b >>> 5] ?? 0) | (1 << (b & 31));
    }
    return seen;
  }

  #doorkeeperHas(h: number): boolean {
    return this.#bit(h & this.#doorkeeperMask) && this.#bit(spread(h ^ 0x5bd1e995) & this.#doorkeeperMask);
  }

  #bit(index: number): boolean {
    return (((this.#doorkeeper[index >>> 5] ?? 0) >>> (index & 31)) & 1) === 1;
  }

  /** Forgets every count: popularity has shifted (shift-detector.ts), and halving would leave the old favourites ahead. */
  clear(): void {
    this.#table.fill(0);
    this.#doorkeeper.fill(0);
    this.#additions = 0;
  }

  /** Halves every counter (each 4-bit field shifted right, the bit from its neighbour masked off). */
  #age(): void {
    for (let i = 0; i < this.#table.length; i++) this.#table[i] = ((this.#table[i] ?? 0) >>> 1) & 0x77777777;
    this.#doorkeeper.fill(0);
    this.#additions = this.#sampleSize >>> 1;
  }
}
