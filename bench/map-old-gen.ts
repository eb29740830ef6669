/**
 * What a V8 `Map` used as a cache's index leaves in the old generation per key it adds, by the
 * kind of key: 213 keys held (a 1 MiB memory of 3 KB entries), each add evicting the oldest, once
 * the map lives in the old generation. A map keyed by small integers (a hash of the key, the key
 * itself kept in the entry's record) makes no string a key, but V8 rebuilds its table the same
 * way, in the old generation, after as many adds as it has free slots (docs/performance.md,
 * "A disk hit's tail").
 *
 *   node --initial-old-space-size=512 --max-semi-space-size=8 --no-allocation-site-pretenuring --import tsx bench/map-old-gen.ts
 */
import { getHeapSpaceStatistics } from 'node:v8';

const HELD = 213;
const ADDS = 200_000;

function oldGeneration(): number {
  return getHeapSpaceStatistics()
    .filter((space) => space.space_name === 'old_space' || space.space_name === 'large_object_space')
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

const kinds = {
  /** A search's key, made for each request as the gateway makes it. */
  'string key': (i: number): string | number => `/v1/books?q=cycle${i}&limit=10`,
  /** A 30-bit hash: V8 keeps it in the table itself, with no object of its own. */
  'small-integer key': (i: number): string | number => Math.imul(i, 0x9e3779b1) & 0x3fffffff,
};

for (const [kind, key] of Object.entries(kinds)) {
  const index = new Map<string | number, number>();
  for (let i = 0; i < HELD; i++) index.set(key(i), i);
  // Young garbage enough for the map and its table to be promoted to the old generation.
  for (let round = 0; round < 3; round++) Array.from({ length: 300_000 }, (_, i) => ({ i }));
  let next = HELD;
  const churn = (adds: number): void => {
    for (let i = 0; i < adds; i++, next++) {
      index.delete(key(next - HELD));
      index.set(key(next), next);
    }
  };
  churn(20_000);
  const before = oldGeneration();
  churn(ADDS);
  process.stdout.write(`${JSON.stringify({ kind, oldGenerationPerAdd: Number(((oldGeneration() - before) / ADDS).toFixed(1)) })}\n`);
}
