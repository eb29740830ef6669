import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, useFaultGateway, type GatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, until } from '../support/harness.ts';
import { PROTOCOLS, protocolOverrides } from '../support/protocols.ts';

for (const protocol of PROTOCOLS)
  describe(`gateway cache against a test origin, over ${protocol}`, () => {
    const t = useFaultGateway(protocolOverrides(protocol));

    const coalesced = async (): Promise<number> => metricValue(await t.fx.metrics(), 'catalog_gateway_coalesced_requests_total');
    const waiting = async (): Promise<number> => metricValue(await t.fx.metrics(), 'catalog_gateway_fill_waiting_requests');

    test('200 concurrent identical cold requests reach the origin once and all get the same body', async () => {
      const target = '/v1/books?q=coalesce';
      const before = await coalesced();
      const gate = t.origin.hold();
      const replies = Array.from({ length: 200 }, () => t.fx.get(target));
      try {
        // Every request has joined the fill before the origin answers: coalescing, not caching.
        await until(async () => (await waiting()) === 199);
      } finally {
        gate.release();
      }
      const all = await Promise.all(replies);
      assert.equal((await coalesced()) - before, 199);
      assert.equal(t.origin.count(target), 1);
      assert.ok(all.every((r) => r.status === 200 && r.body === all[0]?.body));
      const statuses = all.map((r) => String(r.headers['cache-status']));
      assert.equal(statuses.filter((s) => s === 'catalog-gateway; fwd=miss; stored; fwd-status=200').length, 1);
      assert.equal(statuses.filter((s) => s === 'catalog-gateway; fwd=miss; stored; collapsed; fwd-status=200').length, 199);
    });

    test('waiters never receive a private or cookie-setting answer meant for the request that caused it', async () => {
      for (const [name, headers] of [
        ['private-collapse', { 'cache-control': 'private, max-age=60' }],
        ['cookie-collapse', { 'set-cookie': 'session=leader-only' }],
      ] as const) {
        const target = `/v1/books?q=${name}`;
        t.behaviours.set(target, { kind: 'json', headers });
        const before = await coalesced();
        const gate = t.origin.hold();
        const replies = Array.from({ length: 5 }, () => t.fx.get(target));
        try {
          await until(async () => (await waiting()) === 4);
        } finally {
          gate.release();
        }
        const all = await Promise.all(replies);
        assert.ok(all.every((r) => r.status === 200));
        assert.equal(t.origin.count(target), 5, `${name}: each waiter asked the origin for its own answer`);
        assert.equal((await coalesced()) - before, 0, `${name}: a waiter sent to ask on its own was not coalesced`);
        assert.ok(all.every((r) => !String(r.headers['cache-status']).includes('collapsed')));
      }
    });

    test('repeats while fresh reach the origin 0 more times; N distinct queries N times', async () => {
      await t.fx.get('/v1/books?q=repeat');
      const before = t.origin.count();
      for (let i = 0; i < 5; i++) assert.equal((await t.fx.get('/v1/books?q=repeat')).status, 200);
      assert.equal(t.origin.count(), before);
      await Promise.all(Array.from({ length: 7 }, (_, i) => t.fx.get(`/v1/books?q=distinct${i}`)));
      assert.equal(t.origin.count(), before + 7);
    });

    test('parameter order does not matter: both spellings share one entry under the canonical key', async () => {
      const first = await t.fx.get('/v1/books?q=order&limit=5');
      const second = await t.fx.get('/v1/books?limit=5&q=order');
      assert.match(String(second.headers['cache-status']), /; hit;/);
      assert.equal(second.body, first.body);
      assert.equal(t.origin.count('/v1/books?q=order&limit=5'), 1);
      assert.equal(t.origin.count('/v1/books?limit=5&q=order'), 0);
      await t.fx.get('/v1/books?q=%20order%20&limit=5');
      assert.equal(t.origin.count('/v1/books?q=order&limit=5'), 1, 'q is trimmed in the canonical key');
    });

    test('refused targets touch neither the cache nor the origin', async () => {
      const before = t.origin.count();
      const entries = t.fx.gateway.cacheStats().entries;
      const cases: [string, number, string][] = [
        ['/v1/books?q=x&bogus=1', 400, 'unknown-parameter'],
        ['/v1/books?q=x&limit=0', 400, 'invalid-parameter'],
        ['/v1/books?q=x&limit=abc', 400, 'invalid-parameter'],
        ['/v1/books', 400, 'invalid-parameter'],
        [`/v1/books?q=${'a'.repeat(3000)}`, 414, 'uri-too-long'],
        ['/v1/nothing', 404, 'not-found'],
      ];
      for (const [target, status, kind] of cases) {
        const reply = await t.fx.get(target);
        assert.equal(reply.status, status, target);
        assert.equal(reply.headers['content-type'], 'application/problem+json');
        assert.equal((JSON.parse(reply.body) as { type: string }).type, `https://catalog.example/problems/${kind}`);
      }
      const post = await t.fx.get('/v1/books?q=x', {}, 'POST');
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
      assert.equal(t.origin.count(), before);
      assert.equal(t.fx.gateway.cacheStats().entries, entries);
    });

    test('responses a shared cache must not store are relayed and fetched again next time', async () => {
      const cases: [string, Record<string, string | string[] | null>, string][] = [
        ['no-store', { 'cache-control': 'no-store' }, 'no-store'],
        ['private', { 'cache-control': 'private, max-age=60' }, 'private'],
        ['cookie', { 'set-cookie': 'session=abc' }, 'set-cookie'],
        ['nofreshness', { 'cache-control': 'public', etag: null }, 'no-freshness'],
        ['nocachecontrol', { 'cache-control': null }, 'authorization'],
        ['notpublic', { 'cache-control': 'max-age=60' }, 'authorization'],
        ['varystar', { vary: '*' }, 'vary'],
        ['varyauth', { vary: 'Authorization' }, 'vary'],
        ['zero', { 'cache-control': 'public, max-age=0', etag: null }, 'already-stale'],
        ['aged', { 'cache-control': 'public, max-age=60', age: '60', etag: null }, 'already-stale'],
      ];
      for (const [name, headers, reason] of cases) {
        const target = `/v1/books?q=${name}`;
        t.behaviours.set(target, { kind: 'json', headers });
        const first = await t.fx.get(target);
        assert.equal(first.status, 200, name);
        assert.equal(first.headers['cache-status'], `catalog-gateway; fwd=miss; fwd-status=200; detail=${reason}`, name);
        await t.fx.get(target);
        assert.equal(t.origin.count(target), 2, `${name} must not be stored`);
      }
      const status = '/v1/books?q=partial';
      t.behaviours.set(status, { kind: 'json', status: 206 });
      await t.fx.get(status);
      await t.fx.get(status);
      assert.equal(t.origin.count(status), 2, 'a part of a representation is never stored (RFC 9111 §3)');
    });

    test('freshness: s-maxage wins over max-age, Age is counted, and Age/ttl follow the clock', async () => {
      const target = '/v1/books?q=aging';
      t.behaviours.set(target, { kind: 'json', headers: { 'cache-control': 'public, max-age=5, s-maxage=100', age: '10' } });
      const miss = await t.fx.get(target);
      assert.equal(miss.headers.age, '10');
      t.fx.clock.advance(30_500);
      const hit = await t.fx.get(target);
      assert.equal(hit.headers['cache-status'], 'catalog-gateway; hit; ttl=60');
      assert.equal(hit.headers.age, '40');
      t.fx.clock.advance(60_000);
      const refetched = await t.fx.get(target);
      assert.equal(refetched.headers['cache-status'], 'catalog-gateway; fwd=stale; stored; fwd-status=304; ttl=90', 'validated: the 304 carries Age 10 again');
      assert.equal(t.origin.count(target), 2);
    });

    test('expiry causes exactly one refetch, even under concurrent requests', async () => {
      const target = '/v1/books?q=expiry';
      await t.fx.get(target);
      t.fx.clock.advance(61_000);
      const gate = t.origin.hold();
      const replies = Array.from({ length: 20 }, () => t.fx.get(target));
      try {
        await until(async () => (await waiting()) === 19);
      } finally {
        gate.release();
      }
      const all = await Promise.all(replies);
      assert.ok(all.every((r) => r.status === 200));
      assert.equal(t.origin.count(target), 2);
      assert.match(String((await t.fx.get(target)).headers['cache-status']), /; hit; ttl=60$/);
    });

    test('the origin ETag is kept; If-None-Match gets 304 on a hit and on a miss', async () => {
      const target = '/v1/books?q=etag';
      const first = await t.fx.get(target);
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[^"]+"$/);
      const hit = await t.fx.get(target, { 'if-none-match': `"other", W/${etag}` });
      assert.equal(hit.status, 304);
      assert.equal(hit.body, '');
      assert.equal(hit.headers.etag, etag);
      assert.equal(hit.headers['cache-control'], 'public, max-age=60');
      assert.match(String(hit.headers['cache-status']), /; hit;/);
      assert.equal(hit.headers['content-type'], undefined);
      assert.equal((await t.fx.get(target, { 'if-none-match': '"other"' })).status, 200);
      const cold = '/v1/books?q=etag2';
      const coldEtag = (await t.fx.get(cold, {}, 'HEAD')).headers.etag;
      t.fx.clock.advance(120_000);
      const conditionalMiss = await t.fx.get(cold, { 'if-none-match': String(coldEtag) });
      assert.equal(conditionalMiss.status, 304);
      assert.equal(t.origin.count(cold), 2);
      assert.equal(t.origin.received.at(-1)?.headers['if-none-match'], coldEtag, 'the stale entry is validated with its own ETag');
      assert.match(String(conditionalMiss.headers['cache-status']), /fwd=stale; stored; fwd-status=304/);
    });

    test('HEAD fills with GET, sends no body, and the GET that follows is a hit', async () => {
      const target = '/v1/books?q=head';
      const head = await t.fx.get(target, {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.body, '');
      assert.equal(t.origin.received.at(-1)?.method, 'GET');
      const get = await t.fx.get(target);
      assert.match(String(get.headers['cache-status']), /; hit;/);
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)));
      assert.equal(t.origin.count(target), 1);
    });

    test('the origin gets the canonical target, the token and the request id, and the token is not the key', async () => {
      const target = '/v1/books?q=forward';
      const other = await t.fx.token('catalog:read other:scope');
      await t.fx.get(target, { 'x-request-id': 'trace-1' });
      const seen = t.origin.received.at(-1);
      assert.equal(seen?.target, target);
      assert.match(String(seen.headers.authorization), /^Bearer /);
      assert.equal(seen.headers['x-request-id'], 'trace-1');
      const second = await t.fx.get(target, { authorization: `Bearer ${other}` });
      assert.match(String(second.headers['cache-status']), /; hit;/);
    });
  });

