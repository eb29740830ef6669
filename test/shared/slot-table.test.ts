/**
 * The slots a connection keeps its open streams in (src/shared/slot-table.ts): what Node's
 * session and the connection guard read of a Map, with a deleted entry's slot emptied and reused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SlotTable } from '../../src/shared/slot-table.ts';

function entries<K, V>(table: SlotTable<K, V>): [K, V][] {
  const seen: [K, V][] = [];
  table.forEach((value, key) => seen.push([key, value]));
  return seen;
}

test('set, get, delete and size read as a Map would', () => {
  const table = new SlotTable<number, string>();
  assert.equal(table.set(1, 'a'), table);
  table.set(3, 'b').set(5, 'c');
  assert.equal(table.size, 3);
  assert.equal(table.get(3), 'b');
  assert.equal(table.get(7), undefined);
  assert.equal(table.get(5), 'c');
  table.set(3, 'B');
  assert.equal(table.size, 3);
  assert.equal(table.get(3), 'B');
  assert.equal(table.delete(3), true);
  assert.equal(table.delete(3), false);
  assert.equal(table.get(3), undefined);
  assert.equal(table.size, 2);
  assert.deepEqual(entries(table), [
    [1, 'a'],
    [5, 'c'],
  ]);
});

test("a deleted entry's slot is taken by the next one added", () => {
  const table = new SlotTable<number, string>();
  table.set(1, 'a').set(3, 'b').set(5, 'c');
  table.delete(1);
  table.set(7, 'd');
  assert.deepEqual(entries(table), [
    [7, 'd'],
    [3, 'b'],
    [5, 'c'],
  ]);
});

test('forEach skips entries deleted during the walk, as Node does when it destroys every stream of a session', () => {
  const table = new SlotTable<number, number>();
  for (let id = 1; id <= 9; id += 2) table.set(id, id * 10);
  const visited: number[] = [];
  table.forEach((_value, key) => {
    visited.push(key);
    table.delete(key);
    if (key === 1) table.delete(5);
  });
  assert.deepEqual(visited, [1, 3, 7, 9]);
  assert.equal(table.size, 0);
});

test('values may be undefined, which is no empty slot', () => {
  const table = new SlotTable<object, undefined>();
  const key = {};
  table.set(key, undefined);
  assert.equal(table.size, 1);
  assert.deepEqual(entries(table), [[key, undefined]]);
});

test('add keeps a key as its own value, for a table read as a Set', () => {
  const table = new SlotTable<string, string>();
  table.add('a').add('b');
  table.delete('a');
  const seen: string[] = [];
  table.forEach((value) => seen.push(value));
  assert.deepEqual(seen, ['b']);
  assert.equal(table.size, 1);
});
