/**
 * Who the client is (`http.trustedProxies`) and how a request is logged (`log.format`), through
 * real servers: what the access log says, what a per-address limit counts, and which
 * `X-Forwarded-For` the origin receives.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { startOrigin } from '../../src/origin/origin.ts';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { captureLogs, get } from '../support/harness.ts';
import { tempDir, testConfig } from '../support/config.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../src/shared/signing-key.ts';

const requests = (fx: GatewayFixture): Record<string, unknown>[] => fx.logs.lines().filter((l) => l.msg === 'request');
const lastForwardedFor = (origin: FaultOrigin): unknown => origin.received.at(-1)?.headers['x-forwarded-for'];

describe('behind a trusted proxy (http.trustedProxies = 127.0.0.0/8)', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startFaultOrigin();
    fx = await startGatewayFixture(origin.url, {
      'http.trustedProxies': ['127.0.0.0/8', '::1'],
      'gateway.rateLimit.perIpPerSecond': 1,
      'gateway.rateLimit.perIpBurst': 1,
    });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('the client is the last untrusted X-Forwarded-For hop: logged, limited and forwarded as such', async () => {
    assert.equal((await fx.get('/v1/books?q=a', { 'x-forwarded-for': '198.51.100.9, 203.0.113.7, 127.0.0.5' })).status, 200);
    assert.equal(requests(fx).at(-1)?.remote, '203.0.113.7', 'trusted hops are skipped, the client-written first hop is not believed');
    assert.equal(lastForwardedFor(origin), '198.51.100.9, 203.0.113.7, 127.0.0.5, 127.0.0.1', 'the gateway appends the peer it saw');
    assert.equal((await fx.get('/v1/books?q=b', { 'x-forwarded-for': '203.0.113.7' })).status, 429, 'the same client, through the proxy, is limited');
    assert.equal((await fx.get('/v1/books?q=c', { 'x-forwarded-for': '203.0.113.8' })).status, 200, 'another client behind the same proxy has its own bucket');
    assert.equal(requests(fx).at(-1)?.remote, '203.0.113.8');
  });

  test('without the field, or with garbage in it, the peer is the client', async () => {
    await fx.get('/v1/books?q=d', { 'x-forwarded-for': 'not-an-address' });
    assert.equal(requests(fx).at(-1)?.remote, '127.0.0.1');
  });
});

describe('with no trusted proxies (the default)', () => {
  let origin: FaultOrigin;
  let fx: GatewayFixture;
  before(async () => {
    origin = await startFaultOrigin();
    fx = await startGatewayFixture(origin.url, { 'log.format': 'combined' });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('a client cannot name itself: X-Forwarded-For is ignored and replaced by the peer', async () => {
    assert.equal((await fx.get('/v1/books?q=e', { 'x-forwarded-for': '203.0.113.7' })).status, 200);
    assert.match(fx.logs.text(), /^127\.0\.0\.1 - tester \[/m);
    assert.equal(lastForwardedFor(origin), '127.0.0.1');
  });

  test("log.format=combined: nginx's combined line, then rt, reqid, the cache result, the coding sent and the service", async () => {
    await fx.get('/v1/books?q=combined%20line', { 'x-request-id': 'trace-9', 'user-agent': 'probe/1.0 "quoted"' });
    await fx.get('/v1/books?q=combined%20line', { 'x-request-id': 'trace-10' });
    const lines = fx.logs
      .text()
      .split('\n')
      .filter((l) => l.includes('combined%20line'));
    assert.equal(lines.length, 2);
    assert.match(
      lines[0] ?? '',
      /^127\.0\.0\.1 - tester \[\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET \/v1\/books\?q=combined%20line HTTP\/1\.1" 200 \d+ "-" "probe\/1\.0 \\x22quoted\\x22" rt=\d+\.\d{6} reqid=trace-9 cache=miss originMs=[\d.]+ encoding=identity service=catalog-gateway$/,
    );
    assert.match(lines[1] ?? '', / 200 \d+ "-" "-" rt=\d+\.\d{6} reqid=trace-10 cache=hit encoding=identity service=catalog-gateway$/);
    const unauthorized = await get(`${fx.gateway.url}/v1/books?q=nobody`);
    assert.equal(unauthorized.status, 401);
    assert.match(fx.logs.text(), /^127\.0\.0\.1 - - \[.*\] "GET \/v1\/books\?q=nobody HTTP\/1\.1" 401 \d+ .* cache=none service=catalog-gateway$/m);
  });
});

test('the origin writes combined lines too, and believes the gateway it trusts', async (t) => {
  const logs = captureLogs();
  const dataDir = tempDir();
  const config = testConfig({ dataDir, 'origin.books': 100, 'log.level': 'info', 'log.format': 'combined', 'http.trustedProxies': ['127.0.0.1'] });
  const origin = await startOrigin(config, { logDestination: logs });
  t.after(() => origin.stop());
  const token = await mintToken(loadOrCreateSecret(secretPath(config)), { subject: 'reader', scope: 'catalog:read', ttlSeconds: 60 });
  assert.equal((await get(`${origin.url}/v1/branches`, { authorization: `Bearer ${token}`, 'x-forwarded-for': '192.0.2.44' })).status, 200);
  assert.match(
    logs.text(),
    /^192\.0\.2\.44 - reader \[.*\] "GET \/v1\/branches HTTP\/1\.1" 200 \d+ "-" "-" rt=\d+\.\d{6} reqid=[0-9a-f-]{36} service=catalog-origin$/m,
  );
});

test('http.trustedProxies refuses what is not an address or a CIDR block, naming the key', () => {
  assert.throws(
    () => loadConfig({ env: { CATALOG_HTTP_TRUSTED_PROXIES: '10.0.0.0/8, 10.0.0.300' } }),
    /config key http\.trustedProxies = "10\.0\.0\.0\/8, 10\.0\.0\.300" \(from env CATALOG_HTTP_TRUSTED_PROXIES\).*"10\.0\.0\.300" is not an IP address/,
  );
  assert.throws(() => loadConfig({ env: { CATALOG_HTTP_TRUSTED_PROXIES: '10.0.0.0/33' } }), /bad prefix length/);
  assert.deepEqual(loadConfig({ env: { CATALOG_HTTP_TRUSTED_PROXIES: '10.0.0.0/8,fd00::/8' } })['http.trustedProxies'], ['10.0.0.0/8', 'fd00::/8']);
});
