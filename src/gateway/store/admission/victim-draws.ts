/**
 * Which entries on probation a candidate for W-TinyLFU's main space is weighed against, beside
 * probation's oldest (windowed-lru.ts): a few drawn at random on each judgement, and the least
 * dense (requests per byte) of those judged the time before, kept, as Redis's approximated LFU
 * keeps an eviction pool between its samples (`evict.c`: `EVPOOL_SIZE`, `maxmemory-samples`).
 * Over many misses what is kept drifts toward the least dense of the whole of probation, not only
 * of its oldest end, which is the order online LFU evicts in (bench/online-lfu.ts); a hit costs
 * nothing more, since no order is kept by frequency.
 *
 * Replayed (`npm run bench -- --hit-ratio`) on Zipf 0.9 at 64 MiB, this read 0.6 points above
 * probation's 8 oldest alone and within 0.1 of online LFU; 4 kept and 4 drawn, 8 and 2, and 8
 * drawn with none kept, within 0.1 point of each other. Drawn from the protected segment too, the block
 * trace that mixes a loop with Zipf requests (loop1) at 5,000 entries fell to 14.4 %: the loop's
 * entries, hit once a turn, are protected, and the least asked of the whole main space are what a
 * loop must not lose.
 */

/** Slots judged the time before that are kept for the next, the least dense first. */
const KEPT = 4;
/** Slots drawn at random on each judgement. */
const DRAWS = 4;
/** Draws that may miss probation (the slot free, or in another segment) before giving up. */
const TRIES = 4 * DRAWS;

/**
 * Main-space slots weighed as victims, each with its requests per byte, the fewest first: typed
 * arrays that a store reuses for every judgement, since one is made on every miss that reaches
 * the main space (each disk hit promoted through admission among them), where a list of objects
 * sorted each time was the largest part of what such a miss allocated.
 */
export class VictimSample {
  readonly #slots: Int32Array;
  readonly #densities: Float64Array;
  #length = 0;

  constructor(capacity: number) {
    this.#slots = new Int32Array(capacity);
    this.#densities = new Float64Array(capacity);
  }

  get length(): number {
    return this.#length;
  }

  /** The `i`-th slot, the least dense first. */
  slot(i: number): number {
    return this.#slots[i] as number;
  }

  includes(slot: number): boolean {
    for (let i = 0; i < this.#length; i++) if (this.#slots[i] === slot) return true;
    return false;
  }

  clear(): void {
    this.#length = 0;
  }

  /** Holds what `other` holds, in its order. */
  copy(other: VictimSample): void {
    for (let i = 0; i < other.#length; i++) {
      this.#slots[i] = other.#slots[i] as number;
      this.#densities[i] = other.#densities[i] as number;
    }
    this.#length = other.#length;
  }

  /**
   * Adds `slot` after every slot at most as dense: slots alike stay in the order they were added,
   * as a stable sort of that order would leave them. Beyond its capacity, nothing is added.
   */
  add(slot: number, density: number): void {
    if (this.#length === this.#slots.length) return;
    let i = this.#length++;
    for (; i > 0 && (this.#densities[i - 1] as number) > density; i--) {
      this.#slots[i] = this.#slots[i - 1] as number;
      this.#densities[i] = this.#densities[i - 1] as number;
    }
    this.#slots[i] = slot;
    this.#densities[i] = density;
  }
}

/** Room for the draws a judgement adds to a sample (`VictimDraws#draw`). */
export const DRAWN_AT_MOST = KEPT + DRAWS;

export class VictimDraws {
  readonly #kept = new Int32Array(KEPT);
  #keptLength = 0;
  /** A linear congruential generator's state (Numerical Recipes' constants): replays are repeatable. */
  #seed = 1;

  /**
   * Adds to `into`, each at the density `densityOf` gives, the slots kept from the last judgement
   * that are still on probation, then up to DRAWS more drawn among the first `used` slots that are
   * on probation and not in `into` yet.
   */
  draw(used: number, onProbation: (slot: number) => boolean, densityOf: (slot: number) => number, into: VictimSample): void {
    for (let i = 0; i < this.#keptLength; i++) {
      const slot = this.#kept[i] as number;
      if (onProbation(slot) && !into.includes(slot)) into.add(slot, densityOf(slot));
    }
    if (used === 0) return;
    for (let drawn = 0, tries = 0; drawn < DRAWS && tries < TRIES; tries++) {
      this.#seed = (Math.imul(this.#seed, 1664525) + 1013904223) >>> 0;
      const slot = this.#seed % used;
      if (!onProbation(slot) || into.includes(slot)) continue;
      into.add(slot, densityOf(slot));
      drawn++;
    }
  }

  /** Keeps the first KEPT of `ranked` (the least dense first) for the next judgement. */
  keep(ranked: VictimSample): void {
    this.#keptLength = Math.min(KEPT, ranked.length);
    for (let i = 0; i < this.#keptLength; i++) this.#kept[i] = ranked.slot(i);
  }
}
