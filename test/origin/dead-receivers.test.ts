/**
 * Receivers that are gone (issue 28): one that hangs or refuses holds back nobody else's events,
 * and one whose deliveries all failed for the disable time is disabled, its queue dropped.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { PER_RECEIVER } from '../../src/origin/circulation-db.ts';
import { metricValue, send, until } from '../support/harness.ts';
import { freeHoldings, json, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const DISABLE_AFTER_S = 60;

describe('dead receivers stop costing', () => {
  let f: OriginFixture;
  let live: WebhookReceiver;
  let admin: Record<string, string>;
  let writer: Record<string, string>;
  const holdings = freeHoldings(1, 24, 'DESC');

  before(async () => {
    f = await startOriginFixture({ 'origin.events.disableAfterSeconds': DISABLE_AFTER_S, 'origin.events.attemptTimeoutMs': 3000 });
    live = await startWebhookReceiver();
    admin = { authorization: `Bearer ${await f.token({ scope: 'catalog:admin' })}` };
    writer = { authorization: `Bearer ${await f.token({ scope: 'catalog:write' })}` };
  });
  after(async () => {
    await f.stop();
    await live.close();
  });

  const register = async (url: string): Promise<{ id: string }> => json<{ id: string }>(await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url }));
  const lend = async (i: number): Promise<void> => {
    assert.equal((await send(`${f.origin.url}/v1/loans`, 'POST', writer, holdings[i])).status, 201);
  };

  test('a receiver that never answers holds at most a few deliveries, and the live one gets every event at once', async () => {
    const hanging: Socket[] = [];
    const server = createServer((socket) => {
      hanging.push(socket);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const hung = await register(`http://127.0.0.1:${(server.address() as AddressInfo).port}/events`);
    const good = await register(live.url);
    try {
      const start = performance.now();
      for (let i = 0; i < 12; i++) await lend(i);
      await until(() => Promise.resolve(live.received.length >= 12));
      const ms = performance.now() - start;
      assert.ok(ms < 2000, `the live receiver had all 12 events after ${ms.toFixed(0)} ms`);
      assert.ok(hanging.length <= PER_RECEIVER, `${hanging.length} deliveries hang at once`);
    } finally {
      for (const s of hanging) s.destroy();
      server.close();
      await send(`${f.origin.url}/v1/webhooks/${hung.id}`, 'DELETE', admin);
      await send(`${f.origin.url}/v1/webhooks/${good.id}`, 'DELETE', admin);
    }
  });

  test('a receiver whose deliveries all failed for the disable time is disabled, its queue dropped, and enabled again by registering it', async () => {
    const gone = await startWebhookReceiver();
    const goneUrl = gone.url;
    await gone.close();
    const dead = await register(goneUrl);
    await register(live.url);
    const before = live.received.length;
    for (let i = 12; i < 18; i++) await lend(i);
    await until(async () => metricValue(await f.metrics(), 'catalog_origin_event_deliveries_total', { outcome: 'failed' }) >= 6);
    const failing = json<{ state: string; failingSince?: string }>(await send(`${f.origin.url}/v1/webhooks/${dead.id}`, 'GET', admin));
    assert.equal(failing.state, 'enabled');
    assert.ok(failing.failingSince !== undefined);
    f.clock.advance((DISABLE_AFTER_S + 1) * 1000);
    await until(async () => metricValue(await f.metrics(), 'catalog_origin_webhooks_disabled_total') === 1);
    const metrics = await f.metrics();
    assert.equal(metricValue(metrics, 'catalog_origin_events_dropped_total') >= 1, true);
    const disabled = json<{ state: string; disabledAt?: string }>(await send(`${f.origin.url}/v1/webhooks/${dead.id}`, 'GET', admin));
    assert.equal(disabled.state, 'disabled');
    assert.ok(disabled.disabledAt !== undefined);
    assert.ok(
      f.logs
        .lines()
        .some((l) => l.msg === 'webhook disabled: every delivery failed for the disable time; its queued events are dropped' && l.webhook === dead.id),
    );
    // New events go to the live receiver only: nothing is queued for the disabled one.
    for (let i = 18; i < 20; i++) await lend(i);
    await until(async () => live.received.length >= before + 8 && metricValue(await f.metrics(), 'catalog_origin_outbox_depth') === 0);
    const again = await send(`${f.origin.url}/v1/webhooks`, 'POST', admin, { url: goneUrl });
    assert.equal(again.status, 200);
    assert.equal(json<{ id: string; state: string }>(again).id, dead.id);
    assert.equal(json<{ state: string }>(again).state, 'enabled');
  });
});
