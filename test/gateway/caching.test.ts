import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';

describe('gateway caching against a test origin', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startFaultOrigin();
    fx = await startGatewayFixture(origin.url);
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('a miss is stored, the repeat is a hit', async () => {
    const first = await fx.get('/v1/books?q=smoke');
    assert.equal(first.status, 200, first.body);
    assert.match(String(first.headers['cache-status']), /^catalog-gateway; fwd=miss; stored; fwd-status=200$/);
    const second = await fx.get('/v1/books?q=smoke');
    assert.equal(second.status, 200);
    assert.equal(second.body, first.body);
    assert.match(String(second.headers['cache-status']), /^catalog-gateway; hit; ttl=\d+$/);
    assert.equal(origin.count('/v1/books?q=smoke'), 1);
  });
});
