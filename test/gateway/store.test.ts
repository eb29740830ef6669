/** The store's own rooms without a server: the tag index, the purge log, purging by each selector. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PurgeLog } from '../../src/gateway/store/purge-log.ts';
import { cacheKey, ResponseCache } from '../../src/gateway/store/response-cache.ts';
import { NO_SECONDARY_KEY, prepareResponse } from '../../src/gateway/store/stored-response.ts';
import { parseTags, TagIndex } from '../../src/gateway/store/tag-index.ts';
import { isFresh } from '../../src/gateway/rules/freshness.ts';

const FACTS = { lifetimeMs: 60_000, initialAgeMs: 0, storedAt: 1_000_000, staleWhileRevalidateMs: 0, staleIfErrorMs: 0, mustRevalidate: false, noCache: false };

function response(tags: string) {
  return prepareResponse(200, { 'content-type': 'application/json' }, Buffer.from('{}'), FACTS, NO_SECONDARY_KEY, [], parseTags(tags));
}

test('parseTags splits on spaces and keeps each tag once', () => {
  assert.deepEqual(parseTags('bk_1  bk_2 bk_1'), ['bk_1', 'bk_2']);
  assert.deepEqual(parseTags(undefined), []);
  assert.deepEqual(parseTags(['a b', 'c']), ['a', 'b', 'c']);
});

test('the tag index forgets a key only under the tags it no longer carries', () => {
  const index = new TagIndex();
  const k = cacheKey('/k');
  index.add(k, ['a', 'b']);
  index.remove(k, ['a', 'b'], new Set(['b']));
  assert.deepEqual([...index.keys(['a'])], []);
  assert.deepEqual([...index.keys(['b'])], [k]);
  assert.equal(index.tags, 1);
});

describe('the purge log', () => {
  const log = new PurgeLog();
  const start = log.generation;
  log.record({ kind: 'tags', tags: ['bk_1'] });

  test('a store since an unrelated purge goes ahead; one named by it does not', () => {
    assert.equal(log.purgedSince(start, cacheKey('/a'), ['bk_2']), false);
    assert.equal(log.purgedSince(start, cacheKey('/a'), ['bk_1', 'bk_2']), true);
    assert.equal(log.purgedSince(log.generation, cacheKey('/a'), ['bk_1']), false, 'a fill that began after the purge');
  });

  test('a fill older than everything remembered is taken as purged', () => {
    const busy = new PurgeLog();
    for (let i = 0; i < 5000; i++) busy.record({ kind: 'urls', keys: [cacheKey(`/x${i}`)] });
    assert.equal(busy.purgedSince(0, cacheKey('/unrelated'), []), true);
    assert.equal(busy.purgedSince(busy.generation - 1, cacheKey('/unrelated'), []), false);
  });
});

describe('ResponseCache.purge', () => {
  const fill = (): ResponseCache => {
    const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, onEvict: () => undefined });
    cache.store(cacheKey('/a'), response('bk_1 bk_2'), cache.generation);
    cache.store(cacheKey('/b'), response('bk_2'), cache.generation);
    cache.store(cacheKey('/v/c'), response('bk_3'), cache.generation);
    return cache;
  };

  test('by tag, url, prefix and all', () => {
    assert.equal(fill().purge({ kind: 'tags', tags: ['bk_2'] }, false, FACTS.storedAt), 2);
    assert.equal(fill().purge({ kind: 'urls', keys: [cacheKey('/b'), cacheKey('/none')] }, false, FACTS.storedAt), 1);
    assert.equal(fill().purge({ kind: 'prefix', prefix: '/v/' }, false, FACTS.storedAt), 1);
    const cache = fill();
    assert.equal(cache.purge({ kind: 'all' }, false, FACTS.storedAt), 3);
    assert.equal(cache.entries, 0);
    assert.equal(cache.tags, 0, 'the index empties with the cache');
  });

  test('soft keeps the entry, stale from the purge on; its tags stay indexed', () => {
    const cache = fill();
    const now = FACTS.storedAt + 1000;
    assert.equal(cache.purge({ kind: 'tags', tags: ['bk_3'] }, true, now), 1);
    const found = cache.lookup(cacheKey('/v/c'), {});
    assert.ok(found.kind === 'found', 'still stored');
    assert.equal(isFresh(found.response, now), false);
    assert.equal(cache.purge({ kind: 'tags', tags: ['bk_3'] }, false, now), 1);
  });

  test('a store a purge overtook is refused, and says why', () => {
    const cache = fill();
    const generation = cache.generation;
    cache.purge({ kind: 'tags', tags: ['bk_9'] }, false, FACTS.storedAt);
    assert.equal(cache.store(cacheKey('/d'), response('bk_9'), generation), 'purged');
    assert.equal(cache.store(cacheKey('/e'), response('bk_8'), generation), undefined);
  });
});
