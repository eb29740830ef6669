/**
 * `npm run bench -- --ab DIR`: this checkout's gateway against another checkout's (DIR, with its
 * own `npm ci`), and memory hits against disk hits, in one run, each ratio taken round by round.
 *
 * - A/B: the bare node:http ceiling, this gateway and DIR's, all on the same catalog, origin and
 *   hit bytes, on one URL and on 1,000 URLs in Zipf order, in interleaved rounds (the order
 *   rotated each round); reported as this gateway over DIR's, and each over the ceiling.
 * - Tiers: the same 1,000 URLs asked in a cycle, from a gateway whose memory holds all of them
 *   (memory hits) and from one whose memory (1 MiB, plain LRU) holds a few hundred (a cycle longer
 *   than an LRU is a miss every time), so each of its hits comes from the disk tier and evicts
 *   another entry from memory: the worst case of a disk hit. Once with an identity client (whose
 *   first disk hit on an entry decompresses the gzip body kept, which the disk tier then keeps
 *   beside it) and once with a gzip client; reported as disk over memory, with the share of
 *   requests the disk tier answered.
 *
 * `--disk-hits` runs the tiers' rows alone, without another checkout.
 *
 * Every server is pinned to one core and wrk to the other, as in the default mode.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import { GATEWAY_NODE_FLAGS, type ServerProcess } from '../src/loadtest/server-process.ts';
import { scrapeMetrics } from '../src/loadtest/server-metrics.ts';
import { ZipfSampler } from '../src/loadtest/zipf.ts';
import { SeededRandom } from '../src/origin/random.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { CORES, pin } from './process-cpu.ts';
import { QuerySpace } from './query-space.ts';
import type { Spread } from './stats.ts';
import { machineLine } from './table.ts';
import {
  captureResponse,
  findHotTarget,
  ratioByRound,
  runRounds,
  traced,
  warmCache,
  type Scenario,
  type ScenarioResult,
  type Workload,
  type WorkloadFiles,
} from './throughput.ts';

const URLS = 1000;
const ZIPF_SEQUENCE = 100_000;
const MIB = 1024 * 1024;
/**
 * Seconds each tier scenario runs before the measured rounds. A gateway new to a workload settles
 * over its first several seconds of it (its JIT, on the one core it shares with the compiler's
 * threads, and W-TinyLFU's window): after 2 s, a disk gateway with admission still read p99s of
 * 8–24 ms in its first rounds against 3–5 ms in its later ones.
 */
const TIER_WARM_SECONDS = 10;

export interface AbReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'ab' | 'disk-hits';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  /** The other checkout; empty with `--disk-hits`, which measures no other. */
  readonly base: string;
  readonly settings: { readonly duration: number; readonly connections: number; readonly rounds: number };
  readonly ab: readonly ScenarioResult[];
  /** This gateway's req/s and p99 over the base's, round by round: one URL, then 1,000 URLs. */
  readonly versus: { readonly workload: Workload; readonly rps: Spread; readonly p99: Spread; readonly cpu: Spread }[];
  readonly tiers: readonly ScenarioResult[];
  /**
   * Disk hits over memory hits, round by round, for an identity client and a gzip one, from the
   * 1 MiB memory without admission (every disk hit promoted) and with it (the default); `cpu` the
   * server's CPU a request.
   */
  readonly diskOverMemory: readonly {
    readonly client: 'identity' | 'gzip';
    readonly admission: boolean;
    readonly rps: Spread;
    readonly p99: Spread;
    readonly cpu: Spread;
  }[];
  /** Of each disk gateway's requests in the tier rounds, the share the disk tier answered: without admission, then with it. */
  readonly diskShare: readonly [number, number];
}

async function diskHits(adminUrl: string): Promise<number> {
  return (await scrapeMetrics(adminUrl)).value('catalog_gateway_disk_reads_total', { result: 'hit' }) ?? 0;
}

