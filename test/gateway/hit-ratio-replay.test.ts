/** The hit-ratio replay's own parts (bench/): Bélády's MIN, perfect and online LFU on traces worked by hand, and the trace file format. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { beladyHits } from '../../bench/belady.ts';
import { onlineLfuHits } from '../../bench/online-lfu.ts';
import { staticOptimumHits } from '../../bench/static-optimum.ts';
import { KeyIds, leastEntryBytes, readTrace, type Trace } from '../../bench/traces.ts';
import { tempDir } from '../support/config.ts';

/** `sequence`: one letter per request. */
function trace(sequence: string, size: number): Trace {
  const letters = sequence.split('');
  const keys = [...new Set(letters)];
  return {
    name: 'hand',
    description: 'by hand',
    keys,
    sizes: new Uint32Array(keys.length).fill(size),
    requests: Uint32Array.from(letters.map((k) => keys.indexOf(k))),
  };
}

test('MIN keeps what is asked again soonest and does not store what is asked later than all it holds', () => {
  // Room for two: c (next asked at 6) is farther than a (3) and b (4), so it is not kept; a and b hit.
  assert.deepEqual(beladyHits(trace('abcabac', 10), 20, 1000), { hits: 3, hitBytes: 30 });
  // Room for one: a at 0 is asked again at 2, before b: b is not kept.
  assert.deepEqual(beladyHits(trace('abab', 10), 10, 1000), { hits: 1, hitBytes: 10 });
  assert.equal(beladyHits(trace('aaaa', 10), 20, 5).hits, 0, 'larger than the largest entry allowed');
  // Room for two. When c comes, a is next asked at 6 and b at 9: b goes, though its gap since it
  // was last asked (4 → 9) is shorter than a's (0 → 6), the order the replay once used (5 hits).
  assert.deepEqual(beladyHits(trace('abbbbcacab', 10), 20, 1000), { hits: 6, hitBytes: 60 });
});

test('with sizes, MIN evicts the entry holding the most byte-time until its next request', () => {
  // Room for 30. When c (10) comes, a (20) is next asked at 5 and b (10) at 6: a holds 20 × 2
  // byte-steps, b 10 × 3, so a goes, and b and c are hit.
  const sized: Trace = {
    name: 'sized',
    description: 'sized',
    keys: ['a', 'b', 'c'],
    sizes: Uint32Array.from([20, 10, 10]),
    requests: Uint32Array.from([0, 1, 1, 2, 2, 0, 1]),
  };
  assert.deepEqual(beladyHits(sized, 30, 1000), { hits: 3, hitBytes: 30 });
});

test('online LFU admits a key once it has been asked more often than what it would push out, ties refused', () => {
  // Room for two: a (asked 3 times) and b (2) are held when c comes. c's first two requests do not
  // beat b, the less asked (1 < 2, then a tie); its third does, and b goes: a hit 2 + 1, b 1, c 1.
  assert.deepEqual(onlineLfuHits(trace('aaabbcccca', 10), 20, 1000), { hits: 5, hitBytes: 50 });
  assert.equal(onlineLfuHits(trace('aaaa', 10), 20, 5).hits, 0, 'larger than the largest entry allowed');
});

test('online LFU weighs requests per byte: a newcomer pushes out the least dense entries, their counts summed', () => {
  // Room for 30: a (20 B, asked twice) and b (10 B, twice) are held. c (10 B) asked three times
  // beats the less dense a (2 / 20) and takes its place. a, asked a third time, needs 10 B: b
  // (2 / 10) is now the least dense of b and c, and goes. b, asked a third time, would push out a
  // (3 / 20), asked as often: refused. c hits: a, b and c once each.
  const sized: Trace = {
    name: 'sized',
    description: 'sized',
    keys: ['a', 'b', 'c'],
    sizes: Uint32Array.from([20, 10, 10]),
    requests: Uint32Array.from([0, 0, 1, 1, 2, 2, 2, 0, 1, 2]),
  };
  assert.deepEqual(onlineLfuHits(sized, 30, 1000), { hits: 3, hitBytes: 40 });
});

