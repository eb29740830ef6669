/**
 * What one cache entry really costs in memory, measured: fills a ResponseCache through the real
 * Filler and OriginClient from the tiny bench origin (the memory bench's answers: a ~1 KiB page,
 * four replayed header fields), then compares V8 heap used plus memory outside the heap (Buffer
 * backing stores), after full garbage collections, with what the cache counts.
 *
 *   node --expose-gc bench/entry-cost.ts [entries, default 100000] [--bound MIB] [--limit N] [--identity] [--data DIR] [--json]
 *
 * DIR holds the catalog the query texts come from (default data/bench); `--json` prints the
 * per-entry figures as one JSON object, for test/gateway/entry-cost.test.ts. `--bound` fills a
 * cache bounded to MIB, so that evictions churn it as a full cache churns: the figures are then
 * per entry held at the end (the LRU's tables carry deleted slots and growth slack then).
 * `--limit` asks for pages of N books (3 by default), each tagged with its books' ids, as a
 * search answer at the catalog's default limit of 20 carries 20 tags. `--identity` asks each entry
 * once more for identity after storing it, as a hit of a client that accepts no coding does, so
 * that it keeps an identity body beside its gzip one.
 * The figure in response-cache.ts comes from this script.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { loadConfig } from '../src/config/load.ts';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { compressionPolicy } from '../src/shared/encoding/policy.ts';
import { Fetcher } from '../src/gateway/fill/fetch.ts';
import { PurgeLog } from '../src/gateway/purge/purge-log.ts';
import { NO_DIRECTIVES } from '../src/gateway/rules/reuse.ts';
import { GatewayMetrics } from '../src/gateway/metrics.ts';
import { OriginClient } from '../src/gateway/upstream/origin-client.ts';
import { cacheKey } from '../src/gateway/store/memory/response-cache.ts';
import { memoryTier } from '../src/gateway/gateway.ts';
import { parseRequestTarget } from '../src/shared/request-target.ts';
import { Fleet } from './fleet.ts';
import { QuerySpace } from './query-space.ts';

const GIB = 1024 ** 3;
const ARENA_BYTES = 64 * 1024 * 1024;
/** The catalog route's policy with no stale windows, as the default config has it. */
const NO_STALE = { staleWhileRevalidateMs: 0, staleIfErrorMs: 0, staleIfDisconnectedMs: 0, maxHeuristicMs: 0, targetedFields: [] };

const CONCURRENCY = 50;

interface Memory {
  readonly heapUsed: number;
  readonly external: number;
  readonly malloc: number;
  readonly rss: number;
}

/** Resident bytes of malloc's regions (the brk heap and 64 MiB thread arenas); V8's heap pages are mapped apart. */
function mallocResident(): number {
  let inMalloc = false;
  let total = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const start = parseInt(mapping[1] ?? '0', 16);
      const size = parseInt(mapping[2] ?? '0', 16) - start;
      const name = mapping[3] ?? '';
      inMalloc = name === '[heap]' || (name === '' && start % ARENA_BYTES === 0 && size <= ARENA_BYTES);
    } else if (inMalloc && line.startsWith('Rss:')) {
      total += Number(line.split(/\s+/)[1]) * 1024;
    }
  }
  return total;
}

function settled(): Memory {
  const { gc } = globalThis as { gc?: () => void };
  if (gc === undefined) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, external: m.external, malloc: mallocResident(), rss: m.rss };
}