export async function abBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<AbReport> {
  if (!options.diskHits && options.abBase === undefined) throw new Error("--ab needs the other checkout's directory");
  const baseDir = options.diskHits || options.abBase === undefined ? undefined : resolve(options.abBase);
  if (baseDir !== undefined && (!existsSync(join(baseDir, 'bin', 'catalog-gateway.js')) || !existsSync(join(baseDir, 'node_modules'))))
    throw new Error(`${baseDir} is not a checkout with its dependencies installed (npm ci there first)`);
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  try {
    log(`starting the origin, the gateways (this one,${baseDir === undefined ? '' : ' the base,'} one over a 1 MiB memory) and the ceiling…`);
    const origin = await fleet.origin();
    const space = new QuerySpace(readCatalogVocabulary(join(fleet.dataDir, 'catalog.db')));
    const authorization = `Bearer ${await mintToken(loadOrCreateSecret(join(fleet.dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 })}`;
    // Every gateway traced, so that each run says whether a full collection fell in it (a disk
    // hit's tail), and the base as this one: the trace's writes are part of what a run costs.
    const gateway = await fleet.gateway('gateway', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'true' }, ['--trace-gc']);
    const disk = await fleet.gateway(
      'gateway-disk',
      origin,
      {
        CATALOG_GATEWAY_ACCESS_LOG: 'true',
        CATALOG_GATEWAY_CACHE_MAX_BYTES: String(MIB),
        CATALOG_GATEWAY_CACHE_ADMISSION: 'false',
      },
      ['--trace-gc'],
    );
    // The same with admission on, as a gateway runs by default: a disk hit is promoted only when
    // admission takes it, which keeps part of the cycle in memory; its rows are a mix of memory and
    // disk hits (the share answered from disk is reported), the worst case is the one above.
    const admitting = await fleet.gateway(
      'gateway-disk-admitting',
      origin,
      { CATALOG_GATEWAY_ACCESS_LOG: 'true', CATALOG_GATEWAY_CACHE_MAX_BYTES: String(MIB) },
      ['--trace-gc'],
    );
    const base =
      baseDir === undefined
        ? undefined
        : await fleet.gateway('base', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'true', CATALOG_GATEWAY_EVENTS_REGISTER: 'false' }, ['--trace-gc'], baseDir);
    const hotTarget = await findHotTarget(origin.url, space, authorization);
    const targets = [hotTarget, ...Array.from({ length: URLS - 1 }, () => space.take())];
    const gateways = base === undefined ? [gateway, disk, admitting] : [gateway, disk, admitting, base];
    for (const server of gateways) await warmCache(server.url, targets, authorization);
    const hit = await captureResponse(`${gateway.url}${hotTarget}`, authorization);
    const responseFile = join(fleet.logDir, 'hit-response.json');
    writeFileSync(responseFile, JSON.stringify(hit));
    const bare = await fleet.script('bare-server', 'bare-server.ts', [responseFile], GATEWAY_NODE_FLAGS);
    for (const server of [bare, origin, ...gateways]) pin(server.pid, CORES?.server);

    const targetsFile = join(fleet.logDir, 'targets.txt');
    writeFileSync(targetsFile, `${targets.join('\n')}\n`);
    const zipfOrder = join(fleet.logDir, 'zipf-order.txt');
    const zipf = new ZipfSampler(URLS, 1, new SeededRandom(1));
    writeFileSync(zipfOrder, `${Array.from({ length: ZIPF_SEQUENCE }, () => zipf.next() + 1).join('\n')}\n`);
    const cycleOrder = join(fleet.logDir, 'cycle-order.txt');
    writeFileSync(cycleOrder, `${Array.from({ length: ZIPF_SEQUENCE }, (_, i) => (i % URLS) + 1).join('\n')}\n`);
    const files =
      (order: string) =>
      (kind: Workload): WorkloadFiles =>
        kind === 'hot' ? {} : { targetsFile, orderFile: order };
    const servers = {
      bare,
      gateway: traced(gateway),
      'gateway-disk': traced(disk),
      'gateway-disk-admitting': traced(admitting),
      ...(base === undefined ? {} : { base: traced(base) }),
    };
    const rounds = { duration: options.duration, connections: options.connections, rounds: options.rounds, authorization, hotTarget, log };

    const abScenarios: Scenario[] = [
      { id: 'bare-hot', label: 'bare node:http (ceiling), one URL', server: 'bare', workload: 'hot', hits: true },
      { id: 'gateway-hot', label: 'this gateway, one URL', server: 'gateway', workload: 'hot', hits: true },
      { id: 'base-hot', label: 'base gateway, one URL', server: 'base', workload: 'hot', hits: true },
      { id: 'bare-zipf', label: 'bare node:http (ceiling), 1,000 URLs (Zipf)', server: 'bare', workload: 'zipf', hits: true },
      { id: 'gateway-zipf', label: 'this gateway, 1,000 URLs (Zipf)', server: 'gateway', workload: 'zipf', hits: true },
      { id: 'base-zipf', label: 'base gateway, 1,000 URLs (Zipf)', server: 'base', workload: 'zipf', hits: true },
    ];
    let ab: ScenarioResult[] = [];
    if (base !== undefined) {
      log('warming every scenario for 2 s…');
      await runRounds(abScenarios, servers, origin, { ...rounds, workload: files(zipfOrder), duration: 2, rounds: 1, log: () => undefined });
      ab = await runRounds(abScenarios, servers, origin, { ...rounds, workload: files(zipfOrder) });
    }
    const runsOf = (results: readonly ScenarioResult[], id: string) => results.find((r) => r.id === id)?.runs ?? [];
    const versus = (base === undefined ? [] : (['hot', 'zipf'] as const)).map((workload) => ({
      workload,
      rps: ratioByRound(runsOf(ab, `gateway-${workload}`), runsOf(ab, `base-${workload}`), (r) => r.requestsPerSecond),
      p99: ratioByRound(runsOf(ab, `gateway-${workload}`), runsOf(ab, `base-${workload}`), (r) => r.p99Ms),
      // The server's CPU a request moves far less with the machine's noise than req/s.
      cpu: ratioByRound(runsOf(ab, `gateway-${workload}`), runsOf(ab, `base-${workload}`), (r) => r.serverCpuUs),
    }));

    const tierScenarios: Scenario[] = [
      { id: 'bare-zipf', label: 'bare node:http (ceiling), 1,000 URLs in a cycle', server: 'bare', workload: 'zipf', hits: true },
      { id: 'memory-cycle', label: 'memory hits: 1,000 URLs in a cycle, all in memory', server: 'gateway', workload: 'zipf', hits: true },
      { id: 'disk-cycle', label: 'disk hits: 1,000 URLs in a cycle over a 1 MiB LRU memory', server: 'gateway-disk', workload: 'zipf', hits: true },
      // Most clients accept gzip, the coding the gateway keeps: their disk hits decompress nothing.
      { id: 'memory-cycle-gzip', label: 'memory hits, gzip client', server: 'gateway', workload: 'zipf', hits: true, acceptEncoding: 'gzip' },
      { id: 'disk-cycle-gzip', label: 'disk hits, gzip client', server: 'gateway-disk', workload: 'zipf', hits: true, acceptEncoding: 'gzip' },
      {
        id: 'disk-admitting-cycle',
        label: 'disk hits over a 1 MiB memory with admission (the default)',
        server: 'gateway-disk-admitting',
        workload: 'zipf',
        hits: true,
      },
      {
        id: 'disk-admitting-cycle-gzip',
        label: 'disk hits with admission, gzip client',
        server: 'gateway-disk-admitting',
        workload: 'zipf',
        hits: true,
        acceptEncoding: 'gzip',
      },
    ];
    await runRounds(tierScenarios, servers, origin, { ...rounds, workload: files(cycleOrder), duration: TIER_WARM_SECONDS, rounds: 1, log: () => undefined });
    const diskBefore = await Promise.all([disk, admitting].map((server) => diskHits(server.adminUrl ?? '')));
    const tiers = await runRounds(tierScenarios, servers, origin, { ...rounds, workload: files(cycleOrder) });
    const share = async (server: ServerProcess, before: number, prefix: string): Promise<number> => {
      const answered = (await diskHits(server.adminUrl ?? '')) - before;
      const responses = [prefix, `${prefix}-gzip`].reduce((n, id) => n + runsOf(tiers, id).reduce((m, r) => m + r.responses, 0), 0);
      return responses === 0 ? 0 : answered / responses;
    };
    return {
      tool: 'catalog-gateway bench',
      mode: baseDir === undefined ? 'disk-hits' : 'ab',
      startedAt,
      command,
      machine: machineInfo(),
      base: baseDir ?? '',
      settings: { duration: options.duration, connections: options.connections, rounds: options.rounds },
      ab,
      versus,
      tiers,
      diskOverMemory: [false, true].flatMap((admission) =>
        (['identity', 'gzip'] as const).map((client) => {
          const suffix = client === 'gzip' ? '-gzip' : '';
          const [disk, memory] = [runsOf(tiers, `${admission ? 'disk-admitting-cycle' : 'disk-cycle'}${suffix}`), runsOf(tiers, `memory-cycle${suffix}`)];
          return {
            client,
            admission,
            rps: ratioByRound(disk, memory, (r) => r.requestsPerSecond),
            p99: ratioByRound(disk, memory, (r) => r.p99Ms),
            cpu: ratioByRound(disk, memory, (r) => r.serverCpuUs),
          };
        }),
      ),
      diskShare: [await share(disk, diskBefore[0] ?? 0, 'disk-cycle'), await share(admitting, diskBefore[1] ?? 0, 'disk-admitting-cycle')],
    };
  } finally {
    await fleet.close();
  }
}

