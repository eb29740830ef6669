/**
 * The window's tuner (window-tuner.ts) alone, on outcomes fed to it, then W-TinyLFU with it on a
 * recency-biased request sequence, where a fixed 1 % window lost to plain LRU: the window grows,
 * the hit ratio comes back to LRU's, and the byte bound and the reports of what leaves hold
 * through every move of the boundary.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LRUCache } from 'lru-cache';
import { keyHash } from '../../src/gateway/store/frequency-sketch.ts';
import { MIN_WINDOW_SHARE, WindowTuner } from '../../src/gateway/store/window-tuner.ts';
import { WindowedLru, type EntryLru } from '../../src/gateway/store/windowed-lru.ts';
import { ZipfSampler } from '../../src/loadtest/zipf.ts';

/** Sampled lookups between two decisions of a small cache's tuner. */
const DECISION = 512;
/** Sampled lookups between two of its checks for LRU far ahead. */
const CHECK = 64;
/** The top of the window's share. */
const TOP = 0.998;

function noReversal(): void {
  assert.fail('no reversal expected');
}

/** A tuner for a cache of about 100 entries: every key is in its sample. */
function tuner(onReversal: () => void = noReversal): WindowTuner {
  return new WindowTuner(200_000, 100, onReversal);
}

/** Feeds `n` lookups of fresh keys that the shadow LRU has (stored first) and the cache does (`cacheHits`) or not. */
function feed(t: WindowTuner, n: number, lruHits: boolean, cacheHits: boolean, from = 0): boolean {
  let moved = false;
  for (let i = from; i < from + n; i++) {
    const h = keyHash(`/k/${i}`);
    if (lruHits) t.stored(h, 100);
    moved = t.looked(h, cacheHits) || moved;
  }
  return moved;
}

/**
 * Feeds a decision's lookups spread evenly: in every CHECK of them, `lruOnly` hits only LRU makes
 * and `cacheOnly` only the cache makes, the rest missed by both; the first key is `from`.
 */
function spread(t: WindowTuner, lruOnly: number, cacheOnly: number, from: number): boolean {
  let moved = false;
  for (let at = from; at < from + DECISION; at += CHECK) {
    moved = feed(t, lruOnly, true, false, at) || moved;
    moved = feed(t, cacheOnly, false, true, at + lruOnly) || moved;
    moved = feed(t, CHECK - lruOnly - cacheOnly, false, false, at + lruOnly + cacheOnly) || moved;
  }
  return moved;
}

function close(actual: number, expected: number, message?: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-9, `${message ?? ''} share ${actual}, expected ${expected}`);
}