async function main(entries: number, boundBytes: number, limit: string, identity: boolean, dataDir: string, json: boolean): Promise<void> {
  const fleet = new Fleet(dataDir);
  try {
    const space = new QuerySpace(readCatalogVocabulary(join(fleet.dataDir, 'catalog.db')));
    const origin = await fleet.script('tiny-origin', 'tiny-origin.ts');
    const config = loadConfig({
      env: {},
      overrides: { dataDir: fleet.logDir, 'log.level': 'silent', 'gateway.origin': origin.url, 'gateway.cache.maxBytes': boundBytes },
    });
    const purges = new PurgeLog();
    const cache = memoryTier(config, purges);
    const client = new OriginClient(config);
    const metrics = new GatewayMetrics(
      new Registry(),
      { cache: () => cache, inFlight: () => 0, fillWaiting: () => 0, originUp: () => true, originConnections: () => client.connections },
      { gcDurations: config['gateway.metrics.gcDurations'] },
    );
    const fetcher = new Fetcher(
      client,
      cache.maker,
      metrics,
      Date.now,
      { header: config['gateway.purge.tagHeader'], expose: config['gateway.purge.exposeTagHeader'] },
      { acceptEncoding: config['gateway.upstream.acceptEncoding'], policy: compressionPolicy(config) },
    );
    const fill = async (count: number): Promise<void> => {
      let left = count;
      const worker = async (): Promise<void> => {
        while (left-- > 0) {
          const target = parseRequestTarget('GET', `${space.take()}${limit}`, config['http.maxTargetBytes']);
          if (!target.ok) throw new Error('the query space made a bad target');
          const key = cacheKey(target.canonical);
          const outcome = await fetcher.fetch(
            {
              key,
              origin: { method: 'GET', target: key, headers: { 'x-request-id': 'entry-cost' } },
              requestHeaders: {},
              authorized: false,
              directives: NO_DIRECTIVES,
              policy: NO_STALE,
              relayServerErrors: false,
              compress: true,
            },
            undefined,
          );
          if (outcome.kind !== 'response' || !outcome.stored || cache.put(key, outcome.shared, { generation: purges.generation, mark: '' }) !== undefined)
            throw new Error('an answer was not stored');
          if (identity) cache.represent(key, outcome.shared, 'identity', true);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };
    // Warm the pool, the JIT and the intern tables first, so the difference is entries only.
    await fill(5000);
    const before = settled();
    const bytesBefore = cache.bytes;
    const entriesBefore = cache.entries;
    await fill(entries);
    const after = settled();
    const held = cache.entries - entriesBefore;
    if (json) {
      const perEntry = (a: number, b: number): number => (a - b) / held;
      console.log(
        JSON.stringify({
          entries,
          heapUsed: perEntry(after.heapUsed, before.heapUsed),
          external: perEntry(after.external, before.external),
          malloc: perEntry(after.malloc, before.malloc),
          rss: perEntry(after.rss, before.rss),
          counted: perEntry(cache.bytes, bytesBefore),
        }),
      );
      await client.close();
      return;
    }
    const per = (a: number, b: number): string => ((a - b) / held).toFixed(0).padStart(6);
    console.log(`${entries} entries filled, ${held} more held, measured per entry held after full GCs:`);
    console.log(`  V8 heap used      ${per(after.heapUsed, before.heapUsed)} B`);
    console.log(`  outside the heap  ${per(after.external, before.external)} B (Buffer backing stores)`);
    console.log(`  heap + outside    ${per(after.heapUsed + after.external, before.heapUsed + before.external)} B`);
    console.log(`  malloc resident   ${per(after.malloc, before.malloc)} B (backing stores with V8's records for them, and fragmentation)`);
    console.log(`  process resident  ${per(after.rss, before.rss)} B (V8's pages as committed, malloc, slabs and typed arrays)`);
    console.log(`  counted by cache  ${per(cache.bytes, bytesBefore)} B`);
    await client.close();
  } finally {
    await fleet.close();
  }
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    data: { type: 'string', default: 'data/bench' },
    bound: { type: 'string' },
    limit: { type: 'string' },
    identity: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
await main(
  Number(positionals[0] ?? 100_000),
  values.bound === undefined ? 16 * GIB : Number(values.bound) * 1024 * 1024,
  values.limit === undefined ? '' : `&limit=${Number(values.limit)}`,
  values.identity,
  values.data,
  values.json,
);
