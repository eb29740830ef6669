/**
 * `npm run bench -- --http2`: the gateway at the edge against nginx at the edge and against the
 * ceiling, a bare node:http2 server answering the gateway's hit bytes (bare-h2-server.ts), all over
 * TLS and HTTP/2 on the same self-signed certificate (P-256), the gateway and nginx with an access
 * log, all pinned to one core with h2load on the other. Two workloads, interleaved by round as the
 * main bench does:
 *
 *   hits        one warmed URL, 8 connections × 16 streams (128 requests in flight, the shape
 *               the targets against the bare server were set with), for --duration seconds
 *   hits-1000   the same over 1,000 warmed URLs, each client asking for them in turn
 *   handshakes  batches of clients that each open a connection (a full TLS handshake: h2load
 *               resumes no session), make one request and go, for --duration seconds
 *
 * Each figure is the gateway's over nginx's (or the bare server's) in the same round, then the
 * median over rounds; a hit's p99 comes from h2load's per-request log, and the gateway's and the
 * bare server's collections in each run from V8's `--trace-gc` lines (gc-trace.ts): a full
 * collection stops every request in flight, and those are a hit's tail. With --cpu-prof the
 * gateway and the bare server are profiled and only hits are run: the report then gives each
 * one's busy CPU per hit by stage (profile-stages.ts), side by side.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'undici';
import { makeSelfSignedCertificate } from '../src/cli/local-certificate.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { BenchOptions } from './args.ts';
import { GATEWAY_NODE_FLAGS } from '../src/loadtest/server-process.ts';
import { Fleet, REPO_ROOT } from './fleet.ts';
import { GcTrace } from './gc-trace.ts';
import { H2LOAD_WARM_UP_SECONDS, h2loadHandshakes, h2loadSustained, type H2loadResult, type H2loadRun } from './h2load.ts';
import { startNginx, type NginxProcess } from './nginx.ts';
import { CORES, cpuSeconds, pin } from './process-cpu.ts';
import { newestProfile } from './profile-summary.ts';
import { profileClockUs, stageBreakdown } from './profile-stages.ts';
import { LOCAL_DIR } from './results-file.ts';
import { spread, type Spread } from './stats.ts';
import { machineLine } from './table.ts';
import { captureResponse, findHotTarget, warmCache } from './throughput.ts';

const CONNECTIONS = 8;
const STREAMS = 16;
/** Clients per handshake batch: below the listen backlog (511), so no SYN waits for a retry. */
const HANDSHAKE_BATCH = 200;
const WARM_URLS = 1000;

type Server = 'gateway' | 'nginx' | 'bare';
type Workload = 'hits' | 'hits-1000' | 'handshakes';

interface Scenario {
  readonly id: string;
  readonly label: string;
  readonly server: Server;
  readonly workload: Workload;
}

const SCENARIOS: readonly Scenario[] = [
  { id: 'gateway-h2-hits', label: 'gateway hit over TLS + HTTP/2 (auth + access log + metrics)', server: 'gateway', workload: 'hits' },
  { id: 'nginx-h2-hits', label: 'nginx http2 + proxy_cache + access log', server: 'nginx', workload: 'hits' },
  { id: 'bare-h2-hits', label: 'bare node:http2, prebuilt hit bytes by stream.respond + end (ceiling)', server: 'bare', workload: 'hits' },
  { id: 'gateway-h2-hits-1000', label: 'gateway hit over TLS + HTTP/2, 1,000 URLs', server: 'gateway', workload: 'hits-1000' },
  { id: 'nginx-h2-hits-1000', label: 'nginx http2 + proxy_cache + access log, 1,000 URLs', server: 'nginx', workload: 'hits-1000' },
  { id: 'bare-h2-hits-1000', label: 'bare node:http2, the same bytes for 1,000 URLs (ceiling)', server: 'bare', workload: 'hits-1000' },
  { id: 'gateway-handshakes', label: 'gateway: new TLS connection + one request', server: 'gateway', workload: 'handshakes' },
  { id: 'nginx-handshakes', label: 'nginx: new TLS connection + one request', server: 'nginx', workload: 'handshakes' },
];

