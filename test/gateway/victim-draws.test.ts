/**
 * The entries drawn on probation beside its oldest as victims (victim-draws.ts): only slots on
 * probation and not offered yet, a few each time, the same on every run, and the least dense of
 * the last judgement offered first the next time while they are still on probation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VictimDraws, VictimSample } from '../../src/gateway/store/admission/victim-draws.ts';

/** Slots 0–99, the even ones on probation. */
const USED = 100;
const even = (slot: number): boolean => slot % 2 === 0;
/** Every slot alike: a sample then keeps the order slots were added in. */
const alike = (): number => 0;

function sampleOf(slots: readonly number[], densityOf: (slot: number) => number = alike): VictimSample {
  const sample = new VictimSample(32);
  for (const slot of slots) sample.add(slot, densityOf(slot));
  return sample;
}

function slotsOf(sample: VictimSample): number[] {
  return Array.from({ length: sample.length }, (_, i) => sample.slot(i));
}

test('draws a few slots on probation, none of those offered already', () => {
  const draws = new VictimDraws();
  for (let judgement = 0; judgement < 50; judgement++) {
    const sample = sampleOf([0, 2, 4]);
    draws.draw(USED, even, alike, sample);
    const into = slotsOf(sample);
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
  const sample = sampleOf([]);
  draws.draw(USED, () => false, alike, sample);
  draws.draw(0, even, alike, sample);
  assert.equal(sample.length, 0);
});

test('draws the same slots on every run: replays are repeatable', () => {
  const a = new VictimDraws();
  const b = new VictimDraws();
  for (let judgement = 0; judgement < 10; judgement++) {
    const intoA = sampleOf([]);
    const intoB = sampleOf([]);
    a.draw(USED, even, alike, intoA);
    b.draw(USED, even, alike, intoB);
    assert.deepEqual(slotsOf(intoA), slotsOf(intoB));
  }
});

test('offers first the four least dense kept from the last judgement, while they are on probation', () => {
  const draws = new VictimDraws();
  draws.keep(sampleOf([10, 3, 12, 14, 16, 18]));
  const into = slotsOf(
    (() => {
      const sample = sampleOf([]);
      draws.draw(USED, even, alike, sample);
      return sample;
    })(),
  );
  assert.deepEqual(into.slice(0, 3), [10, 12, 14], 'the first four kept, less 3, which left probation');
  assert.ok(!into.includes(16) || into.indexOf(16) >= 3, 'the fifth was not kept');
});

test('a sample keeps its slots by density, the least first, and slots alike in the order they came', () => {
  const densities = new Map([
    [7, 0.5],
    [3, 0.1],
    [9, 0.5],
    [4, 0.1],
    [1, 0.9],
  ]);
  const sample = sampleOf([7, 3, 9, 4, 1], (slot) => densities.get(slot) ?? 0);
  assert.deepEqual(slotsOf(sample), [3, 4, 7, 9, 1]);
  assert.ok(sample.includes(9) && !sample.includes(2));
  const copy = new VictimSample(8);
  copy.copy(sample);
  copy.add(2, 0.5);
  assert.deepEqual(slotsOf(copy), [3, 4, 7, 9, 2, 1], 'added after the slots as dense as it');
  const full = new VictimSample(2);
  for (const slot of [5, 6, 8]) full.add(slot, 0);
  assert.deepEqual(slotsOf(full), [5, 6], 'nothing added beyond its capacity');
});
