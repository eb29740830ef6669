/**
 * The admission decision alone, then W-TinyLFU (windowed-lru.ts) on crafted request sequences
 * against plain lru-cache: a scan does not flush a hot set, a new hot key gets in within a few
 * requests, and the byte bound holds exactly, whatever is set, replaced or deleted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { LRUCache } from 'lru-cache';
import { TinyLfuAdmission } from '../../src/gateway/store/admission/admission.ts';
import { FrequencySketch, keyHash } from '../../src/gateway/store/admission/frequency-sketch.ts';
import { WindowedLru, type EntryLru } from '../../src/gateway/store/memory/windowed-lru.ts';
import { mapAdds } from '../support/map-adds.ts';

describe('the admission decision', () => {
  const sketch = new FrequencySketch(1024);
  const admission = new TinyLfuAdmission(sketch);
  const ask = (key: string, times: number): void => {
    for (let i = 0; i < times; i++) admission.record(key);
  };
  ask('candidate', 5);
  ask('cold', 1);
  ask('warm', 3);
  ask('hot', 9);
  const victims = (...keys: string[]) => keys.map((key) => ({ hash: keyHash(key), size: 100 }));

  test('a request is counted under its key hash, which the store judges candidates and victims by', () => {
    const fresh = new TinyLfuAdmission(new FrequencySketch(1024));
    assert.equal(fresh.record('/v1/books?q=river'), keyHash('/v1/books?q=river'));
  });

  test('with room to spare nothing is weighed', () => {
    assert.equal(admission.admits(keyHash('never-seen'), 0, victims('hot')), true);
  });

  test('a candidate asked more often than its victim gets in; a tie or a less popular one does not', () => {
    assert.equal(admission.admits(keyHash('candidate'), 100, victims('warm')), true);
    assert.equal(admission.admits(keyHash('candidate'), 100, victims('hot')), false);
    assert.equal(admission.admits(keyHash('warm'), 100, victims('warm')), false, 'a tie');
  });

  test('a candidate refused lately and asked again wins a tie while it is asked for a few times at most', () => {
    assert.equal(admission.admits(keyHash('warm'), 100, victims('warm'), true), true, 'a regretted tie');
    assert.equal(admission.admits(keyHash('warm'), 100, victims('hot'), true), false, 'a regretted loser still loses');
    ask('busy', 6);
    ask('busy-victim', 6);
    assert.equal(admission.admits(keyHash('busy'), 100, victims('busy-victim'), true), false, 'a regretted tie among keys asked more often');
  });

  test('sizes count: it is weighed against every victim it would push out, together', () => {
    assert.equal(admission.admits(keyHash('candidate'), 100, victims('cold', 'warm')), true, 'one victim frees enough');
    assert.equal(admission.admits(keyHash('candidate'), 150, victims('cold', 'warm')), true, '1 + 3 requests lost for its 5');
    assert.equal(admission.admits(keyHash('candidate'), 150, victims('warm', 'warm')), false, '3 + 3 requests lost for its 5');
  });
});

const ENTRY = 1000;
/** 100 entries of ENTRY bytes, window and sketch included. */
const BOUND = 100 * ENTRY + 20_000;

function windowed(): WindowedLru<string, { key: string }> {
  return new WindowedLru<string, { key: string }>({ maxSize: BOUND, disposeAfter: () => undefined, onAdmission: () => undefined, onShift: () => undefined });
}

/** A windowed LRU that writes down each entry it reports gone, as `key:reason`. */
function recording(): { readonly cache: WindowedLru<string, { key: string }>; readonly gone: string[] } {
  const gone: string[] = [];
  const cache = new WindowedLru<string, { key: string }>({
    maxSize: BOUND,
    disposeAfter: (v, k, reason) => gone.push(`${k}:${reason}`),
    onAdmission: () => undefined,
    onShift: () => undefined,
  });
  return { cache, gone };
}

