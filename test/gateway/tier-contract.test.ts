/**
 * The one contract suite (store/tier.ts), run against every tier: the process's memory, the
 * host's disk (SQLite) and the fleet's Redis (a real redis-server). A purge is applied the way
 * the Purger applies it — recorded in the purge log, then handed to the tier — so each tier is
 * held to what a request would see after it, whichever way the tier keeps the purge.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { Registry } from 'prom-client';
import { FleetMetrics } from '../../src/gateway/fleet/fleet-metrics.ts';
import { RedisLink } from '../../src/gateway/fleet/redis-link.ts';
import { PurgeLog, type Purge, type PurgeSelector } from '../../src/gateway/purge/purge-log.ts';
import { isFresh } from '../../src/gateway/rules/freshness.ts';
import { RedisStore } from '../../src/gateway/store/redis-store.ts';
import { cacheKey, ResponseCache } from '../../src/gateway/store/memory/response-cache.ts';
import { EntryMaker, type StoredResponse } from '../../src/gateway/store/stored-response.ts';
import { parseTags } from '../../src/gateway/store/tag-index.ts';
import type { CacheTier, FillStamp } from '../../src/gateway/store/tier.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
import { openDiskTier } from '../support/disk-tier.ts';
import { tempDir } from '../support/config.ts';
import { startRedis, type RedisServer } from '../support/redis.ts';
import { freshFacts } from '../support/entry-facts.ts';

const NOW = Date.now();
const FACTS = freshFacts(600_000, NOW);
const codec = new Codec({ gzip: 6, br: 5, zstd: 3 });
const silent = pino({ level: 'silent' });

interface Subject {
  readonly tier: CacheTier;
  readonly log: PurgeLog;
  readonly maker: EntryMaker;
  /** Records a purge the way the Purger does for a process with this tier. */
  readonly record: (purge: Purge) => void;
  close(): void | Promise<void>;
}

function memory(): Subject {
  const log = new PurgeLog();
  const cache = new ResponseCache({ maxBytes: 8 << 20, maxEntryBytes: 1 << 20, purges: log, admission: false, codec });
  return { tier: cache, log, maker: cache.maker, record: (purge) => log.applied(purge, false), close: () => undefined };
}

function disk(): Subject {
  const { disk: store, maker, purges: log } = openDiskTier(tempDir('catalog-disk-'));
  return {
    tier: store,
    log,
    maker,
    record: (purge) => log.applied(purge, false),
    close: () => {
      store.close();
    },
  };
}

let redis: RedisServer | undefined;
let redisPrefix = 0;

async function redisTier(): Promise<Subject> {
  if (redis === undefined) throw new Error('redis is not started');
  const log = new PurgeLog();
  const maker = new EntryMaker(codec);
  const link = new RedisLink({ url: redis.url, commandTimeoutMs: 2000, cooldownMs: 1000, logger: silent });
  await link.connect(2000);
  const metrics = new FleetMetrics(
    new Registry(),
    () => true,
    () => false,
  );
  const store = new RedisStore(link, `contract${redisPrefix++}:`, log, metrics, Date.now, maker);
  // A fleet's own purges count against shared entries until it reads them back from the stream.
  return {
    tier: store,
    log,
    maker,
    record: (purge) => log.applied(purge, true),
    close: () => {
      link.close();
    },
  };
}

function respond(maker: EntryMaker, tags: string, body = '{"results":[]}', headers: Record<string, string> = {}): StoredResponse {
  return maker.prepare(
    200,
    { 'content-type': 'application/json', etag: '"v1"', ...headers },
    Buffer.from(body),
    { keep: 'identity', offered: [] },
    FACTS,
    undefined,
    [],
    parseTags(tags),
  );
}

function stampOf(log: PurgeLog): FillStamp {
  return { generation: log.generation, mark: log.mark };
}

/** A tier's write, awaited, and (for the disk tier) committed. */
async function put(s: Subject, key: string, response: StoredResponse, stamp = stampOf(s.log)): Promise<void> {
  await s.tier.put(cacheKey(key), response, stamp);
}

async function purge(s: Subject, selector: PurgeSelector, soft = false, at = NOW + 1000): Promise<void> {
  const p: Purge = { selector, soft, at };
  s.record(p);
  await s.tier.purge(p);
}

const get = async (s: Subject, key: string, request: Record<string, string> = {}): Promise<StoredResponse | undefined> => s.tier.get(cacheKey(key), request);

const TIERS: readonly [string, () => Subject | Promise<Subject>][] = [
  ['memory', memory],
  ['disk', disk],
  ['redis', redisTier],
];

before(async () => {
  redis = await startRedis();
});

after(async () => {
  await redis?.stop();
});

