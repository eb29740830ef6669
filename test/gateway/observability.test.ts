import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, parsePrometheus } from '../support/harness.ts';

describe('gateway access log and metrics', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  let token = '';
  const target = '/v1/books?q=log%20line&limit=5';
  before(async () => {
    origin = await startFaultOrigin();
    fx = await startGatewayFixture(origin.url);
    token = await fx.token();
    // What this suite does, and then checks in the log and the metrics:
    await fx.get(target, { 'x-request-id': 'req-42.a:b' }); // miss
    await fx.get(target); // hit
    await fx.get(target, {}, 'HEAD'); // hit
    await get(`${fx.gateway.url}${target}`, { authorization: `Bearer ${token}x` }); // 401, a token that must not be logged
    await fx.get('/v1/books?q=x&nope=1', { 'x-request-id': 'bad id with spaces' }); // 400
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  const requests = (): Record<string, unknown>[] => fx.logs.lines().filter((l) => l.msg === 'request');

  test('one line per request, with the query string, the cache result and the subject', () => {
    // The first five lines are the suite's set-up requests, whatever order the tests run in.
    const [miss, hit, head, unauthorized, invalid] = requests();
    assert.equal(miss?.path, target);
    assert.equal(miss.method, 'GET');
    assert.equal(miss.status, 200);
    assert.equal(miss.cache, 'miss');
    assert.equal(miss.reqId, 'req-42.a:b');
    assert.equal(miss.sub, 'tester');
    assert.equal(typeof miss.originMs, 'number');
    assert.equal(typeof miss.durationMs, 'number');
    assert.equal(typeof miss.time, 'string');
    assert.ok(Number(miss.bytes) > 0);
    assert.equal(hit?.path, target);
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.originMs, undefined);
    assert.equal(hit.bytes, miss.bytes);
    assert.equal(head?.method, 'HEAD');
    assert.equal(head.bytes, 0);
    assert.equal(unauthorized?.status, 401);
    assert.equal(unauthorized.sub, undefined);
    assert.equal(unauthorized.cache, 'none');
    assert.equal(invalid?.status, 400);
    assert.match(String(invalid.reqId), /^[0-9a-f-]{36}$/, 'a malformed request id is replaced');
  });

  test('the request id is propagated to the client', async () => {
    // Another route, so the counts the metrics test checks for /v1/books stay as set up.
    assert.equal((await fx.get('/v1/branches', { 'x-request-id': 'trace-7' })).headers['x-request-id'], 'trace-7');
    assert.match(String((await fx.get('/v1/branches', { 'x-request-id': 'a b' })).headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('no log line contains a token or its signature', () => {
    const text = fx.logs.text();
    const signature = token.split('.')[2] ?? '';
    assert.ok(signature.length > 20);
    assert.ok(!text.includes(token));
    assert.ok(!text.includes(signature));
    assert.ok(!/Bearer/i.test(text));
  });

  test('/metrics is Prometheus text and its counters agree with the requests made', async () => {
    const res = await get(`${fx.gateway.adminUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const text = res.body;
    const samples = parsePrometheus(text);
    assert.ok(samples.length > 20);
    const books = { route: '/v1/books' };
    const requests = (labels: Record<string, string>): number => metricValue(text, 'catalog_gateway_http_requests_total', { ...books, ...labels });
    // The set-up requests: 1 miss, 1 GET hit, 1 HEAD hit, a 401 and a 400.
    assert.equal(requests({ method: 'GET', status: '200', cache: 'miss' }), 1);
    assert.equal(requests({ method: 'GET', status: '200', cache: 'hit' }), 1);
    assert.equal(requests({ method: 'HEAD', status: '200', cache: 'hit' }), 1);
    assert.equal(requests({ status: '401', cache: 'none' }), 1);
    assert.equal(requests({ status: '400', cache: 'none' }), 1);
    assert.equal(metricValue(text, 'catalog_gateway_request_duration_seconds_count', { ...books, cache: 'hit' }), 2);
    const branchMisses = metricValue(text, 'catalog_gateway_http_requests_total', { route: '/v1/branches', cache: 'miss' });
    assert.equal(metricValue(text, 'catalog_gateway_origin_requests_total', { status: '200' }), 1 + branchMisses);
    assert.equal(metricValue(text, 'catalog_gateway_origin_request_duration_seconds_count'), 1 + branchMisses);
    assert.equal(metricValue(text, 'catalog_gateway_coalesced_requests_total'), 0);
    assert.equal(metricValue(text, 'catalog_gateway_cache_entries'), 1 + branchMisses);
    assert.equal(metricValue(text, 'catalog_gateway_cache_bytes'), fx.gateway.cacheStats().bytes);
    assert.ok(fx.gateway.cacheStats().bytes > Buffer.byteLength('/v1/books?q=log%20line&limit=5'));
    assert.equal(metricValue(text, 'catalog_gateway_cache_evictions_total'), 0);
    assert.ok(
      samples.some((s) => s.name === 'process_cpu_user_seconds_total'),
      'process defaults',
    );
    for (const s of samples.filter((x) => x.name.startsWith('catalog_gateway_'))) {
      assert.ok(!Object.values(s.labels).some((v) => v.includes('?')), `no URL or query in labels: ${JSON.stringify(s.labels)}`);
    }
  });

  test('/healthz and /readyz answer on the admin listener', async () => {
    assert.equal((await get(`${fx.gateway.adminUrl}/healthz`)).status, 200);
    assert.equal((await get(`${fx.gateway.adminUrl}/readyz`)).status, 200);
  });

  test('/metrics, /healthz and /readyz take GET and HEAD only: another method gets a 405 problem naming them', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      assert.equal((await get(`${fx.gateway.adminUrl}${path}`, {}, 'HEAD')).status, 200, path);
      for (const method of ['POST', 'DELETE', 'PUT', 'OPTIONS']) {
        const reply = await get(`${fx.gateway.adminUrl}${path}`, {}, method);
        assert.equal(reply.status, 405, `${method} ${path}`);
        assert.equal(reply.headers.allow, 'GET, HEAD');
        assert.equal((JSON.parse(reply.body) as { type: string }).type, 'https://catalog.example/problems/method-not-allowed');
      }
    }
  });
});
