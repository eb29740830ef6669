/**
 * Event registrations that fit a fleet (issue 28): replicas that go for good remove their own,
 * and replicas behind one public receiver URL share one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGatewayFixture } from '../support/gateway-fixture.ts';
import { send } from '../support/harness.ts';
import { json, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

describe('registrations of a fleet', () => {
  let origin: OriginFixture;
  let admin: Record<string, string>;

  before(async () => {
    origin = await startOriginFixture();
    admin = { authorization: `Bearer ${await origin.token({ scope: 'catalog:admin' })}` };
  });
  after(() => origin.stop());

  const registrations = async (): Promise<{ id: string; url: string }[]> => json<{ results: { id: string; url: string }[] }>(await send(`${origin.origin.url}/v1/webhooks`, 'GET', admin)).results;

  test('replicas started and stopped one after another, each going for good, leave no registration behind', async () => {
    const before = (await registrations()).length;
    for (let i = 0; i < 8; i++) {
      const fx = await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir, 'gateway.events.register': true, 'gateway.events.unregisterOnStop': true });
      assert.equal((await registrations()).length, before + 1, 'registered while it runs');
      await fx.stop();
    }
    assert.equal((await registrations()).length, before);
  });

  test('replicas behind one receiver URL share one registration, which stays when one of them goes', async () => {
    const shared = 'http://gateways.invalid/events';
    const replicas = [];
    for (let i = 0; i < 3; i++) {
      replicas.push(await startGatewayFixture(origin.origin, { dataDir: origin.config.dataDir, 'gateway.events.register': true, 'gateway.events.receiverUrl': shared, 'gateway.events.unregisterOnStop': true }));
    }
    const mine = (await registrations()).filter((r) => r.url === shared);
    assert.equal(mine.length, 1);
    for (const fx of replicas) await fx.stop();
    assert.equal((await registrations()).filter((r) => r.url === shared).length, 1, 'a shared registration is left to the disable time');
  });
});
