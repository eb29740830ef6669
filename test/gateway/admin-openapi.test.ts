/**
 * The gateway admin listener's documented operations (`/purge`, `/events` in docs/openapi.json)
 * against a real gateway: every documented status is provoked and conforms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { send, type Reply } from '../support/harness.ts';
import { conforms, doc, follow, type ResponseObject } from '../support/openapi.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

const SECRET = `whsec_${Buffer.from('admin-openapi-test-secret-0123456789').toString('base64')}`;

describe('docs/openapi.json and the gateway admin listener agree', () => {
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  let unregistered: GatewayFixture;

  before(async () => {
    origin = await startScriptedOrigin((_req, res) => res.end('{}'));
    fx = await startGatewayFixture(origin.url, { 'gateway.events.secret': SECRET });
    unregistered = await startGatewayFixture(origin.url);
  });
  after(async () => {
    await Promise.all([fx.stop(), unregistered.stop()]);
    await origin.close();
  });

  const event = JSON.stringify({
    type: 'book.availability.changed',
    timestamp: new Date().toISOString(),
    data: { book: 'bk_1', branch: 'branch_central', available: false },
  });
  const signed = (id: string, at: Date, body = event): Record<string, string> => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign(id, at, body),
  });
  const admin = async (): Promise<Record<string, string>> => ({ authorization: `Bearer ${await fx.token('catalog:admin')}` });
  const replayedAt = new Date();

  const provoke: Readonly<Record<string, Readonly<Record<string, () => Promise<Reply>>>>> = {
    '/purge': {
      '200': async () => send(`${fx.gateway.adminUrl}/purge`, 'POST', await admin(), { tags: ['bk_1'], soft: true }),
      '401': () => send(`${fx.gateway.adminUrl}/purge`, 'POST', {}, { all: true }),
      '403': async () => send(`${fx.gateway.adminUrl}/purge`, 'POST', { authorization: `Bearer ${await fx.token()}` }, { all: true }),
      '413': async () => send(`${fx.gateway.adminUrl}/purge`, 'POST', await admin(), { urls: ['/'.repeat(5 * 1024 * 1024)] }),
      '415': async () => send(`${fx.gateway.adminUrl}/purge`, 'POST', { ...(await admin()), 'content-type': 'text/plain' }, 'all'),
      '422': async () => send(`${fx.gateway.adminUrl}/purge`, 'POST', await admin(), { everything: true }),
    },
    '/events': {
      '200': () => send(`${fx.gateway.adminUrl}/events`, 'POST', signed('msg_ok', new Date()), event),
      '401': () => send(`${fx.gateway.adminUrl}/events`, 'POST', signed('msg_old', new Date(Date.now() - 3_600_000)), event),
      '409': async () => {
        assert.equal((await send(`${fx.gateway.adminUrl}/events`, 'POST', signed('msg_twice', replayedAt), event)).status, 200);
        return send(`${fx.gateway.adminUrl}/events`, 'POST', signed('msg_twice', replayedAt), event);
      },
      '413': () => send(`${fx.gateway.adminUrl}/events`, 'POST', {}, 'x'.repeat(70_000)),
      '415': () => send(`${fx.gateway.adminUrl}/events`, 'POST', { 'content-type': 'text/plain' }, event),
      '422': () => {
        const bad = JSON.stringify({ type: 'book.availability.changed', data: {} });
        return send(`${fx.gateway.adminUrl}/events`, 'POST', signed('msg_bad', new Date(), bad), bad);
      },
      '503': () => send(`${unregistered.gateway.adminUrl}/events`, 'POST', {}, event),
    },
  };

  for (const [path, statuses] of Object.entries(provoke)) {
    test(`POST ${path}: every documented status is reachable and conforms`, async () => {
      const operation = doc.paths[path]?.post;
      assert.ok(operation !== undefined, `POST ${path} is documented`);
      assert.deepEqual(Object.keys(operation.responses).sort(), Object.keys(statuses).sort());
      for (const [status, spec] of Object.entries(operation.responses)) {
        const reply = await (statuses[status] ?? (() => Promise.reject(new Error(status))))();
        assert.equal(String(reply.status), status, `${path} ${status}: ${reply.body}`);
        conforms(reply, follow<ResponseObject>(spec), 'post', `POST ${path} ${status}`);
      }
    });
  }
});
