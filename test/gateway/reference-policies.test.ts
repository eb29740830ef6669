/** The replay's reference policies (bench/arc.ts, bench/s3-fifo.ts) on request sequences worked by hand. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arcHits } from '../../bench/arc.ts';
import { s3FifoHits } from '../../bench/s3-fifo.ts';
import type { Trace } from '../../bench/traces.ts';

/** One request per key of `sequence`, every entry `size` bytes. */
function trace(sequence: readonly string[], size: number): Trace {
  const keys = [...new Set(sequence)];
  return {
    name: 'hand',
    description: 'by hand',
    keys,
    sizes: new Uint32Array(keys.length).fill(size),
    requests: Uint32Array.from(sequence.map((k) => keys.indexOf(k))),
  };
}

const letters = (text: string): string[] => text.split('');
const distinct = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test('ARC keeps what was asked twice through a scan that LRU loses it to', () => {
  // Room for three: a and b go to T2 on their second ask; c, d, e, f pass through T1 (T1's target
  // is 0) and a and b are hit again. LRU would hold only d, e, f by then: 2 hits.
  assert.deepEqual(arcHits(trace(letters('ababcdefab'), 1), 3, 1000), { hits: 4, hitBytes: 4 });
});

test('ARC grows T1 when keys pushed out of it are asked again', () => {
  // Room for four: x and y go to T2, p and q fill the rest, and r pushes p out of T1 into B1
  // (T1's target is 0). In the second round p, then q, are asked from B1: each moves the target
  // up one entry, so that the next victim comes from T2 (x) and then T1 keeps r. From the third
  // round p, q and r are all held: 2 + 1 + 4 × 3 hits.
  const rounds = Array.from({ length: 6 }, () => ['p', 'q', 'r']).flat();
  assert.equal(arcHits(trace(['x', 'y', 'x', 'y', ...rounds], 1), 4, 1000).hits, 15);
});

test('ARC counts bytes: entries of one size replay as published ARC counts entries, and none larger than the bound or the largest entry is kept', () => {
  const rounds = Array.from({ length: 6 }, () => ['p', 'q', 'r']).flat();
  const sequence = ['x', 'y', 'x', 'y', ...rounds, ...letters('ababcdefab')];
  assert.equal(arcHits(trace(sequence, 10), 40, 1000).hits, arcHits(trace(sequence, 1), 4, 1000).hits);
  assert.equal(arcHits(trace(letters('aaaa'), 50), 40, 1000).hits, 0, 'larger than the bound');
  assert.equal(arcHits(trace(letters('aaaa'), 10), 40, 5).hits, 0, 'larger than the largest entry allowed');
});

test('S3-FIFO moves a key hit in the small queue to the main queue, where a scan of one-off keys does not reach it', () => {
  // Room for ten, the small queue's share one: a is hit while small, so when the small queue is
  // first evicted it moves to the main queue; every other key leaves through the small queue. LRU
  // would have lost a after ten new keys: 1 hit.
  assert.deepEqual(s3FifoHits(trace(['a', 'a', ...distinct('s', 20), 'a'], 1), 10, 1000), { hits: 2, hitBytes: 2 });
});

test('S3-FIFO remembers a key dropped from the small queue and takes it straight into the main queue when it comes back', () => {
  // b leaves the small queue unhit (into the ghost queue); asked again, it goes into the main
  // queue and outlives the next twenty one-off keys.
  assert.equal(s3FifoHits(trace(['b', ...distinct('t', 10), 'b', ...distinct('s', 20), 'b'], 1), 10, 1000).hits, 1);
  // Asked again only after the ghost queue has forgotten it (it remembers the main queue's share
  // of the bound, nine keys here), it starts in the small queue again and leaves unhit.
  assert.equal(s3FifoHits(trace(['b', ...distinct('t', 30), 'b'], 1), 10, 1000).hits, 0);
});

test("S3-FIFO reinserts the main queue's oldest while it has hits left, and counts bytes", () => {
  // Room for four, the small queue's share under one entry: a, b, c and d are hit in the small
  // queue (a twice) and keep those counts in the main queue, where they all go when e comes. The
  // small queue is then empty, so the main queue makes the room: one pass takes a count off each
  // and puts it back, the second finds b at 0 and drops it; a still has a hit left.
  const warm = letters('aaabbccdde');
  assert.equal(s3FifoHits(trace([...warm, 'a'], 1), 4, 1000).hits, 6);
  assert.equal(s3FifoHits(trace([...warm, 'b'], 1), 4, 1000).hits, 5);
  assert.deepEqual(s3FifoHits(trace([...warm, 'a', 'c', 'd'], 10), 40, 1000), { hits: 8, hitBytes: 80 });
  assert.equal(s3FifoHits(trace(letters('aaaa'), 50), 40, 1000).hits, 0, 'larger than the bound');
  assert.equal(s3FifoHits(trace(letters('aaaa'), 10), 40, 5).hits, 0, 'larger than the largest entry allowed');
});
