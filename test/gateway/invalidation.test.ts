/**
 * One way to forget, everywhere (RFC 9111 §4.4 and soft purges), with real parts: an origin whose
 * `GET /x` is `public, max-age=3600` and whose `POST /x` changes it, in front of two gateways
 * sharing one real Redis, one gateway alone, and a primary with two workers. After an unsafe
 * request's 2xx through any one of them, the next GET through any of them is never the old body.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startGatewayFixture, startSharingGateways, type GatewayFixture } from '../support/gateway-fixture.ts';
import { metricValue, send, until, type Reply } from '../support/harness.ts';
import { startHttpCacheWorkers, type HttpCacheWorkers } from '../support/http-cache-workers.ts';
import { startRedis, type RedisServer } from '../support/redis.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

const HTTP_CACHE = { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] };

/** Every target's version goes up on each POST to it; a POST to `/moved` names `/x` in its Location. */
async function versionedOrigin(): Promise<ScriptedOrigin> {
  const versions = new Map<string, number>();
  return startScriptedOrigin((req, res) => {
    const path = req.target;
    if (req.method === 'POST') {
      versions.set(path, (versions.get(path) ?? 0) + 1);
      if (path === '/moved') versions.set('/x', (versions.get('/x') ?? 0) + 1);
      res.writeHead(201, path === '/moved' ? { location: '/x' } : {});
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=3600', 'surrogate-key': 'everything' });
    res.end(`${path} version ${versions.get(path) ?? 0}`);
  });
}

function cacheStatus(reply: Reply): string {
  return String(reply.headers['cache-status']);
}

describe('invalidation and soft purges reach every gateway of a fleet, L1 and L2', () => {
  let origin: ScriptedOrigin;
  let redis: RedisServer;
  let fleet: GatewayFixture[];

  before(async () => {
    origin = await versionedOrigin();
    redis = await startRedis();
    fleet = await startSharingGateways(origin.url, redis.url, 2, HTTP_CACHE);
  });
  after(async () => {
    await Promise.all(fleet.map((fx) => fx.stop()));
    await redis.stop();
    await origin.close();
  });

  test('a POST through one gateway: the next GET through either is the new body, on the very next request', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    for (let round = 0; round < 20; round++) {
      const target = `/x${round}`;
      assert.match(cacheStatus(await a.get(target)), /fwd=miss; stored/);
      const shared: Reply = await b.get(target);
      assert.match(cacheStatus(shared), /hit; ttl=\d+; detail=shared/);
      assert.equal(shared.body, `${target} version 0`);
      const writer: GatewayFixture = round % 2 === 0 ? a : b;
      const other: GatewayFixture = writer === a ? b : a;
      // Both hold it in their own cache now.
      assert.match(cacheStatus(await a.get(target)), /^catalog-gateway; hit; ttl=\d+$/);
      assert.equal((await writer.get(target, {}, 'POST')).status, 201);
      const mine: Reply = await writer.get(target);
      assert.equal(mine.body, `${target} version 1`, `round ${round}: ${cacheStatus(mine)}`);
      assert.match(cacheStatus(mine), /fwd=miss/, 'neither its own copy nor the shared one');
      // The other gateway's own copy is gone too; what it finds now is the new body the writer stored.
      const theirs: Reply = await other.get(target);
      assert.equal(theirs.body, `${target} version 1`, `round ${round}: ${cacheStatus(theirs)}`);
    }
  });

  test('a same-origin Location is invalidated in every gateway too', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    await a.get('/x');
    assert.match(cacheStatus(await b.get('/x')), /hit/);
    const before = (await a.get('/x')).body;
    assert.equal((await a.get('/moved', {}, 'POST')).status, 201);
    for (const fx of [a, b]) assert.notEqual((await fx.get('/x')).body, before);
  });

  test('a soft purge through one gateway: the next GET through either is a validation, never a hit', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    await a.get('/soft');
    assert.match(cacheStatus(await b.get('/soft')), /hit/);
    const reply = await send(
      `${a.gateway.adminUrl}/purge`,
      'POST',
      { authorization: `Bearer ${await a.token('catalog:admin')}` },
      { tags: ['everything'], soft: true },
    );
    assert.equal(reply.status, 200);
    assert.match(cacheStatus(await a.get('/soft')), /fwd=stale/);
    await until(async () => metricValue(await b.metrics(), 'catalog_gateway_fleet_purges_total', { direction: 'received' }) >= 1);
    assert.match(cacheStatus(await b.get('/soft')), /fwd=stale/);
  });
});

describe('without Redis, a soft purge behaves the same', () => {
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  let release: (() => void) | undefined;

  before(async () => {
    origin = await versionedOrigin();
    fx = await startGatewayFixture(origin.url, HTTP_CACHE);
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  test('a stored entry becomes a validation; a fill the purge overtook is kept, stale, not refused', async () => {
    await fx.get('/stored');
    const purge = (): Promise<Reply> =>
      fx
        .token('catalog:admin')
        .then(async (t) => send(`${fx.gateway.adminUrl}/purge`, 'POST', { authorization: `Bearer ${t}` }, { tags: ['everything'], soft: true }));
    assert.equal((await purge()).status, 200);
    assert.match(cacheStatus(await fx.get('/stored')), /fwd=stale/);

    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    origin.script((req, res) => {
      void held.then(() => {
        res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=3600', 'surrogate-key': 'everything' });
        res.end(`${req.target} held`);
      });
    });
    const inFlight = fx.get('/overtaken');
    await until(async () => Promise.resolve(origin.count('/overtaken') === 1));
    assert.equal((await purge()).status, 200);
    release?.();
    assert.match(cacheStatus(await inFlight), /fwd=miss; stored/, 'kept: a soft purge does not refuse the store');
    assert.match(cacheStatus(await fx.get('/overtaken')), /fwd=stale/, 'but stale from the purge on');
  });
});

describe('an unsafe request through one worker invalidates every worker', () => {
  let origin: ScriptedOrigin;
  let workers: HttpCacheWorkers;

  before(async () => {
    origin = await versionedOrigin();
    workers = await startHttpCacheWorkers(origin.url, 2);
  });
  after(async () => {
    await workers.stop();
    await origin.close();
  });

  test('every worker held the old body; after the POST none answers with it', async () => {
    const before: Reply[] = [];
    for (let i = 0; i < 6; i++) before.push(await workers.fresh('/w'));
    assert.ok(before.every((r) => r.body === '/w version 0'));
    assert.ok(before.filter((r) => /; hit/.test(cacheStatus(r))).length >= 2, 'both workers hold it');
    assert.equal((await workers.fresh('/w', 'POST')).status, 201);
    const after = await Promise.all(Array.from({ length: 6 }, () => workers.fresh('/w')));
    for (const reply of after) assert.equal(reply.body, '/w version 1', cacheStatus(reply));
  });
});
