import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startOrigin } from '../../src/origin/origin.ts';
import { run } from '../support/cli-process.ts';
import { tempDir, testConfig } from '../support/config.ts';
import { startFaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture } from '../support/gateway-fixture.ts';
import { get, until } from '../support/harness.ts';

const readyz = async (adminUrl: string): Promise<number> => (await get(`${adminUrl}/readyz`)).status;

test('`gateway --origin` on any port, no probe configured: /readyz is 200 while that origin serves, 503 once it is gone', async (t) => {
  const dataDir = tempDir();
  const origin = await startOrigin(testConfig({ dataDir, 'origin.books': 200 }));
  const { child, line } = run(['gateway', '--origin', origin.url, '--port', '0', '--admin-port', '0'], { CATALOG_DATA_DIR: dataDir });
  t.after(async () => {
    child.kill('SIGKILL');
    await origin.stop();
  });
  const { adminUrl } = JSON.parse(await line((l) => l.includes('"msg":"listening"'))) as { adminUrl: string };
  // Usually the first probe, made before listening, finds it; on a busy machine it may time out.
  await until(async () => (await readyz(adminUrl)) === 200);
  await origin.stop();
  await until(async () => (await readyz(adminUrl)) === 503);
  assert.match((await get(`${adminUrl}/readyz`)).body, /health check http:\/\/127\.0\.0\.1:\d+\/ failed: the origin (refused|closed) the connection/);
});

test('the default probe counts any answer of the origin below 500 as up (401, 404 included), and a 5xx as down', async (t) => {
  const origin = await startFaultOrigin();
  let status = 404;
  origin.behave(() => ({ kind: 'json', status }));
  // A probe times out after min(interval, 2 s): 200 ms, the fixture's, is too short on a busy machine.
  const fx = await startGatewayFixture(origin.url, { 'gateway.upstream.probe': null, 'gateway.upstream.probeIntervalMs': 1000 });
  t.after(async () => {
    await fx.stop();
    await origin.close();
  });
  assert.equal(await readyz(fx.gateway.adminUrl), 200);
  const asked = origin.count('/');
  status = 401;
  // Each check asks /readyz, so the wait is paced by real I/O rather than by spinning on a counter.
  await until(async () => (await readyz(fx.gateway.adminUrl)) === 200 && origin.count('/') > asked + 1);
  assert.equal(await readyz(fx.gateway.adminUrl), 200);
  status = 503;
  await until(async () => (await readyz(fx.gateway.adminUrl)) === 503);
  assert.match((await get(`${fx.gateway.adminUrl}/readyz`)).body, /health check http:\/\/127\.0\.0\.1:\d+\/ answered 503/);
  status = 200;
  await until(async () => (await readyz(fx.gateway.adminUrl)) === 200);
});

test("/readyz and the log name the probe's URL without its password or a credential parameter", async (t) => {
  const origin = await startFaultOrigin();
  origin.behave(() => ({ kind: 'json', status: 503 }));
  const probe = `${origin.url.replace('://', '://probe:s3cret-pass@')}/health?access_token=tok-in-probe&verbose=1`;
  const fx = await startGatewayFixture(origin.url, { 'gateway.upstream.probe': probe });
  t.after(async () => {
    await fx.stop();
    await origin.close();
  });
  const reply = await get(`${fx.gateway.adminUrl}/readyz`);
  assert.equal(reply.status, 503);
  assert.match(reply.body, /health check http:\/\/REDACTED@127\.0\.0\.1:\d+\/health\?access_token=REDACTED&verbose=1 answered 503/);
  assert.doesNotMatch(fx.logs.text(), /s3cret-pass|tok-in-probe/);
});
