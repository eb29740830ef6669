/**
 * The fleet (issue 10) with real parts: three gateways sharing one real Redis (and, below, a
 * three-node Redis Cluster) in front of one origin that counts what reaches it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSharingGateways, type GatewayFixture } from '../support/gateway-fixture.ts';
import { OK, startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { get, metricValue, send, until, type Reply } from '../support/harness.ts';
import { plainAnswer, startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';
import { startRedis, startRedisCluster, startRedisSentinel, type RedisCluster, type RedisSentinel, type RedisServer } from '../support/redis.ts';

/** The reply's Cache-Status (RFC 9211). */
function cacheStatus(reply: Reply): string {
  return String(reply.headers['cache-status']);
}

/** The fleet's member for request `i`, round robin. */
function member(fleet: readonly GatewayFixture[], i: number): GatewayFixture {
  const fx = fleet[i % fleet.length];
  if (fx === undefined) throw new Error('empty fleet');
  return fx;
}

const FLEET = { 'gateway.redis.commandTimeoutMs': 1000, 'gateway.redis.cooldownMs': 300, 'gateway.redis.fillWaitMs': 5000 };

async function purge(fx: GatewayFixture, body: unknown): Promise<number> {
  const reply = await send(`${fx.gateway.adminUrl}/purge`, 'POST', { authorization: `Bearer ${await fx.token('catalog:admin')}` }, body);
  assert.equal(reply.status, 200, reply.body);
  return (JSON.parse(reply.body) as { purged: number }).purged;
}

describe('fleet on one Redis', () => {
  let origin: FaultOrigin;
  let redis: RedisServer;
  let fleet: GatewayFixture[];

  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => ({ kind: 'json', headers: { 'surrogate-key': 'bk_1 avail_any' } }));
    redis = await startRedis();
    fleet = await startSharingGateways(origin.url, redis.url, 3, FLEET);
  });
  after(async () => {
    await Promise.all(fleet.map((fx) => fx.stop()));
    await redis.stop();
    await origin.close();
  });

  test('200 concurrent requests for one cold query, spread over 3 gateways, reach the origin once, in at least 99 of 100 rounds', async () => {
    let once = 0;
    const calls: number[] = [];
    for (let round = 0; round < 100; round++) {
      const before = origin.count();
      const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => member(fleet, i).get(`/v1/books?q=cold${round}`)));
      for (const reply of replies) assert.equal(reply.status, 200);
      const bodies = new Set(replies.map((r) => r.body));
      assert.equal(bodies.size, 1, 'every client got the same answer');
      calls.push(origin.count() - before);
      if (origin.count() - before === 1) once++;
    }
    assert.ok(once >= 99, `exactly one origin call in ${once} of 100 rounds; calls per round: ${calls.join(',')}`);
  });

  test('an entry one gateway filled is a hit on another, from the shared tier', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    const before = origin.count();
    const first = await a.get('/v1/books?q=shared');
    assert.match(cacheStatus(first), /fwd=miss/);
    const second = await b.get('/v1/books?q=shared');
    assert.equal(second.status, 200);
    assert.match(cacheStatus(second), /hit; ttl=\d+; detail=shared/);
    assert.equal(second.body, first.body);
    assert.equal(origin.count() - before, 1);
    const third = await b.get('/v1/books?q=shared');
    assert.match(cacheStatus(third), /^catalog-gateway; hit; ttl=\d+$/, 'then it is in the local cache');
    assert.ok(metricValue(await b.metrics(), 'catalog_gateway_shared_tier_reads_total', { result: 'hit' }) >= 1);
  });

  test('a purge by tag on one gateway reaches every gateway and the shared tier', async () => {
    for (const fx of fleet) assert.equal((await fx.get('/v1/books?q=tagged')).status, 200);
    const before = origin.count();
    for (const fx of fleet) assert.match(cacheStatus(await fx.get('/v1/books?q=tagged')), /hit/);
    assert.equal(origin.count(), before);
    const [a, b, c] = fleet;
    assert.ok(a !== undefined && b !== undefined && c !== undefined);
    await purge(a, { tags: ['bk_1'] });
    await until(
      async () =>
        metricValue(await b.metrics(), 'catalog_gateway_fleet_purges_total', { direction: 'received' }) >= 1 &&
        metricValue(await c.metrics(), 'catalog_gateway_fleet_purges_total', { direction: 'received' }) >= 1,
    );
    // b dropped its copy and judges the shared one purged, so it asks the origin; c dropped its
    // copy too and takes the one b has just stored.
    assert.match(cacheStatus(await b.get('/v1/books?q=tagged')), /fwd=miss; stored/);
    assert.match(cacheStatus(await c.get('/v1/books?q=tagged')), /hit; ttl=\d+; detail=shared/);
    assert.equal(origin.count() - before, 1);
  });

  test('a url purge on one gateway makes the next request on another ask the origin', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    await b.get('/v1/books?q=byurl');
    const before = origin.count();
    await purge(a, { urls: ['/v1/books?q=byurl'] });
    await until(async () => !/; hit/.test(cacheStatus(await b.get('/v1/books?q=byurl', { 'cache-control': 'only-if-cached' }))));
    assert.equal((await b.get('/v1/books?q=byurl')).status, 200);
    assert.equal(origin.count() - before, 1);
  });
});

