/**
 * `npm run bench:fleet-hosts [-- --update-committed]`: the fleet as hosts (issues 28 and 31), as
 * the issue's "done means" puts it. Three gateway hosts, Redis and the origin in network
 * namespaces of their own with 2 ms each way on every link (test/support/netns/bed.ts; root
 * needed), a circulation load test against all three at 2 loans/s for 120 s, and one host cut off
 * from Redis for 10 s in the middle (test/support/netns/partition-scenario.ts). Reports, per
 * host, the stale reads beyond the partition bound, the events delivered and purged, the slowest
 * search, and the offload; the deliveries per loan; and how long after the heal the cut-off host
 * shares again. `npm test` runs a 20 s version (test/gateway/fleet-hosts.test.ts).
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.ts';
import { seedCatalog } from '../src/origin/seed.ts';
import { loadOrCreateSecret } from '../src/shared/signing-key.ts';
import { netnsUnavailable, removeLeftovers, startHostBed } from '../test/support/netns/bed.ts';
import type { ScenarioResult, ScenarioSpec } from '../test/support/netns/partition-scenario.ts';
import { saveResults } from './results-file.ts';

const SCENARIO = fileURLToPath(new URL('../test/support/netns/partition-scenario.ts', import.meta.url));
const BOOKS = 20_000;
const DURATION_S = 120;
const CUT_FOR_S = 10;
const DELAY_MS = 2;

const { values } = parseArgs({ options: { 'update-committed': { type: 'boolean' } } });
const unavailable = netnsUnavailable();
if (unavailable !== undefined) {
  process.stderr.write(`bench:fleet-hosts: cannot run here: ${unavailable}\n`);
  process.exit(1);
}
const log = (message: string): void => {
  process.stderr.write(`fleet-hosts: ${message}\n`);
};
removeLeftovers();
const dir = mkdtempSync(join(tmpdir(), 'catalog-fleet-hosts-'));
try {
  const db = join(dir, 'catalog.db');
  log(`seeding a catalog of ${BOOKS} books…`);
  seedCatalog(db, BOOKS);
  const secretFile = join(dir, 'signing-secret');
  loadOrCreateSecret(secretFile);
  const bound = loadConfig({ env: {} })['gateway.redis.partitionBoundMs'];
  log('making the namespaces and starting Redis, the origin and three gateways…');
  const bed = await startHostBed({ db, secretFile, dir, delayMs: DELAY_MS, originEnv: { CATALOG_ORIGIN_MAX_AGE_SECONDS: '3600' } });
  try {
    const [first, ...rest] = bed.hosts;
    if (first === undefined) throw new Error('the bed has no hosts');
    const cutAt = (DURATION_S - CUT_FOR_S) / 2;
    const spec: ScenarioSpec = {
      hosts: [first, ...rest],
      originUrl: bed.originUrl,
      originAdminUrl: bed.originAdminUrl,
      secretFile,
      db,
      circulation: { connections: 12, duration: DURATION_S, loansPerSecond: 2, allowedLagMs: bound, zipf: 1, distinct: 2000, filters: 0.15, seed: 1 },
      cut: { host: 0, atS: cutAt, forS: CUT_FOR_S, down: bed.linkCommand(0, 'down'), up: bed.linkCommand(0, 'up') },
    };
    const startedAt = new Date().toISOString();
    const scenario = JSON.parse(await bed.runClient(SCENARIO, [JSON.stringify(spec)], (line) => process.stderr.write(`${line}\n`))) as ScenarioResult;
    const { circulation: c, settled } = scenario;
    const events = settled.eventsDelivered / Math.max(1, settled.registrations);
    // What an operator of the cut-off host reads in its log, in order.
    const cutLog = readFileSync(first.logFile, 'utf8')
      .split('\n')
      .flatMap((line) => {
        try {
          const { level, time, msg } = JSON.parse(line) as { level?: string; time?: number | string; msg?: string };
          return level === 'warn' || level === 'error' || /sharing the cache/.test(msg ?? '') ? [`${String(time)} ${level} ${msg}`] : [];
        } catch {
          return [];
        }
      });
    const result = {
      bench: 'fleet-hosts',
      startedAt,
      setup: {
        hosts: bed.hosts.length,
        delayMsEachWay: DELAY_MS,
        books: BOOKS,
        durationS: DURATION_S,
        loansPerSecond: 2,
        cut: { host: 1, atS: cutAt, forS: CUT_FOR_S },
        partitionBoundMs: bound,
        searchingConnections: spec.circulation.connections,
      },
      loans: c.loans,
      searches: c.searches,
      offload: c.offload,
      registrations: settled.registrations,
      eventsDelivered: settled.eventsDelivered,
      events,
      deliveriesPerLoan: settled.eventsDelivered / Math.max(1, c.loans.made + c.loans.returned),
      outboxDepthAfter: settled.outboxDepth,
      shareAgainMs: scenario.shareAgainMs,
      duringCut: scenario.duringCut,
      cutHostLog: cutLog,
      hosts: c.hosts.map((h, i) => ({ ...h, eventPurgesApplied: settled.applied[i], eventPurgesRepeated: settled.repeats[i] })),
      purgeLagSeconds: c.purgeLagSeconds,
      searchLatencyMs: c.searchLatencyMs,
    };
    const files = saveResults('fleet-hosts-latest.json', 'fleet-hosts', startedAt, result, values['update-committed'] === true);
    const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);
    process.stdout.write(
      [
        `fleet-hosts  3 hosts in namespaces, ${DELAY_MS} ms each way per link, ${spec.circulation.loansPerSecond} loans/s for ${DURATION_S} s, host 1 cut off from Redis ${cutAt}–${cutAt + CUT_FOR_S} s`,
        `loans        ${c.loans.made} lent: ${c.loans.returned} returned during the run, ${c.loans.returnedAfter} after it; ${c.loans.refused} refused; ${c.loans.flips} availability changes; ${c.searches} searches`,
        ...c.hosts.map(
          (h, i) =>
            `host ${i + 1}       stale beyond ${bound} ms: ${h.staleReads}; events applied ${settled.applied[i]} of ${events} (repeats dropped ${settled.repeats[i]}); slowest search ${h.slowestSearchMs} ms; offload ${pct(h.offload)}`,
        ),
        `fleet        offload ${pct(c.offload)}; ${settled.eventsDelivered} deliveries to ${settled.registrations} registrations for ${c.loans.made + c.loans.returned} loans and returns (${result.deliveriesPerLoan.toFixed(2)} per loan); outbox after: ${settled.outboxDepth}`,
        `cut host     during: shared_tier_up ${scenario.duringCut.sharedTierUp}, fleet_partitioned ${scenario.duringCut.partitioned}; /readyz ${scenario.duringCut.readyz}`,
        `heal         sharing again after ${scenario.shareAgainMs === null ? 'more than 10 s' : `${scenario.shareAgainMs.toFixed(0)} ms`}`,
        `saved        ${files.join(', ')}`,
        '',
      ].join('\n'),
    );
  } finally {
    await bed.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
