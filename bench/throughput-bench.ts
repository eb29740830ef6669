/**
 * `npm run bench` (default mode): starts the origin, two gateways (access log on, to a file; and
 * off), nginx proxy_cache and the bare ceiling, pins them to one core, warms every cache with the
 * same 1,000 URLs, runs the interleaved rounds with wrk on the other core and assembles the report.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import { GATEWAY_NODE_FLAGS } from '../src/loadtest/server-process.ts';
import { ZipfSampler } from '../src/loadtest/zipf.ts';
import { SeededRandom } from '../src/origin/random.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions } from './args.ts';
import { Fleet, REPO_ROOT } from './fleet.ts';
import { startRedisProcess, type RedisProcess } from '../src/cli/redis-server.ts';
import { startNginx, type NginxProcess } from './nginx.ts';
import { ALL_CORES, CORES, pin } from './process-cpu.ts';
import { newestProfile, summariseProfile, type ProfileSummary } from './profile-summary.ts';
import { QuerySpace } from './query-space.ts';
import { LOCAL_DIR } from './results-file.ts';
import type { Spread } from './stats.ts';
import { machineLine, mib, scenarioTable } from './table.ts';
import {
  captureResponse,
  findHotTarget,
  gatewayMemory,
  ratioByRound,
  runRounds,
  traced,
  warmCache,
  type GatewayMemory,
  type RunRecord,
  type Scenario,
  type ScenarioResult,
  type ServerRole,
  type Servers,
  type Workload,
  type WorkloadFiles,
} from './throughput.ts';

const ZIPF_URLS = 1000;
const ZIPF_SEQUENCE = 100_000;
/** Distinct targets written per miss run and second: well above what a miss can be answered at. */
const DISTINCT_PER_SECOND = 4000;
/** The issue's targets for the hit path with authentication, access log and metrics on. */
const TARGET_RPS_VS_BARE = 0.8;
const TARGET_P99_VS_BARE = 1.5;
const HIT_PATHS = ['gateway-hot', 'gateway-zipf'] as const;
/** What Chromium sends: the compressing client of the compression scenarios. */
export const BROWSER_ACCEPT_ENCODING = 'gzip, deflate, br, zstd';
/** A compressing client's hit against an identity client's, same workload, same round. */
const TARGET_CODED_VS_IDENTITY = 0.9;

export interface ThroughputReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'throughput';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: {
    readonly duration: number;
    readonly connections: number;
    readonly rounds: number;
    readonly catalogBooks: number;
    readonly zipfUrls: number;
    readonly loadGenerator: string;
    readonly pinning: string;
  };
  readonly hotTarget: string;
  readonly hitResponseBytes: number;
  readonly hitCacheStatus: string;
  readonly scenarios: readonly ScenarioResult[];
  readonly targets: readonly Target[];
  /** A compressing client's hits over an identity client's, per workload. */
  readonly coded: readonly CodedTarget[];
  readonly gatewayAfterBench: GatewayMemory;
  /** The gateway the miss scenario filled, which holds its distinct searches. */
  readonly fillingAfterBench: GatewayMemory;
  /** With --cpu-prof: a V8 CPU profile per Node server answering hits, and its busy time per request served. */
  readonly profiles: readonly ServerProfile[] | null;
}

export interface Target {
  readonly scenario: string;
  readonly rpsVsBare: Spread;
  readonly p99VsBare: Spread;
  /** The gateway's req/s over nginx's, same workload, same round; null when nginx did not run. */
  readonly rpsVsNginx: Spread | null;
  readonly rpsMet: boolean;
  readonly p99Met: boolean;
  readonly aheadOfNginx: boolean | null;
}

export interface CodedTarget {
  readonly scenario: string;
  readonly rpsVsIdentity: Spread;
  readonly met: boolean;
}

export interface ServerProfile extends ProfileSummary {
  readonly server: ServerRole;
  readonly file: string;
  /** Requests the server answered while profiled, warm-up excluded. */
  readonly served: number;
  readonly busyUsPerRequest: number;
}

