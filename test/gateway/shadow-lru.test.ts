/**
 * The window tuner's shadow LRU (shadow-lru.ts): the order it keeps, its byte and key bounds, and,
 * on long random sequences, the same answers as lru-cache given the same operations, which is the
 * LRU it stands in for.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LRUCache } from 'lru-cache';
import { ShadowLru } from '../../src/gateway/store/admission/shadow-lru.ts';
import { SeededRandom } from '../../src/origin/random.ts';

describe('the shadow LRU', () => {
  test('it pushes out the least recently used while the byte bound is passed; a get makes a key the newest', () => {
    const lru = new ShadowLru(300, 10);
    lru.set(1, 100);
    lru.set(2, 100);
    lru.set(3, 100);
    assert.equal(lru.get(1), true);
    lru.set(4, 100);
    assert.equal(lru.get(2), false, 'the oldest went');
    assert.deepEqual(
      [1, 3, 4].map((h) => lru.get(h)),
      [true, true, true],
    );
    assert.equal(lru.calculatedSize, 300);
    lru.set(5, 250);
    assert.equal(lru.size, 1, 'a large key pushes out as many as it needs');
    assert.equal(lru.get(5), true);
  });

  test('setting a held key again changes its size and makes it the newest', () => {
    const lru = new ShadowLru(300, 10);
    lru.set(1, 100);
    lru.set(2, 100);
    lru.set(1, 150);
    assert.equal(lru.calculatedSize, 250);
    lru.set(3, 50);
    lru.set(4, 10);
    assert.equal(lru.get(2), false);
    assert.equal(lru.get(1), true);
    assert.equal(lru.calculatedSize, 210);
  });

  test('a size over the whole bound is not held, and drops what was held under that key', () => {
    const lru = new ShadowLru(300, 10);
    lru.set(1, 100);
    lru.set(1, 301);
    assert.equal(lru.get(1), false);
    assert.equal(lru.size, 0);
    assert.equal(lru.calculatedSize, 0);
  });

  test('learn holds a key at the mean size of the keys held, as the newest, and nothing while it holds nothing', () => {
    const lru = new ShadowLru(1_000, 10);
    lru.learn(1);
    assert.equal(lru.size, 0);
    lru.set(2, 100);
    lru.set(3, 201);
    lru.learn(4);
    assert.equal(lru.calculatedSize, 100 + 201 + 151);
    lru.set(5, 600);
    assert.deepEqual(
      [2, 3, 4, 5].map((h) => lru.get(h)),
      [false, true, true, true],
      'the oldest made way for the bound, the learnt key stayed',
    );
  });

  test('with room for no more keys, the oldest makes way whatever the bytes', () => {
    const lru = new ShadowLru(1_000_000, 3);
    for (const h of [1, 2, 3, 4]) lru.set(h, 1);
    assert.deepEqual(
      [1, 2, 3, 4].map((h) => lru.get(h)),
      [false, true, true, true],
    );
    assert.equal(lru.size, 3);
  });

  test('delete forgets a key, its bytes and its node, which the next key reuses', () => {
    const lru = new ShadowLru(1_000, 2);
    lru.set(1, 10);
    lru.set(2, 20);
    assert.equal(lru.delete(1), true);
    assert.equal(lru.delete(1), false);
    assert.equal(lru.calculatedSize, 20);
    lru.set(3, 30);
    assert.deepEqual(
      [2, 3].map((h) => lru.get(h)),
      [true, true],
      'no key was pushed out for the new one',
    );
  });

  test('keys that share a home slot all stay reachable as others around them are removed', () => {
    // A table of 8 slots for 4 nodes: 2,000 keys land on every slot many times over.
    const lru = new ShadowLru(1_000_000, 4);
    const random = new SeededRandom(3);
    const held: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const h = random.below(2 ** 32);
      lru.set(h, 1);
      held.push(h);
      if (held.length > 4) held.shift();
      if (i % 3 === 0 && held.length > 1) {
        const gone = held.splice(random.below(held.length), 1)[0] ?? 0;
        assert.equal(lru.delete(gone), true);
      }
      for (const k of held) assert.equal(lru.get(k), true, `key ${k} after step ${i}`);
    }
  });

  test('on random operations it answers as lru-cache does, under its byte bound', () => {
    const random = new SeededRandom(11);
    for (const [maxBytes, keys] of [
      [5_000, 64],
      [40_000, 400],
    ] as const) {
      // Room for more keys than the bytes allow: the byte bound decides, as in lru-cache.
      const shadow = new ShadowLru(maxBytes, keys);
      // A new value each set: lru-cache keeps the old size when a key is set again to the same value.
      const reference = new LRUCache<number, object>({ maxSize: maxBytes });
      for (let i = 0; i < 50_000; i++) {
        const h = Math.imul(random.below(300), 0x01000193) >>> 0;
        const op = random.next();
        if (op < 0.5) assert.equal(shadow.get(h), reference.get(h) !== undefined, `get at step ${i}`);
        else if (op < 0.95) {
          const size = 1 + random.below(400);
          shadow.set(h, size);
          reference.set(h, {}, { size });
        } else assert.equal(shadow.delete(h), reference.delete(h), `delete at step ${i}`);
        assert.equal(shadow.calculatedSize, reference.calculatedSize);
        assert.equal(shadow.size, reference.size);
      }
    }
  });

  test('its memory is its arrays: under 64 B for each key it expects, room for twice as many included', () => {
    const lru = new ShadowLru(1_000_000, 2 * 4096);
    assert.ok(lru.bytes <= 64 * 4096, `${lru.bytes} B`);
  });
});
