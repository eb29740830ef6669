import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startOrigin, type RunningOrigin } from '../../src/origin/origin.ts';
import { tempDir, testConfig } from '../support/config.ts';
import { startGatewayFixture, useRealOriginGateway, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, until } from '../support/harness.ts';

interface Page {
  readonly results: readonly { readonly id: string }[];
  readonly next: string | null;
}

describe('gateway in front of the real origin', () => {
  const real = useRealOriginGateway();
  let origin: RunningOrigin;
  let fx: GatewayFixture;
  before(() => {
    ({ origin, fx } = real);
  });

  const originCalls = async (): Promise<number> => metricValue((await get(`${origin.adminUrl}/metrics`)).body, 'catalog_origin_http_requests_total');

  test('200 concurrent identical cold requests: one origin request, 200 identical books pages', async () => {
    const before = await originCalls();
    const all = await Promise.all(Array.from({ length: 200 }, () => fx.get('/v1/books?q=winter')));
    assert.equal((await originCalls()) - before, 1);
    assert.ok(all.every((r) => r.status === 200 && r.body === all[0]?.body));
    assert.ok((JSON.parse(all[0]?.body ?? '') as Page).results.length > 0);
  });

  test('repeats while fresh: +0; N distinct queries: +N', async () => {
    await fx.get('/v1/books?q=river');
    const before = await originCalls();
    for (let i = 0; i < 5; i++) await fx.get('/v1/books?q=river');
    assert.equal(await originCalls(), before);
    const words = ['silent', 'golden', 'hidden', 'frozen'];
    await Promise.all(words.map((w) => fx.get(`/v1/books?q=${w}&limit=3`)));
    assert.equal((await originCalls()) - before, words.length);
  });

  test('the origin ETag and caching headers come through; If-None-Match on a hit is 304', async () => {
    const direct = await get(`${origin.url}/v1/branches`, { authorization: `Bearer ${await fx.token()}` });
    const miss = await fx.get('/v1/branches');
    assert.equal(miss.body, direct.body);
    assert.equal(miss.headers.etag, direct.headers.etag);
    assert.equal(miss.headers['cache-control'], direct.headers['cache-control']);
    const hit = await fx.get('/v1/branches', { 'if-none-match': String(miss.headers.etag) });
    assert.equal(hit.status, 304);
    assert.match(String(hit.headers['cache-status']), /; hit;/);
  });

  test('paging through the gateway follows the next links, each page cached under its own key', async () => {
    const seen = new Set<string>();
    let next: string | null = '/v1/books?q=the&limit=50';
    let pages = 0;
    while (next !== null && pages < 10) {
      const reply = await fx.get(next);
      assert.equal(reply.status, 200);
      const page = JSON.parse(reply.body) as Page;
      for (const book of page.results) {
        assert.ok(!seen.has(book.id), `duplicate ${book.id}`);
        seen.add(book.id);
      }
      next = page.next;
      pages++;
    }
    assert.ok(pages > 1);
  });

  test('origin errors are relayed as they are and not stored', async () => {
    const before = await originCalls();
    const first = await fx.get('/v1/books/bk_99999999');
    const second = await fx.get('/v1/books/bk_99999999');
    assert.equal(first.status, 404);
    assert.equal(first.headers['content-type'], 'application/problem+json');
    assert.equal(second.body, first.body);
    assert.match(String(second.headers['cache-status']), /fwd=miss; fwd-status=404; detail=no-store/);
    assert.equal((await originCalls()) - before, 2);
  });

  test('the gateway refuses what the origin refuses, with the same problem', async () => {
    const token = await fx.token();
    for (const target of ['/v1/books?q=x&limit=500', '/v1/books?q=x&color=red', '/v1/nowhere', `/v1/books?q=${'z'.repeat(2100)}`]) {
      const atOrigin = await get(`${origin.url}${target}`, { authorization: `Bearer ${token}` });
      const atGateway = await fx.get(target);
      assert.equal(atGateway.status, atOrigin.status, target);
      assert.equal(atGateway.body, atOrigin.body, target);
    }
  });
});