describe("fleet: a validation that retires the stored response drops the shared one and every gateway's own", () => {
  let origin: ScriptedOrigin;
  let redis: RedisServer;
  let a: GatewayFixture;
  let b: GatewayFixture;

  before(async () => {
    origin = await startScriptedOrigin(plainAnswer(200, {}, ''));
    redis = await startRedis();
    // An http route without authentication: a request's own Authorization keeps a stored response (§4.3.3).
    [a, b] = (await startSharingGateways(origin.url, redis.url, 2, { ...FLEET, 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] })) as [
      GatewayFixture,
      GatewayFixture,
    ];
  });
  after(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await redis.stop();
    await origin.close();
  });

  const through = (fx: GatewayFixture, target: string, headers: Record<string, string> = {}): Promise<Reply> => get(`${fx.gateway.url}${target}`, headers);

  /** Neither gateway answers `target` from the shared tier any more: each asks the origin, and gets `body`. */
  async function askTheOrigin(target: string, body: string): Promise<void> {
    for (const fx of [a, b]) {
      const before = origin.count(target);
      const reply = await through(fx, target);
      assert.equal(reply.body, body, fx.gateway.url);
      assert.doesNotMatch(cacheStatus(reply), /detail=shared/);
      assert.equal(origin.count(target) - before, 1, `${fx.gateway.url}: ${cacheStatus(reply)}`);
    }
  }

  test('RFC 9111 §4.3.3: a newer full answer that may not be stored', async () => {
    const target = '/retired';
    origin.script(plainAnswer(200, { 'cache-control': 'max-age=60', etag: '"v1"' }, 'v1'));
    assert.match(cacheStatus(await through(a, target)), /fwd=miss; stored/);
    origin.script(plainAnswer(200, { 'cache-control': 'no-store' }, 'v2'));
    const validated = await through(a, target, { 'cache-control': 'no-cache' });
    assert.equal(validated.body, 'v2');
    assert.match(cacheStatus(validated), /fwd=request; fwd-status=200; detail=no-store/);
    await askTheOrigin(target, 'v2');
  });

  test('a 304 whose fields make the stored response unstorable', async () => {
    const target = '/unstorable';
    origin.script((req, res) => {
      if (req.headers['if-none-match'] === '"w1"') {
        res.writeHead(304, { 'cache-control': 'private', etag: '"w1"' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': origin.count(target) === 1 ? 'max-age=60' : 'private', etag: '"w1"' });
      res.end('w1');
    });
    assert.match(cacheStatus(await through(a, target)), /fwd=miss; stored/);
    const validated = await through(a, target, { 'cache-control': 'no-cache' });
    assert.equal(validated.body, 'w1');
    assert.match(cacheStatus(validated), /fwd=request; fwd-status=304/);
    assert.doesNotMatch(cacheStatus(validated), /stored/);
    await askTheOrigin(target, 'w1');
  });

  test("the retire reaches another gateway's own cache: its next request asks the origin, not its memory", async () => {
    const target = '/held';
    origin.script(plainAnswer(200, { 'cache-control': 'max-age=60', etag: '"h1"' }, 'h1'));
    assert.match(cacheStatus(await through(a, target)), /fwd=miss; stored/);
    assert.match(cacheStatus(await through(b, target)), /hit; ttl=\d+; detail=shared/);
    assert.match(cacheStatus(await through(b, target)), /^catalog-gateway; hit; ttl=\d+$/, 'b holds it in its own cache');
    const retired = async (): Promise<number> => metricValue(await a.metrics(), 'catalog_gateway_invalidations_total', { cause: 'validation' });
    const before = await retired();
    origin.script(plainAnswer(200, { 'cache-control': 'no-store' }, 'h2'));
    assert.equal((await through(a, target, { 'cache-control': 'no-cache' })).body, 'h2');
    assert.equal(await retired(), before + 1);
    // Another gateway drops its copy when it reads the purge stream, as for any purge: once b has
    // read every purge a sent (only a retires here), a's sent with its answer.
    await until(
      async () =>
        metricValue(await b.metrics(), 'catalog_gateway_fleet_purges_total', { direction: 'received' }) >=
        metricValue(await a.metrics(), 'catalog_gateway_fleet_purges_total', { direction: 'sent' }),
    );
    const asked = origin.count(target);
    const reply = await through(b, target);
    assert.equal(reply.body, 'h2', cacheStatus(reply));
    assert.equal(origin.count(target) - asked, 1, cacheStatus(reply));
  });
});

describe('fleet when Redis fails', () => {
  let origin: FaultOrigin;
  let redis: RedisServer;
  let fleet: GatewayFixture[];

  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => OK);
    redis = await startRedis();
    fleet = await startSharingGateways(origin.url, redis.url, 2, FLEET);
  });
  after(async () => {
    await Promise.all(fleet.map((fx) => fx.stop()));
    await redis.stop();
    await origin.close();
  });

  test('Redis paused (slow): requests still succeed, and the shared tier counts the failures instead of passing them on', async () => {
    const [a] = fleet;
    assert.ok(a !== undefined);
    const errorsBefore = metricValue(await a.metrics(), 'catalog_gateway_shared_tier_reads_total', { result: 'error' });
    await redis.cli('client', 'pause', '2500', 'ALL');
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => member(fleet, i).get(`/v1/books?q=paused${i % 5}`)));
    for (const reply of replies) assert.equal(reply.status, 200, reply.body);
    assert.ok(
      metricValue(await a.metrics(), 'catalog_gateway_shared_tier_reads_total', { result: 'error' }) > errorsBefore,
      'reads timed out and were counted',
    );
    await until(async () => metricValue(await a.metrics(), 'catalog_gateway_shared_tier_up') === 1);
  });

  test('Redis killed under load: no client errors, at most one origin call per query per gateway, /readyz says so, and sharing resumes when it is back', async () => {
    const load = async (tag: string): Promise<void> => {
      const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => member(fleet, i).get(`/v1/books?q=${tag}${i % 10}`)));
      for (const reply of replies) assert.equal(reply.status, 200, reply.body);
    };
    await load('warm');
    const killing = redis.kill();
    const before = origin.count();
    await Promise.all([load('down'), killing]);
    await load('down');
    assert.ok(origin.count() - before <= 10 * 2, `${origin.count() - before} origin calls for 10 queries on 2 gateways`);
    const [a] = fleet;
    assert.ok(a !== undefined);
    await until(async () => metricValue(await a.metrics(), 'catalog_gateway_shared_tier_up') === 0);
    const ready = await get(`${a.gateway.adminUrl}/readyz`);
    assert.equal(ready.status, 200, 'a gateway without Redis still serves');
    assert.match((JSON.parse(ready.body) as { degraded: string }).degraded, /Redis at redis:\/\/127\.0\.0\.1:\d+ /);
    await redis.restart();
    // Every gateway reconnects on its own schedule: the next one must be back too before it can share.
    await until(async () =>
      (await Promise.all(fleet.map(async (fx) => metricValue(await fx.metrics(), 'catalog_gateway_shared_tier_up') === 1))).every(Boolean),
    );
    const shared = await a.get('/v1/books?q=after');
    assert.equal(shared.status, 200);
    const other = fleet[1];
    assert.ok(other !== undefined);
    assert.match(cacheStatus(await other.get('/v1/books?q=after')), /detail=shared/);
  });
});