export interface Http2Run {
  readonly round: number;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly meanMs: number;
  /** From h2load's per-request log; NaN for handshakes. */
  readonly p99Ms: number;
  /** The server's CPU time per request (per handshake in the handshake workload), µs. */
  readonly serverCpuUs: number;
  /** Full collections during the run; NaN for nginx. */
  readonly fullCollections: number;
  /** V8's pauses (and the full collections' marking steps) per request, µs; NaN for nginx. */
  readonly gcPauseUs: number;
  readonly non2xx: number;
  readonly errors: number;
  /** The TLS version and cipher h2load negotiated. */
  readonly tls: string;
}

export interface Http2ScenarioResult extends Scenario {
  readonly runs: readonly Http2Run[];
  readonly requestsPerSecond: Spread;
  readonly meanMs: Spread;
  readonly p99Ms: Spread;
  readonly serverCpuUs: Spread;
  readonly fullCollections: Spread;
  readonly gcPauseUs: Spread;
}

/** With --cpu-prof: a server's busy CPU per hit served, by stage. */
export interface Http2Profile {
  readonly server: 'gateway' | 'bare';
  readonly file: string;
  /** Hits answered while profiled (from the first warm-up run on; start-up and the cache's warming are left out): every run's count and its warm-up's, at the run's rate. */
  readonly served: number;
  readonly busyUsPerRequest: number;
  readonly stages: readonly { readonly name: string; readonly usPerRequest: number; readonly share: number }[];
}

export interface Http2Report {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'http2';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: {
    readonly duration: number;
    readonly rounds: number;
    readonly loadGenerator: string;
    readonly pinning: string;
    readonly certificate: string;
  };
  readonly hotTarget: string;
  readonly scenarios: readonly Http2ScenarioResult[];
  /** The gateway's figure over nginx's, same workload, same round. */
  readonly vsNginx: { readonly hitRps: Spread; readonly hitCpu: Spread; readonly handshakesPerSecond: Spread; readonly handshakeCpu: Spread };
  /** The gateway's hit over the bare node:http2 server's, same round: one URL, and 1,000. */
  readonly vsBare: { readonly hitRps: Spread; readonly hitP99: Spread; readonly hit1000Rps: Spread; readonly hit1000P99: Spread };
  readonly profiles: readonly Http2Profile[] | null;
}

/** Handshake batches until `seconds` of h2load time have passed, summed into one result. */
async function handshakeRun(target: H2loadRun, seconds: number): Promise<H2loadResult> {
  const total = { requests: 0, seconds: 0, non2xx: 0, errors: 0, meanWeighted: 0, tls: '' };
  while (total.seconds < seconds) {
    const batch = await h2loadHandshakes(target, HANDSHAKE_BATCH);
    total.requests += batch.requests;
    total.seconds += batch.seconds;
    total.non2xx += batch.non2xx;
    total.errors += batch.errors;
    total.meanWeighted += batch.meanMs * batch.requests;
    total.tls = batch.tls;
  }
  return {
    requests: total.requests,
    seconds: total.seconds,
    requestsPerSecond: total.requests / total.seconds,
    non2xx: total.non2xx,
    errors: total.errors,
    meanMs: total.meanWeighted / total.requests,
    p99Ms: Number.NaN,
    tls: total.tls,
  };
}

async function measure(scenario: Scenario, target: H2loadRun, pid: number, gc: GcTrace | undefined, seconds: number, round: number): Promise<Http2Run> {
  const gcBefore = gc?.read();
  const cpuBefore = cpuSeconds(pid);
  const result = scenario.workload === 'handshakes' ? await handshakeRun(target, seconds) : await h2loadSustained(target, CONNECTIONS, STREAMS, seconds);
  const cpu = cpuSeconds(pid) - cpuBefore;
  const gcAfter = gc?.read();
  const collected =
    gcBefore === undefined || gcAfter === undefined ? undefined : { full: gcAfter.full - gcBefore.full, ms: gcAfter.totalMs - gcBefore.totalMs };
  return {
    round,
    requests: result.requests,
    requestsPerSecond: result.requestsPerSecond,
    meanMs: result.meanMs,
    p99Ms: result.p99Ms,
    serverCpuUs: result.requests === 0 ? Number.NaN : (cpu * 1e6) / result.requests,
    fullCollections: collected?.full ?? Number.NaN,
    gcPauseUs: collected === undefined || result.requests === 0 ? Number.NaN : (collected.ms * 1000) / result.requests,
    non2xx: result.non2xx,
    errors: result.errors,
    tls: result.tls,
  };
}

