/**
 * SIGUSR2 to a primary with two workers under continuous load (64 requests at a time over
 * keep-alive connections, for more than 20 s): every worker is replaced, twice, and not one
 * request fails.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { loadOrCreateSecret, mintToken } from '../../src/shared/signing-key.ts';
import { tempDir } from '../support/config.ts';
import { runGateway } from '../support/gateway-process.ts';
import { get, metricValue } from '../support/harness.ts';
import { steadyLoad } from '../support/steady-load.ts';

const CONCURRENCY = 64;
const LOAD_MS = 21_000;

test('a rolling restart of two workers under continuous load: each replaced after its successor listens, 0 failed requests', async (t) => {
  const dataDir = tempDir();
  const { gw, url, adminUrl } = await runGateway(t, dataDir, ['--workers', '2']);
  const token = await mintToken(loadOrCreateSecret(join(dataDir, 'signing-secret')), { subject: 'tester', scope: 'catalog:read', ttlSeconds: 600 });
  const workerPids = (): Set<number> =>
    new Set(gw.seen.filter((l) => l.includes('"msg":"worker listening"')).map((l) => (JSON.parse(l) as { pid: number }).pid));
  // A worker's lines reach stdout up to 200 ms after it listens (log-sink.ts).
  await gw.line(() => workerPids().size === 2);

  const started = Date.now();
  // Hits and misses both: 500 queries, each asked again and again.
  const load = steadyLoad(url, CONCURRENCY, (i) => `/v1/books?q=roll${i % 500}`, { authorization: `Bearer ${token}` });
  const ended = (how: string): number => gw.seen.filter((l) => l.includes(`"msg":"rolling restart ${how}`)).length;
  for (const round of [1, 2]) {
    await sleep(2000);
    const before = load.answered();
    gw.child.kill('SIGUSR2');
    await gw.line(() => ended('done') + ended('stopped') === round);
    assert.equal(ended('done'), round, 'the restart went through');
    assert.ok(load.answered() > before, 'requests were answered during the restart');
  }
  await sleep(Math.max(0, LOAD_MS - (Date.now() - started)));
  const result = await load.stop();

  assert.deepEqual(result.failures.slice(0, 10), [], `${result.failures.length} of ${result.ok + result.failures.length} requests failed`);
  assert.ok(result.peakInFlight >= 50, `at most ${result.peakInFlight} requests were in flight at once`);
  assert.ok(Date.now() - started >= 20_000);
  // Two workers at start, two new ones per restart.
  await gw.line(() => workerPids().size === 6);
  const metrics = (await get(`${adminUrl}/metrics`)).body;
  assert.equal(metricValue(metrics, 'catalog_gateway_workers'), 2);
  assert.equal(metricValue(metrics, 'catalog_gateway_worker_restarts_total'), 0, 'a replaced worker is not a death');
  t.diagnostic(`${result.ok} requests answered, ${CONCURRENCY} at a time, over ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const exited = once(gw.child, 'exit');
  gw.child.kill('SIGTERM');
  assert.deepEqual(await exited, [0, null]);
});
