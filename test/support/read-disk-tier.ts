/**
 * Reads the entries of a disk tier in DIR in a cycle, as disk hits do, a turn of the event loop
 * every 64 reads, and prints what the reads added to V8's old generation, in bytes a read, with
 * the full collections that ran meanwhile (one would free what they added and hide it: the caller
 * gives the process an old generation large enough that none runs). Warmed first, so that what
 * compiling the code leaves there is not counted.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { constants, PerformanceObserver, type NodeGCPerformanceDetail } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { cacheKey, type CacheKey } from '../../src/gateway/store/memory/response-cache.ts';
import { openDiskTier } from './disk-tier.ts';
import { freshFacts } from './entry-facts.ts';

/** argv: DIR, then how many entries (of how many bytes each) and how many reads: 1,000 of 3,000 B read 50,000 times by default. */
const [dir = '', entries = '1000', bodyBytes = '3000', reads = '50000'] = process.argv.slice(2);
const ENTRIES = Number(entries);
const READS = Number(reads);
const { disk, maker } = openDiskTier(dir);
const facts = freshFacts(3_600_000, Date.now());
const keys: CacheKey[] = [];
for (let i = 0; i < ENTRIES; i++) {
  const key = cacheKey(`/v1/books?q=cycle${i}`);
  keys.push(key);
  const body = Buffer.from(`{"q":"cycle${i}","results":"`.padEnd(Number(bodyBytes), 'x') + '"}');
  void disk.put(key, maker.prepare(200, { 'content-type': 'application/json' }, body, { keep: 'identity', offered: [] }, facts, undefined, [], [`bk_${i}`]), {
    generation: 0,
    mark: '',
  });
}
disk.flush();

async function read(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (disk.get(keys[i % ENTRIES] as CacheKey, {}) === undefined) throw new Error(`${keys[i % ENTRIES] ?? ''} was not read`);
    if (i % 64 === 63) await turn();
  }
}

function oldGeneration(): number {
  return getHeapSpaceStatistics()
    .filter((space) => space.space_name === 'old_space' || space.space_name === 'large_object_space')
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

await read(READS);
let full = 0;
const observer = new PerformanceObserver((list) => {
  // Node's types leave out the detail of a 'gc' entry.
  for (const entry of list.getEntries())
    if ((entry as unknown as { detail: NodeGCPerformanceDetail }).detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
});
observer.observe({ entryTypes: ['gc'] });
const before = oldGeneration();
await read(READS);
const after = oldGeneration();
// The observer hears of a collection a turn or so after it ran.
await turn();
await turn();
observer.disconnect();
disk.close();
process.stdout.write(`${JSON.stringify({ bytesPerRead: (after - before) / READS, fullCollections: full })}\n`);
