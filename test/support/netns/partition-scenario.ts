/**
 * Loans going on while one host of the fleet is cut off from Redis, run inside the bed's client
 * namespace (bed.ts): the circulation load against every host (src/loadtest/circulation.ts), the
 * link of one host to Redis set down at `cutAtS` for `cutForS`, what that host shows meanwhile,
 * and how long after the heal it shares again. Prints one JSON line (ScenarioResult); the test
 * and `npm run bench:fleet-hosts` start it with `node partition-scenario.ts SPEC_JSON`.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { loadConfig } from '../../../src/config/load.ts';
import { circulateFleet, type CirculationOptions, type CirculationResult } from '../../../src/loadtest/circulation.ts';
import { scrapeMetrics } from '../../../src/loadtest/server-metrics.ts';
import { loadOrCreateSecret, mintToken } from '../../../src/shared/signing-key.ts';
import { holdsWithin } from '../harness.ts';

export interface ScenarioSpec {
  readonly hosts: readonly [{ readonly url: string; readonly adminUrl: string }, ...{ readonly url: string; readonly adminUrl: string }[]];
  readonly originUrl: string;
  readonly originAdminUrl: string;
  readonly secretFile: string;
  readonly db: string;
  readonly circulation: CirculationOptions;
  readonly cut: { readonly host: number; readonly atS: number; readonly forS: number; readonly down: readonly string[]; readonly up: readonly string[] };
}

export interface ScenarioResult {
  readonly circulation: CirculationResult;
  /** The cut-off host, once the bound had passed. */
  readonly duringCut: { readonly sharedTierUp: number | undefined; readonly partitioned: number | undefined; readonly readyz: string };
  /** From the heal until a fill through another host is a shared hit there and a purge through another host reaches it; null: not within 10 s. */
  readonly shareAgainMs: number | null;
  /** Once the origin's outbox is empty. */
  readonly settled: {
    readonly registrations: number;
    readonly eventsDelivered: number;
    readonly outboxDepth: number | undefined;
    /** Per host: availability events applied (whichever way they came), and repeats dropped. */
    readonly applied: readonly number[];
    readonly repeats: readonly number[];
  };
}

const SHARE_DEADLINE_MS = 10_000;
const [specText = '{}'] = process.argv.slice(2);
const spec = JSON.parse(specText) as ScenarioSpec;
const config = loadConfig({});
const secret = loadOrCreateSecret(spec.secretFile);
const mint = (scope: string): Promise<string> =>
  mintToken(secret, { subject: 'fleet-hosts', scope, ttlSeconds: 3600, issuer: config['auth.issuer'], audience: config['auth.audience'] });
const reader = await mint('catalog:read');
const admin = await mint('catalog:admin');
const log = (message: string): void => {
  process.stderr.write(`scenario: ${message}\n`);
};

async function get(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const res = await request(url, { headers: { authorization: `Bearer ${reader}` } });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

async function metric(adminUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await scrapeMetrics(adminUrl)).sum(name, labels);
}

const received = (adminUrl: string): Promise<number> => metric(adminUrl, 'catalog_gateway_fleet_purges_total', { direction: 'received' });

/** Sharing again, as issue 31 defines it: a fill through `other` is a shared hit on `cut`, and a purge through `other` reaches it. */
async function shareAgain(cut: string, other: { url: string; adminUrl: string }, cutAdmin: string, healedAt: number): Promise<number | null> {
  for (let probe = 0; performance.now() - healedAt < SHARE_DEADLINE_MS; probe++) {
    const target = `/v1/books?q=sharing${probe}`;
    await get(`${other.url}${target}`);
    const before = await received(cutAdmin);
    const here = await get(`${cut}${target}`);
    const purge = await request(`${other.adminUrl}/purge`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ urls: [target] }),
    });
    await purge.body.dump();
    const reached = await holdsWithin(200, async () => (await received(cutAdmin)) > before);
    if (/detail=shared/.test(String(here.headers['cache-status'])) && reached) return performance.now() - healedAt;
    await sleep(20);
  }
  return null;
}

const cutHost = spec.hosts[spec.cut.host] ?? spec.hosts[0];
const other = spec.hosts[(spec.cut.host + 1) % spec.hosts.length] ?? spec.hosts[0];
let duringCut: ScenarioResult['duringCut'] = { sharedTierUp: undefined, partitioned: undefined, readyz: '' };
let shareAgainMs: number | null = null;
const partition = async (): Promise<void> => {
  await sleep(spec.cut.atS * 1000);
  log(`cutting ${cutHost.url} off from Redis for ${spec.cut.forS} s`);
  execFileSync('ip', spec.cut.down);
  const cutAt = performance.now();
  await sleep(config['gateway.redis.partitionBoundMs'] + 1000);
  const samples = await scrapeMetrics(cutHost.adminUrl);
  duringCut = {
    sharedTierUp: samples.value('catalog_gateway_shared_tier_up'),
    partitioned: samples.value('catalog_gateway_fleet_partitioned'),
    readyz: (await get(`${cutHost.adminUrl}/readyz`)).body,
  };
  await sleep(Math.max(0, cutAt + spec.cut.forS * 1000 - performance.now()));
  execFileSync('ip', spec.cut.up);
  const healedAt = performance.now();
  log('healed');
  shareAgainMs = await shareAgain(cutHost.url, other, cutHost.adminUrl, healedAt);
  log(`sharing again after ${shareAgainMs === null ? 'more than 10 s' : `${shareAgainMs.toFixed(0)} ms`}`);
};

const circulation = await circulateFleet(
  { hosts: spec.hosts, originUrl: spec.originUrl, originAdmin: spec.originAdminUrl, secret, catalog: spec.db },
  spec.circulation,
  config,
  log,
  partition,
);

// Every event delivered is applied on every host: wait until the outbox is empty and the purge
// stream has carried what it carries, then count.
const webhooks = await request(`${spec.originUrl}/v1/webhooks`, { headers: { authorization: `Bearer ${admin}` } });
const registrations = (JSON.parse(await webhooks.body.text()) as { results: unknown[] }).results.length;
const settledBy = performance.now() + 10_000;
let settled: ScenarioResult['settled'];
for (;;) {
  const origin = await scrapeMetrics(spec.originAdminUrl);
  const eventsDelivered = origin.sum('catalog_origin_event_deliveries_total', { outcome: 'delivered' });
  const hosts = await Promise.all(spec.hosts.map((h) => scrapeMetrics(h.adminUrl)));
  settled = {
    registrations,
    eventsDelivered,
    outboxDepth: origin.value('catalog_origin_outbox_depth'),
    applied: hosts.map((s) => s.sum('catalog_gateway_event_purges_total', { result: 'applied' })),
    repeats: hosts.map((s) => s.sum('catalog_gateway_event_purges_total', { result: 'repeat' })),
  };
  const events = eventsDelivered / Math.max(1, settled.registrations);
  if ((settled.outboxDepth === 0 && settled.applied.every((n) => n === events)) || performance.now() > settledBy) break;
  await sleep(200);
}
const result: ScenarioResult = { circulation, duringCut, shareAgainMs, settled };
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
