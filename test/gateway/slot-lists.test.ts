/**
 * The typed-array LRU lists under windowed-lru.ts's segments (slot-lists.ts): order, moves between
 * lists, each list's count and bytes, and slots released and reused as the arrays grow.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { NONE, SlotLists } from '../../src/gateway/store/memory/slot-lists.ts';

function fromOldest(lists: SlotLists, list: number): number[] {
  const slots: number[] = [];
  for (let slot = lists.oldest(list); slot !== NONE; slot = lists.newer(slot)) slots.push(slot);
  return slots;
}

function fromNewest(lists: SlotLists, list: number): number[] {
  const slots: number[] = [];
  for (let slot = lists.newest(list); slot !== NONE; slot = lists.older(slot)) slots.push(slot);
  return slots;
}

test('slots pushed go to the newest end; a move takes a slot to the newest end of its list or another', () => {
  const lists = new SlotLists(2);
  const [a, b, c] = [lists.take(), lists.take(), lists.take()] as [number, number, number];
  lists.push(0, a, 10);
  lists.push(0, b, 20);
  lists.push(0, c, 30);
  assert.deepEqual(fromOldest(lists, 0), [a, b, c]);
  lists.move(a, 0);
  assert.deepEqual(fromOldest(lists, 0), [b, c, a]);
  lists.move(c, 1, 35);
  assert.deepEqual(fromOldest(lists, 0), [b, a]);
  assert.deepEqual(fromOldest(lists, 1), [c]);
  assert.equal(lists.listOf(c), 1);
  assert.equal(lists.sizeOf(c), 35);
  assert.deepEqual([lists.count(0), lists.bytes(0), lists.count(1), lists.bytes(1)], [2, 30, 1, 35]);
  lists.remove(b);
  assert.equal(lists.listOf(b), NONE);
  assert.equal(lists.sizeOf(b), 20, 'a slot taken out keeps its size');
  assert.deepEqual(fromOldest(lists, 0), [a]);
  assert.deepEqual([lists.count(0), lists.bytes(0)], [1, 10]);
});

test('any sequence of takes, pushes, moves and releases keeps every list as an array model says, past the first growth', () => {
  const op = fc.record({
    kind: fc.constantFrom('take', 'move', 'remove', 'release'),
    pick: fc.nat(),
    list: fc.integer({ min: 0, max: 2 }),
    size: fc.integer({ min: 1, max: 5000 }),
  });
  fc.assert(
    fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
      const lists = new SlotLists(3);
      const model: number[][] = [[], [], []];
      const sizes = new Map<number, number>();
      const taken = new Set<number>();
      for (const { kind, pick, list, size } of ops) {
        const slots = [...taken];
        const slot = slots[pick % Math.max(1, slots.length)];
        if (kind === 'take' || slot === undefined) {
          const fresh = lists.take();
          assert.ok(!taken.has(fresh), `slot ${fresh} handed out twice`);
          taken.add(fresh);
          lists.push(list, fresh, size);
          model[list]?.push(fresh);
          sizes.set(fresh, size);
          continue;
        }
        for (const order of model) {
          const at = order.indexOf(slot);
          if (at >= 0) order.splice(at, 1);
        }
        if (kind === 'move') {
          lists.move(slot, list, size);
          model[list]?.push(slot);
          sizes.set(slot, size);
        } else if (kind === 'remove') lists.remove(slot);
        else {
          lists.release(slot);
          taken.delete(slot);
        }
      }
      for (const [list, order] of model.entries()) {
        assert.deepEqual(fromOldest(lists, list), order);
        assert.deepEqual(fromNewest(lists, list), [...order].reverse());
        assert.equal(lists.count(list), order.length);
        assert.equal(
          lists.bytes(list),
          order.reduce((sum, slot) => sum + (sizes.get(slot) ?? 0), 0),
        );
      }
    }),
    { numRuns: 200 },
  );
});