test('perfect LFU keeps the most requests per byte from the start, each paying its first miss', () => {
  // Room for two of size 10: a (3 requests) and b (2) are kept; c (1) is never asked again.
  assert.deepEqual(staticOptimumHits(trace('abcabac', 10), 20, 1000), { hits: 3, hitBytes: 30 });
  // Room for one: a is asked three times, b twice.
  assert.deepEqual(staticOptimumHits(trace('ababa', 10), 10, 1000), { hits: 2, hitBytes: 20 });
  // Sizes count: two small entries asked twice each beat one large one asked three times.
  const sized: Trace = {
    name: 'sized',
    description: 'sized',
    keys: ['big', 's1', 's2'],
    sizes: Uint32Array.from([20, 10, 10]),
    requests: Uint32Array.from([0, 1, 2, 0, 1, 2, 0]),
  };
  assert.deepEqual(staticOptimumHits(sized, 20, 1000), { hits: 2, hitBytes: 20 });
  assert.equal(staticOptimumHits(trace('aaaa', 10), 20, 5).hits, 0, 'larger than the largest entry allowed');
});

test('a trace file is one request per line, key and an optional size; a key takes its latest size', async () => {
  const path = join(tempDir(), 'trace.txt');
  writeFileSync(path, '# a comment\n/a 9000\n/b\n\n/a 12000\n/c 1\n');
  const read = await readTrace(path, 4096);
  assert.deepEqual(read.keys, ['/a', '/b', '/c']);
  assert.deepEqual([...read.requests], [0, 1, 0, 2]);
  assert.deepEqual([...read.sizes], [12_000, 4096, leastEntryBytes('/c')], 'no entry is smaller than its key and fixed part');
  writeFileSync(path, '/a 12 extra\n');
  await assert.rejects(readTrace(path, 4096), /trace\.txt:1: expected "key \[size\]"/);
});

test('a trace file ending in .gz or .zst is read decompressed, line for line as the plain one', async () => {
  const dir = tempDir();
  const lines = `# compressed\r\n${Array.from({ length: 5000 }, (_, i) => `blk${(i * 7919) % 1201} ${512 + (i % 3)}`).join('\r\n')}\r\n`;
  writeFileSync(join(dir, 'plain.txt'), lines);
  writeFileSync(join(dir, 'trace.txt.gz'), gzipSync(lines));
  writeFileSync(join(dir, 'trace.txt.zst'), zstdCompressSync(lines));
  const plain = await readTrace(join(dir, 'plain.txt'), 4096);
  assert.equal(plain.requests.length, 5000);
  for (const name of ['trace.txt.gz', 'trace.txt.zst']) {
    const read = await readTrace(join(dir, name), 4096);
    assert.deepEqual(read.keys, plain.keys, name);
    assert.deepEqual(read.requests, plain.requests, name);
    assert.deepEqual(read.sizes, plain.sizes, name);
  }
  writeFileSync(join(dir, 'broken.gz'), lines);
  await assert.rejects(readTrace(join(dir, 'broken.gz'), 4096), /incorrect header check/);
  await assert.rejects(readTrace(join(dir, 'missing.gz'), 4096), /ENOENT/);
});

test('key ids stay dense and stable when the keys outgrow one Map (a V8 Map stops at 2^24)', () => {
  const ids = new KeyIds(3);
  const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
  assert.deepEqual(
    keys.map((k) => ids.id(k)),
    [0, 1, 2, 3, 4, 5, 6],
  );
  assert.deepEqual(
    [...keys].reverse().map((k) => ids.id(k)),
    [6, 5, 4, 3, 2, 1, 0],
    'each found again, in whichever Map holds it',
  );
  assert.deepEqual(ids.keys, keys);
});

test("a trace longer than the reader's first arrays reads whole, in order", async () => {
  const path = join(tempDir(), 'long.txt');
  const n = (1 << 16) + 5;
  writeFileSync(path, Array.from({ length: n }, (_, i) => `k${i % 7}`).join('\n'));
  const read = await readTrace(path, 4096);
  assert.equal(read.requests.length, n);
  assert.equal(read.keys.length, 7);
  assert.deepEqual([...read.requests.subarray(n - 3)], [(n - 3) % 7, (n - 2) % 7, (n - 1) % 7]);
});
