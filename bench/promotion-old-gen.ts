/**
 * What a disk hit promoted into a full memory leaves in V8's old generation, in-process: 1,000
 * entries of 3 KB (or BODY_BYTES) with 21 tags on the real disk tier, asked in a cycle through the tiers (memory,
 * then disk, a disk hit promoted) into a 1 MiB memory, plain LRU and with admission, a turn of the
 * event loop every 64 requests, each request's key a string of its own (canonicalBooksTarget, as
 * the gateway makes it; a key memory holds may outlive two scavenges and be promoted with its
 * entry). Measured after a warm-up pass, in an old generation large enough
 * that no full collection runs and frees what the requests left (run with
 * `--initial-old-space-size=512`, as below). Also measured: the old generation's growth across
 * each `Map.prototype.set` that adds a key, and how many such adds a request makes: lru-cache's
 * key Map is the index of every segment, and what reaches the old generation sets how often full
 * collections run (docs/performance.md, "A disk hit's tail"). And the young generation's bytes a
 * request, read across each turn's 64 requests (a turn in which a scavenge ran is left out),
 * against memory hits on the same entries (a memory that holds them all), which set how often
 * scavenges run.
 *
 *   node --initial-old-space-size=512 --max-semi-space-size=8 --no-allocation-site-pretenuring --import tsx bench/promotion-old-gen.ts [BODY_BYTES]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { PurgeLog } from '../src/gateway/purge/purge-log.ts';
import { cacheKey, ResponseCache } from '../src/gateway/store/memory/response-cache.ts';
import { canonicalBooksTarget, type BooksQuery } from '../src/shared/request-target.ts';
import { Tiers } from '../src/gateway/store/tiers.ts';
import { Codec } from '../src/shared/encoding/codec.ts';
import { openDiskTier } from '../test/support/disk-tier.ts';
import { freshFacts } from '../test/support/entry-facts.ts';

const ENTRIES = 1000;
/** An answer's bytes (the first argument; 3,000 by default): smaller ones leave more of the cycle in the memory. */
const BODY_BYTES = Number(process.argv[2] ?? 3000);
const REQUESTS = 100_000;

function used(...names: string[]): number {
  return getHeapSpaceStatistics()
    .filter((space) => names.includes(space.space_name))
    .reduce((sum, space) => sum + space.space_used_size, 0);
}

function oldGeneration(): number {
  return used('old_space', 'large_object_space');
}

/** While on, each Map.prototype.set that adds a key is counted, with the old generation's growth across it. */
const adds = { on: false, count: 0, bytes: 0 };
const mapSet = Object.getOwnPropertyDescriptor(Map.prototype, 'set')?.value as (
  this: Map<unknown, unknown>,
  key: unknown,
  value: unknown,
) => Map<unknown, unknown>;
Map.prototype.set = function set<K, V>(this: Map<K, V>, key: K, value: V): Map<K, V> {
  if (!adds.on || this.has(key)) return mapSet.call(this, key, value) as Map<K, V>;
  const before = oldGeneration();
  mapSet.call(this, key, value);
  adds.bytes += oldGeneration() - before;
  adds.count++;
  return this;
};

/** `memoryHits`: a memory that holds every entry, so that no request reaches the disk tier. */
async function measure(admission: boolean, memoryHits = false): Promise<Record<string, number | boolean>> {
  const dir = mkdtempSync(join(tmpdir(), 'promotion-old-gen-'));
  const purges = new PurgeLog();
  const maxBytes = memoryHits ? 256 << 20 : 1 << 20;
  const memory = new ResponseCache({ maxBytes, maxEntryBytes: 1 << 20, purges, admission, codec: new Codec({ gzip: 6, br: 5, zstd: 3 }) });
  const { disk } = openDiskTier(dir, { purges, maker: memory.maker });
  try {
    const tiers = new Tiers(memory, disk, purges);
    const facts = freshFacts(3_600_000, Date.now());
    const queries: BooksQuery[] = [];
    for (let i = 0; i < ENTRIES; i++) {
      const query = { q: `cycle${i}`, limit: 10 };
      queries.push(query);
      const key = cacheKey(canonicalBooksTarget(query));
      const body = Buffer.from(`{"q":"cycle${i}","results":"`.padEnd(BODY_BYTES, 'x') + '"}');
      const tags = Array.from({ length: 21 }, (_, j) => `bk_${(i * 7 + j * 13) % 5000}`);
      const stored = memory.maker.prepare(200, { 'content-type': 'application/json' }, body, { keep: 'identity', offered: [] }, facts, undefined, [], tags);
      void disk.put(key, stored, { generation: 0, mark: '' });
      if (memoryHits) memory.put(key, stored, { generation: 0, mark: '' });
    }
    disk.flush();
    let fromDisk = 0;
    /** Young-generation bytes a request, one figure a turn. */
    const young: number[] = [];
    const ask = async (): Promise<void> => {
      let turnStart = used('new_space');
      for (let i = 0; i < REQUESTS; i++) {
        // Each request's key is a string of its own, as the gateway makes it from the target.
        const key = cacheKey(canonicalBooksTarget(queries[i % ENTRIES] as BooksQuery));
        const found = tiers.lookup(key, {});
        if (found.kind !== 'found') throw new Error(`${key} was not found`);
        if (found.fromDisk === true) fromDisk++;
        if (i % 64 === 63) {
          const grown = used('new_space') - turnStart;
          if (grown > 0) young.push(grown / 64);
          await turn();
          turnStart = used('new_space');
        }
      }
    };
    await ask();
    fromDisk = 0;
    young.length = 0;
    const before = oldGeneration();
    await ask();
    const grown = oldGeneration() - before;
    // The third pass's counting allocates in the young generation itself.
    const youngPerRequest = young.splice(0);
    fromDisk = 0;
    Object.assign(adds, { on: true, count: 0, bytes: 0 });
    await ask();
    adds.on = false;
    return {
      admission,
      memoryHits,
      fromDisk: fromDisk / REQUESTS,
      youngGenerationPerRequest: Math.round(youngPerRequest.reduce((sum, bytes) => sum + bytes, 0) / youngPerRequest.length),
      oldGenerationPerRequest: Number((grown / REQUESTS).toFixed(1)),
      mapAddsPerRequest: Number((adds.count / REQUESTS).toFixed(2)),
      oldGenerationInMapAddsPerRequest: Number((adds.bytes / REQUESTS).toFixed(1)),
    };
  } finally {
    disk.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.stdout.write(`${JSON.stringify(await measure(false, true))}\n`);
for (const admission of [false, true]) process.stdout.write(`${JSON.stringify(await measure(admission))}\n`);
