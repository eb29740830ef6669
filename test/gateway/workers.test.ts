/**
 * `gateway --workers 3 --redis URL` as an operator runs it: a primary and three workers sharing
 * one port, one real Redis, one counting origin.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { loadOrCreateSecret, mintToken } from '../../src/shared/signing-key.ts';
import { run, type CliProcess } from '../support/cli-process.ts';
import { tempDir } from '../support/config.ts';
import { OK, startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { HEALTH_PATH } from '../support/health-check.ts';
import { get, metricValue, send, until } from '../support/harness.ts';
import { startHttpCacheWorkers, type HttpCacheWorkers } from '../support/http-cache-workers.ts';
import { startRedis, type RedisServer } from '../support/redis.ts';
import { startScriptedOrigin, type ScriptedOrigin } from '../support/scripted-origin.ts';

describe('three workers sharing one port and one Redis', () => {
  let origin: FaultOrigin;
  let redis: RedisServer;
  let gateway: CliProcess;
  let url: string;
  let adminUrl: string;
  let token: string;
  let adminToken: string;

  before(async () => {
    origin = await startFaultOrigin();
    origin.behave(() => OK);
    redis = await startRedis();
    const dataDir = tempDir();
    gateway = run(
      ['gateway', '--workers', '3', '--redis', redis.url, '--origin', origin.url, '--origin-probe', HEALTH_PATH, '--port', '0', '--admin-port', '0'],
      { CATALOG_DATA_DIR: dataDir, CATALOG_LOG_LEVEL: 'info', CATALOG_GATEWAY_ACCESS_LOG: 'false' },
    );
    adminUrl = (JSON.parse(await gateway.line((l) => l.includes('"msg":"listening"'))) as { adminUrl: string }).adminUrl;
    url = (JSON.parse(await gateway.line((l) => l.includes('"msg":"worker listening"'))) as { url: string }).url;
    await until(
      async () =>
        metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_workers') === 3 &&
        metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_shared_tier_up') === 1,
    );
    const secret = loadOrCreateSecret(join(dataDir, 'signing-secret'));
    token = await mintToken(secret, { subject: 'tester', scope: 'catalog:read', ttlSeconds: 600 });
    adminToken = await mintToken(secret, { subject: 'tester', scope: 'catalog:admin', ttlSeconds: 600 });
  });
  after(async () => {
    gateway.child.kill('SIGKILL');
    await redis.stop();
    await origin.close();
  });

  const fetchBooks = (q: string): Promise<{ status: number; body: string }> => get(`${url}/v1/books?q=${q}`, { authorization: `Bearer ${token}` });

  test('concurrent requests for a cold query, spread over the workers, reach the origin once', async () => {
    let once = 0;
    for (let round = 0; round < 20; round++) {
      const before = origin.count();
      const replies = await Promise.all(Array.from({ length: 60 }, () => fetchBooks(`workers${round}`)));
      for (const reply of replies) assert.equal(reply.status, 200);
      if (origin.count() - before === 1) once++;
    }
    assert.ok(once >= 19, `one origin call in ${once} of 20 rounds`);
    const metrics = (await get(`${adminUrl}/metrics`)).body;
    assert.equal(
      metricValue(metrics, 'catalog_gateway_http_requests_total', { route: '/v1/books', method: 'GET', status: '200', cache: 'miss' }) +
        metricValue(metrics, 'catalog_gateway_http_requests_total', { route: '/v1/books', method: 'GET', status: '200', cache: 'hit' }) +
        metricValue(metrics, 'catalog_gateway_http_requests_total', { route: '/v1/books', method: 'GET', status: '200', cache: 'collapsed' }),
      1200,
      "the primary sums every worker's requests",
    );
  });

  test('a purge on the admin port reaches every worker', async () => {
    await Promise.all(Array.from({ length: 30 }, () => fetchBooks('purgeme')));
    const before = (await get(`${adminUrl}/metrics`)).body;
    assert.ok(metricValue(before, 'catalog_gateway_cache_entries') >= 2, 'more than one worker holds entries');
    const reply = await send(`${adminUrl}/purge`, 'POST', { authorization: `Bearer ${adminToken}` }, { all: true });
    assert.equal(reply.status, 200);
    const { purged } = JSON.parse(reply.body) as { purged: number };
    assert.ok(purged >= 2);
    const after = (await get(`${adminUrl}/metrics`)).body;
    assert.equal(metricValue(after, 'catalog_gateway_cache_entries'), 0);
    // Each worker counts what it removed, so the scrape summed over them counts every entry once.
    assert.equal(metricValue(after, 'catalog_gateway_purged_entries_total') - metricValue(before, 'catalog_gateway_purged_entries_total'), purged);
    assert.equal(metricValue(after, 'catalog_gateway_purges_total') - metricValue(before, 'catalog_gateway_purges_total'), 1, 'the purge counted once');
  });

  test('a worker that dies is replaced, and the others serve meanwhile', async () => {
    const pids = gateway.seen.filter((l) => l.includes('"msg":"worker listening"')).map((l) => (JSON.parse(l) as { pid: number }).pid);
    const victim = pids[0];
    assert.ok(victim !== undefined);
    process.kill(victim, 'SIGKILL');
    // Once the primary has seen the death: a connection node:cluster hands to a worker in the
    // instant between its SIGKILL and the primary noticing can be lost (node's round robin).
    await until(async () => metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_worker_restarts_total') === 1);
    // Connections the dead worker held die with it (as with any crashed server); new ones are
    // handed to the workers still alive.
    const fresh = new Agent({ headersTimeout: 10_000 });
    try {
      for (let i = 0; i < 20; i++) {
        const reply = await request(`${url}/v1/books?q=meanwhile`, { headers: { authorization: `Bearer ${token}` }, dispatcher: fresh, reset: true });
        await reply.body.dump();
        assert.equal(reply.statusCode, 200);
      }
    } finally {
      await fresh.close();
    }
    await until(async () => {
      const metrics = (await get(`${adminUrl}/metrics`)).body;
      return metricValue(metrics, 'catalog_gateway_worker_restarts_total') === 1 && metricValue(metrics, 'catalog_gateway_workers') === 3;
    });
  });

  test("a scrape that races a worker's death leaves the primary up", async () => {
    // Between a worker's death and the primary reading its channel's end, the worker still reads
    // as connected and a message sent to it fails with EPIPE, which Node reports as an 'error' on
    // the worker: fatal to the primary unheard. The primary is stopped so that the scrape's request
    // (on a connection it already holds) can be read before the channel's end, as under load; which
    // of the two it reads first varies, so the race is run a few times.
    const primary = gateway.child.pid;
    assert.ok(primary !== undefined);
    const killed = new Set<number>();
    for (let round = 0; round < 4; round++) {
      const victim = gateway.seen
        .filter((l) => l.includes('"msg":"worker listening"'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid)
        .filter((pid) => !killed.has(pid))
        .at(-1);
      assert.ok(victim !== undefined);
      killed.add(victim);
      const restarts = metricValue((await get(`${adminUrl}/metrics`)).body, 'catalog_gateway_worker_restarts_total');
      const one = new Agent({ connections: 1 });
      try {
        await (await request(`${adminUrl}/metrics`, { dispatcher: one })).body.dump();
        process.kill(primary, 'SIGSTOP');
        const scrape = request(`${adminUrl}/metrics`, { dispatcher: one });
        await new Promise((resolve) => setTimeout(resolve, 100));
        process.kill(victim, 'SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 100));
        process.kill(primary, 'SIGCONT');
        const reply = await scrape;
        assert.equal(reply.statusCode, 200);
        await reply.body.dump();
      } finally {
        process.kill(primary, 'SIGCONT');
        await one.close();
      }
      assert.equal(
        gateway.child.exitCode,
        null,
        `round ${round + 1}: ${gateway.seen
          .filter((l) => !l.includes('"msg":"request"'))
          .slice(-3)
          .join('\n')}`,
      );
      await until(async () => {
        const metrics = (await get(`${adminUrl}/metrics`)).body;
        return metricValue(metrics, 'catalog_gateway_worker_restarts_total') === restarts + 1 && metricValue(metrics, 'catalog_gateway_workers') === 3;
      });
    }
  });

  test('SIGTERM drains every worker and the primary exits 0', async () => {
    const exited = once(gateway.child, 'exit');
    gateway.child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
    assert.ok(
      gateway.seen.filter((l) => l.includes('"msg":"worker stopped"')).length >= 3,
      gateway.seen.filter((l) => !l.includes('"msg":"request"')).join('\n'),
    );
  });
});

describe('two workers: a validation through one retires the stored response in both', () => {
  let origin: ScriptedOrigin;
  let workers: HttpCacheWorkers;
  /** Once set, the origin's answers may not be stored: a 304 says `private`, and so does a 200. */
  let unstorable = false;

  before(async () => {
    origin = await startScriptedOrigin((req, res) => {
      if (req.headers['if-none-match'] === '"r1"') {
        res.writeHead(304, { 'cache-control': 'private', etag: '"r1"' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': unstorable ? 'private' : 'max-age=60', etag: '"r1"' });
      res.end('r1');
    });
    workers = await startHttpCacheWorkers(origin.url, 2);
  });
  after(async () => {
    await workers.stop();
    await origin.close();
  });

  test('the worker that did not validate has dropped its copy by the time the answer comes', async () => {
    // The primary sums the workers' entries: 2 is one copy in each.
    await until(async () => {
      assert.equal((await workers.fresh('/r')).body, 'r1');
      return metricValue(await workers.metrics(), 'catalog_gateway_cache_entries') === 2;
    });
    unstorable = true;
    const validated = await workers.fresh('/r', 'GET', { 'cache-control': 'no-cache' });
    assert.equal(validated.body, 'r1');
    assert.match(String(validated.headers['cache-status']), /fwd=request; fwd-status=304/);
    const now = await workers.metrics();
    assert.equal(metricValue(now, 'catalog_gateway_cache_entries'), 0, 'neither worker holds it');
    assert.equal(metricValue(now, 'catalog_gateway_invalidations_total', { cause: 'validation' }), 1, 'counted by the worker that validated');
    const before = origin.count('/r');
    for (let i = 0; i < 4; i++) assert.doesNotMatch(String((await workers.fresh('/r')).headers['cache-status']), /hit/);
    assert.equal(origin.count('/r') - before, 4, 'every request, through either worker, asks the origin');
  });
});
