/**
 * Event registrations that fit a fleet (issue 28): replicas that go for good remove their own,
 * and replicas behind one public receiver URL share one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { secretPath } from '../../src/shared/signing-key.ts';
import { tempDir } from '../support/config.ts';
import { startGatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, send, until } from '../support/harness.ts';
import { freeHoldings, json, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

const DISABLE_AFTER_S = 60;

describe('registrations of a fleet', () => {
  let origin: OriginFixture;
  let admin: Record<string, string>;

  before(async () => {
    origin = await startOriginFixture({ 'origin.events.disableAfterSeconds': DISABLE_AFTER_S });
    admin = { authorization: `Bearer ${await origin.token({ scope: 'catalog:admin' })}` };
  });
  after(() => origin.stop());

  const registrations = async (): Promise<{ id: string; url: string; state: string }[]> =>
    json<{ results: { id: string; url: string; state: string }[] }>(await send(`${origin.origin.url}/v1/webhooks`, 'GET', admin)).results;

  test('20 replicas started and stopped one after another, half of them vanishing without removing their registration: after the disable time only the live ones are registered, and nothing is queued for the dead', async () => {
    const writer = { authorization: `Bearer ${await origin.token({ scope: 'catalog:write' })}` };
    const holdings = freeHoldings(1, 20, 'DESC');
    const known = new Set((await registrations()).map((r) => r.id));
    const live = [];
    for (let i = 0; i < 20; i++) {
      // A scale-down removes its registration; a replica that vanishes (killed, its host gone) leaves its own behind.
      // Each on a host of its own: a data directory that no other replica takes its registration from.
      const fx = await startGatewayFixture(origin.origin, {
        dataDir: tempDir(),
        'auth.secretFile': secretPath(origin.config),
        'gateway.events.register': true,
        'gateway.events.unregisterOnStop': i % 2 === 0,
      });
      assert.equal((await send(`${origin.origin.url}/v1/loans`, 'POST', writer, holdings[i])).status, 201);
      if (i >= 17) live.push(fx);
      else await fx.stop();
    }
    const mine = async (): Promise<{ url: string; state: string }[]> => (await registrations()).filter((r) => !known.has(r.id));
    assert.equal((await mine()).length, 3 + 8, 'the live ones and the 8 that vanished: those that went for good left nothing');
    origin.clock.advance((DISABLE_AFTER_S + 1) * 1000);
    await until(
      async () =>
        metricValue(await origin.metrics(), 'catalog_origin_webhooks_disabled_total') === 8 &&
        metricValue(await origin.metrics(), 'catalog_origin_outbox_depth') === 0,
    );
    const enabled = (await mine()).filter((r) => r.state === 'enabled').map((r) => r.url);
    assert.deepEqual(enabled.sort(), live.map((fx) => `${fx.gateway.adminUrl}/events`).sort());
    for (const fx of live) await fx.stop();
  });

  test('replicas behind one receiver URL share one registration, which stays when one of them goes', async () => {
    const shared = 'http://gateways.invalid/events';
    const replicas = [];
    for (let i = 0; i < 3; i++) {
      replicas.push(
        await startGatewayFixture(origin.origin, {
          dataDir: origin.config.dataDir,
          'gateway.events.register': true,
          'gateway.events.receiverUrl': shared,
          'gateway.events.unregisterOnStop': true,
        }),
      );
    }
    const mine = (await registrations()).filter((r) => r.url === shared);
    assert.equal(mine.length, 1);
    for (const fx of replicas) await fx.stop();
    assert.equal((await registrations()).filter((r) => r.url === shared).length, 1, 'a shared registration is left to the disable time');
  });
});
