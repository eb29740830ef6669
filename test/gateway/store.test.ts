/** The store's own rooms without a server: the tag index, the purge log, purging by each selector. */
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { describe, test } from 'node:test';
import { PurgeLog, type PurgeSelector } from '../../src/gateway/purge/purge-log.ts';
import { cacheKey, ResponseCache, type Lookup } from '../../src/gateway/store/memory/response-cache.ts';
import { EntryMaker, type StoredResponse } from '../../src/gateway/store/stored-response.ts';
import { decodeEntry, encodeEntry } from '../../src/gateway/store/record/entry-codec.ts';
import { Codec } from '../../src/shared/encoding/codec.ts';
import { carriesTag, parseTags, TagIndex, tagCount, tagHash } from '../../src/gateway/store/tag-index.ts';
import { isFresh } from '../../src/gateway/rules/freshness.ts';
import { SeededRandom } from '../../src/origin/random.ts';
import { freshFacts } from '../support/entry-facts.ts';

const FACTS = freshFacts(60_000, 1_000_000);

const codec = new Codec({ gzip: 6, br: 5, zstd: 3 });
const maker = new EntryMaker(codec);

function response(tags: string) {
  return maker.prepare(
    200,
    { 'content-type': 'application/json' },
    Buffer.from('{}'),
    { keep: 'identity', offered: [] },
    FACTS,
    undefined,
    [],
    parseTags(tags),
  );
}

test('parseTags splits on spaces and keeps each tag once', () => {
  assert.deepEqual(parseTags('bk_1  bk_2 bk_1'), ['bk_1', 'bk_2']);
  assert.deepEqual(parseTags(undefined), []);
  assert.deepEqual(parseTags(['a b', 'c']), ['a', 'b', 'c']);
});

test('the tag index finds each key under its tags, forgets a key wholly, and reindexes it on set', () => {
  const index = new TagIndex();
  const [a, b] = [cacheKey('/a'), cacheKey('/b')];
  index.set(a, 'x y');
  index.set(b, 'y');
  assert.deepEqual([...index.keys(['y'])].sort(), [a, b]);
  assert.deepEqual([...index.keys(['x', 'z'])], [a]);
  index.set(a, 'z');
  assert.deepEqual([...index.keys(['x'])], [], 'a set replaces what the key was indexed under');
  assert.deepEqual([...index.keys(['z'])], [a]);
  index.remove(b);
  assert.deepEqual([...index.keys(['y'])], []);
  assert.equal(index.postings, 1);
});

test('the tag index reads tags from their text as parseTags splits them, and counts them as it indexes them', () => {
  const index = new TagIndex();
  const key = cacheKey('/a');
  for (const text of ['bk_1 bk_22 avail_any', ' bk_1  bk_22 avail_any ', 'bk_1', '', ' ']) {
    index.set(key, text);
    const tags = parseTags(text);
    assert.equal(tagCount(text), tags.length, JSON.stringify(text));
    assert.equal(index.postings, tags.length, JSON.stringify(text));
    for (const tag of tags) assert.deepEqual([...index.keys([tag])], [key], `${tag} in ${JSON.stringify(text)}`);
  }
  index.set(key, 'bk_1 bk_22 avail_any');
  assert.deepEqual([...index.keys(['bk_2', 'bk_', 'k_1'])], [], 'only whole tags are indexed');
});

test("the tag index indexes a key under tags' hashes as it does under their text, replacing what it held", () => {
  const index = new TagIndex();
  const key = cacheKey('/a');
  index.set(key, 'old');
  const tags = ['bk_1', 'bk_22', 'avail_any'];
  const bytes = Buffer.alloc(3 + 4 * tags.length);
  tags.forEach((tag, i) => bytes.writeUInt32LE(tagHash(tag) >>> 0, 3 + 4 * i));
  index.setHashes(key, bytes, 3, tags.length);
  assert.equal(index.postings, tags.length);
  for (const tag of tags) assert.deepEqual([...index.keys([tag])], [key], tag);
  assert.deepEqual([...index.keys(['old'])], [], 'what the key was indexed under is forgotten');
  index.setHashes(key, bytes, 3, 0);
  assert.equal(index.postings, 0);
});

