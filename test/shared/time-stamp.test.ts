import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TimeStamp } from '../../src/shared/logger.ts';

const iso = (ms: number): string => `,"time":"${new Date(ms).toISOString()}"`;

test('a time stamp reads as toISOString does, through seconds, days and years, in order or not', () => {
  const stamp = new TimeStamp();
  const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
  // Every millisecond across a year's last seconds, where the date, the year and the second turn.
  for (let ms = start; ms < start + 2_100; ms++) assert.equal(stamp.field(ms), iso(ms));
  // Back in time, the same millisecond twice, before 1970, and a fraction (Node's wall clock is whole, a Date's is not).
  for (const ms of [start, start, Date.UTC(1999, 0, 1), -1, -1_001, 0, 999, 1_000, 1_764_453_269_007.6, -1_000.5, start + 86_400_000])
    assert.equal(stamp.field(ms), iso(ms));
});