describe('admission in front of the LRU (the default)', () => {
  // Padding compresses to almost nothing: the bound is about bytes kept, so bodies are kept as they
  // came. The memory tier alone: the disk tier keeps what admission turns away (disk-tier.test.ts).
  const t = useFaultGateway({
    'gateway.cache.maxBytes': 1024 * 1024,
    'gateway.cache.maxEntryBytes': 100_000,
    'gateway.compression.encodings': [],
    'gateway.cache.disk.enabled': false,
  });

  test('a scan of one-off searches is refused once the cache is full, and the popular entry stays', async () => {
    const popular = '/v1/books?q=popular';
    const scan = Array.from({ length: 40 }, (_, i) => `/v1/books?q=scan${i}`);
    for (const target of [popular, ...scan]) t.behaviours.set(target, { kind: 'json', padBytes: 60_000 });
    for (let i = 0; i < 3; i++) assert.equal((await t.fx.get(popular)).status, 200);
    const details: string[] = [];
    for (const target of scan) {
      const reply = await t.fx.get(target);
      assert.equal(reply.status, 200);
      details.push(String(reply.headers['cache-status']));
    }
    assert.match(details.at(-1) ?? '', /fwd=miss; fwd-status=200; detail=refused$/, 'served, not stored');
    assert.match(String((await t.fx.get(popular)).headers['cache-status']), /; hit;/);
    assert.equal(t.origin.count(popular), 1);
    const text = await t.fx.metrics();
    const refused = metricValue(text, 'catalog_gateway_cache_admissions_total', { decision: 'refused' });
    assert.equal(refused, details.filter((d) => d.endsWith('detail=refused')).length);
    assert.ok(refused > 20, `${refused} refused`);
    assert.ok(metricValue(text, 'catalog_gateway_cache_bytes') <= 1024 * 1024);
  });
});