test('the tag index keeps every posting through growth and reuse of its nodes', () => {
  const index = new TagIndex();
  const tags = (i: number): string => `bk_${i} bk_${i + 1} avail_any`;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 3000; i++) index.set(cacheKey(`/k${i}`), tags(i));
    for (let i = 0; i < 3000; i += 2) index.remove(cacheKey(`/k${i}`));
  }
  assert.equal(index.postings, 1500 * 3);
  assert.equal(index.keys(['avail_any']).size, 1500);
  assert.deepEqual([...index.keys(['bk_10'])].sort(), [cacheKey('/k9')], '/k10 was removed');
  assert.deepEqual([...index.keys(['bk_11'])].sort(), [cacheKey('/k11')]);
});

test('the tag index answers as a plain map of sets would, while removed nodes pile up and rebuilds run between changes', () => {
  const index = new TagIndex();
  const reference = new Map<string, Set<string>>();
  const seeded = new SeededRandom(3);
  const random = (n: number): number => seeded.below(n);
  const expected = (tag: string): string[] =>
    [...reference]
      .filter(([, tags]) => tags.has(tag))
      .map(([key]) => key)
      .sort();
  for (let i = 0; i < 60_000; i++) {
    const key = `/k${random(4000)}`;
    if (random(3) === 0) {
      index.remove(cacheKey(key));
      reference.delete(key);
    } else {
      const tags = new Set(Array.from({ length: 1 + random(30) }, () => `bk_${random(500)}`));
      index.set(cacheKey(key), [...tags].join(' '));
      reference.set(key, tags);
    }
    if (i % 5000 === 4999) {
      const tag = `bk_${random(500)}`;
      assert.deepEqual([...index.keys([tag])].sort(), expected(tag), `after ${i + 1} changes`);
    }
  }
  assert.equal(
    index.postings,
    [...reference.values()].reduce((n, tags) => n + tags.size, 0),
  );
});

test('the tag index finds each key in its table after removals moved others back', () => {
  const index = new TagIndex();
  const seeded = new SeededRandom(7);
  const live = new Set<number>();
  for (let i = 0; i < 50_000; i++) {
    index.set(cacheKey(`/q${i}`), `t${i % 97}`);
    live.add(i);
  }
  for (let i = 0; i < 50_000; i++) {
    if (seeded.below(2) === 1) continue;
    index.remove(cacheKey(`/q${i}`));
    live.delete(i);
  }
  // A key found again has its old postings replaced; one not found would keep them beside the new.
  for (const i of live) index.set(cacheKey(`/q${i}`), `u${i % 89}`);
  assert.equal(index.postings, live.size);
  assert.equal(index.keys(['t5']).size, 0);
  assert.equal(index.keys(['u5']).size, [...live].filter((i) => i % 89 === 5).length);
});

test('carriesTag matches whole tags only', () => {
  assert.equal(carriesTag('bk_1 bk_12 avail_any', 'bk_12'), true);
  assert.equal(carriesTag('bk_12 bk_123', 'bk_1'), false);
  assert.equal(carriesTag('bk_1', 'bk_1'), true);
  assert.equal(carriesTag('', 'bk_1'), false);
});

const purge = (selector: PurgeSelector, soft = false, at = FACTS.storedAt) => ({ selector, soft, at });

