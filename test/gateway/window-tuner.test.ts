/**
 * The window's tuner (window-tuner.ts) alone, on request sequences where one of its two miniature
 * caches (LRU, and W-TinyLFU at the smallest window, with counts given by the test) clearly hits
 * more than the other; then W-TinyLFU with it on recency-biased and Zipf requests: the window
 * grows to the top on the first, stays small on the second and comes back down when the second
 * follows the first; at the top a key asked twice outlasts one-off keys, and the byte bound and the
 * reports of what leaves hold through every move.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LRUCache } from 'lru-cache';
import { keyHash } from '../../src/gateway/store/admission/frequency-sketch.ts';
import { MAX_WINDOW_SHARE, MIN_WINDOW_SHARE, WindowTuner } from '../../src/gateway/store/admission/window-tuner.ts';
import { WindowedLru, type EntryLru } from '../../src/gateway/store/memory/windowed-lru.ts';
import { ZipfSampler } from '../../src/loadtest/zipf.ts';

/** The top of the window's share (all of the bound), and a move's factor. */
const TOP = MAX_WINDOW_SHARE;
const STEP = 8;
/** The tuner's cache: 200 entries of 1,000 B, every key in its sample; its W-TinyLFU miniature's window holds 2. */
const TUNED_BOUND = 200_000;
const TUNED_ENTRY = 1000;

function noReversal(): void {
  assert.fail('no reversal expected');
}

/** A tuner for a cache of 200 entries, whose sketch counts `hot` keys 10 and every other key 0. */
function tuner(hot: (h: number) => boolean = () => false, onReversal: () => void = noReversal): WindowTuner {
  return new WindowTuner(TUNED_BOUND, TUNED_BOUND / TUNED_ENTRY, (h) => (hot(h) ? 10 : 0), onReversal);
}

/** Looks `key` up (the cache missing it, as the tuner's verdicts come from its miniatures) and stores it; true when the window moved. */
function ask(t: WindowTuner, key: string): boolean {
  const h = keyHash(key);
  const moved = t.looked(h, false);
  t.stored(h, TUNED_ENTRY);
  return moved;
}

/**
 * Recency-biased requests counts cannot tell: each new key is asked again 20 requests later, in
 * LRU's reach and out of the W-TinyLFU miniature's window, and the counts (0 for all) refuse it
 * the main space, which 200 older keys fill first. Returns the moves.
 */
function recency(t: WindowTuner, requests: number, from = 0, shares?: number[]): number {
  let moves = 0;
  const asked = (key: string): void => {
    if (!ask(t, key)) return;
    moves++;
    // The share, each time it changed (a call also returns true when the window settles at the top).
    if (shares?.at(-1) !== t.share) shares?.push(t.share);
  };
  for (let i = from; i < from + 200; i++) asked(`/filler/${i}`);
  for (let i = from; i < from + requests / 2; i++) {
    asked(`/new/${i}`);
    if (i - from >= 20) asked(`/new/${i - 20}`);
  }
  return moves;
}

/** A hot set of 50 keys, one asked every fifth request, among a scan of keys asked once: LRU loses the hot set to the scan, counts keep it. */
const isHot = (keys: Set<number>) => (h: number) => keys.has(h);
function hotSet(): Set<number> {
  return new Set(Array.from({ length: 50 }, (_, i) => keyHash(`/hot/${i}`)));
}
function scanWithHotSet(t: WindowTuner, requests: number, from = 0, shares?: number[]): number {
  let moves = 0;
  for (let i = from; i < from + requests; i++) {
    if (!ask(t, i % 5 === 0 ? `/hot/${(i / 5) % 50}` : `/scan/${i}`)) continue;
    moves++;
    if (shares?.at(-1) !== t.share) shares?.push(t.share);
  }
  return moves;
}