for (const [name, make] of TIERS) {
  describe(`the ${name} tier keeps the store contract`, () => {
    test('a put is found by get with its status, fields, facts, tags and body as they were', async () => {
      const s = await make();
      try {
        const original = respond(s.maker, 'bk_1 avail_any', '{"a":"ü"}', { 'cache-control': 'max-age=600' });
        await put(s, '/v1/books?q=a', original);
        const found = await get(s, '/v1/books?q=a');
        assert.ok(found !== undefined, 'found');
        assert.equal(found.status, 200);
        assert.deepEqual(found.headers, original.headers);
        assert.deepEqual([found.lifetimeMs, found.storedAt, found.etag], [original.lifetimeMs, original.storedAt, '"v1"']);
        assert.deepEqual(found.tags, ['bk_1', 'avail_any']);
        assert.equal(found.body.toString(), '{"a":"ü"}');
        assert.equal(await get(s, '/v1/books?q=other'), undefined, 'another key is not found');
      } finally {
        await s.close();
      }
    });

    test('a compressed body comes back byte for byte', async () => {
      const s = await make();
      try {
        const body = codec.encode(Buffer.from('{"results":"'.padEnd(4000, 'x') + '"}'), 'gzip');
        const gz = s.maker.prepare(
          200,
          { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body,
          { keep: 'gzip', offered: ['gzip', 'identity'] },
          FACTS,
          undefined,
          [],
          [],
        );
        await put(s, '/gz', gz);
        const found = await get(s, '/gz');
        assert.ok(found !== undefined);
        assert.ok(found.body.equals(body));
        assert.equal(found.kept.coding, 'gzip');
      } finally {
        await s.close();
      }
    });

    test('get selects by the secondary key (RFC 9111 §4.1)', async () => {
      const s = await make();
      try {
        const varied = s.maker.prepare(
          200,
          { 'content-type': 'text/plain', vary: 'accept-language' },
          Buffer.from('hello'),
          { keep: 'identity', offered: [] },
          FACTS,
          { vary: ['accept-language'], selecting: ['en'] },
          [],
          [],
        );
        await put(s, '/hello', varied);
        assert.equal((await get(s, '/hello', { 'accept-language': 'en' }))?.body.toString(), 'hello');
        assert.equal(await get(s, '/hello', { 'accept-language': 'fr' }), undefined, 'another language selects nothing');
      } finally {
        await s.close();
      }
    });

    test('a later put replaces the earlier one; delete forgets; size counts what is kept', async () => {
      const s = await make();
      try {
        await put(s, '/a', respond(s.maker, 'bk_1', '{"v":1}'));
        await put(s, '/a', respond(s.maker, 'bk_1', '{"v":2}'));
        await put(s, '/b', respond(s.maker, 'bk_2'));
        assert.equal((await get(s, '/a'))?.body.toString(), '{"v":2}');
        const size = await s.tier.size();
        assert.equal(size.entries, 2);
        assert.ok(size.bytes > 0);
        await s.tier.delete([cacheKey('/a')]);
        assert.equal(await get(s, '/a'), undefined);
        assert.equal((await s.tier.size()).entries, 1);
      } finally {
        await s.close();
      }
    });

    for (const [selector, gone, kept] of [
      [{ kind: 'tags', tags: ['bk_2'] }, ['/a', '/b'], ['/v/c']],
      [{ kind: 'urls', keys: [cacheKey('/b'), cacheKey('/none')] }, ['/b'], ['/a', '/v/c']],
      [{ kind: 'prefix', prefix: '/v/' }, ['/v/c'], ['/a', '/b']],
      [{ kind: 'all' }, ['/a', '/b', '/v/c'], []],
    ] as const) {
      test(`a hard purge by ${selector.kind} leaves nothing it names to be found, and everything else`, async () => {
        const s = await make();
        try {
          await put(s, '/a', respond(s.maker, 'bk_1 bk_2'));
          await put(s, '/b', respond(s.maker, 'bk_2'));
          await put(s, '/v/c', respond(s.maker, 'bk_3'));
          await purge(s, selector);
          for (const key of gone) assert.equal(await get(s, key), undefined, `${key} is purged`);
          for (const key of kept) assert.ok((await get(s, key)) !== undefined, `${key} stays`);
        } finally {
          await s.close();
        }
      });
    }

    test('a soft purge keeps the entry, stale from the purge on', async () => {
      const s = await make();
      try {
        await put(s, '/a', respond(s.maker, 'bk_1'));
        await purge(s, { kind: 'tags', tags: ['bk_1'] }, true, NOW + 1000);
        const found = await get(s, '/a');
        assert.ok(found !== undefined, 'still found');
        assert.equal(isFresh(found, NOW + 1000), false, 'stale from the purge');
        assert.equal(isFresh(found, NOW + 500), true, 'fresh before it');
      } finally {
        await s.close();
      }
    });

    test('a fill a hard purge overtook is never found; one a soft purge overtook is found stale', async () => {
      const s = await make();
      try {
        const began = stampOf(s.log);
        await purge(s, { kind: 'tags', tags: ['bk_9'] });
        await purge(s, { kind: 'tags', tags: ['bk_7'] }, true, NOW + 10);
        await put(s, '/d', respond(s.maker, 'bk_9'), began);
        await put(s, '/e', respond(s.maker, 'bk_8'), began);
        await put(s, '/f', respond(s.maker, 'bk_7'), began);
        assert.equal(await get(s, '/d'), undefined, 'purged while its fill was under way');
        assert.ok((await get(s, '/e')) !== undefined, 'named by no purge');
        const stale = await get(s, '/f');
        assert.ok(stale !== undefined);
        assert.equal(isFresh(stale, NOW + 10), false);
      } finally {
        await s.close();
      }
    });
  });
}
