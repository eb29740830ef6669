import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram } from '../../src/loadtest/latency-histogram.ts';

test('percentiles are within 1 % of the exact values, at sub-millisecond resolution', () => {
  const h = new LatencyHistogram();
  const values: number[] = [];
  for (let i = 1; i <= 10_000; i++) values.push(0.05 + i * 0.0003);
  for (const v of values) h.record(v);
  for (const p of [50, 90, 99]) {
    const exact = values[Math.ceil((p / 100) * values.length) - 1] ?? 0;
    assert.ok(Math.abs(h.percentile(p) - exact) / exact <= 0.0101, `p${p}: ${h.percentile(p)} vs ${exact}`);
  }
  assert.equal(h.max, values.at(-1));
  assert.equal(h.count, values.length);
  assert.ok(h.percentile(100) <= h.max);
});

test('merging adds counts; an empty histogram reports zeros', () => {
  const a = new LatencyHistogram();
  const b = new LatencyHistogram();
  assert.equal(a.percentile(99), 0);
  assert.deepEqual(a.distribution(), []);
  a.record(1);
  b.record(100);
  b.record(100);
  a.merge(b);
  assert.equal(a.count, 3);
  assert.equal(a.max, 100);
  assert.ok(Math.abs(a.percentile(50) - 100) < 1.01);
  const bins = a.distribution(10);
  assert.equal(
    bins.reduce((n, d) => n + d.count, 0),
    3,
  );
  assert.ok(bins.length <= 10);
});