describe('the purge log', () => {
  const log = new PurgeLog();
  const start = log.generation;
  log.applied(purge({ kind: 'tags', tags: ['bk_1'] }), false);

  test('a store since an unrelated purge goes ahead; one named by it does not', () => {
    assert.equal(log.sinceGeneration(start, cacheKey('/a'), ['bk_2']).kind, 'intact');
    assert.equal(log.sinceGeneration(start, cacheKey('/a'), ['bk_1', 'bk_2']).kind, 'purged');
    assert.equal(log.sinceGeneration(log.generation, cacheKey('/a'), ['bk_1']).kind, 'intact', 'a fill that began after the purge');
  });

  test('a fill older than everything remembered is taken as purged', () => {
    const busy = new PurgeLog();
    for (let i = 0; i < 5000; i++) busy.applied(purge({ kind: 'urls', keys: [cacheKey(`/x${i}`)] }), false);
    assert.equal(busy.sinceGeneration(0, cacheKey('/unrelated'), []).kind, 'purged');
    assert.equal(busy.sinceGeneration(busy.generation - 1, cacheKey('/unrelated'), []).kind, 'intact');
  });

  test('a soft purge since the fill makes it stale from the purge on, whether it came through the stream or not', () => {
    const soft = new PurgeLog();
    const generation = soft.generation;
    const mark = soft.mark;
    soft.applied(purge({ kind: 'tags', tags: ['bk_1'] }, true, 2000), false);
    soft.streamed('5-0', purge({ kind: 'tags', tags: ['bk_1'] }, true, 3000));
    assert.deepEqual(soft.sinceGeneration(generation, cacheKey('/a'), ['bk_1']), { kind: 'stale-from', at: 2000 });
    assert.deepEqual(soft.sinceMark(mark, cacheKey('/a'), ['bk_1']), { kind: 'stale-from', at: 3000 });
    assert.equal(soft.sinceMark('5-0', cacheKey('/a'), ['bk_1']).kind, 'intact', 'an entry filled after it');
  });

  test("a shared entry is judged by this process's own purges before the stream has them back", () => {
    const own = new PurgeLog();
    const mark = own.mark;
    const gen = own.applied(purge({ kind: 'urls', keys: [cacheKey('/x')] }), true);
    assert.equal(own.sinceMark(mark, cacheKey('/x'), []).kind, 'purged', 'unread: counts against every shared entry');
    own.streamed('7-0', purge({ kind: 'urls', keys: [cacheKey('/x')] }), gen);
    assert.equal(own.sinceMark('7-0', cacheKey('/x'), []).kind, 'intact', 'read back: entries filled after it are intact');
    assert.equal(own.sinceMark(mark, cacheKey('/x'), []).kind, 'purged', 'and those filled before it are not');
  });
});

describe('ResponseCache.purge', () => {
  const fill = (): ResponseCache => {
    const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges: new PurgeLog(), admission: true, codec });
    cache.put(cacheKey('/a'), response('bk_1 bk_2'), { generation: 0, mark: '' });
    cache.put(cacheKey('/b'), response('bk_2'), { generation: 0, mark: '' });
    cache.put(cacheKey('/v/c'), response('bk_3'), { generation: 0, mark: '' });
    return cache;
  };

  test('by tag, url, prefix and all', () => {
    assert.equal(fill().purge({ selector: { kind: 'tags', tags: ['bk_2'] }, soft: false, at: FACTS.storedAt }), 2);
    assert.equal(fill().purge({ selector: { kind: 'urls', keys: [cacheKey('/b'), cacheKey('/none')] }, soft: false, at: FACTS.storedAt }), 1);
    assert.equal(fill().purge({ selector: { kind: 'prefix', prefix: '/v/' }, soft: false, at: FACTS.storedAt }), 1);
    const cache = fill();
    assert.equal(cache.purge({ selector: { kind: 'all' }, soft: false, at: FACTS.storedAt }), 3);
    assert.equal(cache.entries, 0);
    assert.equal(cache.postings, 0, 'the index empties with the cache');
  });

  test('a tag purges only the entries that carry it, not those whose tag shares its hash', () => {
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; pair === undefined; i++) {
      const tag = `bk_${i}`;
      const other = seen.get(tagHash(tag));
      if (other !== undefined) pair = [other, tag];
      seen.set(tagHash(tag), tag);
    }
    const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges: new PurgeLog(), admission: false, codec });
    cache.put(cacheKey('/one'), response(pair[0]), { generation: 0, mark: '' });
    cache.put(cacheKey('/other'), response(pair[1]), { generation: 0, mark: '' });
    assert.equal(cache.purge({ selector: { kind: 'tags', tags: [pair[0]] }, soft: false, at: FACTS.storedAt }), 1);
    assert.equal(cache.lookup(cacheKey('/other'), {}).kind, 'found');
    assert.equal(cache.lookup(cacheKey('/one'), {}).kind, 'uri-miss');
  });

  test('soft keeps the entry, stale from the purge on; its tags stay indexed', () => {
    const cache = fill();
    const now = FACTS.storedAt + 1000;
    assert.equal(cache.purge({ selector: { kind: 'tags', tags: ['bk_3'] }, soft: true, at: now }), 1);
    const found = cache.lookup(cacheKey('/v/c'), {});
    assert.ok(found.kind === 'found', 'still stored');
    assert.equal(isFresh(found.response, now), false);
    assert.equal(cache.purge({ selector: { kind: 'tags', tags: ['bk_3'] }, soft: false, at: now }), 1);
  });

  test('a store a hard purge overtook is refused, and says why; one a soft purge overtook is kept stale', () => {
    const log = new PurgeLog();
    const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges: log, admission: true, codec });
    const generation = log.generation;
    log.applied(purge({ kind: 'tags', tags: ['bk_9'] }), false);
    log.applied(purge({ kind: 'tags', tags: ['bk_7'] }, true, FACTS.storedAt + 10), false);
    assert.equal(cache.put(cacheKey('/d'), response('bk_9'), { generation: generation, mark: '' }), 'purged');
    assert.equal(cache.put(cacheKey('/e'), response('bk_8'), { generation: generation, mark: '' }), undefined);
    assert.equal(cache.put(cacheKey('/f'), response('bk_7'), { generation: generation, mark: '' }), undefined);
    const found = cache.lookup(cacheKey('/f'), {});
    assert.ok(found.kind === 'found');
    assert.equal(isFresh(found.response, FACTS.storedAt + 10), false, 'stale from the soft purge on');
    assert.equal(isFresh(found.response, FACTS.storedAt + 5), true);
  });
});