describe('the window tuner', () => {
  test('the window starts at 1 % and doubles when LRU would have hit where the cache missed, by one standard deviation three decisions in a row', () => {
    const t = tuner();
    assert.equal(t.share, MIN_WINDOW_SHARE);
    // 48 against 32 of 512 toward LRU: over one standard deviation of chance (√80 ≈ 8.9), never
    // two within a decision.
    assert.equal(spread(t, 6, 4, 0), false);
    assert.equal(spread(t, 6, 4, DECISION), false);
    assert.equal(spread(t, 6, 4, 2 * DECISION), true);
    close(t.share, 2 * MIN_WINDOW_SHARE);
    assert.equal(spread(t, 6, 4, 3 * DECISION), true, 'and on, while LRU stays ahead');
    close(t.share, 4 * MIN_WINDOW_SHARE);
  });

  test('it grows at once, within a decision, when LRU is ahead by two standard deviations and 1 % of the requests', () => {
    const t = tuner();
    assert.equal(feed(t, CHECK - 1, true, false), false, 'not before a check');
    assert.equal(feed(t, 1, true, false, CHECK - 1), true);
    close(t.share, 2 * MIN_WINDOW_SHARE);
    // 20 against 10 of 64: 10 is under two standard deviations (2 × √30 ≈ 11): no move at the check.
    assert.equal(feed(t, 20, true, false, 1000) || feed(t, 10, false, true, 2000) || feed(t, CHECK - 30, false, false, 3000), false);
    assert.equal(feed(t, CHECK, true, false, 4000), true, 'the next check finds LRU far ahead');
    close(t.share, 4 * MIN_WINDOW_SHARE);
  });

  test('a key the cache hits and the shadow lacks is learnt, as LRU would have fetched and kept it: it counts for the cache once, not at every request', () => {
    const t = tuner();
    feed(t, CHECK, true, false);
    close(t.share, 2 * MIN_WINDOW_SHARE);
    const h = keyHash('/kept');
    let moved = false;
    for (let i = 0; i < 2 * DECISION; i++) moved = t.looked(h, true) || moved;
    // An LRU of the cache's misses alone would count 1,024 hits only the cache made, and halve the window.
    assert.equal(moved, false);
    close(t.share, 2 * MIN_WINDOW_SHARE);
  });

  test('it halves back when the cache hits where LRU would have missed, and never goes below 1 %', () => {
    const t = tuner();
    feed(t, 2 * CHECK, true, false);
    close(t.share, 4 * MIN_WINDOW_SHARE);
    feed(t, DECISION - 2 * CHECK, false, false, 1000);
    feed(t, DECISION, false, true, 4 * DECISION);
    close(t.share, 2 * MIN_WINDOW_SHARE);
    for (let round = 0; round < 5; round++) feed(t, DECISION, false, true, (5 + round) * DECISION);
    assert.equal(t.share, MIN_WINDOW_SHARE);
  });

  test('it does not move on agreement, or on a difference chance could make: within one standard deviation toward LRU, three away from it', () => {
    const t = tuner();
    assert.equal(feed(t, DECISION, true, true), false, 'both hit');
    assert.equal(feed(t, DECISION, false, false, DECISION), false, 'both miss');
    // 40 against 32 of 512 toward LRU: under one standard deviation of chance (√72 ≈ 8.5).
    assert.equal(spread(t, 5, 4, 2 * DECISION), false);
    // 24 against 48 toward the cache: under three (3 × √72 ≈ 25.5).
    assert.equal(spread(t, 3, 6, 3 * DECISION), false);
    assert.equal(t.share, MIN_WINDOW_SHARE);
  });

  test('it grows no further than its top', () => {
    const t = tuner();
    for (let round = 0; round < 12; round++) feed(t, CHECK, true, false, round * CHECK);
    assert.equal(t.share, TOP);
  });

  test('at the top it halves only when the cache is clearly ahead two decisions in a row', () => {
    const t = tuner();
    let at = 0;
    const round = (lruHits: boolean, cacheHits: boolean): boolean => {
      const moved = feed(t, DECISION, lruHits, cacheHits, at);
      at += DECISION;
      return moved;
    };
    // Seven growths at once reach the top, at the end of a check: the next decision starts there.
    feed(t, 7 * CHECK, true, false, 1_000_000);
    assert.equal(t.share, TOP);
    assert.equal(round(false, true), false, 'one decision with the cache ahead');
    round(true, true);
    assert.equal(round(false, true), false, 'an undecided one in between starts the count again');
    assert.equal(round(false, true), true, 'two in a row');
    close(t.share, TOP / 2);
    assert.equal(round(false, true), true, 'below the top, one is enough');
    close(t.share, TOP / 4);
  });

  test('after eight decisions without a clear difference it takes a fifth off the window anyway, and undoes that unless the cache then does clearly better', () => {
    const t = tuner();
    let at = 0;
    const round = (lruHits: boolean, cacheHits: boolean): void => {
      feed(t, DECISION, lruHits, cacheHits, at);
      at += DECISION;
    };
    const grown = 16 * MIN_WINDOW_SHARE;
    /** `patience` decisions without a clear difference: the last one probes. */
    const probeAfter = (patience: number): void => {
      for (let i = 0; i < patience - 1; i++) round(true, true);
      close(t.share, grown, `${patience - 1} undecided`);
      round(true, true);
      close(t.share, grown / 1.25, `decision ${patience} probes`);
    };
    feed(t, 4 * CHECK, true, false, 1_000_000);
    close(t.share, grown);
    probeAfter(8);
    spread(t, 6, 4, 2_000_000);
    close(t.share, grown, 'LRU proves the probe wrong');
    probeAfter(16);
    round(true, true);
    close(t.share, grown, 'a probe that shows no clear gain is undone too');
    for (let i = 0; i < 32; i++) round(true, true);
    close(t.share, grown / 1.25, 'the next probe after 32');
    round(false, true);
    close(t.share, grown / 1.25 / 2, 'kept when the cache does clearly better, and halved again');
  });

  test('a cache clearly ahead at 1 % for four decisions, then far behind LRU, has seen popularity shift: the window stays at 1 % for eight decisions', () => {
    let reversals = 0;
    const t = tuner(() => reversals++);
    let at = 0;
    for (let i = 0; i < 4; i++) {
      feed(t, DECISION, false, true, at);
      at += DECISION;
    }
    assert.equal(feed(t, CHECK, true, false, at), false, 'the check finds LRU far ahead, and the window stays');
    at += CHECK;
    assert.equal(reversals, 1);
    assert.equal(t.share, MIN_WINDOW_SHARE);
    for (let i = 0; i < 8; i++) {
      assert.equal(feed(t, DECISION, true, false, at), false, `held, decision ${i + 1}`);
      at += DECISION;
    }
    assert.equal(feed(t, CHECK, true, false, at), true, 'then it grows again');
    assert.equal(reversals, 1, 'and that is no reversal: the cache was not ahead before it');
    close(t.share, 2 * MIN_WINDOW_SHARE);
  });

  test('a shift the detector saw takes the window back to 1 % and holds it there', () => {
    const t = tuner();
    feed(t, 4 * CHECK, true, false);
    close(t.share, 16 * MIN_WINDOW_SHARE);
    assert.equal(t.shifted(), true);
    assert.equal(t.share, MIN_WINDOW_SHARE);
    assert.equal(feed(t, 8 * DECISION, true, false, 1000), false);
    assert.equal(feed(t, CHECK, true, false, 10_000), true);
  });

  test('keys outside its sample are not looked at: a large cache samples a slice of them', () => {
    const t = new WindowTuner(1 << 30, 1 << 20, noReversal);
    let moves = 0;
    for (let i = 0; i < 100_000; i++) {
      const h = keyHash(`/k/${i}`);
      t.stored(h, 100);
      if (t.looked(h, false)) moves++;
    }
    // 1,048,576 entries, 4,096 shadow keys: one key in 256, so about 390 sampled lookups, each a
    // hit only LRU makes: a growth at every 64th, about 6; every lookup's would be 1,562.
    assert.ok(moves >= 4 && moves <= 8, `${moves} moves`);
    close(t.share, MIN_WINDOW_SHARE * 2 ** moves);
    assert.ok(t.bytes <= (1 << 30) / 1000, `${t.bytes} B`);
  });
});