const SCENARIOS: readonly Scenario[] = [
  { id: 'bare-hot', label: 'bare node:http, prebuilt hit bytes (ceiling), one URL', server: 'bare', workload: 'hot', hits: true },
  { id: 'nginx-hot', label: 'nginx proxy_cache + access log, one URL', server: 'nginx', workload: 'hot', hits: true },
  { id: 'gateway-hot', label: 'gateway hit, one URL (auth + access log + metrics)', server: 'gateway', workload: 'hot', hits: true },
  {
    id: 'gateway-hot-gzip',
    label: "gateway hit, one URL, a browser's Accept-Encoding (gzip, deflate, br, zstd)",
    server: 'gateway',
    workload: 'hot',
    hits: true,
    acceptEncoding: BROWSER_ACCEPT_ENCODING,
  },
  { id: 'gateway-hot-nolog', label: 'gateway hit, one URL, access log off', server: 'gateway-nolog', workload: 'hot', hits: true },
  { id: 'bare-zipf', label: 'bare node:http, same bytes for 1,000 URLs (ceiling)', server: 'bare', workload: 'zipf', hits: true },
  { id: 'nginx-zipf', label: 'nginx proxy_cache + access log, 1,000 URLs (Zipf)', server: 'nginx', workload: 'zipf', hits: true },
  { id: 'gateway-zipf', label: 'gateway hits, 1,000 URLs (Zipf; auth + access log + metrics)', server: 'gateway', workload: 'zipf', hits: true },
  {
    id: 'gateway-zipf-gzip',
    label: "gateway hits, 1,000 URLs (Zipf), a browser's Accept-Encoding",
    server: 'gateway',
    workload: 'zipf',
    hits: true,
    acceptEncoding: BROWSER_ACCEPT_ENCODING,
  },
  { id: 'gateway-zipf-nolog', label: 'gateway hits, 1,000 URLs (Zipf), access log off', server: 'gateway-nolog', workload: 'zipf', hits: true },
  { id: 'gateway-hot-2w', label: 'gateway hit, one URL, 2 workers on both cores (shared with wrk)', server: 'gateway-2-workers', workload: 'hot', hits: true },
  { id: 'nginx-hot-2w', label: 'nginx proxy_cache + access log, one URL, 2 workers on both cores', server: 'nginx-2-workers', workload: 'hot', hits: true },
  { id: 'gateway-zipf-2w', label: 'gateway hits, 1,000 URLs (Zipf), 2 workers on both cores', server: 'gateway-2-workers', workload: 'zipf', hits: true },
  {
    id: 'nginx-zipf-2w',
    label: 'nginx proxy_cache + access log, 1,000 URLs (Zipf), 2 workers on both cores',
    server: 'nginx-2-workers',
    workload: 'zipf',
    hits: true,
  },
  { id: 'origin', label: 'origin directly, distinct searches', server: 'origin', workload: 'distinct', hits: false },
  { id: 'gateway-miss', label: 'gateway cold misses, distinct searches (fill)', server: 'gateway-fill', workload: 'distinct', hits: false },
];

export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);

