/**
 * Zipf popularity: the k-th most popular of n queries is asked with probability proportional to
 * 1/k^s. Search traffic follows it closely (a few queries dominate, a long tail is asked once or
 * twice), which is what makes a shared cache worth having — and what makes its hit ratio depend
 * on the exponent, so the exponent is a parameter rather than a constant.
 */
/** Anything with a uniform `next()` in [0, 1), such as `SeededRandom`. */
export interface UniformSource {
  next(): number;
}

/** The generalised harmonic number H(n, s) = Σ 1/k^s for k = 1..n: the normalising constant. */
export function harmonic(n: number, s: number): number {
  let sum = 0;
  for (let k = n; k >= 1; k--) sum += 1 / k ** s;
  return sum;
}

/** P(rank = k) for a Zipf(n, s) distribution, rank counted from 1. */
export function zipfProbability(rank: number, n: number, s: number): number {
  return 1 / rank ** s / harmonic(n, s);
}

export class ZipfSampler {
  /** cdf[k] = P(rank ≤ k + 1); sampling is a binary search, O(log n) per draw. */
  readonly #cdf: Float64Array;
  readonly #random: UniformSource;

  constructor(n: number, exponent: number, random: UniformSource) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer, got ${n}`);
    if (!(exponent >= 0)) throw new RangeError(`exponent must be ≥ 0, got ${exponent}`);
    this.#random = random;
    this.#cdf = new Float64Array(n);
    let sum = 0;
    for (let k = 1; k <= n; k++) {
      sum += 1 / k ** exponent;
      this.#cdf[k - 1] = sum;
    }
    for (let i = 0; i < n; i++) this.#cdf[i] = (this.#cdf[i] ?? 0) / sum;
  }

  /** A rank from 0 (the most popular) to n − 1. */
  next(): number {
    const u = this.#random.next();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#cdf[mid] ?? 1) > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