describe('the real origin with max-age=1 and stale-if-error=60 behind the gateway', () => {
  let origin: RunningOrigin;
  let fx: GatewayFixture;
  before(async () => {
    const dataDir = tempDir();
    origin = await startOrigin(testConfig({ dataDir, 'origin.books': 2000, 'origin.maxAgeSeconds': 1, 'origin.staleIfErrorSeconds': 60 }));
    fx = await startGatewayFixture(origin, { dataDir, 'origin.books': 2000 });
  });
  after(async () => {
    await fx.stop();
    await origin.stop();
  });

  test('expiry costs one 304 at the origin; with the origin gone, the stale copy is served', async () => {
    const target = '/v1/books?q=winter&limit=5';
    const first = await fx.get(target);
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-control'], 'public, max-age=1, stale-if-error=60');
    const notModifiedBefore = metricValue((await get(`${origin.adminUrl}/metrics`)).body, 'catalog_origin_http_requests_total', { status: '304' });
    fx.clock.advance(2000);
    const refreshed = await fx.get(target);
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.body, first.body);
    assert.equal(refreshed.headers['cache-status'], 'catalog-gateway; fwd=stale; stored; fwd-status=304; ttl=1');
    const originMetrics = (await get(`${origin.adminUrl}/metrics`)).body;
    assert.equal(
      metricValue(originMetrics, 'catalog_origin_http_requests_total', { status: '304' }) - notModifiedBefore,
      1,
      'the origin answered the refresh with 304',
    );

    await origin.stop();
    fx.clock.advance(5000);
    const stale = await fx.get(target);
    assert.equal(stale.status, 200);
    assert.equal(stale.body, first.body);
    assert.match(String(stale.headers['cache-status']), /^catalog-gateway; fwd=stale; ttl=-4; detail=stale-if-error$/);
    const cold = await fx.get('/v1/books?q=never-cached');
    assert.equal(cold.status, 502, 'nothing stored: nothing stale to serve');
  });
});

test("/readyz and catalog_gateway_origin_up follow the origin's own readiness check, and say why not", async (t) => {
  const dataDir = tempDir();
  const origin = await startOrigin(testConfig({ dataDir, 'origin.books': 200 }));
  const fx = await startGatewayFixture(origin, { dataDir });
  const misprobed = await startGatewayFixture(origin.url, { dataDir, 'gateway.upstream.probe': `${origin.adminUrl}/nowhere` });
  t.after(async () => {
    await Promise.all([fx.stop(), misprobed.stop()]);
    await origin.stop();
  });
  assert.equal((await get(`${fx.gateway.adminUrl}/readyz`)).status, 200);
  assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_origin_up'), 1);
  const wrong = await get(`${misprobed.gateway.adminUrl}/readyz`);
  assert.equal(wrong.status, 503);
  assert.match((JSON.parse(wrong.body) as { detail: string }).detail, /health check http:\/\/127\.0\.0\.1:\d+\/nowhere answered 404/);
  assert.equal(metricValue(await misprobed.metrics(), 'catalog_gateway_origin_up'), 0);
  const served = await fx.get('/v1/books?q=the');
  assert.equal(served.status, 200, 'a probe is no gate: requests still go to the origin');

  await origin.stop();
  // While the origin drains, its own /readyz answers 503 first; once it has closed, nothing answers.
  await until(async () => /health check .*\/readyz failed: the origin refused the connection/.test((await get(`${fx.gateway.adminUrl}/readyz`)).body));
  assert.equal((await get(`${fx.gateway.adminUrl}/readyz`)).status, 503);
  assert.equal(metricValue(await fx.metrics(), 'catalog_gateway_origin_up'), 0);
});
