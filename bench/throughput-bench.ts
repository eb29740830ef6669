/**
 * `npm run bench` (default mode): starts the origin, two gateways (access log on, to a file; and
 * off) and the bare ceiling, warms the caches, runs the rounds and assembles the report.
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import type { PlannedRequest } from '../src/loadtest/load-run.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions } from './args.ts';
import { Fleet, REPO_ROOT } from './fleet.ts';
import { summariseProfile, type ProfileSummary } from './profile-summary.ts';
import { QuerySpace } from './query-space.ts';
import { LOCAL_DIR } from './results-file.ts';
import type { Spread } from './stats.ts';
import { machineLine, mib, scenarioTable } from './table.ts';
import {
  captureResponse, findHotTarget, gatewayMemory, runRounds, warmCache, warmUp,
  type GatewayMemory, type Scenario, type ScenarioResult, type ServerRole, type Servers,
} from './throughput.ts';

export const WARMED_URLS = 10_000;
/** The issue's targets for the hit path with authentication and access logging on. */
export const TARGET_RPS_VS_BARE = 0.8;
export const TARGET_P99_VS_BARE = 1.5;
const HIT_PATH = 'gateway-hot';

export interface ThroughputReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'throughput';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: {
    readonly duration: number;
    readonly connections: number;
    readonly pipelining: 1;
    readonly rounds: number;
    readonly catalogBooks: number;
    readonly warmedUrls: number;
    readonly loadGenerator: string;
  };
  readonly hotTarget: string;
  readonly hitResponseBytes: number;
  readonly hitCacheStatus: string;
  readonly scenarios: readonly ScenarioResult[];
  readonly targets: {
    readonly scenario: string;
    readonly rpsVsBare: Spread;
    readonly p99VsBare: Spread;
    readonly rpsTarget: number;
    readonly p99Target: number;
    readonly rpsMet: boolean;
    readonly p99Met: boolean;
  };
  readonly gatewayAfterBench: GatewayMemory;
  /** With --cpu-prof: a V8 CPU profile per server answering hits, and its busy time per request served. */
  readonly profiles: readonly ServerProfile[] | null;
}

export interface ServerProfile extends ProfileSummary {
  readonly server: ServerRole;
  readonly file: string;
  /** Requests the server answered while profiled, warm-up included. */
  readonly served: number;
  readonly busyUsPerRequest: number;
}

function newestProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