const ENTRY = 1000;
const BOUND = 300 * ENTRY;

/** A deterministic source of numbers in [0, 1). */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    return s / 0x80000000;
  };
}

/** A deterministic stream of keys where each request re-asks the key asked `d` requests ago (d heavy-tailed), or a new one. */
function* recencyBiased(requests: number, seed: number): Generator<string> {
  const random = seeded(seed);
  const asked: string[] = [];
  let fresh = 0;
  for (let t = 0; t < requests; t++) {
    const d = Math.floor(200 * ((1 - random()) ** -1 - 1)) + 1;
    const key = random() < 0.3 || d > t ? `/new/${fresh++}` : (asked[t - d] ?? '');
    asked.push(key);
    yield key;
  }
}

/** Keys of Zipf (α 0.9) popularity over 10,000, 33 times the entries the cache holds. */
function* zipf(requests: number, seed: number): Generator<string> {
  const sampler = new ZipfSampler(10_000, 0.9, { next: seeded(seed) });
  for (let i = 0; i < requests; i++) yield `/zipf/${sampler.next()}`;
}

/** Look up, and on a miss store: returns the hits. */
function replay(cache: EntryLru<string, { key: string }>, keys: Iterable<string>, size: (key: string) => number = () => ENTRY): number {
  let hits = 0;
  for (const key of keys) {
    if (cache.get(key) !== undefined) hits++;
    else cache.set(key, { key }, { size: size(key) });
  }
  return hits;
}

