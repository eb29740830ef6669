import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeededRandom } from '../../src/origin/random.ts';
import { ZipfSampler, harmonic, zipfProbability } from '../../src/loadtest/zipf.ts';

function frequencies(n: number, s: number, draws: number, seed: number): number[] {
  const sampler = new ZipfSampler(n, s, new SeededRandom(seed));
  const counts = new Array<number>(n).fill(0);
  for (let i = 0; i < draws; i++) {
    const rank = sampler.next();
    counts[rank] = (counts[rank] ?? 0) + 1;
  }
  return counts.map((c) => c / draws);
}

test('the probabilities of a Zipf distribution sum to 1 and fall as 1/k^s', () => {
  const n = 1000;
  let total = 0;
  for (let k = 1; k <= n; k++) total += zipfProbability(k, n, 1.1);
  assert.ok(Math.abs(total - 1) < 1e-9);
  assert.ok(Math.abs(zipfProbability(1, n, 1.1) / zipfProbability(10, n, 1.1) - 10 ** 1.1) < 1e-9);
  assert.ok(Math.abs(harmonic(4, 1) - (1 + 1 / 2 + 1 / 3 + 1 / 4)) < 1e-12);
});

test('sampled ranks follow the theory: rank 1 and rank 10 within 2 % of their expected share', () => {
  const n = 10_000;
  const s = 1;
  const observed = frequencies(n, s, 200_000, 42);
  for (const rank of [1, 2, 10]) {
    const expected = zipfProbability(rank, n, s);
    const seen = observed[rank - 1] ?? 0;
    assert.ok(Math.abs(seen - expected) / expected < 0.02 + 3 / Math.sqrt(200_000 * expected), `rank ${rank}: ${seen} vs ${expected}`);
  }
  const topTen = observed.slice(0, 10).reduce((a, b) => a + b, 0);
  let expectedTopTen = 0;
  for (let k = 1; k <= 10; k++) expectedTopTen += zipfProbability(k, n, s);
  assert.ok(Math.abs(topTen - expectedTopTen) < 0.01, `top ten ${topTen} vs ${expectedTopTen}`);
});

test('exponent 0 is uniform and every rank is in range', () => {
  const n = 20;
  const observed = frequencies(n, 0, 100_000, 7);
  assert.equal(observed.length, n);
  for (const share of observed) assert.ok(Math.abs(share - 1 / n) < 0.005, `share ${share}`);
});

test('a larger exponent concentrates more traffic on the head', () => {
  const mild = frequencies(1000, 0.8, 50_000, 3)[0] ?? 0;
  const steep = frequencies(1000, 1.4, 50_000, 3)[0] ?? 0;
  assert.ok(steep > mild * 2, `${steep} vs ${mild}`);
});

test('invalid parameters are refused', () => {
  assert.throws(() => new ZipfSampler(0, 1, new SeededRandom(1)), RangeError);
  assert.throws(() => new ZipfSampler(10, -1, new SeededRandom(1)), RangeError);
  assert.throws(() => new ZipfSampler(10, Number.NaN, new SeededRandom(1)), RangeError);
});
