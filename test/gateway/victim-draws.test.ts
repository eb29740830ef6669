/**
 * The entries drawn on probation beside its oldest as victims (victim-draws.ts): only slots on
 * probation and not offered yet, a few each time, the same on every run, and the least dense of
 * the last judgement offered first the next time while they are still on probation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VictimDraws } from '../../src/gateway/store/victim-draws.ts';

/** Slots 0–99, the even ones on probation. */
const USED = 100;
const even = (slot: number): boolean => slot % 2 === 0;

test('draws a few slots on probation, none of those offered already', () => {
  const draws = new VictimDraws();
  for (let judgement = 0; judgement < 50; judgement++) {
    const into = [0, 2, 4];
    draws.draw(USED, even, into);
    const drawn = into.slice(3);
    assert.ok(drawn.length > 0 && drawn.length <= 4, `${drawn.length} drawn`);
    assert.ok(
      drawn.every((slot) => even(slot) && slot < USED && slot > 4),
      `${drawn.join(', ')} drawn`,
    );
    assert.equal(new Set(into).size, into.length, 'no slot twice');
  }
});

test('draws nothing where nothing is on probation, and nothing from no slots', () => {
  const draws = new VictimDraws();
  const into: number[] = [];
  draws.draw(USED, () => false, into);
  draws.draw(0, even, into);
  assert.deepEqual(into, []);
});

test('draws the same slots on every run: replays are repeatable', () => {
  const a = new VictimDraws();
  const b = new VictimDraws();
  for (let judgement = 0; judgement < 10; judgement++) {
    const intoA: number[] = [];
    const intoB: number[] = [];
    a.draw(USED, even, intoA);
    b.draw(USED, even, intoB);
    assert.deepEqual(intoA, intoB);
  }
});

test('offers first the four least dense kept from the last judgement, while they are on probation', () => {
  const draws = new VictimDraws();
  draws.keep([10, 3, 12, 14, 16, 18]);
  const into: number[] = [];
  draws.draw(USED, even, into);
  assert.deepEqual(into.slice(0, 3), [10, 12, 14], 'the first four kept, less 3, which left probation');
  assert.ok(!into.includes(16) || into.indexOf(16) >= 3, 'the fifth was not kept');
});
