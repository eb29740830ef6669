/**
 * The admission decision of TinyLFU (Einziger, Friedman and Manes, ACM TOS 2017): a new entry
 * takes the place of the LRU's victims only if it is asked for more often than they are. LRU
 * alone admits everything, so a crawler paging through the catalog or a burst of one-off
 * searches pushes out the entries that would have been hit again; here they are refused, since
 * a key seen once loses against any victim seen more.
 *
 * Sizes differ, so the candidate is weighed against every victim it would push out, not one:
 * it is admitted when its frequency beats the sum of theirs (the "aggregated victims" rule of
 * size-aware TinyLFU, Einziger et al., 2019): the hits the victims would have brought are what
 * admitting it costs. This module decides only; which entries are victims is the store's
 * (windowed-lru.ts), and counting is the sketch's (frequency-sketch.ts).
 */
import type { FrequencySketch } from './frequency-sketch.ts';

/** An entry that would have to make way, in the order the LRU would push it out. */
export interface Victim {
  readonly key: string;
  readonly size: number;
}

export class TinyLfuAdmission {
  readonly #sketch: FrequencySketch;

  constructor(sketch: FrequencySketch) {
    this.#sketch = sketch;
  }

  /** Counts a request for `key`, hit or miss: the one cost admission adds to a hit. Returns the key's hash (keyHash). */
  record(key: string): number {
    return this.#sketch.increment(key);
  }

  /**
   * Whether `candidate` may push out the victims that free `needed` bytes (nothing to push out
   * when `needed` ≤ 0). Ties are refused: an entry that is no more popular than what it would
   * replace gains nothing and churns the cache.
   */
  admits(candidate: string, needed: number, victims: Iterable<Victim>): boolean {
    if (needed <= 0) return true;
    const gain = this.#sketch.frequency(candidate);
    let cost = 0;
    let freed = 0;
    for (const victim of victims) {
      cost += this.#sketch.frequency(victim.key);
      if (cost >= gain) return false;
      freed += victim.size;
      if (freed >= needed) return true;
    }
    return true;
  }
}
