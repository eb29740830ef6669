/**
 * The shift detector alone on made-up request streams, then W-TinyLFU (windowed-lru.ts) across a
 * popularity shift: a new hot set replaces the old one in the main space within a bounded number
 * of requests, and the byte bound holds exactly while the store forgets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { keyHash } from '../../src/gateway/store/admission/frequency-sketch.ts';
import { SAMPLE_PER_ENTRY, ShiftDetector } from '../../src/gateway/store/admission/shift-detector.ts';
import { MAX_WINDOW_SHARE } from '../../src/gateway/store/admission/window-tuner.ts';
import { WindowedLru } from '../../src/gateway/store/memory/windowed-lru.ts';
import { SeededRandom } from '../../src/origin/random.ts';

/**
 * Requests to a cache that hits with probability `ratio`; a miss is, with probability `repeat`,
 * for one of the last few keys that missed (and were refused, as every missed key here is), else
 * for the next key of `misses`.
 */
class Workload {
  readonly detector = new ShiftDetector(ENTRIES);
  readonly #random = new SeededRandom(7);
  readonly #recent: string[] = [];
  #fresh = 0;

  /** Returns how many times a shift was seen. */
  feed(requests: number, ratio: number, repeat: number, misses: (n: number) => string = (n) => `/fresh/${n}`): number {
    let shifts = 0;
    for (let i = 0; i < requests; i++) {
      const hit = this.#random.next() < ratio;
      this.detector.record(hit, ENTRIES);
      if (hit) continue;
      const key =
        this.#random.next() < repeat && this.#recent.length > 0 ? (this.#recent[this.#random.below(this.#recent.length)] ?? '') : misses(this.#fresh++);
      const h = keyHash(key);
      if (this.detector.shifted(h, ENTRIES)) shifts++;
      this.detector.refused(h, ENTRIES);
      this.#recent.push(key);
      if (this.#recent.length > 50) this.#recent.shift();
    }
    return shifts;
  }
}

/** Above 160,000, so that a sample is SAMPLE_PER_ENTRY of them, not the floor of 10,000 requests. */
const ENTRIES = 320_000;

describe('the shift detector', () => {
  test('a steady workload, noise and all, is no shift', () => {
    assert.equal(new Workload().feed(2_000_000, 0.4, 0.1), 0);
  });

  test('a hit ratio that falls by a fifth while misses for keys refused lately rise is one shift, seen within a cache’s worth of requests', () => {
    const workload = new Workload();
    assert.equal(workload.feed(500_000, 0.6, 0.1), 0);
    assert.equal(workload.feed(ENTRIES, 0.4, 0.4), 1);
    assert.equal(workload.feed(500_000, 0.4, 0.4), 0, 'the new workload is the new normal');
  });

  test('a fall in the hit ratio alone is no shift, however long: a scan, or a loop over more keys than the cache holds', () => {
    const workload = new Workload();
    workload.feed(500_000, 0.6, 0.1);
    assert.equal(workload.feed(4 * ENTRIES, 0, 0), 0, 'a scan');
    assert.equal(
      workload.feed(4 * ENTRIES, 0.2, 0, (n) => `/loop/${n % (3 * ENTRIES)}`),
      0,
      'a loop',
    );
    assert.equal(workload.feed(500_000, 0.6, 0.1), 0);
  });

  test('regrets no more frequent than false positives could make are no shift, however rare regrets were: a loop’s missed tail', () => {
    const workload = new Workload();
    workload.feed(500_000, 0.8, 0);
    assert.equal(workload.feed(4 * SAMPLE_PER_ENTRY * ENTRIES, 0, 0.01), 0, 'one miss in a hundred a regret');
    assert.equal(workload.feed(ENTRIES, 0.4, 0.4), 1, 'a shift after it is still seen');
  });

  test('two samples that look like a shift are not one, three are', () => {
    const workload = new Workload();
    workload.feed(500_000, 0.6, 0.1);
    assert.equal(workload.feed(2 * SAMPLE_PER_ENTRY * ENTRIES, 0.3, 0.5), 0);
    assert.equal(workload.feed(500_000, 0.6, 0.1), 0);
    assert.equal(workload.feed(4 * SAMPLE_PER_ENTRY * ENTRIES, 0.3, 0.5), 1);
  });
});

describe('W-TinyLFU across a popularity shift', () => {
  test('a loop a fifth longer than a large cache is no shift: its own misses are no regrets, and it keeps four fifths of the loop', () => {
    // 149,000 entries at 256 MiB: a sample (10,000 requests) is far shorter than a pass (179,000),
    // so a pass's missed tail makes samples fall. Remembering refusals for a cache's worth of them
    // made those misses regrets, each pass a shift, and the hit ratio about 0.42.
    const SIZE = 1800;
    const maxSize = 256 * 2 ** 20;
    let shifts = 0;
    const cache = new WindowedLru<string, number>({ maxSize, disposeAfter: () => undefined, onAdmission: () => undefined, onShift: () => shifts++ });
    const keys = Array.from({ length: Math.round((1.2 * maxSize) / SIZE) }, (_, i) => `/v1/books?q=loop${i}`);
    let hits = 0;
    for (let pass = 0; pass < 5; pass++)
      for (const key of keys) {
        if (cache.get(key) !== undefined) hits += pass === 0 ? 0 : 1;
        else cache.set(key, 1, { size: SIZE });
      }
    const ratio = hits / (4 * keys.length);
    assert.ok(ratio > 0.75, `hit ratio ${ratio} over passes 2–5`);
    assert.equal(shifts, 0);
  });

  // Small entries, so that the sketch's own ageing (after 30 requests per entry) is far off.
  const ENTRY = 100;
  const ENTRIES = 20_000;
  const BOUND = ENTRIES * ENTRY;
  const HOT = 16_000;

  test('a disjoint new hot set takes the old one’s place within a bounded number of requests, the bound held exactly', () => {
    let shifts = 0;
    const cache = new WindowedLru<string, { key: string }>({
      maxSize: BOUND,
      disposeAfter: () => undefined,
      onAdmission: () => undefined,
      onShift: () => shifts++,
    });
    const random = new SeededRandom(4);
    const requestFrom = (set: string): boolean => {
      const key = `/${set}/${random.below(HOT)}`;
      const hit = cache.get(key) !== undefined;
      if (!hit) cache.set(key, { key }, { size: ENTRY });
      assert.ok(cache.calculatedSize + cache.sketchBytes <= BOUND, `${cache.calculatedSize} B and the sketch's ${cache.sketchBytes} over ${BOUND}`);
      return hit;
    };
    // Each old key asked about 15 times: its count saturates, as a favourite's does.
    for (let i = 0; i < 250_000; i++) requestFrom('old');
    assert.equal(shifts, 0, 'a stationary workload is no shift');
    let hits = 0;
    for (let i = 0; i < 100_000; i++) if (requestFrom('new') && i >= 80_000) hits++;
    assert.ok(hits >= 0.9 * 20_000, `${hits} hits of the last 20,000 requests for the new set`);
    // Either the detector saw the shift and the sketch forgot, or the tuner grew the window to the top, where the cache is LRU.
    const seen: number = shifts;
    assert.ok(seen === 1 || (seen === 0 && cache.windowShare === MAX_WINDOW_SHARE), `${seen} shifts, window ${cache.windowShare}`);
  });
});

describe('what a lookup costs the detector', () => {
  /** Words of any Uint32Array that `work` sets with `fill`, as emptying a filter does. */
  function wordsFilled(work: () => void): number {
    let words = 0;
    const fill = Object.getPrototypeOf(Uint32Array.prototype) as { fill: (this: Uint32Array, ...args: unknown[]) => Uint32Array };
    const own = fill.fill;
    Object.defineProperty(Uint32Array.prototype, 'fill', {
      configurable: true,
      value: function counted(this: Uint32Array, ...args: unknown[]): Uint32Array {
        words += this.length;
        return own.apply(this, args);
      },
    });
    try {
      work();
    } finally {
      delete (Uint32Array.prototype as { fill?: unknown }).fill;
    }
    return words;
  }

  test('hits on a cache sized for 256 MiB that holds one entry empty no filter: its generations turn at every lookup, and hold nothing', () => {
    const cache = new WindowedLru<string, number>({
      maxSize: 256 * 1024 * 1024,
      disposeAfter: () => undefined,
      onAdmission: () => undefined,
      onShift: () => undefined,
    });
    cache.set('/v1/books?q=one', 1, { size: 4096 });
    const words = wordsFilled(() => {
      for (let i = 0; i < 10_000; i++) assert.equal(cache.get('/v1/books?q=one'), 1);
    });
    assert.equal(words, 0, `${words} words filled in 10,000 hits`);
  });

  test('a generation emptied holds none of its keys, whether it remembered the words it set or had to empty them all', () => {
    for (const keys of [3, 5_000]) {
      const detector = new ShiftDetector(1024);
      const first = Array.from({ length: keys }, (_, i) => keyHash(`/first/${i}`));
      for (const h of first) detector.refused(h, 1_000_000);
      assert.ok(
        first.every((h) => detector.refusedLately(h)),
        `${keys} keys: each refused is refused lately`,
      );
      // Two turns: the generation that held them is emptied, then the one after it.
      detector.refused(keyHash('/turn/1'), 0);
      detector.refused(keyHash('/turn/2'), 0);
      const second = Array.from({ length: keys }, (_, i) => keyHash(`/second/${i}`));
      assert.equal(first.filter((h) => detector.refusedLately(h)).length, 0, `${keys} keys: none left after two turns`);
      for (const h of second) detector.refused(h, 1_000_000);
      assert.ok(
        second.every((h) => detector.refusedLately(h)),
        `${keys} keys: the emptied generation takes keys again`,
      );
    }
  });
});