describe('ResponseCache bodies', () => {
  const page = (i: number): Buffer => Buffer.alloc(300 + ((i * 37) % 1500), i % 251);
  const stored = (cache: ResponseCache, i: number): Buffer | undefined => {
    const found = cache.lookup(cacheKey(`/k${i}`), {});
    return found.kind === 'found' ? found.response.body : undefined;
  };

  test('bodies and tags keep their bytes while evictions, purges and soft purges move them between slabs', () => {
    const cache = new ResponseCache({ maxBytes: 2 << 20, maxEntryBytes: 1 << 16, purges: new PurgeLog(), admission: false, codec });
    let first: ArrayBufferLike | undefined;
    let early: Lookup | undefined;
    for (let i = 0; i < 20_000; i++) {
      if (i === 50) first = stored(cache, 1)?.buffer;
      // Read early, its tags asked for only at the end, after its record was evacuated many times over.
      if (i === 60) early = cache.lookup(cacheKey('/k2'), {});
      // The first 50 are asked for all along, so they stay in old slabs while the rest churn.
      const hot = i % 50;
      const body = stored(cache, hot);
      if (body !== undefined) assert.deepEqual(body, page(hot));
      cache.put(
        cacheKey(`/k${i}`),
        maker.prepare(200, { 'content-type': 'application/json' }, page(i), { keep: 'identity', offered: [] }, FACTS, undefined, [], parseTags(`bk_${i % 97}`)),
        { generation: 0, mark: '' },
      );
      if (i % 1000 === 999) cache.purge({ selector: { kind: 'tags', tags: [`bk_${i % 97}`] }, soft: i % 2000 === 999, at: FACTS.storedAt });
    }
    let checked = 0;
    for (let i = 0; i < 20_000; i++) {
      const body = stored(cache, i);
      if (body === undefined) continue;
      assert.deepEqual(body, page(i));
      checked++;
    }
    assert.ok(checked > 500, `${checked} entries still stored`);
    assert.ok(first !== undefined && stored(cache, 1) !== undefined, 'a hot entry stayed');
    assert.notEqual(stored(cache, 1)?.buffer, first, 'in another slab than the one it was stored in');
    assert.equal(early?.kind === 'found' ? early.response.tagText : undefined, 'bk_2', 'tags read from a record long moved');
  });
});

