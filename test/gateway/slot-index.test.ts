/**
 * The open-addressed index from keys to slots under windowed-lru.ts (slot-index.ts): found, added
 * and removed as a Map would be, with hashes that collide and runs that wrap around the table's
 * end, while the table doubles.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SlotIndex } from '../../src/gateway/store/memory/slot-index.ts';
import { NONE } from '../../src/gateway/store/memory/slot-lists.ts';

test('keys are found, added and removed as in a Map, however their hashes collide', () => {
  const op = fc.record({
    add: fc.boolean(),
    key: fc.integer({ min: 0, max: 300 }),
    // Few distinct hashes, near the table's end, so that runs are long and wrap around.
    hash: fc.oneof(fc.integer({ min: 1018, max: 1030 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })),
  });
  fc.assert(
    fc.property(fc.array(op, { minLength: 300, maxLength: 1500 }), (ops) => {
      const index = new SlotIndex<string, unknown>();
      const model = new Map<string, { slot: number; hash: number }>();
      const free: number[] = [];
      let next = 0;
      for (const { add, key, hash } of ops) {
        const k = `/k${key}`;
        const held = model.get(k);
        if (add && held === undefined) {
          const slot = free.pop() ?? next++;
          index.add(k, hash, slot);
          model.set(k, { slot, hash });
        } else if (!add && held !== undefined) {
          index.remove(held.slot);
          free.push(held.slot);
          model.delete(k);
          assert.equal(index.keyOf(held.slot), undefined);
        }
      }
      assert.equal(index.size, model.size);
      for (const [k, { slot, hash }] of model) {
        assert.equal(index.find(k, hash), slot, `${k} found at its slot`);
        assert.equal(index.keyOf(slot), k);
        assert.equal(index.hashOf(slot), hash);
      }
      for (const { key, hash } of ops) if (!model.has(`/k${key}`)) assert.equal(index.find(`/k${key}`, hash), NONE);
    }),
    { numRuns: 150 },
  );
});

test('a key with the hash of another is told apart by the key itself', () => {
  const index = new SlotIndex<string, unknown>();
  index.add('/a', 7, 0);
  index.add('/b', 7, 1);
  assert.equal(index.find('/a', 7), 0);
  assert.equal(index.find('/b', 7), 1);
  assert.equal(index.find('/c', 7), NONE);
  index.setValue(0, 'value of /a');
  assert.equal(index.valueOf(0), 'value of /a');
  assert.equal(index.remove(0), 'value of /a', 'a key removed gives back its value');
  assert.equal(index.valueOf(0), undefined);
  assert.equal(index.find('/a', 7), NONE);
  assert.equal(index.find('/b', 7), 1, 'the key after a removed one moves back into its bucket');
});

test('the table doubles as keys are added, and every key is still found', () => {
  const index = new SlotIndex<string, unknown>();
  const hashOf = (i: number): number => (i * 2654435761) >>> 0;
  for (let i = 0; i < 5000; i++) index.add(`/k${i}`, hashOf(i), i);
  for (let i = 0; i < 5000; i += 2) index.remove(i);
  assert.equal(index.size, 2500);
  for (let i = 0; i < 5000; i++) assert.equal(index.find(`/k${i}`, hashOf(i)), i % 2 === 0 ? NONE : i);
});