describe('fleet on a three-node Redis Cluster', () => {
  let origin: FaultOrigin;
  let cluster: RedisCluster;
  let fleet: GatewayFixture[];

  before(async () => {
    origin = await startFaultOrigin();
    origin.behave((target) => ({ kind: 'json', headers: { 'surrogate-key': `bk_${target.length % 3}` } }));
    cluster = await startRedisCluster();
    fleet = await startSharingGateways(origin.url, cluster.url, 3, FLEET);
  });
  after(async () => {
    await Promise.all(fleet.map((fx) => fx.stop()));
    await cluster.stop();
    await origin.close();
  });

  test('entries spread over the nodes are shared, single-flighted and purged by tag', async () => {
    const queries = Array.from({ length: 30 }, (_, i) => `/v1/books?q=spread${i}`);
    const before = origin.count();
    await Promise.all(queries.flatMap((q) => fleet.map((fx) => fx.get(q))));
    assert.equal(origin.count() - before, queries.length, 'one origin call per query across three gateways');
    const perNode = await Promise.all(cluster.nodes.map((n) => n.cli('dbsize')));
    assert.ok(perNode.filter((n) => Number(n) > 0).length >= 2, `keys on nodes: ${perNode.join(', ')}`);
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    await purge(a, { tags: ['bk_0', 'bk_1', 'bk_2'] });
    await until(async () => metricValue(await b.metrics(), 'catalog_gateway_fleet_purges_total', { direction: 'received' }) >= 1);
    const after = origin.count();
    const fresh = await b.get(queries[0] ?? '');
    assert.doesNotMatch(cacheStatus(fresh), /; hit/);
    assert.equal(origin.count() - after, 1);
  });
});

describe('fleet through Redis Sentinel', () => {
  let origin: FaultOrigin;
  let sentinel: RedisSentinel;
  let fleet: GatewayFixture[];

  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => OK);
    sentinel = await startRedisSentinel();
    fleet = await startSharingGateways(origin.url, sentinel.url, 2, FLEET);
  });
  after(async () => {
    await Promise.all(fleet.map((fx) => fx.stop()));
    await sentinel.stop();
    await origin.close();
  });

  test('the gateways find the master through the Sentinel and share through it', async () => {
    const [a, b] = fleet;
    assert.ok(a !== undefined && b !== undefined);
    const before = origin.count();
    assert.match(cacheStatus(await a.get('/v1/books?q=sentinel')), /fwd=miss; stored/);
    assert.match(cacheStatus(await b.get('/v1/books?q=sentinel')), /hit; ttl=\d+; detail=shared/);
    assert.equal(origin.count() - before, 1);
    assert.notEqual(await sentinel.master.cli('dbsize'), '0', 'the entry is on the master the Sentinel named');
  });
});