describe('ResponseCache records', () => {
  test('an entry read back holds every representation made, the origin values, its variants and a coding kept as it came', () => {
    const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges: new PurgeLog(), admission: false, codec });
    const key = cacheKey('/books?q=x');
    const fields = { 'content-type': 'application/json', etag: '"v1"', vary: 'accept-language', 'cache-control': 'public, max-age=60' };
    const variant = (language: string, body: string) =>
      cache.maker.prepare(
        200,
        fields,
        codec.encode(Buffer.from(body), 'gzip'),
        { keep: 'gzip', offered: ['gzip', 'identity'] },
        FACTS,
        { vary: ['accept-language'], selecting: [language] },
        [],
        ['bk_1', 'bk_2'],
      );
    cache.put(key, variant('en', '{"en":1}'), { generation: 0, mark: '' });
    cache.put(key, variant('fr', '{"fr":2}'), { generation: 0, mark: '' });
    const fr = cache.get(key, { 'accept-language': 'fr' });
    assert.ok(fr !== undefined && fr.serial > 0);
    const identity = cache.represent(key, fr, 'identity', true);
    assert.equal(identity.body.toString(), '{"fr":2}');
    const again = cache.get(key, { 'accept-language': 'fr' });
    assert.equal(again?.serial, fr.serial, 'the same stored answer, read again');
    assert.deepEqual(
      again.made.map((m) => [m.coding, m.body.toString(), m.etag]),
      [['identity', '{"fr":2}', identity.etag]],
    );
    assert.deepEqual(again.headers, fr.headers, 'the origin values come back as they were');
    assert.deepEqual(again.tags, ['bk_1', 'bk_2']);
    assert.equal(cache.get(key, { 'accept-language': 'en' })?.made.length, 0, 'the other variant is stored beside it, without the representation');
    const odd = cache.maker.prepare(
      200,
      { 'content-encoding': 'compress', 'content-type': 'text/plain' },
      Buffer.from('x'),
      { keep: undefined, offered: [] },
      FACTS,
      undefined,
      [],
      [],
    );
    cache.put(cacheKey('/odd'), odd, { generation: 0, mark: '' });
    const wide = cache.maker.prepare(
      200,
      { 'content-type': 'text/plain' },
      Buffer.from('x'),
      { keep: 'identity', offered: [] },
      FACTS,
      undefined,
      [],
      ['bk_\u20ac'],
    );
    assert.equal(cache.put(cacheKey('/wide'), wide, { generation: 0, mark: '' }), 'too-large', 'a tag that is not latin1 could not come back as it went in');
    const linked = (length: number): StoredResponse =>
      cache.maker.prepare(200, { link: 'l'.repeat(length) }, Buffer.from('x'), { keep: 'identity', offered: [] }, FACTS, undefined, [], []);
    assert.equal(cache.put(cacheKey('/long'), linked(0x7fff), { generation: 0, mark: '' }), undefined, 'the longest value a record counts');
    assert.equal(cache.get(cacheKey('/long'), {})?.kept.headers[1], 'l'.repeat(0x7fff));
    assert.equal(cache.put(cacheKey('/longer'), linked(0x8000), { generation: 0, mark: '' }), 'too-large', 'a value longer than two characters count');
    const found = cache.get(cacheKey('/odd'), {});
    assert.equal(found?.kept.coding, 'compress');
    assert.equal(found.body.toString(), 'x');
  });

  test('the field shapes a record names are held while it is stored and let go of when it leaves', () => {
    const cache = new ResponseCache({ maxBytes: 1 << 20, maxEntryBytes: 1 << 16, purges: new PurgeLog(), admission: false, codec });
    const fill = (name: string) =>
      cache.maker.prepare(
        200,
        { [`x-${name}`]: 'y', 'content-type': 'text/plain' },
        Buffer.from(name),
        { keep: 'identity', offered: [] },
        FACTS,
        undefined,
        [],
        [],
      );
    cache.put(cacheKey('/a'), fill('a'), { generation: 0, mark: '' });
    cache.put(cacheKey('/b'), fill('b'), { generation: 0, mark: '' });
    cache.put(cacheKey('/a2'), fill('a'), { generation: 0, mark: '' });
    assert.equal(cache.maker.shapes.held, 2, 'two shapes, one held by two records');
    cache.delete([cacheKey('/a')]);
    assert.equal(cache.maker.shapes.held, 2);
    cache.delete([cacheKey('/a2'), cacheKey('/b')]);
    assert.equal(cache.maker.shapes.held, 0);
  });
});

