/**
 * The fleet as hosts (issues 28 and 31): three gateway hosts, Redis and the origin each in a
 * network namespace of their own, 2 ms each way on every link (test/support/netns/bed.ts), loans
 * going on, and one host cut off from Redis for 10 s (its link set down: silence, no reset).
 * The 120 s version of the same scenario is `npm run bench:fleet-hosts` (bench/fleet-hosts.ts).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { loadOrCreateSecret } from '../../src/shared/signing-key.ts';
import { tempDir } from '../support/config.ts';
import { netnsUnavailable, removeLeftovers, startHostBed, type HostBed } from '../support/netns/bed.ts';
import type { ScenarioResult, ScenarioSpec } from '../support/netns/partition-scenario.ts';
import { sharedCatalog } from '../support/origin-fixture.ts';

const SCENARIO = fileURLToPath(new URL('../support/netns/partition-scenario.ts', import.meta.url));
const BOUND_MS = loadConfig({ env: {} })['gateway.redis.partitionBoundMs'];
const unavailable = netnsUnavailable();

describe('a fleet of three hosts in network namespaces', { skip: unavailable === undefined ? false : `no network namespaces here: ${unavailable}` }, () => {
  let bed: HostBed;
  let secretFile: string;

  before(async () => {
    removeLeftovers();
    const dir = tempDir('catalog-netns-');
    secretFile = join(dir, 'signing-secret');
    loadOrCreateSecret(secretFile);
    bed = await startHostBed({ db: sharedCatalog(), secretFile, dir, originEnv: { CATALOG_ORIGIN_MAX_AGE_SECONDS: '3600' } });
  });
  after(() => bed.stop());

  test('loans going on, one host cut off from Redis for 10 s and healed: no stale read beyond the bound, every event purged everywhere, no slow request, sharing again within 2 s', async () => {
    const [first, ...rest] = bed.hosts;
    assert.ok(first !== undefined);
    const spec: ScenarioSpec = {
      hosts: [first, ...rest],
      originUrl: bed.originUrl,
      originAdminUrl: bed.originAdminUrl,
      secretFile,
      db: sharedCatalog(),
      circulation: { connections: 6, duration: 20, loansPerSecond: 2, allowedLagMs: BOUND_MS, zipf: 1, distinct: 200, filters: 0.15, seed: 1 },
      cut: { host: 0, atS: 3, forS: 10, down: bed.linkCommand(0, 'down'), up: bed.linkCommand(0, 'up') },
    };
    const out = await bed.runClient(SCENARIO, [JSON.stringify(spec)], (line) => process.stderr.write(`# ${line}\n`));
    const r = JSON.parse(out) as ScenarioResult;
    const { circulation: c, settled } = r;
    process.stderr.write(
      `# per host (cut first): stale ${c.hosts.map((h) => h.staleReads).join(', ')}; slowest ${c.hosts.map((h) => h.slowestSearchMs).join(', ')} ms; applied ${settled.applied.join(', ')} of ${settled.eventsDelivered / settled.registrations} events; sharing again ${r.shareAgainMs?.toFixed(0)} ms after the heal; offload ${c.offload}\n`,
    );

    assert.ok(c.loans.flips > 10, `only ${c.loans.flips} availability changes`);
    for (const [i, h] of c.hosts.entries()) {
      assert.equal(h.staleReads, 0, `host ${i + 1}: stale reads beyond ${BOUND_MS} ms`);
      assert.ok(h.slowestSearchMs < 1000, `host ${i + 1}: a request took ${h.slowestSearchMs} ms`);
      assert.ok(h.searches > 100, `host ${i + 1} answered only ${h.searches} searches`);
    }
    assert.equal(settled.registrations, 3);
    assert.equal(settled.outboxDepth, 0);
    const events = settled.eventsDelivered / settled.registrations;
    assert.ok(Number.isInteger(events) && events > 0, `${settled.eventsDelivered} deliveries to ${settled.registrations} registrations`);
    assert.deepEqual(settled.applied, [events, events, events], 'every delivered event purged once on every host');
    assert.equal(r.duringCut.partitioned, 1, 'the cut-off host said it was partitioned');
    assert.match(r.duringCut.readyz, /revalidated/);
    assert.ok(r.shareAgainMs !== null && r.shareAgainMs < 2000, `sharing again ${r.shareAgainMs} ms after the heal`);
  });
});