/** Per round, the gateway's value over `peer`'s. */
function perRound(results: readonly Http2ScenarioResult[], workload: Workload, value: (run: Http2Run) => number, peer: Server = 'nginx'): Spread {
  const of = (server: Server): readonly Http2Run[] => results.find((r) => r.server === server && r.workload === workload)?.runs ?? [];
  const theirsByRound = new Map(of(peer).map((run) => [run.round, value(run)]));
  return spread(
    of('gateway').flatMap((run) => {
      const theirs = theirsByRound.get(run.round);
      return theirs === undefined || theirs === 0 ? [] : [value(run) / theirs];
    }),
  );
}

export async function http2Bench(options: BenchOptions, command: string, log: (m: string) => void): Promise<Http2Report> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  const profileRoot = join(LOCAL_DIR, 'profiles', `http2-${startedAt.replace(/[:.]/g, '-')}`);
  // Both Node servers print their collections (gc-trace.ts); with --cpu-prof, their profiles.
  const nodeFlags = (server: 'gateway' | 'bare'): string[] => [
    '--trace-gc',
    ...(options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${join(profileRoot, server)}`] : []),
  ];
  // A profile of hits alone: the handshakes would add the TLS set-up of thousands of connections.
  const scenarioList = options.cpuProf ? SCENARIOS.filter((s) => s.workload !== 'handshakes') : SCENARIOS;
  const served = new Map<Server, number>();
  // In a directory of their own, as a deployment keeps them: the gateway watches the pair's
  // directory, and the logs written beside it would be events for it to look at.
  const tlsDir = join(fleet.logDir, 'tls');
  mkdirSync(tlsDir);
  const files = { cert: join(tlsDir, 'cert.pem'), key: join(tlsDir, 'key.pem') };
  makeSelfSignedCertificate(files, 'catalog-gateway bench', 2);
  const trusting = new Agent({ allowH2: true, connect: { ca: readFileSync(files.cert), preferH2: true } });
  let nginx: NginxProcess | undefined;
  try {
    log('starting the origin (seeds the 100,000-book catalog on first start)…');
    const origin = await fleet.origin();
    const { space, authorization } = await fleet.reader();
    log('starting the gateway and nginx, both on TLS + HTTP/2 with one certificate…');
    const gateway = await fleet.gateway(
      'gateway-h2',
      origin,
      {
        CATALOG_GATEWAY_ACCESS_LOG: 'true',
        CATALOG_HTTP_TLS_CERT: files.cert,
        CATALOG_HTTP_TLS_KEY: files.key,
      },
      nodeFlags('gateway'),
    );
    nginx = await startNginx(join(fleet.logDir, 'nginx-h2'), origin.url, 1, { files, dispatcher: trusting });
    const hotTarget = await findHotTarget(origin.url, space, authorization);
    const warmed = [hotTarget, ...Array.from({ length: WARM_URLS - 1 }, () => space.take())];
    for (const url of [gateway.url, nginx.url]) await warmCache(url, warmed, authorization, 8, trusting);
    const hit = await captureResponse(`${gateway.url}${hotTarget}`, authorization, trusting);
    // The hot URL and the last warmed: the 1,000 URLs fit both caches.
    for (const warm of [hotTarget, warmed.at(-1) ?? hotTarget]) {
      const ours = warm === hotTarget ? hit : await captureResponse(`${gateway.url}${warm}`, authorization, trusting);
      if (!ours.cacheStatus.includes('hit')) throw new Error(`${warm} is not a gateway hit after warming (Cache-Status: ${ours.cacheStatus})`);
      const theirs = await captureResponse(`${nginx.url}${warm}`, authorization, trusting);
      if (theirs.cacheStatus !== 'HIT') throw new Error(`nginx does not serve ${warm} from its cache (Cache-Status: ${theirs.cacheStatus})`);
    }
    const responseFile = join(fleet.logDir, 'h2-hit-response.json');
    writeFileSync(responseFile, JSON.stringify(hit));
    const bare = await fleet.script(
      'bare-h2-server',
      'bare-h2-server.ts',
      [responseFile, files.cert, files.key],
      [...GATEWAY_NODE_FLAGS, ...nodeFlags('bare')],
    );
    const servers: Readonly<Record<Server, { readonly url: string; readonly pid: number }>> = { gateway, nginx, bare };
    const gcTraces: Readonly<Partial<Record<Server, GcTrace>>> = { gateway: new GcTrace(gateway.logFile), bare: new GcTrace(bare.logFile) };
    for (const server of Object.values(servers)) pin(server.pid, CORES?.server);
    const urlFiles = new Map<Server, string>();
    for (const [server, { url }] of Object.entries(servers) as [Server, { url: string }][]) {
      const file = join(fleet.logDir, `h2-urls-${server}.txt`);
      writeFileSync(file, `${warmed.map((t) => `${url}${t}`).join('\n')}\n`);
      urlFiles.set(server, file);
    }
    const target = (s: Scenario): H2loadRun => ({
      url: `${servers[s.server].url}${hotTarget}`,
      urlFile: s.workload === 'hits-1000' ? urlFiles.get(s.server) : undefined,
      authorization,
      cpu: CORES?.generator,
    });

    const measured = async (s: Scenario, seconds: number, round: number): Promise<Http2Run> => {
      const run = await measure(s, target(s), servers[s.server].pid, gcTraces[s.server], seconds, round);
      served.set(s.server, (served.get(s.server) ?? 0) + run.requests + run.requestsPerSecond * H2LOAD_WARM_UP_SECONDS);
      return run;
    };
    const hitsFrom = profileClockUs();
    log('warming up each server for 2 s…');
    for (const s of scenarioList) await measured(s, 2, 0);
    const runs = new Map<string, Http2Run[]>(scenarioList.map((s) => [s.id, []]));
    for (let round = 1; round <= options.rounds; round++) {
      const order = scenarioList.map((_, i) => scenarioList[(i + round) % scenarioList.length] ?? scenarioList[0]);
      for (const s of order) {
        if (s === undefined) continue;
        const run = await measured(s, options.duration, round);
        runs.get(s.id)?.push(run);
        log(
          `round ${round}/${options.rounds} ${s.id}: ${Math.round(run.requestsPerSecond)} req/s, server ${run.serverCpuUs.toFixed(0)} µs/req${run.non2xx + run.errors > 0 ? `, ${run.non2xx} non-2xx / ${run.errors} errors` : ''}`,
        );
      }
    }
    const profiles: Http2Profile[] | null = options.cpuProf ? [] : null;
    for (const server of profiles === null ? [] : (['gateway', 'bare'] as const)) {
      // A profile is written as its process exits.
      await fleet.stop({ gateway, bare }[server]);
      const file = newestProfile(join(profileRoot, server));
      const hits = served.get(server) ?? 0;
      if (file === undefined || hits === 0) continue;
      const breakdown = stageBreakdown(file, hitsFrom);
      profiles?.push({
        server,
        file: file.replace(`${REPO_ROOT}/`, ''),
        served: Math.round(hits),
        busyUsPerRequest: (breakdown.busyMs * 1000) / hits,
        stages: breakdown.stages.map((stage) => ({ name: stage.name, usPerRequest: (stage.busyMs * 1000) / hits, share: stage.share })),
      });
    }
    const scenarios = scenarioList.map((s): Http2ScenarioResult => {
      const own = runs.get(s.id) ?? [];
      return {
        ...s,
        runs: own,
        requestsPerSecond: spread(own.map((r) => r.requestsPerSecond)),
        meanMs: spread(own.map((r) => r.meanMs)),
        p99Ms: spread(own.map((r) => r.p99Ms)),
        serverCpuUs: spread(own.map((r) => r.serverCpuUs)),
        fullCollections: spread(own.map((r) => r.fullCollections)),
        gcPauseUs: spread(own.map((r) => r.gcPauseUs)),
      };
    });
    return {
      tool: 'catalog-gateway bench',
      mode: 'http2',
      startedAt,
      command,
      machine: machineInfo(),
      settings: {
        duration: options.duration,
        rounds: options.rounds,
        loadGenerator: `h2load, 1 thread; hits: ${CONNECTIONS} connections × ${STREAMS} streams; handshakes: batches of ${HANDSHAKE_BATCH} clients, one request each`,
        pinning: CORES === undefined ? 'none (one core)' : `servers on CPU ${CORES.server}, h2load on CPU ${CORES.generator} (taskset)`,
        certificate: 'self-signed ECDSA P-256',
      },
      hotTarget,
      scenarios,
      vsNginx: {
        hitRps: perRound(scenarios, 'hits', (r) => r.requestsPerSecond),
        hitCpu: perRound(scenarios, 'hits', (r) => r.serverCpuUs),
        handshakesPerSecond: perRound(scenarios, 'handshakes', (r) => r.requestsPerSecond),
        handshakeCpu: perRound(scenarios, 'handshakes', (r) => r.serverCpuUs),
      },
      vsBare: {
        hitRps: perRound(scenarios, 'hits', (r) => r.requestsPerSecond, 'bare'),
        hitP99: perRound(scenarios, 'hits', (r) => r.p99Ms, 'bare'),
        hit1000Rps: perRound(scenarios, 'hits-1000', (r) => r.requestsPerSecond, 'bare'),
        hit1000P99: perRound(scenarios, 'hits-1000', (r) => r.p99Ms, 'bare'),
      },
      profiles,
    };
  } finally {
    await trusting.close();
    await nginx?.stop();
    await fleet.close();
  }
}

export function http2Markdown(report: Http2Report): string {
  const whole = (n: number): string => Math.round(n).toLocaleString('en-US');
  const range = (s: Spread, f: (n: number) => string): string => `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
  const ratio = (s: Spread): string => range(s, (n) => `${n.toFixed(2)}×`);
  const rows = report.scenarios.map((s) => {
    const failures = s.runs.reduce((n, r) => n + r.non2xx + r.errors, 0);
    const p99 = Number.isNaN(s.p99Ms.median) ? '—' : range(s.p99Ms, (n) => n.toFixed(2));
    const gc = Number.isNaN(s.gcPauseUs.median) ? '— | —' : `${range(s.fullCollections, whole)} | ${s.gcPauseUs.median.toFixed(1)}`;
    return `| ${s.label} | ${range(s.requestsPerSecond, whole)} | ${s.meanMs.median.toFixed(2)} | ${p99} | ${s.serverCpuUs.median.toFixed(0)} | ${gc} | ${failures} | ${s.runs[0]?.tls ?? ''} |`;
  });
  const v = report.vsNginx;
  return `${[
    '| scenario | req/s median (min–max) | mean ms | p99 ms (min–max) | server CPU µs/req | full GCs a run (min–max) | GC pause µs/req | non-2xx + errors | TLS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    `Gateway over nginx, same round: hits over TLS + HTTP/2 req/s ${ratio(v.hitRps)}, server CPU per hit ${ratio(v.hitCpu)}; new TLS handshakes per second ${ratio(v.handshakesPerSecond)}, server CPU per handshake ${ratio(v.handshakeCpu)}.`,
    `Gateway over bare node:http2, same round: hits req/s ${ratio(report.vsBare.hitRps)} / ${ratio(report.vsBare.hit1000Rps)} (one URL / 1,000), p99 ${ratio(report.vsBare.hitP99)} / ${ratio(report.vsBare.hit1000P99)}.`,
    `Hot URL \`${report.hotTarget}\`. ${report.settings.rounds} rounds × ${report.settings.duration} s per scenario, order rotated each round; ${report.settings.loadGenerator}; ${report.settings.pinning}; ${report.settings.certificate}.`,
    `Machine: ${machineLine(report.machine)}. Command: \`${report.command}\`.`,
    ...profileRows(report.profiles),
  ].join('\n')}\n`;
}

/** With --cpu-prof: busy CPU per hit by stage, the gateway beside the bare server. */
function profileRows(profiles: readonly Http2Profile[] | null): string[] {
  const gateway = profiles?.find((p) => p.server === 'gateway');
  const bare = profiles?.find((p) => p.server === 'bare');
  if (gateway === undefined) return [];
  const of = (profile: Http2Profile | undefined, name: string): string => {
    const stage = profile?.stages.find((s) => s.name === name);
    return stage === undefined ? '—' : `${stage.usPerRequest.toFixed(2)} (${(stage.share * 100).toFixed(1)} %)`;
  };
  return [
    '',
    `Busy CPU per hit by stage, µs (share of busy time), from \`--cpu-prof\` (${gateway.file}; ${gateway.served.toLocaleString('en-US')} hits profiled):`,
    '',
    '| stage | gateway | bare node:http2 |',
    '|---|---:|---:|',
    ...gateway.stages.map((s) => `| ${s.name} | ${of(gateway, s.name)} | ${of(bare, s.name)} |`),
    `| **all busy time** | **${gateway.busyUsPerRequest.toFixed(2)}** | **${bare === undefined ? '—' : bare.busyUsPerRequest.toFixed(2)}** |`,
  ];
}