describe('the window tuner', () => {
  test('the window starts at 1 % and, counts never having won, moves straight to the top when the LRU miniature hits what the W-TinyLFU one refuses', () => {
    const t = tuner();
    assert.equal(t.share, MIN_WINDOW_SHARE);
    const shares: number[] = [];
    recency(t, 6000, 0, shares);
    assert.deepEqual(shares, [TOP]);
    assert.equal(t.settledAtTop, true, 'and settles there');
  });

  test('it shrinks to 1 % while the W-TinyLFU miniature keeps a hot set that the LRU one loses to a scan; leaving the top after LRU had been ahead there, it has the sketch forget the recency-biased counts', () => {
    let reversals = 0;
    const t = tuner(isHot(hotSet()), () => reversals++);
    recency(t, 20_000);
    assert.equal(t.share, TOP);
    assert.equal(reversals, 0);
    scanWithHotSet(t, 20_000, 1_000_000);
    assert.equal(t.share, MIN_WINDOW_SHARE);
    assert.equal(reversals, 1);
  });

  test('it does not move while both miniatures hit alike', () => {
    const t = tuner();
    let moves = 0;
    for (let i = 0; i < 20_000; i++) if (ask(t, `/few/${i % 100}`)) moves++;
    for (let i = 0; i < 20_000; i++) if (ask(t, `/once/${i}`)) moves++;
    assert.equal(moves, 0);
    assert.equal(t.share, MIN_WINDOW_SHARE);
  });

  test('a key the cache hits is taken by a miniature that lacked it, as that cache would have fetched and kept it', () => {
    const t = tuner();
    const h = keyHash('/kept');
    let moves = 0;
    // Never stored: only the cache's hits tell the miniatures of it. Once learnt, both hit it, and nothing moves.
    for (let i = 0; i < 5000; i++) if (t.looked(h, true)) moves++;
    assert.equal(moves, 0);
  });

  test('counts ahead at 1 %, then LRU far ahead, is a popularity shift: the sketch is told to forget, and the window grows', () => {
    let reversals = 0;
    const hot = hotSet();
    const t = tuner(isHot(hot), () => reversals++);
    scanWithHotSet(t, 30_000);
    assert.equal(t.share, MIN_WINDOW_SHARE);
    assert.equal(reversals, 0);
    hot.clear();
    const shares: number[] = [];
    recency(t, 6000, 2_000_000, shares);
    assert.equal(reversals, 1);
    // Counts having won before, LRU's lead may be a passing one: the window climbs in steps, 1 % to 8, 64 % and the top.
    assert.deepEqual(shares, [MIN_WINDOW_SHARE * STEP, MIN_WINDOW_SHARE * STEP * STEP, TOP]);
  });

  test('counts winning a verdict take the window back to 1 % in one move, from the top as from a step above 1 %', () => {
    let hot = false;
    const hotKeys = hotSet();
    const t = tuner(
      (h) => hot && hotKeys.has(h),
      () => undefined,
    );
    recency(t, 20_000);
    assert.equal(t.share, TOP);
    hot = true;
    const fromTop: number[] = [];
    scanWithHotSet(t, 20_000, 1_000_000, fromTop);
    assert.deepEqual(fromTop, [MIN_WINDOW_SHARE]);
    // Counts having won, LRU's lead climbs a step at a time: stop at the first, 8 %.
    hot = false;
    const moved = (): boolean => t.share !== MIN_WINDOW_SHARE;
    for (let i = 0; i < 20_000 && !moved(); i++) {
      ask(t, `/new/${2_000_000 + i}`);
      if (i >= 20) ask(t, `/new/${2_000_000 + i - 20}`);
    }
    assert.equal(t.share, MIN_WINDOW_SHARE * STEP);
    hot = true;
    const fromStep: number[] = [];
    scanWithHotSet(t, 20_000, 3_000_000, fromStep);
    assert.deepEqual(fromStep, [MIN_WINDOW_SHARE]);
  });

  test('a shift the detector saw takes the window back to 1 %, and the next two verdicts for LRU are ignored', () => {
    const t = tuner();
    recency(t, 6000);
    assert.equal(t.share, TOP);
    assert.equal(t.shifted(), true);
    assert.equal(t.share, MIN_WINDOW_SHARE);
    const shares: number[] = [];
    recency(t, 6000, 1_000_000, shares);
    assert.deepEqual(shares, [TOP], 'then it grows again');
  });

  test('held after a shift, a window still grows, later than one that saw none', () => {
    /** Requests of the recency pattern before the window first moves. */
    const firstMove = (t: WindowTuner): number => {
      let n = 0;
      for (let i = 0; i < 200; i++, n++) if (ask(t, `/filler/${i}`)) return n;
      for (let i = 0; i < 10_000; i++) {
        n++;
        if (ask(t, `/new/${i}`)) return n;
        n++;
        if (i >= 20 && ask(t, `/new/${i - 20}`)) return n;
      }
      return Infinity;
    };
    const held = tuner();
    held.shifted();
    const free = firstMove(tuner());
    const late = firstMove(held);
    assert.ok(Number.isFinite(late) && late > free, `first move after ${late} requests held, ${free} not`);
  });

  test('keys outside its sample are not looked at: a large cache samples a slice of them', () => {
    const t = new WindowTuner(1 << 30, 1 << 20, () => 0, noReversal);
    let sampled = 0;
    for (let i = 0; i < 100_000; i++) {
      const h = keyHash(`/k/${i}`);
      t.stored(h, 100);
      if (h < 2 ** 24) sampled++;
      t.looked(h, false);
    }
    // 1,048,576 entries, 4,096 keys in each miniature: one key in 256.
    assert.ok(sampled > 300 && sampled < 500, `${sampled} sampled`);
    assert.ok(t.bytes <= (1 << 30) / 2000, `${t.bytes} B`);
    assert.equal(t.share, MIN_WINDOW_SHARE);
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
    const policyBytes = windowed.sketchBytes;
    const ours = replay(windowed, recencyBiased(requests, 7)) / requests;
    const theirs = replay(lru, recencyBiased(requests, 7)) / requests;
    // A fixed 1 % window: 0.285 against LRU's 0.553. At this tiny bound the shadow LRU's least
    // 256 keys take 6 % of it; the replays at catalog bounds come within a point (docs/performance.md).
    assert.ok(ours >= theirs - 0.02, `W-TinyLFU ${ours.toFixed(3)}, LRU ${theirs.toFixed(3)}`);
    assert.equal(windowed.windowShare, MAX_WINDOW_SHARE);
    // At the top the sketch counts only the tuner's sample, and the shift detector holds nothing
    // (at this tiny bound the miniatures' least 256 keys are most of what is left).
    assert.ok(windowed.sketchBytes < policyBytes, `the policy's own memory ${windowed.sketchBytes} B at the top, ${policyBytes} B at 1 %`);
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
    let shifts = 0;
    const windowed = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: () => undefined,
      onAdmission: () => undefined,
      onShift: () => {
        shifts++;
      },
    });
    const lru = new LRUCache<string, { key: string }>({ maxSize: BOUND });
    replay(windowed, recencyBiased(60_000, 7));
    replay(lru, recencyBiased(60_000, 7));
    assert.ok(windowed.windowShare > 0.9, `window ${windowed.windowShare} after the recency-biased stretch`);
    const zipfKeys = [...zipf(100_000, 3)];
    replay(windowed, zipfKeys.slice(0, 80_000));
    replay(lru, zipfKeys.slice(0, 80_000));
    // At the top nothing is refused, so no miss is a regret and the shift detector judges by the
    // hit ratio alone: its lasting fall is a shift, which returns the window to its floor.
    assert.equal(shifts, 1, 'the change of requests is read as one shift');
    assert.ok(windowed.windowShare <= 2 * MIN_WINDOW_SHARE, `window ${windowed.windowShare} after 80,000 Zipf requests`);
    assert.equal(
      windowed.sketchBytes,
      new WindowedLru({ maxSize: BOUND, disposeAfter() {}, onAdmission() {}, onShift() {} }).sketchBytes,
      'the sketch counts every key again',
    );
    const ours = replay(windowed, zipfKeys.slice(80_000)) / 20_000;
    const theirs = replay(lru, zipfKeys.slice(80_000)) / 20_000;
    // Replayed: 0.51 against 0.39.
    assert.ok(ours >= theirs + 0.08, `W-TinyLFU ${ours}, LRU ${theirs} over the last 20,000`);
  });

  test('at the top a key asked twice is protected, as ARC keeps it, and outlasts a run of one-off keys that plain LRU loses it to; every candidate is admitted', () => {
    const verdicts: boolean[] = [];
    const windowed = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: () => undefined,
      onAdmission: (admitted) => verdicts.push(admitted),
      onShift: () => undefined,
    });
    const lru = new LRUCache<string, { key: string }>({ maxSize: BOUND });
    for (const cache of [windowed, lru]) {
      replay(cache, recencyBiased(60_000, 7));
      cache.set('/twice', { key: '/twice' }, { size: ENTRY });
      assert.ok(cache.get('/twice'), 'asked again while in the window');
    }
    assert.equal(windowed.windowShare, MAX_WINDOW_SHARE);
    verdicts.length = 0;
    // More one-off keys than the whole bound holds: LRU keeps none of what came before them.
    const oneOff = Array.from({ length: 400 }, (_, i) => `/once/${i}`);
    replay(windowed, oneOff);
    replay(lru, oneOff);
    assert.equal(lru.peek('/twice'), undefined, 'plain LRU let it go');
    assert.ok(windowed.peek('/twice'), 'the segmented LRU at the top kept it');
    assert.equal(windowed.peek('/once/0'), undefined, 'the oldest one-off key is gone');
    assert.ok(verdicts.length > 0 && verdicts.every((admitted) => admitted), 'every entry leaving the window at the top is admitted');
  });

  test('the byte bound holds exactly through every move of the window, and every value set is reported gone once unless held', () => {
    // Every value handed to the cache and not reported gone: what it holds, or must release.
    const live = new Set<{ key: string }>();
    const cache = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: (value, key) => {
        assert.ok(live.has(value), `${key} reported gone once, with a value it was given`);
        assert.notEqual(cache.peek(key), value, `${key} reported gone while held`);
        live.delete(value);
      },
      onAdmission: () => undefined,
      onShift: () => undefined,
    });
    const shares = new Set<number>();
    let n = 0;
    // Recency first (the window grows to the top), then a small hot set under a scan that plain LRU
    // loses whole (it shrinks again, as the W-TinyLFU miniature keeps the hot set), then both again
    // (counts having won, it grows a step at a time).
    const hotUnderScan = (from: number): string[] => Array.from({ length: 60_000 }, (_, i) => (i % 5 === 0 ? `/hot/${(i / 5) % 60}` : `/scan/${from + i}`));
    const keys = [...recencyBiased(60_000, 11), ...hotUnderScan(0), ...recencyBiased(60_000, 13), ...hotUnderScan(60_000)];
    for (const key of keys) {
      if (n++ % 7 === 0) cache.delete(`/new/${n % 5000}`);
      if (cache.get(key) === undefined) {
        const value = { key };
        live.add(value);
        cache.set(key, value, { size: 200 + (keyHash(key) % 3000) });
      }
      shares.add(cache.windowShare);
      assert.ok(cache.calculatedSize + cache.sketchBytes <= BOUND, `${cache.calculatedSize} B held`);
      assert.equal(cache.size, live.size);
    }
    assert.deepEqual(new Set(cache.keys()), new Set([...live].map((value) => value.key)));
    // 1 %, the top, and the steps on the way up the second time.
    assert.ok(shares.size >= 3, `the window moved through ${[...shares].join(', ')}`);
    assert.equal(cache.windowShare < 0.1, true, `back to a small window on the hot set: ${cache.windowShare}`);
  });
});
