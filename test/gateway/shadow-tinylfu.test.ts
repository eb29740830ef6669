/**
 * The window tuner's W-TinyLFU miniature (shadow-tinylfu.ts): new keys enter its window, the
 * window's oldest enter the main space only when counted more often than what they would push
 * out together, a hit on probation promotes, the byte bound holds, and after a shift what was
 * protected goes first.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ShadowTinyLfu } from '../../src/gateway/store/admission/shadow-tinylfu.ts';
import { SeededRandom } from '../../src/origin/random.ts';

/** 10,000 B: a window of 100 B (one key of 100), a main space of 9,900 (99 keys), 7,920 of it protected. */
const BOUND = 10_000;
const ENTRY = 100;

function miniature(counts: Map<number, number>): ShadowTinyLfu {
  return new ShadowTinyLfu(BOUND, 1000, (h) => counts.get(h) ?? 0);
}

describe('the W-TinyLFU miniature', () => {
  test('while the main space has room every key the window pushes out enters it; then only one counted more often than its victims', () => {
    const counts = new Map<number, number>();
    const mini = miniature(counts);
    for (let h = 1; h <= 100; h++) mini.set(h, ENTRY);
    assert.equal(mini.size, 100);
    assert.equal(mini.calculatedSize, BOUND);
    // Key 101 pushes 100 out of the window: counted 0 against a victim's 0, refused.
    mini.set(101, ENTRY);
    assert.equal(mini.get(100), false, 'a tie is refused');
    assert.equal(mini.get(1), true);
    counts.set(101, 3);
    mini.set(102, ENTRY);
    assert.equal(mini.get(101), true, 'counted more often than its victim, admitted');
    assert.equal(mini.calculatedSize, BOUND);
  });

  test('a candidate weighs the victims it pushes out together: a key of twice the size must beat the sum of two', () => {
    const counts = new Map<number, number>();
    const mini = miniature(counts);
    for (let h = 1; h <= 100; h++) {
      mini.set(h, ENTRY);
      counts.set(h, 2);
    }
    counts.set(500, 3);
    mini.set(500, 2 * ENTRY);
    mini.set(501, ENTRY);
    assert.equal(mini.get(500), false, '3 against 2 + 2');
    counts.set(502, 5);
    mini.set(502, 2 * ENTRY);
    mini.set(503, ENTRY);
    assert.equal(mini.get(502), true, '5 against 2 + 2');
    assert.ok(mini.calculatedSize <= BOUND);
  });

  test('a hit on probation protects a key: the protected outlast keys on probation', () => {
    const counts = new Map<number, number>();
    const mini = miniature(counts);
    for (let h = 1; h <= 100; h++) mini.set(h, ENTRY);
    assert.equal(mini.get(1), true);
    // Newer keys, each counted above its victim, push out the oldest on probation, not key 1.
    for (let h = 200; h < 260; h++) {
      counts.set(h, 1);
      mini.set(h, ENTRY);
    }
    assert.equal(mini.get(1), true);
    assert.equal(mini.get(2), false);
  });

  test('after forget() the protected go first: a shift makes what was hot before the first victims', () => {
    const counts = new Map<number, number>();
    const mini = miniature(counts);
    for (let h = 1; h <= 100; h++) mini.set(h, ENTRY);
    for (let h = 1; h <= 50; h++) mini.get(h);
    mini.forget();
    for (let h = 200; h < 250; h++) {
      counts.set(h, 1);
      mini.set(h, ENTRY);
    }
    assert.equal(mini.get(1), false, 'the protected keys went first');
    assert.equal(mini.get(99), true, 'the ones on probation stay');
  });

  test('on random operations the byte and key bounds hold', () => {
    const random = new SeededRandom(5);
    const counts = new Map<number, number>();
    const mini = new ShadowTinyLfu(BOUND, 150, (h) => counts.get(h) ?? 0);
    for (let i = 0; i < 50_000; i++) {
      const h = random.below(400) + 1;
      counts.set(h, random.below(6));
      const op = random.next();
      if (op < 0.5) mini.get(h);
      else if (op < 0.9) mini.set(h, 20 + random.below(400));
      else if (op < 0.97) mini.learn(h);
      else if (op < 0.99) mini.delete(h);
      else mini.forget();
      assert.ok(mini.calculatedSize <= BOUND, `${mini.calculatedSize} B held`);
      assert.ok(mini.size <= 150);
    }
  });
});