test('representations that differ in per-answer values share one field shape, and each is sent with its own values in order', () => {
  const own = new EntryMaker(codec);
  const fill = (etag: string, body: string, date: string) =>
    own.prepare(
      200,
      { 'content-type': 'application/json', 'cache-control': 'public, max-age=60', etag, date },
      Buffer.from(body),
      { keep: 'identity', offered: [] },
      FACTS,
      undefined,
      [],
      [],
    );
  fill('"warm"', '{}', 'Thu, 26 Nov 2026 01:00:00 GMT');
  const a = fill('"a"', '{"a":1}', 'Thu, 26 Nov 2026 01:00:01 GMT');
  const b = fill('"b"', '{"bb":22}', 'Thu, 26 Nov 2026 01:00:02 GMT');
  assert.equal(a.kept.shape, b.kept.shape, 'the same names and shared values: one shape');
  assert.deepEqual(b.kept.headers, [
    'content-type',
    'application/json',
    'cache-control',
    'public, max-age=60',
    'etag',
    '"b"',
    'date',
    'Thu, 26 Nov 2026 01:00:02 GMT',
    'content-length',
    '9',
  ]);
  assert.deepEqual(b.kept.own, ['"b"', 'Thu, 26 Nov 2026 01:00:02 GMT', '9'], 'only the per-answer values are its own');
  assert.equal(b.kept.etag, '"b"');
  assert.equal(b.field('date'), 'Thu, 26 Nov 2026 01:00:02 GMT');
  const other = fill('"c"', '{}', 'Thu, 26 Nov 2026 01:00:03 GMT');
  assert.equal(other.kept.shape, a.kept.shape);
  const text = own.prepare(
    200,
    { 'content-type': 'text/plain', 'cache-control': 'public, max-age=60', etag: '"d"' },
    Buffer.from('x'),
    { keep: 'identity', offered: [] },
    FACTS,
    undefined,
    [],
    [],
  );
  assert.notEqual(text.kept.shape, a.kept.shape, 'another shared value or another field: another shape');
  // More values of its own than a representation holds as fields: all of them, still in order.
  const many = own.prepare(
    200,
    {
      'content-type': 'application/json',
      etag: '"m"',
      date: 'Thu, 26 Nov 2026 01:00:04 GMT',
      expires: 'Thu, 26 Nov 2026 01:01:04 GMT',
      'last-modified': 'Wed, 25 Nov 2026 01:00:00 GMT',
      link: '</next>; rel="next"',
    },
    Buffer.from('{"m":1}'),
    { keep: 'identity', offered: [] },
    FACTS,
    undefined,
    [],
    [],
  );
  assert.deepEqual(many.kept.own, [
    '"m"',
    'Thu, 26 Nov 2026 01:00:04 GMT',
    'Thu, 26 Nov 2026 01:01:04 GMT',
    'Wed, 25 Nov 2026 01:00:00 GMT',
    '</next>; rel="next"',
    '7',
  ]);
  assert.deepEqual(many.kept.headers, [
    'content-type',
    'application/json',
    'etag',
    '"m"',
    'date',
    'Thu, 26 Nov 2026 01:00:04 GMT',
    'expires',
    'Thu, 26 Nov 2026 01:01:04 GMT',
    'last-modified',
    'Wed, 25 Nov 2026 01:00:00 GMT',
    'link',
    '</next>; rel="next"',
    'content-length',
    '7',
  ]);
});

test("a shape's header text holds its shared fields and leaves a gap for each own value but the length, which Node is handed", () => {
  const own = new EntryMaker(codec);
  const fill = (etag: string, body: string) =>
    own.prepare(
      200,
      { 'content-type': 'application/json', 'cache-control': 'max-age=60', etag, date: 'Thu, 26 Nov 2026 01:00:00 GMT' },
      Buffer.from(body),
      { keep: 'identity', offered: [] },
      FACTS,
      undefined,
      [],
      [],
    );
  fill('"warm"', '{}');
  const { kept } = fill('"a"', '{"a":1}');
  const text = kept.shape.text;
  assert.ok(text !== undefined);
  assert.deepEqual(text.pieces, ['content-type: application/json\r\ncache-control: max-age=60\r\netag: ', '\r\ndate: ', '\r\n']);
  assert.deepEqual(
    text.slots.map((slot) => kept.ownValue(slot)),
    ['"a"', 'Thu, 26 Nov 2026 01:00:00 GMT'],
  );
  assert.equal(text.dated, true);
  const noContent = own.prepare(204, { 'cache-control': 'max-age=60' }, Buffer.alloc(0), { keep: 'identity', offered: [] }, FACTS, undefined, [], []);
  assert.equal(noContent.kept.shape.text, undefined, 'no length, no text: sent through writeHead');
});

