/**
 * The memory tier's plain LRU (slot-lru.ts, admission off) against lru-cache as the model: the same
 * keys in the same order, the same bytes, and the same values reported gone for the same reasons,
 * after every get, set and delete; and no key added to any V8 Map as entries come and go.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LRUCache } from 'lru-cache';
import { SlotLru } from '../../src/gateway/store/memory/slot-lru.ts';
import { mapAdds } from '../support/map-adds.ts';

const BOUND = 20_000;

test('behaves as lru-cache under a byte bound: order, bytes, and what leaves and why', () => {
  const op = fc.record({
    kind: fc.constantFrom('get', 'set', 'set-same', 'delete'),
    key: fc.integer({ min: 0, max: 40 }),
    size: fc.integer({ min: 1, max: 6000 }),
  });
  fc.assert(
    fc.property(fc.array(op, { minLength: 50, maxLength: 400 }), (ops) => {
      const seen: string[] = [];
      const expected: string[] = [];
      const lru = new SlotLru<string, { key: string; n: number }>({ maxSize: BOUND, disposeAfter: (v, k, why) => seen.push(`${k}#${v.n}:${why}`) });
      const model = new LRUCache<string, { key: string; n: number }>({ maxSize: BOUND, disposeAfter: (v, k, why) => expected.push(`${k}#${v.n}:${why}`) });
      let n = 0;
      for (const { kind, key, size } of ops) {
        const k = `/k${key}`;
        if (kind === 'get') assert.equal(lru.get(k), model.get(k));
        else if (kind === 'delete') assert.equal(lru.delete(k), model.delete(k));
        else {
          const held = model.peek(k);
          const value = kind === 'set-same' && held !== undefined ? held : { key: k, n: n++ };
          lru.set(k, value, { size });
          model.set(k, value, { size });
        }
        assert.deepEqual([...lru.keys()], [...model.keys()]);
        assert.equal(lru.calculatedSize, model.calculatedSize);
        assert.equal(lru.size, model.size);
        assert.deepEqual([...seen].sort(), [...expected].sort());
      }
    }),
    { numRuns: 200 },
  );
});

test('a value larger than the bound is not kept; it and the value it would replace are reported gone', () => {
  const gone: string[] = [];
  const lru = new SlotLru<string, string>({ maxSize: BOUND, disposeAfter: (v, k, why) => gone.push(`${v}:${why}`) });
  lru.set('/a', 'old', { size: 100 });
  lru.set('/a', 'huge', { size: BOUND + 1 });
  assert.equal(lru.peek('/a'), undefined);
  assert.deepEqual(gone, ['old:set', 'huge:set']);
});

test('no key is added to a Map as entries enter, are asked for and are evicted', () => {
  const lru = new SlotLru<string, number>({ maxSize: BOUND, disposeAfter: () => undefined });
  const added = mapAdds(() => {
    for (let i = 0; i < 500; i++) {
      lru.set(`/k${i}`, i, { size: 1000 });
      lru.get(`/k${i - 3}`);
    }
  });
  assert.equal(lru.size, 20, 'entries were evicted');
  assert.equal(added, 0);
});
