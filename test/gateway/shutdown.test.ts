import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from 'undici';
import { startFaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, until } from '../support/harness.ts';
import { PROTOCOLS, protocolOverrides } from '../support/protocols.ts';

for (const protocol of PROTOCOLS)
  test(`graceful shutdown under load over ${protocol}: every in-flight request completes, new ones are refused, /readyz is 503`, async (t) => {
    const origin = await startFaultOrigin();
    t.after(() => origin.close());
    const fx = await startGatewayFixture(origin.url, { ...protocolOverrides(protocol), 'http.shutdownTimeoutMs': 30_000 });
    t.after(() => fx.stop());

    const gate = origin.hold();
    const targets = Array.from({ length: 24 }, (_, i) => `/v1/books?q=inflight${i % 12}`);
    const inFlight = targets.map((target) => fx.get(target));
    // 12 distinct fills reach the origin and the other 12 requests wait on them: all 24 are in flight.
    try {
      await origin.receivedAtLeast(12);
      await until(async () => metricValue(await fx.metrics(), 'catalog_gateway_fill_waiting_requests') === 12);
    } catch (err) {
      gate.release();
      throw err;
    }

    const stopped = fx.stop();
    try {
      const ready = await get(`${fx.gateway.adminUrl}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(ready.body, /shutting down/);
      const fresh = new Client(fx.gateway.url);
      t.after(() => fresh.destroy());
      await assert.rejects(fresh.request({ method: 'GET', path: '/v1/books?q=late' }), { code: 'ECONNREFUSED' });
    } finally {
      gate.release();
    }

    const replies = await Promise.all(inFlight);
    assert.deepEqual(
      replies.map((r) => r.status),
      targets.map(() => 200),
    );
    assert.ok(replies.every((r, i) => r.body.includes(`inflight${i % 12}`)));
    await stopped;
    // One fill per distinct target (the metrics scrapes add readiness probes of their own).
    assert.equal(
      [...new Set(targets)].reduce((n, target) => n + origin.count(target), 0),
      12,
    );
  });