test("the shared tier's codec gives back what it was given, and refuses an entry whose fields could not be sent", () => {
  const stored = maker.prepare(
    200,
    { 'content-type': 'application/json', 'x-note': 'fine' },
    Buffer.from('{"a":1}'),
    { keep: 'identity', offered: [] },
    FACTS,
    undefined,
    [],
    parseTags('bk_1'),
  );
  const bytes = encodeEntry(stored, 'mark-1');
  const back = decodeEntry(bytes, maker);
  assert.deepEqual([back?.response.headers, back?.response.body.toString(), back?.mark], [stored.headers, '{"a":1}', 'mark-1']);
  for (const [from, to] of [
    ['fine', 'fi\re'],
    ['x-note', 'x note'],
  ] as const) {
    // A value made by a writer that checksums what it writes: the fields alone must refuse it.
    const tampered = Buffer.from(bytes.toString('latin1').replace(from, to), 'latin1');
    tampered.writeUInt32BE(crc32(tampered.subarray(8)), 4);
    assert.equal(decodeEntry(tampered, maker), undefined, `${JSON.stringify(to)}: treated as absent`);
  }
  const long = Buffer.from(bytes);
  // The first shape's length: after the preamble (8 B), the mark with its length (2 + 6) and the shape count (1).
  assert.equal(long.toString('latin1', 21, 34), 'content-type\n', 'the shape begins after its length');
  long.writeUInt32LE(1 << 20, 17);
  long.writeUInt32BE(crc32(long.subarray(8)), 4);
  assert.equal(decodeEntry(long, maker), undefined, 'a length that runs past the value');
  const headless = Buffer.from(bytes);
  // The variant's text ends where the body (7 B) begins, and is preceded by its length and its head's.
  let textAt = bytes.length - 7 - 8;
  while (textAt > 0 && textAt + 8 + bytes.readUInt32LE(textAt) !== bytes.length - 7) textAt--;
  assert.equal(headless.toString('latin1', bytes.length - 7 - 5, bytes.length - 7), 'bk_1\n', 'the tags end the text');
  headless.writeUInt32LE(bytes.readUInt32LE(textAt) + 1, textAt + 4);
  headless.writeUInt32BE(crc32(headless.subarray(8)), 4);
  assert.equal(decodeEntry(headless, maker), undefined, 'a head longer than the text it begins');
  const torn = Buffer.from(bytes);
  torn[torn.length - 1] = (torn[torn.length - 1] ?? 0) ^ 1;
  assert.equal(decodeEntry(torn, maker), undefined, 'one flipped bit in the body fails the checksum');
  assert.equal(decodeEntry(bytes.subarray(0, bytes.length - 1), maker), undefined, 'a torn value fails it too');
});

test("the disk tier's values may hold the codings made since the fill, each one's fields checked as the kept one's are", () => {
  const date = 'Sun, 29 Nov 2026 08:00:00 GMT';
  const stored = maker.prepare(
    200,
    { 'content-type': 'application/json', date },
    codec.encode(Buffer.from('{"a":1}'), 'gzip'),
    { keep: 'gzip', offered: ['gzip', 'identity'] },
    FACTS,
    undefined,
    [],
    [],
  );
  const both = stored.with(maker.derive(stored, 'identity'));
  assert.equal(decodeEntry(encodeEntry(both, ''), maker)?.response.representation('identity'), undefined, 'the kept one alone by default');
  const bytes = encodeEntry(both, '', true);
  assert.equal(decodeEntry(bytes, maker)?.response.representation('identity')?.body.toString(), '{"a":1}');
  // Each representation has the date as its own value: the identity one's is the second.
  const text = bytes.toString('latin1');
  const at = text.lastIndexOf(date);
  assert.ok(at > text.indexOf(date), 'both carry it');
  const tampered = Buffer.from(`${text.slice(0, at)}\r${text.slice(at + 1)}`, 'latin1');
  tampered.writeUInt32BE(crc32(tampered.subarray(8)), 4);
  assert.equal(decodeEntry(tampered, maker), undefined, 'a made representation whose own value could not be sent');
});