export async function throughputBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<ThroughputReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  const profileRoot = join(LOCAL_DIR, 'profiles', startedAt.replace(/[:.]/g, '-'));
  const PROFILED = ['bare', 'gateway', 'gateway-nolog'] as const;
  const profileFlags = (role: ServerRole): string[] => (options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${join(profileRoot, role)}`] : []);
  try {
    log('starting the origin (seeds the 100,000-book catalog on first start)…');
    const origin = await fleet.origin();
    const vocabulary = readCatalogVocabulary(join(fleet.dataDir, 'catalog.db'));
    const space = new QuerySpace(vocabulary);
    const token = await mintToken(loadOrCreateSecret(join(fleet.dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 });
    const headers = { authorization: `Bearer ${token}` };
    log('starting the gateways (access log on, to a file; and off)…');
    const gateway = await fleet.gateway('gateway', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'true' }, profileFlags('gateway'));
    const quiet = await fleet.gateway('gateway-nolog', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'false' }, profileFlags('gateway-nolog'));

    const hotTarget = await findHotTarget(origin.url, space, headers);
    const hot: PlannedRequest = { path: hotTarget, headers };
    await warmCache(gateway.url, [hotTarget], headers);
    await warmCache(quiet.url, [hotTarget], headers);
    const hit = await captureResponse(`${gateway.url}${hotTarget}`, headers);
    if (!hit.cacheStatus.includes('hit')) throw new Error(`the hot URL is not a hit after warming (Cache-Status: ${hit.cacheStatus})`);
    const responseFile = join(fleet.logDir, 'hit-response.json');
    writeFileSync(responseFile, JSON.stringify(hit));
    const bare = await fleet.script('bare-server', 'bare-server.ts', [responseFile], profileFlags('bare'));

    const selected = (id: string): boolean => options.scenarios?.includes(id) ?? true;
    const warmed = selected('gateway-10k') ? Array.from({ length: WARMED_URLS }, () => space.take()) : [];
    if (warmed.length > 0) log(`warming ${WARMED_URLS} URLs in the gateway…`);
    await warmCache(gateway.url, warmed, headers);
    // Each connection cycles through its own share of the warmed URLs, prebuilt, so the
    // generator costs no more here than on the hot URL.
    const shares = Array.from({ length: options.connections }, (_, c) => warmed.filter((_, i) => i % options.connections === c).map((path) => ({ path, headers })));

    const servers: Servers = { bare, origin, gateway, 'gateway-nolog': quiet };
    const distinct = (): { next: () => PlannedRequest } => ({ next: () => ({ path: space.take(), headers }) });
    const scenarios: Scenario[] = ([
      { id: 'bare', label: 'bare node:http, prebuilt hit bytes (ceiling)', server: 'bare', requests: () => hot, hits: true },
      { id: 'origin', label: 'origin directly, distinct searches', server: 'origin', requests: distinct, hits: false },
      { id: 'gateway-hot', label: 'gateway hit, one hot URL (auth + access log on)', server: 'gateway', requests: () => hot, hits: true },
      { id: 'gateway-10k', label: `gateway hits over ${WARMED_URLS.toLocaleString('en-US')} warmed URLs`, server: 'gateway', requests: () => ({ perConnection: shares }), hits: true },
      { id: 'gateway-miss', label: 'gateway cold misses, distinct searches', server: 'gateway', requests: distinct, hits: false },
      { id: 'gateway-hot-nolog', label: 'gateway hit, one hot URL, access log off', server: 'gateway-nolog', requests: () => hot, hits: true },
    ] satisfies Scenario[]).filter((s) => selected(s.id));
    log('warming up each server for 2 s…');
    const warmServed = await warmUp(scenarios.filter((s) => s.id !== 'gateway-miss' && s.id !== 'gateway-10k'), servers, options.connections);
    const results = await runRounds(scenarios, servers, { duration: options.duration, connections: options.connections, rounds: options.rounds, log });
    for (const s of scenarios) {
      const result = results.find((r) => r.id === s.id);
      if (s.hits && s.server !== 'bare' && (result?.originCallsPerRun.max ?? 0) > 0) log(`warning: ${s.id} reached the origin: hits are not hits`);
    }
    const memory = await gatewayMemory(gateway);
    let profiles: ServerProfile[] | null = null;
    if (options.cpuProf) {
      profiles = [];
      for (const role of PROFILED) {
        await fleet.stop(servers[role]);
        const file = newestProfile(join(profileRoot, role));
        if (file === undefined) continue;
        const served = (warmServed.get(role) ?? 0) + results.filter((r) => scenarios.find((s) => s.id === r.id)?.server === role).reduce((n, r) => n + r.runs.reduce((m, run) => m + run.responses, 0), 0);
        const summary = summariseProfile(file, REPO_ROOT);
        profiles.push({ server: role, file: file.replace(`${REPO_ROOT}/`, ''), served, busyUsPerRequest: served === 0 ? 0 : (summary.busyMs * 1000) / served, ...summary });
      }
    }
    const hitPath = results.find((r) => r.id === HIT_PATH);
    const rpsVsBare = hitPath?.rpsVsBare ?? { median: Number.NaN, min: Number.NaN, max: Number.NaN };
    const p99VsBare = hitPath?.p99VsBare ?? rpsVsBare;
    return {
      tool: 'catalog-gateway bench',
      mode: 'throughput',
      startedAt,
      command,
      machine: machineInfo(),
      settings: {
        duration: options.duration,
        connections: options.connections,
        pipelining: 1,
        rounds: options.rounds,
        catalogBooks: vocabulary.titles.length,
        warmedUrls: WARMED_URLS,
        loadGenerator: 'autocannon 9 (one process, the bench itself); each server in its own child process',
      },
      hotTarget,
      hitResponseBytes: Buffer.from(hit.body, 'base64').length,
      hitCacheStatus: hit.cacheStatus,
      scenarios: results,
      targets: {
        scenario: HIT_PATH,
        rpsVsBare,
        p99VsBare,
        rpsTarget: TARGET_RPS_VS_BARE,
        p99Target: TARGET_P99_VS_BARE,
        rpsMet: rpsVsBare.median >= TARGET_RPS_VS_BARE,
        p99Met: p99VsBare.median <= TARGET_P99_VS_BARE,
      },
      gatewayAfterBench: memory,
      profiles,
    };
  } finally {
    await fleet.close();
  }
}

export function throughputMarkdown(report: ThroughputReport): string {
  const t = report.targets;
  const verdict = (met: boolean): string => (met ? 'met' : '**missed**');
  const g = report.gatewayAfterBench;
  const lines = [
    scenarioTable(report.scenarios),
    '',
    `Targets, hit path with authentication and access logging on (\`${t.scenario}\`): req/s ${t.rpsVsBare.median.toFixed(2)}× the bare server (target ≥ ${t.rpsTarget}×) — ${verdict(t.rpsMet)}; p99 ${t.p99VsBare.median.toFixed(2)}× (target ≤ ${t.p99Target}×) — ${verdict(t.p99Met)}.`,
    `Gateway after the bench: RSS ${mib(g.rssBytes)} with ${g.cacheEntries ?? 'n/a'} cached responses (${mib(g.cacheBytes)} counted against the 256 MiB bound); access log written: ${mib(g.accessLogBytes)}.`,
    ...saturationNote(report.scenarios),
    `Hot URL \`${report.hotTarget}\`, ${report.hitResponseBytes} B body, \`Cache-Status: ${report.hitCacheStatus}\`.`,
    `${report.settings.rounds} rounds × ${report.settings.duration} s per scenario, order rotated each round; ${report.settings.connections} connections, pipelining 1; ${report.settings.loadGenerator}. Ratios are per round against the bare server of the same round, then the median.`,
    `Machine: ${machineLine(report.machine)}. Catalog: ${report.settings.catalogBooks.toLocaleString('en-US')} books. Command: \`${report.command}\`.`,
  ];
  if (report.profiles !== null) {
    const table = (title: string, spots: ProfileSummary['functions'], withWhere: boolean): void => {
      lines.push('', title, '', withWhere ? '| self ms | share of busy | function | where |' : '| self ms | share of busy | module |', withWhere ? '|---:|---:|---|---|' : '|---:|---:|---|');
      for (const f of spots) lines.push(`| ${f.selfMs.toFixed(0)} | ${(f.share * 100).toFixed(1)} % | ${f.name}${withWhere ? ` | ${f.where}` : ''} |`);
    };
    const perRequest = report.profiles.map((p) => `${p.server} ${p.busyUsPerRequest.toFixed(0)} µs (${p.served.toLocaleString('en-US')} requests, ${(p.busyMs / 1000).toFixed(1)} s busy)`);
    lines.push('', `CPU profiles (${report.profiles[0]?.file.replace(/\/[^/]+\/[^/]+$/, '') ?? ''}): busy CPU time per request served — ${perRequest.join('; ')}.`);
    for (const p of report.profiles) {
      if (p.server === 'gateway-nolog') continue;
      table(`Self time by module, ${p.server}:`, p.modules.slice(0, 12), false);
      if (p.server === 'gateway') table('Self time by function, gateway:', p.functions, true);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A generator that is itself near one full core cannot show a faster server: say so beside the figures. */
function saturationNote(scenarios: readonly ScenarioResult[]): string[] {
  const busy = scenarios.filter((s) => s.generatorCpu.median >= 0.85);
  if (busy.length === 0) return [];
  const which = busy.map((s) => `\`${s.id}\` ${(s.generatorCpu.median * 100).toFixed(0)} %`).join(', ');
  return [`The load generator (one core) was near saturation in ${which} of CPU: those req/s are lower bounds, so ratios to the bare ceiling are, if anything, flattering.`];
}
