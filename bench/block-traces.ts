/**
 * Writes the block traces that docs/performance.md replays beside the synthetic ones, for
 * `npm run bench -- --hit-ratio --trace FILE --bound-entries …` (one key per line, 4 KiB entries):
 *
 *   rec1   recency-biased: 30 % new keys, the rest asking again the key asked d requests earlier,
 *          d Pareto (α 1, scale 2,000)
 *   rec2   30 % Zipf 0.8 over 500,000 keys; of the rest, 20 % new keys, else d Pareto (α 0.7,
 *          scale 1,000)
 *   rec3   40 % new keys, else d Pareto (α 1.5, scale 5,000)
 *   loop1  half the requests a loop over 30,000 keys, half Zipf 0.8 over 500,000 keys
 *   loop2  a loop over 25,000 keys
 *
 * 2,000,000 requests each, from a seeded generator (the catalog's sfc32), so the files, and the
 * figures replayed from them, are the same on every machine.
 *
 *   node bench/block-traces.ts DIR
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ZipfSampler } from '../src/loadtest/zipf.ts';
import { SeededRandom } from '../src/origin/random.ts';

const REQUESTS = 2_000_000;
const ZIPF_KEYS = 500_000;
const ZIPF_ALPHA = 0.8;

/**
 * Draws in [0, 1) from a seed: sfc32, since a linear congruential generator multiplied in
 * floating point loses the product's low bits past 2^53 and repeats far sooner than its period.
 */
function seeded(seed: number): () => number {
  const random = new SeededRandom(seed);
  return () => random.next();
}

interface Recency {
  readonly newShare: number;
  readonly alpha: number;
  readonly scale: number;
  readonly zipfShare: number;
}

function recency({ newShare, alpha, scale, zipfShare }: Recency): string[] {
  const random = seeded(12345);
  const zipf = new ZipfSampler(ZIPF_KEYS, ZIPF_ALPHA, { next: random });
  const asked = new Int32Array(REQUESTS);
  const lines: string[] = [];
  let fresh = 1_000_000;
  for (let t = 0; t < REQUESTS; t++) {
    let key: number;
    if (random() < zipfShare) key = zipf.next();
    else if (t === 0 || random() < newShare) key = fresh++;
    else {
      const distance = Math.max(1, Math.floor(scale * ((1 - random()) ** (-1 / alpha) - 1)) + 1);
      key = t - distance >= 0 ? (asked[t - distance] ?? 0) : fresh++;
    }
    asked[t] = key;
    lines.push(`k${key}`);
  }
  return lines;
}

function loop(length: number, zipfShare: number): string[] {
  const random = seeded(99);
  const zipf = new ZipfSampler(ZIPF_KEYS, ZIPF_ALPHA, { next: random });
  const lines: string[] = [];
  let at = 0;
  for (let t = 0; t < REQUESTS; t++) lines.push(random() < zipfShare ? `z${zipf.next()}` : `l${at++ % length}`);
  return lines;
}

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: node bench/block-traces.ts DIR');
mkdirSync(dir, { recursive: true });
const traces: Record<string, () => string[]> = {
  rec1: () => recency({ newShare: 0.3, alpha: 1, scale: 2000, zipfShare: 0 }),
  rec2: () => recency({ newShare: 0.2, alpha: 0.7, scale: 1000, zipfShare: 0.3 }),
  rec3: () => recency({ newShare: 0.4, alpha: 1.5, scale: 5000, zipfShare: 0 }),
  loop1: () => loop(30_000, 0.5),
  loop2: () => loop(25_000, 0),
};
for (const [name, make] of Object.entries(traces)) {
  const file = join(dir, `${name}.txt`);
  writeFileSync(file, `${make().join('\n')}\n`);
  console.log(`wrote ${file}`);
}