export async function throughputBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<ThroughputReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  const profileRoot = join(LOCAL_DIR, 'profiles', startedAt.replace(/[:.]/g, '-'));
  const PROFILED = ['bare', 'gateway', 'gateway-nolog'] as const;
  // Every Node server prints its collections, which the bench counts (gc-trace.ts).
  const nodeFlags = (role: ServerRole): string[] => ['--trace-gc', ...(options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${join(profileRoot, role)}`] : [])];
  let nginx: NginxProcess | undefined;
  let nginxWorkers: NginxProcess | undefined;
  let redis: RedisProcess | undefined;
  try {
    log('starting the origin (seeds the 100,000-book catalog on first start)…');
    const origin = await fleet.origin({}, nodeFlags('origin'));
    const vocabulary = readCatalogVocabulary(join(fleet.dataDir, 'catalog.db'));
    const space = new QuerySpace(vocabulary);
    const token = await mintToken(loadOrCreateSecret(join(fleet.dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 });
    const authorization = `Bearer ${token}`;
    log('starting the gateways (access log on, to a file; and off) and nginx…');
    const gateway = await fleet.gateway('gateway', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'true' }, nodeFlags('gateway'));
    const quiet = await fleet.gateway('gateway-nolog', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'false' }, nodeFlags('gateway-nolog'));
    // Misses fill a gateway of their own: 5,000 new entries a run leave the collector a full
    // collection to make, which fell on the next hit run on the same process (the identity
    // client's, in most rounds) and set its tail (docs/performance.md, "How to measure").
    const filling = await fleet.gateway('gateway-fill', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'true' }, nodeFlags('gateway-fill'));
    nginx = await startNginx(join(fleet.logDir, 'nginx'), origin.url);
    // The workers comparison: each server as two processes sharing both cores (with wrk). nginx's
    // workers share one cache zone; the gateway's share theirs through Redis, as a fleet does.
    redis = await startRedisProcess({ dir: join(fleet.logDir, 'redis') });
    const gatewayWorkers = await fleet.gateway(
      'gateway-2-workers',
      origin,
      { CATALOG_GATEWAY_ACCESS_LOG: 'true', CATALOG_GATEWAY_WORKERS: '2', CATALOG_GATEWAY_REDIS_URL: redis.url },
      nodeFlags('gateway-2-workers'),
    );
    nginxWorkers = await startNginx(join(fleet.logDir, 'nginx-2-workers'), origin.url, 2);

    const hotTarget = await findHotTarget(origin.url, space, authorization);
    const zipfTargets = [hotTarget, ...Array.from({ length: ZIPF_URLS - 1 }, () => space.take())];
    for (const server of [gateway, quiet, filling, nginx, gatewayWorkers, nginxWorkers]) await warmCache(server.url, zipfTargets, authorization);
    const hit = await captureResponse(`${gateway.url}${hotTarget}`, authorization);
    if (!hit.cacheStatus.includes('hit')) throw new Error(`the hot URL is not a hit after warming (Cache-Status: ${hit.cacheStatus})`);
    const nginxHit = await captureResponse(`${nginx.url}${hotTarget}`, authorization);
    if (nginxHit.cacheStatus !== 'HIT') throw new Error(`nginx does not serve the hot URL from its cache (Cache-Status: ${nginxHit.cacheStatus})`);
    const responseFile = join(fleet.logDir, 'hit-response.json');
    writeFileSync(responseFile, JSON.stringify(hit));
    // The ceiling runs on the gateway's runtime: with Node's default flags it slows for good after
    // its first idle collection (GATEWAY_NODE_FLAGS), and a handicapped ceiling is no ceiling.
    const bare = await fleet.script('bare-server', 'bare-server.ts', [responseFile], [...GATEWAY_NODE_FLAGS, ...nodeFlags('bare')]);

    const servers: Servers = {
      bare: traced(bare),
      nginx,
      gateway: traced(gateway),
      'gateway-nolog': traced(quiet),
      'gateway-fill': traced(filling),
      origin: traced(origin),
      'gateway-2-workers': traced(gatewayWorkers),
      'nginx-2-workers': nginxWorkers,
    };
    for (const server of [bare, nginx, gateway, quiet, filling, origin]) pin(server.pid, CORES?.server);
    for (const server of [gatewayWorkers, nginxWorkers]) pin(server.pid, ALL_CORES);

    const zipfFile = join(fleet.logDir, 'zipf-targets.txt');
    writeFileSync(zipfFile, `${zipfTargets.join('\n')}\n`);
    const orderFile = join(fleet.logDir, 'zipf-order.txt');
    const zipf = new ZipfSampler(ZIPF_URLS, 1, new SeededRandom(1));
    writeFileSync(orderFile, `${Array.from({ length: ZIPF_SEQUENCE }, () => zipf.next() + 1).join('\n')}\n`);
    let distinctRuns = 0;
    const workload = (kind: Workload): WorkloadFiles => {
      if (kind === 'hot') return {};
      if (kind === 'zipf') return { targetsFile: zipfFile, orderFile };
      const file = join(fleet.logDir, `distinct-${++distinctRuns}.txt`);
      writeFileSync(file, `${Array.from({ length: options.duration * DISTINCT_PER_SECOND }, () => space.take()).join('\n')}\n`);
      return { targetsFile: file };
    };

    const selected = SCENARIOS.filter((s) => options.scenarios?.includes(s.id) ?? true);
    const rounds = { duration: options.duration, connections: options.connections, rounds: options.rounds, authorization, hotTarget, workload, log };
    // Every hit scenario is warmed, not only the hot URL's: the cache's warming fills leave a
    // gateway a full collection or two to make, which fell on the first round's 1,000-URL rows.
    log('warming up each hit scenario for 2 s…');
    await runRounds(
      selected.filter((s) => s.hits),
      servers,
      origin,
      { ...rounds, duration: 2, rounds: 1, log: () => undefined },
    );
    const results = await runRounds(selected, servers, origin, rounds);
    for (const s of selected) {
      const result = results.find((r) => r.id === s.id);
      if (s.hits && (result?.originCallsPerRun.max ?? 0) > 0) log(`warning: ${s.id} reached the origin: hits are not hits`);
    }
    const memory = await gatewayMemory(gateway);
    const fillingMemory = await gatewayMemory(filling);
    let profiles: ServerProfile[] | null = null;
    if (options.cpuProf) {
      profiles = [];
      for (const role of PROFILED) {
        await fleet.stop({ bare, gateway, 'gateway-nolog': quiet }[role]);
        const file = newestProfile(join(profileRoot, role));
        if (file === undefined) continue;
        const served = results
          .filter((r) => selected.find((s) => s.id === r.id)?.server === role)
          .reduce((n, r) => n + r.runs.reduce((m, run) => m + run.responses, 0), 0);
        const summary = summariseProfile(file, REPO_ROOT);
        profiles.push({
          server: role,
          file: file.replace(`${REPO_ROOT}/`, ''),
          served,
          busyUsPerRequest: served === 0 ? 0 : (summary.busyMs * 1000) / served,
          ...summary,
        });
      }
    }
    return {
      tool: 'catalog-gateway bench',
      mode: 'throughput',
      startedAt,
      command,
      machine: machineInfo(),
      settings: {
        duration: options.duration,
        connections: options.connections,
        rounds: options.rounds,
        catalogBooks: vocabulary.titles.length,
        zipfUrls: ZIPF_URLS,
        loadGenerator: `wrk, 1 thread, ${options.connections} connections, keep-alive`,
        pinning: CORES === undefined ? 'none (one core)' : `servers on CPU ${CORES.server}, wrk on CPU ${CORES.generator} (taskset)`,
      },
      hotTarget,
      hitResponseBytes: Buffer.from(hit.body, 'base64').length,
      hitCacheStatus: hit.cacheStatus,
      scenarios: results,
      targets: targetsOf(results),
      coded: codedOf(results),
      gatewayAfterBench: memory,
      fillingAfterBench: fillingMemory,
      profiles,
    };
  } finally {
    await Promise.all([nginx?.stop(), nginxWorkers?.stop()]);
    await fleet.close();
    await redis?.kill();
  }
}

const rps = (r: RunRecord): number => r.requestsPerSecond;

function targetsOf(results: readonly ScenarioResult[]): Target[] {
  return HIT_PATHS.flatMap((id) => {
    const hit = results.find((r) => r.id === id);
    if (hit === undefined) return [];
    const peer = results.find((r) => r.id === `nginx-${hit.workload}`);
    const rpsVsNginx = peer === undefined ? null : ratioByRound(hit.runs, peer.runs, rps);
    return [
      {
        scenario: id,
        rpsVsBare: hit.rpsVsBare,
        p99VsBare: hit.p99VsBare,
        rpsVsNginx,
        rpsMet: hit.rpsVsBare.median >= TARGET_RPS_VS_BARE,
        p99Met: hit.p99VsBare.median <= TARGET_P99_VS_BARE,
        aheadOfNginx: rpsVsNginx === null ? null : rpsVsNginx.median > 1,
      },
    ];
  });
}

/** Each compressing client's scenario against the identity client's on the same workload, round by round. */
function codedOf(results: readonly ScenarioResult[]): CodedTarget[] {
  return HIT_PATHS.flatMap((id) => {
    const identity = results.find((r) => r.id === id);
    const coded = results.find((r) => r.id === `${id}-gzip`);
    if (identity === undefined || coded === undefined) return [];
    const rpsVsIdentity = ratioByRound(coded.runs, identity.runs, rps);
    return [{ scenario: coded.id, rpsVsIdentity, met: rpsVsIdentity.median >= TARGET_CODED_VS_IDENTITY }];
  });
}

export function throughputMarkdown(report: ThroughputReport): string {
  const verdict = (met: boolean): string => (met ? 'met' : '**missed**');
  const range = (s: Spread): string => `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
  const g = report.gatewayAfterBench;
  const lines = [
    scenarioTable(report.scenarios),
    '',
    ...report.targets.map(
      (t) =>
        `Target \`${t.scenario}\`: req/s ${range(t.rpsVsBare)} bare (≥ ${TARGET_RPS_VS_BARE}×) — ${verdict(t.rpsMet)}; p99 ${range(t.p99VsBare)} bare (≤ ${TARGET_P99_VS_BARE}×) — ${verdict(t.p99Met)}; ${t.rpsVsNginx === null ? 'nginx not in this run' : `req/s ${range(t.rpsVsNginx)} nginx — ${t.aheadOfNginx === true ? 'ahead' : '**behind**'}`}.`,
    ),
    ...report.coded.map(
      (c) =>
        `Compressing client \`${c.scenario}\`: req/s ${range(c.rpsVsIdentity)} the identity client's hit (≥ ${TARGET_CODED_VS_IDENTITY}×) — ${verdict(c.met)}.`,
    ),
    `Gateway after the bench: RSS ${mib(g.rssBytes)} with ${g.cacheEntries ?? 'n/a'} cached responses (${mib(g.cacheBytes)} counted against the 256 MiB bound); access log written: ${mib(g.accessLogBytes)}. The gateway the misses filled: RSS ${mib(report.fillingAfterBench.rssBytes)} with ${report.fillingAfterBench.cacheEntries ?? 'n/a'} cached responses (${mib(report.fillingAfterBench.cacheBytes)} counted).`,
    `Hot URL \`${report.hotTarget}\`, ${report.hitResponseBytes} B body, \`Cache-Status: ${report.hitCacheStatus}\`; the Zipf workload asks ${report.settings.zipfUrls.toLocaleString('en-US')} warmed URLs in a Zipf(s = 1) order (the hot URL first).`,
    `${report.settings.rounds} rounds × ${report.settings.duration} s per scenario, order rotated each round; ${report.settings.loadGenerator}; ${report.settings.pinning}. Ratios are per round against the bare server on the same workload in the same round, then the median (range over rounds). Server µs/req is the server process's own CPU time (all threads) per response.`,
    `Machine: ${machineLine(report.machine)}. Catalog: ${report.settings.catalogBooks.toLocaleString('en-US')} books. Command: \`${report.command}\`.`,
  ];
  if (report.profiles !== null) {
    const table = (title: string, spots: ProfileSummary['functions'], withWhere: boolean): void => {
      lines.push(
        '',
        title,
        '',
        withWhere ? '| self ms | share of busy | function | where |' : '| self ms | share of busy | module |',
        withWhere ? '|---:|---:|---|---|' : '|---:|---:|---|',
      );
      for (const f of spots) lines.push(`| ${f.selfMs.toFixed(0)} | ${(f.share * 100).toFixed(1)} % | ${f.name}${withWhere ? ` | ${f.where}` : ''} |`);
    };
    const perRequest = report.profiles.map(
      (p) => `${p.server} ${p.busyUsPerRequest.toFixed(0)} µs (${p.served.toLocaleString('en-US')} requests, ${(p.busyMs / 1000).toFixed(1)} s busy)`,
    );
    lines.push(
      '',
      `CPU profiles (${report.profiles[0]?.file.replace(/\/[^/]+\/[^/]+$/, '') ?? ''}): busy CPU time per request served — ${perRequest.join('; ')}.`,
    );
    for (const p of report.profiles) {
      if (p.server === 'gateway-nolog') continue;
      table(`Self time by module, ${p.server}:`, p.modules.slice(0, 12), false);
      if (p.server === 'gateway') table('Self time by function, gateway:', p.functions, true);
    }
  }
  return `${lines.join('\n')}\n`;
}
