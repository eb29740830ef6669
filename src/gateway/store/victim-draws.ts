/**
 * Which entries on probation a candidate for W-TinyLFU's main space is weighed against, beside
 * probation's oldest (windowed-lru.ts): a few drawn at random on each judgement, and the least
 * dense (requests per byte) of those judged the time before, kept, as Redis's approximated LFU
 * keeps an eviction pool between its samples (`evict.c`: `EVPOOL_SIZE`, `maxmemory-samples`).
 * Over many misses what is kept drifts toward the least dense of the whole of probation, not only
 * of its oldest end, which is the order online LFU evicts in (bench/online-lfu.ts); a hit costs
 * nothing more, since no order is kept by frequency.
 *
 * Replayed (`npm run bench -- --hit-ratio`, docs/performance.md): Zipf 0.9 at 64 MiB 59.60 %
 * against 58.96 % with probation's 8 oldest alone (online LFU 59.66 %); 4 kept and 4 drawn, 8 and
 * 2, and 8 drawn with none kept within 0.1 point. Drawn from the protected segment too, the block
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

export class VictimDraws {
  readonly #kept = new Int32Array(KEPT);
  #keptLength = 0;
  /** A linear congruential generator's state (Numerical Recipes' constants): replays are repeatable. */
  #seed = 1;

  /**
   * Adds to `into` the slots kept from the last judgement that are still on probation, then up to
   * DRAWS more drawn among the first `used` slots that are on probation and not in `into` yet.
   */
  draw(used: number, onProbation: (slot: number) => boolean, into: number[]): void {
    for (let i = 0; i < this.#keptLength; i++) {
      const slot = this.#kept[i] as number;
      if (onProbation(slot) && !into.includes(slot)) into.push(slot);
    }
    if (used === 0) return;
    for (let drawn = 0, tries = 0; drawn < DRAWS && tries < TRIES; tries++) {
      this.#seed = (Math.imul(this.#seed, 1664525) + 1013904223) >>> 0;
      const slot = this.#seed % used;
      if (!onProbation(slot) || into.includes(slot)) continue;
      into.push(slot);
      drawn++;
    }
  }

  /** Keeps the first KEPT of `ranked` (slots, the least dense first) for the next judgement. */
  keep(ranked: readonly number[]): void {
    this.#keptLength = Math.min(KEPT, ranked.length);
    for (let i = 0; i < this.#keptLength; i++) this.#kept[i] = ranked[i] as number;
  }
}