describe('W-TinyLFU with the tuned window', () => {
  test('on a recency-biased sequence it comes within two points of plain LRU, where a fixed 1 % window is 27 below', () => {
    const windowed = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: () => undefined,
      onAdmission: () => undefined,
      onShift: () => undefined,
    });
    const lru = new LRUCache<string, { key: string }>({ maxSize: BOUND });
    const requests = 200_000;
    const ours = replay(windowed, recencyBiased(requests, 7)) / requests;
    const theirs = replay(lru, recencyBiased(requests, 7)) / requests;
    // A fixed 1 % window: 0.285 against LRU's 0.553. At this tiny bound the shadow LRU's least
    // 256 keys take 6 % of it; the replays at catalog bounds come within a point (docs/performance.md).
    assert.ok(ours >= theirs - 0.02, `W-TinyLFU ${ours.toFixed(3)}, LRU ${theirs.toFixed(3)}`);
    assert.ok(windowed.windowShare > 0.5, `window ${windowed.windowShare}`);
  });

  test('on Zipf requests the window keeps its smallest share, and the cache hits far more often than LRU', () => {
    const windowed = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: () => undefined,
      onAdmission: () => undefined,
      onShift: () => undefined,
    });
    const lru = new LRUCache<string, { key: string }>({ maxSize: BOUND });
    let largest = 0;
    let ours = 0;
    for (const key of zipf(60_000, 3)) {
      if (windowed.get(key) !== undefined) ours++;
      else windowed.set(key, { key }, { size: ENTRY });
      largest = Math.max(largest, windowed.windowShare);
    }
    const theirs = replay(lru, zipf(60_000, 3));
    // Replayed: 0.50 against LRU's 0.39.
    assert.ok(ours / 60_000 >= theirs / 60_000 + 0.08, `W-TinyLFU ${ours / 60_000}, LRU ${theirs / 60_000}`);
    assert.equal(largest, MIN_WINDOW_SHARE, 'the window never grew');
  });

  test('after a recency-biased stretch has grown the window to the top, Zipf requests bring it back down, and the cache ahead of LRU again', () => {
    const windowed = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: () => undefined,
      onAdmission: () => undefined,
      onShift: () => undefined,
    });
    const lru = new LRUCache<string, { key: string }>({ maxSize: BOUND });
    replay(windowed, recencyBiased(60_000, 7));
    replay(lru, recencyBiased(60_000, 7));
    assert.ok(windowed.windowShare > 0.9, `window ${windowed.windowShare} after the recency-biased stretch`);
    // At the top the cache hits as LRU does, so only the probes (a fifth off the window, kept when
    // the cache then does clearly better than the shadow LRU) bring it down: replayed, after about
    // 60,000 Zipf requests, 200 times the entries held.
    const zipfKeys = [...zipf(100_000, 3)];
    replay(windowed, zipfKeys.slice(0, 80_000));
    replay(lru, zipfKeys.slice(0, 80_000));
    assert.ok(windowed.windowShare <= 2 * MIN_WINDOW_SHARE, `window ${windowed.windowShare} after 80,000 Zipf requests`);
    const ours = replay(windowed, zipfKeys.slice(80_000)) / 20_000;
    const theirs = replay(lru, zipfKeys.slice(80_000)) / 20_000;
    // Replayed: 0.51 against 0.39.
    assert.ok(ours >= theirs + 0.08, `W-TinyLFU ${ours}, LRU ${theirs} over the last 20,000`);
  });

  test('the byte bound holds exactly through every move of the window, and every key that leaves is reported once', () => {
    const held = new Map<string, { key: string }>();
    const cache = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: (value, key) => {
        assert.equal(held.get(key), value, `${key} reported gone with the value it held`);
        held.delete(key);
      },
      onAdmission: () => undefined,
      onShift: () => undefined,
    });
    const shares = new Set<number>();
    let n = 0;
    // Recency first (the window grows), then a small hot set under a scan that plain LRU loses
    // whole (it shrinks again, when a probe finds the smaller window clearly ahead).
    const keys = [...recencyBiased(60_000, 11), ...Array.from({ length: 60_000 }, (_, i) => (i % 5 === 0 ? `/hot/${(i / 5) % 60}` : `/scan/${i}`))];
    for (const key of keys) {
      if (n++ % 7 === 0) cache.delete(`/new/${n % 5000}`);
      if (cache.get(key) === undefined) {
        const value = { key };
        cache.set(key, value, { size: 200 + (keyHash(key) % 3000) });
        if (cache.peek(key) === value) held.set(key, value);
      }
      shares.add(cache.windowShare);
      assert.ok(cache.calculatedSize + cache.sketchBytes <= BOUND, `${cache.calculatedSize} B held`);
      assert.equal(cache.size, held.size);
    }
    assert.deepEqual(new Set(cache.keys()), new Set(held.keys()));
    assert.ok(shares.size >= 4, `the window moved through ${[...shares].join(', ')}`);
    assert.equal(cache.windowShare < 0.1, true, `back to a small window on the hot set: ${cache.windowShare}`);
  });
});
