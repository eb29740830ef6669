/**
 * Latencies in milliseconds, kept in log-spaced buckets 1 % wide from 1 µs to 10 min. autocannon's
 * own histogram records whole milliseconds, which flattens a sub-millisecond cache hit and the bare
 * server's ceiling into the same "1 ms"; comparing their p99s needs finer buckets than that.
 */

const LOWEST_MS = 0.001;
const HIGHEST_MS = 600_000;
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(HIGHEST_MS / LOWEST_MS) / LOG_GROWTH) + 1;

/** Upper edge of bucket `i`; a value v lands in the first bucket whose upper edge is ≥ v. */
function upperEdge(i: number): number {
  return LOWEST_MS * GROWTH ** i;
}

export interface DistributionPoint {
  /** Upper edge of the bin, ms. */
  readonly ms: number;
  readonly count: number;
}

export class LatencyHistogram {
  readonly #counts = new Float64Array(BUCKETS);
  #total = 0;
  #max = 0;
  #sum = 0;

  record(ms: number): void {
    const clamped = Math.min(Math.max(ms, LOWEST_MS), HIGHEST_MS);
    const index = Math.ceil(Math.log(clamped / LOWEST_MS) / LOG_GROWTH - 1e-9);
    this.#counts[index] = (this.#counts[index] ?? 0) + 1;
    this.#total++;
    this.#sum += ms;
    if (ms > this.#max) this.#max = ms;
  }

  merge(other: LatencyHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.#counts[i] = (this.#counts[i] ?? 0) + (other.#counts[i] ?? 0);
    this.#total += other.#total;
    this.#sum += other.#sum;
    this.#max = Math.max(this.#max, other.#max);
  }

  get count(): number {
    return this.#total;
  }

  get max(): number {
    return this.#max;
  }

  get mean(): number {
    return this.#total === 0 ? 0 : this.#sum / this.#total;
  }

  /** The p-th percentile (0–100), within 1 % of the true value; never above the exact maximum. */
  percentile(p: number): number {
    if (this.#total === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.#total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#counts[i] ?? 0;
      if (seen >= rank) return Math.min(upperEdge(i), this.#max);
    }
    return this.#max;
  }

  /**
   * The distribution in at most `bins` log-spaced bins between the smallest and largest recorded
   * value, for a chart.
   */
  distribution(bins = 40): DistributionPoint[] {
    let first = -1;
    let last = -1;
    for (let i = 0; i < BUCKETS; i++) {
      if ((this.#counts[i] ?? 0) > 0) {
        if (first === -1) first = i;
        last = i;
      }
    }
    if (first === -1) return [];
    const width = Math.max(1, Math.ceil((last - first + 1) / bins));
    const points: DistributionPoint[] = [];
    for (let start = first; start <= last; start += width) {
      let count = 0;
      const end = Math.min(start + width - 1, last);
      for (let i = start; i <= end; i++) count += this.#counts[i] ?? 0;
      points.push({ ms: upperEdge(end), count });
    }
    return points;
  }
}
