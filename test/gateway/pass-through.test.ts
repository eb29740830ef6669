import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startGatewayFixture, useFaultGateway, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get } from '../support/harness.ts';

describe('pass-through routes', () => {
  const t = useFaultGateway({ 'gateway.passThrough': ['/v2/'], 'gateway.upstream.headersTimeoutMs': 300 });

  test('are proxied unchanged and never cached', async () => {
    const target = '/v2/anything?free=form&params=1';
    const first = await t.fx.get(target);
    const second = await t.fx.get(target);
    assert.equal(first.status, 200);
    assert.equal(second.body, first.body);
    assert.equal(second.headers['cache-status'], 'catalog-gateway; fwd=bypass');
    assert.equal(t.origin.count(target), 2);
    assert.equal(t.fx.gateway.cacheStats().entries, 0);
    const line = t.fx.logs.lines().findLast((l) => l.msg === 'request' && l.path === target);
    assert.equal(line?.cache, 'pass');
    assert.equal(line.bytes, Buffer.byteLength(first.body));
  });

  test('are authenticated like every other route', async () => {
    const before = t.origin.count();
    const reply = await get(`${t.fx.gateway.url}/v2/secret`);
    assert.equal(reply.status, 401);
    assert.equal(t.origin.count(), before);
  });

  test('X-Forwarded-For is set by the gateway, hop-by-hop headers are dropped', async () => {
    const target = '/v2/headers';
    // node:http, because undici will not send a Connection header that names other fields.
    const headers = { authorization: `Bearer ${await t.fx.token()}`, 'x-forwarded-for': '6.6.6.6', connection: 'keep-alive, x-hop', 'x-hop': 'secret', 'x-request-id': 'pass-1' };
    const status = await new Promise<number | undefined>((resolve, reject) => {
      httpRequest(`${t.fx.gateway.url}${target}`, { headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => { resolve(res.statusCode); });
      })
        .on('error', reject)
        .end();
    });
    assert.equal(status, 200);
    const seen = t.origin.received.findLast((r) => r.target === target);
    assert.equal(seen?.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-hop'], undefined);
    assert.equal(seen.headers['x-request-id'], 'pass-1');
    assert.match(String(seen.headers.authorization), /^Bearer /, 'the origin authenticates too');
  });

  test('upstream failures become problems, and the gateway keeps serving', async () => {
    t.behaviours.set('/v2/garbage', { kind: 'garbage' });
    t.behaviours.set('/v2/slow', { kind: 'stall-headers' });
    const garbage = await t.fx.get('/v2/garbage');
    assert.equal(garbage.status, 502);
    assert.equal(garbage.headers['content-type'], 'application/problem+json');
    const slow = await t.fx.get('/v2/slow');
    assert.equal(slow.status, 504);
    assert.equal((await t.fx.get('/v2/fine')).status, 200);
  });
});

describe('pass-through to an origin that is down', () => {
  let fx: GatewayFixture;
  before(async () => {
    fx = await startGatewayFixture('http://127.0.0.1:1', { 'gateway.passThrough': ['/v2'] });
  });
  after(() => fx.stop());

  test('connection refused is a 502 problem', async () => {
    const reply = await fx.get('/v2/x');
    assert.equal(reply.status, 502);
    assert.match(reply.body, /refused the connection/);
    assert.equal((await get(`${fx.gateway.adminUrl}/healthz`)).status, 200);
  });
});
