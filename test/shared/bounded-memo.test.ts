import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedMemo } from '../../src/shared/bounded-memo.ts';

/** A string equal to `text` but a new object, as a request's field value is. */
function fresh(text: string): string {
  return Buffer.from(text, 'latin1').toString('latin1');
}

test('a memo answers what was kept for a key, by equal strings that are new objects, the last one found included', () => {
  const memo = new BoundedMemo<string, number>(8);
  memo.keep('/a', 1);
  memo.keep('/b', 2);
  assert.equal(memo.get(fresh('/a')), 1);
  assert.equal(memo.get(fresh('/a')), 1, 'again, as the last key found');
  assert.equal(memo.get(fresh('/b')), 2);
  assert.equal(memo.get(fresh('/c')), undefined);
  assert.equal(memo.get(fresh('/b')), 2, 'a key not found leaves the last one found');
  memo.keep('/b', 3);
  assert.equal(memo.get(fresh('/b')), 3, 'kept again, the last key found answers the new value');
});

test('a memo at its bound forgets everything at once, the last key found too', () => {
  const memo = new BoundedMemo<string, number>(2);
  memo.keep('/a', 1);
  memo.keep('/b', 2);
  assert.equal(memo.get(fresh('/a')), 1);
  memo.keep('/c', 3);
  assert.equal(memo.size, 1);
  assert.equal(memo.get(fresh('/a')), undefined);
  assert.equal(memo.get(fresh('/b')), undefined);
  assert.equal(memo.get(fresh('/c')), 3);
});