function plain(): LRUCache<string, { key: string }> {
  return new LRUCache<string, { key: string }>({ maxSize: BOUND });
}

/** A cache as the gateway uses it: look up, and on a miss store. Returns whether it was a hit. */
function request(cache: EntryLru<string, { key: string }>, key: string, size = ENTRY): boolean {
  if (cache.get(key) !== undefined) return true;
  cache.set(key, { key }, { size });
  return false;
}

describe('W-TinyLFU', () => {
  test('a scan of one-off keys does not flush a hot set that plain LRU loses', () => {
    // Ten scanned keys between two requests for each hot key: 550 keys between two requests for
    // the same hot key, where plain LRU keeps 120.
    for (const [name, cache, least, most] of [
      ['W-TinyLFU', windowed(), 490, 500],
      ['LRU', plain(), 0, 0],
    ] as const) {
      const hot = Array.from({ length: 50 }, (_, i) => `/hot/${i}`);
      let scan = 0;
      let hits = 0;
      for (let round = 0; round < 20; round++) {
        for (const key of hot) {
          if (request(cache, key) && round >= 10) hits++;
          for (let i = 0; i < 10; i++) request(cache, `/scan/${scan++}`);
        }
      }
      assert.ok(hits >= least && hits <= most, `${name}: ${hits} hits of the last 500 requests for the hot set`);
    }
  });

  test('a new hot key is served from the window at once and enters the main segment within a few requests', () => {
    const cache = windowed();
    // A full cache of keys asked three times each.
    const warm = Array.from({ length: 100 }, (_, i) => `/warm/${i}`);
    for (let round = 0; round < 3; round++) for (const key of warm) request(cache, key);
    let scan = 0;
    const hitsAt: number[] = [];
    for (let i = 0; i < 20; i++) {
      if (request(cache, '/new-hot')) hitsAt.push(i);
      // Between two requests for it, more new keys than the window holds go by.
      for (let j = 0; j < 5; j++) request(cache, `/scan/${scan++}`);
    }
    const first = hitsAt[0];
    assert.ok(first !== undefined && first <= 5, `first hit at request ${first}`);
    assert.deepEqual(
      hitsAt,
      Array.from({ length: 20 - first }, (_, i) => first + i),
      'a hit on every request once it is in',
    );
  });

  test('a loop over more keys than the cache holds keeps hitting, where plain LRU never does', () => {
    const cache = windowed();
    const lru = plain();
    // 150 keys in turn, 1.5 times what the cache holds: each candidate was refused one turn earlier.
    const turn = Array.from({ length: 150 }, (_, i) => `/loop/${i}`);
    for (let round = 0; round < 30; round++) {
      for (const key of turn) {
        request(cache, key);
        request(lru, key);
      }
    }
    let ours = 0;
    let theirs = 0;
    for (let round = 0; round < 10; round++) {
      for (const key of turn) {
        if (request(cache, key)) ours++;
        if (request(lru, key)) theirs++;
      }
    }
    assert.equal(theirs, 0, 'plain LRU never hits a loop larger than itself');
    assert.ok(ours >= 0.4 * 1500, `${ours} hits of 1,500`);
  });

  test('entries asked for again after admission outlast a stream of newcomers admitted on their way through', () => {
    const cache = windowed();
    // Seventy keys admitted, then each asked for once more: protected.
    const proven = Array.from({ length: 70 }, (_, i) => `/proven/${i}`);
    for (const key of proven) request(cache, key);
    for (let i = 0; i < 30; i++) request(cache, `/filler/${i}`);
    for (const key of proven) request(cache, key);
    // Newcomers asked for four times each in a row: popular enough to be admitted against
    // anything asked for twice, and never asked for again once admitted.
    for (let i = 0; i < 150; i++) for (let n = 0; n < 4; n++) request(cache, `/newcomer/${i}`);
    const kept = proven.filter((key) => cache.peek(key) !== undefined).length;
    assert.ok(kept >= 60, `${kept} of 70 proven keys kept`);
  });

  test('an entry popular once and now at the end of probation does not refuse every newcomer', () => {
    const cache = windowed();
    // Four keys asked far more often than any other, then never again.
    const former = Array.from({ length: 4 }, (_, i) => `/former/${i}`);
    for (let n = 0; n < 14; n++) for (const key of former) request(cache, key);
    // Keys asked three times each fill the cache and push the former ones to the end of probation.
    for (let round = 0; round < 3; round++) for (let i = 0; i < 100; i++) request(cache, `/warm/${i}`);
    const blocking = former.filter((key) => cache.peek(key) !== undefined).length;
    assert.ok(blocking > 0, 'the former hot keys are still held');
    // Newcomers asked four times each: more than the warm keys, far less than the former ones.
    let admitted = 0;
    for (let i = 0; i < 40; i++) {
      for (let n = 0; n < 4; n++) request(cache, `/newcomer/${i}`);
      for (let j = 0; j < 5; j++) request(cache, `/scan/${i}/${j}`);
      if (cache.peek(`/newcomer/${i}`) !== undefined) admitted++;
    }
    // Victims taken strictly from the end of probation kept 3: the former hot keys refused the rest.
    assert.ok(admitted >= 15, `${admitted} of 40 newcomers kept`);
  });

  test('an admitted newcomer evicts entries asked less further up probation, not the oldest asked more', () => {
    const cache = windowed();
    // Probation, from its oldest: 20 keys asked five times, 70 asked twice, then ones asked once
    // until the cache is full; none asked since admission, so none is protected.
    const warm = Array.from({ length: 20 }, (_, i) => `/warm/${i}`);
    for (const key of warm) for (let n = 0; n < 5; n++) request(cache, key);
    for (let i = 0; i < 70; i++) for (let n = 0; n < 2; n++) request(cache, `/cold/${i}`);
    for (let i = 0; i < 30; i++) request(cache, `/once/${i}`);
    // Newcomers asked seven times each: admitted against the oldest (the warm keys), and each
    // evicts one entry. Victims taken from the oldest alone would take the 20 warm keys first.
    for (let i = 0; i < 25; i++) for (let n = 0; n < 7; n++) request(cache, `/newcomer/${i}`);
    const newcomers = Array.from({ length: 24 }, (_, i) => `/newcomer/${i}`).filter((key) => cache.peek(key) !== undefined).length;
    assert.equal(newcomers, 24, 'every newcomer out of the window admitted');
    const kept = warm.filter((key) => cache.peek(key) !== undefined).length;
    assert.ok(kept >= 15, `${kept} of 20 warm keys kept`);
  });

  test('a key refused when larger than the window is not kept, and its old value is reported gone', () => {
    const { cache, gone } = recording();
    for (let round = 0; round < 3; round++) for (let i = 0; i < 200; i++) request(cache, `/warm/${i}`);
    request(cache, '/grows', 500);
    const grown = { key: '/grows' };
    cache.set('/grows', grown, { size: 5000 });
    assert.equal(cache.peek('/grows'), undefined, 'refused: asked once against victims asked three times');
    assert.ok(gone.includes('/grows:set'));
  });

  test('a value larger than the bound set over an entry of the main space is not kept, and both values are reported gone', () => {
    const { cache, gone } = recording();
    for (let round = 0; round < 3; round++) for (let i = 0; i < 200; i++) request(cache, `/warm/${i}`);
    const held = [...cache.keys()][0] ?? '';
    cache.set(held, { key: held }, { size: 2 * BOUND });
    assert.equal(cache.peek(held), undefined);
    assert.deepEqual(
      gone.filter((g) => g.startsWith(`${held}:`)),
      [`${held}:set`, `${held}:set`],
    );
  });

  test('a value set again over itself is not reported gone, in the window as in the main space (as lru-cache does)', () => {
    const { cache, gone } = recording();
    const value = { key: '/same' };
    cache.set('/same', value, { size: 100 });
    cache.set('/same', value, { size: 100 });
    assert.deepEqual(gone, []);
    cache.set('/same', { key: '/same' }, { size: 100 });
    assert.deepEqual(gone, ['/same:set']);
  });

  test('in the main space a value set over itself keeps its size, and another value takes the size it comes with (as lru-cache does)', () => {
    const { cache, gone } = recording();
    const value = { key: '/main' };
    cache.set('/main', value, { size: ENTRY });
    // The window (1 % of the bound) holds one entry: the next pushes '/main' out, into a main space with room.
    cache.set('/next', { key: '/next' }, { size: ENTRY });
    assert.equal(cache.peek('/main'), value);
    const held = cache.calculatedSize;
    cache.set('/main', value, { size: 5 * ENTRY });
    assert.equal(cache.calculatedSize, held);
    assert.deepEqual(gone, []);
    cache.set('/main', { key: '/main' }, { size: 5 * ENTRY });
    assert.equal(cache.calculatedSize, held + 4 * ENTRY);
    assert.deepEqual(gone, ['/main:set']);
  });

  test('no key is added to a Map as entries enter memory, move between window, probation and protected, and leave', () => {
    const cache = windowed();
    const keys = Array.from({ length: 90 }, (_, i) => `/moves/${i}`);
    for (const key of keys) request(cache, key);
    const newcomers = Array.from({ length: 400 }, (_, i) => `/new/${i}`);
    const added = mapAdds(() => {
      // Hits on probation promote; the protected segment's oldest go back on probation.
      for (let round = 0; round < 4; round++) for (const key of round % 2 === 0 ? keys : [...keys].reverse()) request(cache, key);
      // New keys, each asked twice, enter and push others out.
      for (const key of newcomers) {
        request(cache, key);
        request(cache, key);
      }
    });
    assert.ok(
      newcomers.some((key) => cache.peek(key) !== undefined),
      'new keys entered',
    );
    assert.ok([...keys, ...newcomers].filter((key) => cache.peek(key) === undefined).length > 300, 'and others left');
    assert.equal(added, 0);
  });

  test('the byte bound holds exactly, and every value set is reported gone once, unless it is held', () => {
    // Now and then a value larger than the whole bound, which is never kept.
    const size = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 9000 }), weight: 19 }, { arbitrary: fc.constant(31_000), weight: 1 });
    const op = fc.oneof(
      fc.record({ kind: fc.constant('request' as const), key: fc.integer({ min: 0, max: 60 }), size }),
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 60 }), size }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 60 }), size: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        // Every value handed to the cache and not reported gone, by key: what the cache holds, or must release.
        const live = new Set<{ key: string }>();
        const cache = new WindowedLru<string, { key: string }>({
          maxSize: 30_000,
          disposeAfter: (value, key) => {
            assert.ok(live.has(value), `${key} reported gone once, with a value it was given`);
            assert.equal(value.key, key);
            assert.notEqual(cache.peek(key), value, `${key} reported gone while held`);
            live.delete(value);
          },
          onAdmission: () => undefined,
          onShift: () => undefined,
        });
        const put = (k: string, size: number): void => {
          const value = { key: k };
          live.add(value);
          cache.set(k, value, { size });
        };
        for (const { kind, key, size } of ops) {
          const k = `/k${key}`;
          if (kind === 'delete') cache.delete(k);
          else if (kind === 'set' || cache.get(k) === undefined) put(k, size);
          assert.ok(cache.calculatedSize + cache.sketchBytes <= 30_000, `${cache.calculatedSize} B held`);
          const held = [...cache.keys()];
          assert.deepEqual(new Set([...live].map((value) => value.key)), new Set(held), 'the values not reported gone are the ones held');
          assert.equal(live.size, held.length);
          assert.equal(cache.size, held.length);
        }
      }),
      { numRuns: 200 },
    );
  });
});