const f2 = (s: Spread): string => `${s.median.toFixed(2)} (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;

function rows(results: readonly ScenarioResult[]): string[] {
  return results.map(
    (r) =>
      `| ${r.label} | ${r.requestsPerSecond.median.toFixed(0)} | ${f2(r.rpsVsBare)} | ${r.p99Ms.median.toFixed(2)} ms | ${f2(r.p99VsBare)} | ${r.serverCpuUs.median.toFixed(1)} |`,
  );
}

export function abMarkdown(r: AbReport): string {
  const head = ['| scenario | req/s (median) | × bare req/s | p99 | p99 × bare | server µs/req |', '|---|---:|---:|---:|---:|---:|'];
  const versus =
    r.base === ''
      ? []
      : [
          ...head,
          ...rows(r.ab),
          '',
          ...r.versus.map(
            (v) =>
              `- this gateway over the base, ${v.workload === 'hot' ? 'one URL' : '1,000 URLs'}: req/s ${f2(v.rps)}, p99 ${f2(v.p99)}, server CPU a request ${f2(v.cpu)} (median and range of ${r.settings.rounds} rounds)`,
          ),
          '',
        ];
  return [
    r.base === ''
      ? `### Disk hits against memory hits (${r.startedAt})`
      : `### This gateway against ${r.base}, and disk hits against memory hits (${r.startedAt})`,
    '',
    machineLine(r.machine),
    '',
    ...versus,
    ...head,
    ...rows(r.tiers),
    '',
    ...r.diskOverMemory.map(
      (d) =>
        `- disk hits over memory hits, ${d.client} client, ${d.admission ? 'with admission' : 'every one promoted'}: req/s ${f2(d.rps)}, p99 ${f2(d.p99)}, server CPU a request ${f2(d.cpu)}`,
    ),
    `- the disk tier answered ${(r.diskShare[0] * 100).toFixed(1)} % of the requests to the gateway without admission, ${(r.diskShare[1] * 100).toFixed(1)} % with it`,
    '',
    `${r.settings.rounds} rounds × ${r.settings.duration} s, ${r.settings.connections} connections, order rotated each round. \`${r.command}\``,
    '',
  ].join('\n');
}