describe('gateway cache bound', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => ({ kind: 'json', padBytes: 60_000 }));
    // Padding compresses to almost nothing: the bound is about bytes kept, so bodies are kept as they came.
    fx = await startGatewayFixture(origin.url, {
      'gateway.cache.maxBytes': 1024 * 1024,
      'gateway.cache.maxEntryBytes': 100_000,
      'gateway.compression.encodings': [],
      'gateway.cache.admission': false,
      'gateway.cache.disk.enabled': false,
    });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('eviction keeps the cache under its byte bound and is counted', async () => {
    for (let i = 0; i < 40; i++) assert.equal((await fx.get(`/v1/books?q=big${i}`)).status, 200);
    const text = await fx.metrics();
    const bytes = metricValue(text, 'catalog_gateway_cache_bytes');
    const entries = metricValue(text, 'catalog_gateway_cache_entries');
    assert.ok(bytes <= 1024 * 1024, `cache bytes ${bytes}`);
    assert.ok(bytes > 60_000 * entries, 'bodies are counted');
    assert.ok(entries < 40 && entries > 0);
    assert.equal(metricValue(text, 'catalog_gateway_cache_evictions_total'), 40 - entries);
    assert.match(String((await fx.get('/v1/books?q=big39')).headers['cache-status']), /; hit;/);
    assert.match(String((await fx.get('/v1/books?q=big0')).headers['cache-status']), /fwd=miss; stored/, 'the oldest entry went first');
  });

  test('an entry larger than the largest entry allowed is served but not stored', async () => {
    origin.behave(() => ({ kind: 'json', padBytes: 150_000 }));
    const reply = await fx.get('/v1/books?q=huge');
    assert.equal(reply.status, 200);
    assert.ok(reply.body.length > 150_000);
    assert.equal(reply.headers['cache-status'], 'catalog-gateway; fwd=miss; fwd-status=200; detail=too-large');
    await fx.get('/v1/books?q=huge');
    assert.equal(origin.count('/v1/books?q=huge'), 2);
  });
});
