import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import type { Behaviour } from '../support/fault-origin.ts';
import { startGatewayFixture, useFaultGateway, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, until } from '../support/harness.ts';

interface ProblemBody {
  readonly type: string;
  readonly status: number;
  readonly detail: string;
  readonly instance: string;
}

describe('gateway when the origin fails', () => {
  const t = useFaultGateway({
    'gateway.upstream.headersTimeoutMs': 300,
    'gateway.upstream.bodyTimeoutMs': 300,
    'gateway.upstream.maxResponseBytes': 4096,
  });

  const faults: [string, Behaviour, number, string, RegExp][] = [
    ['answers 500', { kind: 'json', status: 500 }, 502, 'bad-gateway', /the origin answered 500/],
    ['answers 503', { kind: 'json', status: 503, headers: { 'cache-control': 'public, max-age=60' } }, 502, 'bad-gateway', /the origin answered 503/],
    ['never sends headers', { kind: 'stall-headers' }, 504, 'gateway-timeout', /response headers in time/],
    ['stalls mid-body', { kind: 'stall-body' }, 504, 'gateway-timeout', /stalled while sending/],
    ['resets mid-body', { kind: 'reset-mid-body' }, 502, 'bad-gateway', /connection failed|closed the connection|does not match/],
    ['answers garbage', { kind: 'garbage' }, 502, 'bad-gateway', /not HTTP/],
    ['sends an oversize body', { kind: 'json', padBytes: 10_000 }, 502, 'bad-gateway', /larger than the gateway accepts/],
  ];

  for (const [name, behaviour, status, kind, detail] of faults) {
    test(`origin ${name}: ${status} problem, nothing cached, then recovery`, async () => {
      const target = `/v1/books?q=${encodeURIComponent(name)}`;
      t.behaviours.set(target, behaviour);
      const failed = await t.fx.get(target);
      assert.equal(failed.status, status);
      assert.equal(failed.headers['content-type'], 'application/problem+json');
      assert.equal(failed.headers['cache-control'], 'no-store');
      const body = JSON.parse(failed.body) as ProblemBody;
      assert.equal(body.type, `https://catalog.example/problems/${kind}`);
      assert.equal(body.status, status);
      assert.match(body.detail, detail);
      assert.equal(body.instance, target);
      assert.match(String(failed.headers['cache-status']), /^catalog-gateway; fwd=miss; .*detail=/);
      assert.equal((await get(`${t.fx.gateway.adminUrl}/healthz`)).status, 200);
      t.behaviours.delete(target);
      const recovered = await t.fx.get(target);
      assert.equal(recovered.status, 200);
      assert.match(String(recovered.headers['cache-status']), /fwd=miss; stored/);
      assert.equal(t.origin.count(target), 2, 'the failure was not cached');
    });
  }

  test('every waiter of a failed fill gets the same problem, and nothing is stored', async () => {
    const target = '/v1/books?q=failing-together';
    t.behaviours.set(target, { kind: 'json', status: 500 });
    const gate = t.origin.hold();
    const replies = Array.from({ length: 10 }, () => t.fx.get(target));
    try {
      await until(async () => metricValue(await t.fx.metrics(), 'catalog_gateway_fill_waiting_requests') === 9);
    } finally {
      gate.release();
    }
    const all = await Promise.all(replies);
    assert.ok(all.every((r) => r.status === 502));
    assert.equal(t.origin.count(target), 1);
    t.behaviours.delete(target);
    assert.equal((await t.fx.get(target)).status, 200);
    assert.equal(t.origin.count(target), 2);
  });

  test('clients that disconnect while waiting do not cancel the fill for the others', async () => {
    const target = '/v1/books?q=walkaway';
    const gate = t.origin.hold();
    const leaver = new AbortController();
    const waiterLeaver = new AbortController();
    const headers = { authorization: `Bearer ${await t.fx.token()}` };
    const leader = request(`${t.fx.gateway.url}${target}`, { headers, signal: leaver.signal });
    await t.origin.receivedAtLeast(t.origin.count() + 1);
    const leavingWaiter = request(`${t.fx.gateway.url}${target}`, { headers, signal: waiterLeaver.signal });
    const stayingWaiter = t.fx.get(target);
    try {
      await until(async () => metricValue(await t.fx.metrics(), 'catalog_gateway_fill_waiting_requests') === 2);
      leaver.abort();
      waiterLeaver.abort();
      await assert.rejects(leader);
      await assert.rejects(leavingWaiter);
    } finally {
      gate.release();
    }
    const stayed = await stayingWaiter;
    assert.equal(stayed.status, 200);
    assert.match(String(stayed.headers['cache-status']), /collapsed/);
    assert.match(String((await t.fx.get(target)).headers['cache-status']), /; hit;/, 'the abandoned fill was still stored');
    assert.equal(t.origin.count(target), 1);
  });

  test('origin down, then up again: 502s and not ready while down, nothing cached; serves and is ready once it is back', async () => {
    const target = '/v1/books?q=down-then-up';
    const readyz = async (): Promise<number> => (await get(`${t.fx.gateway.adminUrl}/readyz`)).status;
    t.origin.down();
    try {
      const reply = await t.fx.get(target);
      assert.equal(reply.status, 502);
      assert.equal((JSON.parse(reply.body) as ProblemBody).type, 'https://catalog.example/problems/bad-gateway');
      assert.equal((await t.fx.get(target)).status, 502, 'the failure was not cached');
      assert.equal((await get(`${t.fx.gateway.adminUrl}/healthz`)).status, 200);
      await until(async () => (await readyz()) === 503);
      assert.equal(metricValue(await t.fx.metrics(), 'catalog_gateway_origin_up'), 0);
    } finally {
      t.origin.up();
    }
    const back = await t.fx.get(target);
    assert.equal(back.status, 200);
    assert.match(String(back.headers['cache-status']), /fwd=miss; stored/);
    assert.equal(t.origin.count(target), 1);
    await until(async () => (await readyz()) === 200);
    assert.equal(metricValue(await t.fx.metrics(), 'catalog_gateway_origin_up'), 1);
  });

  test('failed fills are counted as origin errors', async () => {
    const text = await t.fx.metrics();
    assert.ok(metricValue(text, 'catalog_gateway_origin_requests_total', { status: 'error' }) >= 5);
    assert.ok(metricValue(text, 'catalog_gateway_origin_requests_total', { status: '500' }) >= 1);
    assert.ok(metricValue(text, 'catalog_gateway_http_requests_total', { status: '504', route: '/v1/books' }) >= 2);
  });
});

describe('gateway when the origin is down', () => {
  let fx: GatewayFixture;
  before(async () => {
    fx = await startGatewayFixture('http://127.0.0.1:1');
  });
  after(() => fx.stop());

  test('connection refused: 502 problem, healthy but not ready', async () => {
    const reply = await fx.get('/v1/books?q=down');
    assert.equal(reply.status, 502);
    const body = JSON.parse(reply.body) as ProblemBody;
    assert.equal(body.type, 'https://catalog.example/problems/bad-gateway');
    assert.match(body.detail, /refused the connection/);
    assert.equal(fx.gateway.cacheStats().entries, 0);
    assert.equal((await get(`${fx.gateway.adminUrl}/healthz`)).status, 200);
    const ready = await get(`${fx.gateway.adminUrl}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(ready.body, /health check http:\/\/127.0.0.1:1\/__health failed: the origin refused the connection/);
    assert.equal((await fx.get('/v1/books?q=down')).status, 502, 'tried again, not cached');
  });
});
