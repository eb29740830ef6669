/**
 * The throughput bench: every scenario run for a few seconds in each of several rounds, the order
 * rotated each round (A B C …, B C … A) so no scenario always runs first, and every figure divided
 * by the bare server's figure for the same workload in the same round. Load comes from wrk on one
 * core, the servers run on the other; each server's own CPU time per request is read from /proc.
 * The machine is shared and noisy; ratios measured side by side are what stays comparable.
 */
import { statSync } from 'node:fs';
import { request, type Dispatcher } from 'undici';
import { gatewayCounters, originCounters, scrapeMetrics, steadyRead } from '../src/loadtest/server-metrics.ts';
import type { ServerProcess } from '../src/loadtest/server-process.ts';
import { GcTrace, type GcPauses } from './gc-trace.ts';
import { CORES, cpuSeconds } from './process-cpu.ts';
import type { QuerySpace } from './query-space.ts';
import { spread, type Spread } from './stats.ts';
import { wrk } from './wrk.ts';

export type ServerRole = 'bare' | 'nginx' | 'gateway' | 'gateway-nolog' | 'gateway-fill' | 'origin' | 'gateway-2-workers' | 'nginx-2-workers';
/** One hot URL; 1,000 warmed URLs asked in Zipf order; distinct URLs never asked before (misses). */
export type Workload = 'hot' | 'zipf' | 'distinct';

export interface BenchServer {
  readonly url: string;
  readonly pid: number;
  /** A Node server run with `--trace-gc`: its collections, read from its stdout. */
  readonly gcTrace?: GcTrace | undefined;
}

/** `server`, started with `--trace-gc`, as a bench server whose collections are read from its log. */
export function traced(server: ServerProcess): BenchServer {
  return { url: server.url, pid: server.pid, gcTrace: new GcTrace(server.logFile) };
}

export interface Scenario {
  readonly id: string;
  readonly label: string;
  /** A key of the servers map: a ServerRole, or a ladder level. */
  readonly server: string;
  readonly workload: Workload;
  /** Hits must cost the origin nothing; a hit scenario that reaches it is reported as broken. */
  readonly hits: boolean;
  /** The client's Accept-Encoding; absent: none (an identity client). */
  readonly acceptEncoding?: string;
}

export interface RunRecord {
  readonly round: number;
  /** Position of the run in its round. */
  readonly position: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responses: number;
  readonly non2xx: number;
  readonly errors: number;
  /** Requests the origin served during the run, by its own count. */
  readonly originCalls: number;
  /** The server process's CPU time (all threads) per response. */
  readonly serverCpuUs: number;
  /** V8's garbage collections during the run, for servers run with `--trace-gc`; null for the others. */
  readonly gc: GcPauses | null;
}

export interface ScenarioResult {
  readonly id: string;
  readonly label: string;
  readonly workload: Workload;
  readonly requestsPerSecond: Spread;
  readonly p50Ms: Spread;
  readonly p99Ms: Spread;
  /** Per round: this scenario's figure over the bare server's, same workload, same round. */
  readonly rpsVsBare: Spread;
  readonly p99VsBare: Spread;
  /**
   * Per run: p99 over p50, the tail's shape whatever the speed. wrk holds each connection to one
   * request at a time, so a server that answers fewer per second makes every request wait longer
   * in proportion (Little's law); this tells a longer tail from a slower server.
   */
  readonly tailShape: Spread;
  readonly serverCpuUs: Spread;
  /** GC pauses and their total length per run, next to p99 (null: a server not run with `--trace-gc`). */
  readonly gcPausesPerRun: Spread | null;
  readonly gcMsPerRun: Spread | null;
  /** Runs with a full collection in them, of all runs (null: a server not run with `--trace-gc`). */
  readonly runsWithFullGc: number | null;
  readonly originCallsPerRun: Spread;
  readonly non2xx: number;
  readonly errors: number;
  readonly runs: readonly RunRecord[];
}

export type Servers = Readonly<Record<string, BenchServer>>;

/** The files wrk reads for a workload's targets and their order (absent: the hot URL alone). */
export interface WorkloadFiles {
  readonly targetsFile?: string;
  readonly orderFile?: string;
}

export interface RoundsOptions {
  readonly duration: number;
  readonly connections: number;
  readonly rounds: number;
  readonly authorization: string;
  /** The hot workload's one target (path and query). */
  readonly hotTarget: string;
  /** Files for a workload's run in `round`; `distinct` gives targets of their own to each call. */
  readonly workload: (workload: Workload, round: number) => WorkloadFiles;
  readonly log: (message: string) => void;
}

/** The scenario each one is divided by: the bare server on the same workload (misses: on the hot URL). */
function baselineOf(workload: Workload): string {
  return workload === 'zipf' ? 'bare-zipf' : 'bare-hot';
}

export async function originRequests(origin: BenchServer & { readonly adminUrl?: string | undefined }): Promise<number> {
  return originCounters(await scrapeMetrics(origin.adminUrl ?? '')).requests;
}

async function measure(
  scenario: Scenario,
  servers: Servers,
  origin: ServerProcess,
  options: RoundsOptions,
  round: number,
  position: number,
): Promise<RunRecord> {
  const server = servers[scenario.server];
  if (server === undefined) throw new Error(`no server ${scenario.server}`);
  const before = await originRequests(origin);
  const gcBefore = server.gcTrace?.read() ?? null;
  const cpuBefore = cpuSeconds(server.pid);
  const run = await wrk({
    url: `${server.url}${scenario.workload === 'hot' ? options.hotTarget : '/'}`,
    connections: options.connections,
    seconds: options.duration,
    authorization: options.authorization,
    acceptEncoding: scenario.acceptEncoding,
    ...options.workload(scenario.workload, round),
    cpu: CORES?.generator,
  });
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const gcAfter = server.gcTrace?.read() ?? null;
  const after = await steadyRead(
    () => originRequests(origin),
    (a, b) => a === b,
  );
  return {
    round,
    position,
    requestsPerSecond: run.requestsPerSecond,
    p50Ms: run.p50Ms,
    p99Ms: run.p99Ms,
    responses: run.requests,
    non2xx: run.non2xx,
    errors: run.errors,
    originCalls: after - before,
    serverCpuUs: run.requests === 0 ? Number.NaN : (cpu * 1e6) / run.requests,
    gc:
      gcBefore === null || gcAfter === null
        ? null
        : { count: gcAfter.count - gcBefore.count, totalMs: gcAfter.totalMs - gcBefore.totalMs, full: gcAfter.full - gcBefore.full },
  };
}

/** `pick` of each of `runs` over the same of `base`'s run in its round; rounds `base` lacks are skipped. */
export function ratioByRound(runs: readonly RunRecord[], base: readonly RunRecord[], pick: (r: RunRecord) => number): Spread {
  const baseByRound = new Map(base.map((r) => [r.round, r]));
  return spread(
    runs.flatMap((r) => {
      const theirs = baseByRound.get(r.round);
      return theirs === undefined || pick(theirs) === 0 ? [] : [pick(r) / pick(theirs)];
    }),
  );
}

export async function runRounds(scenarios: readonly Scenario[], servers: Servers, origin: ServerProcess, options: RoundsOptions): Promise<ScenarioResult[]> {
  const records = new Map<string, RunRecord[]>(scenarios.map((s) => [s.id, []]));
  for (let round = 1; round <= options.rounds; round++) {
    const shift = (round - 1) % scenarios.length;
    const order = [...scenarios.slice(shift), ...scenarios.slice(0, shift)];
    for (const [position, scenario] of order.entries()) {
      const record = await measure(scenario, servers, origin, options, round, position + 1);
      records.get(scenario.id)?.push(record);
      options.log(
        `round ${round}/${options.rounds} ${scenario.id.padEnd(18)} ${record.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${record.p50Ms.toFixed(2)} ms  p99 ${record.p99Ms.toFixed(2)} ms  server ${record.serverCpuUs.toFixed(1)} µs/req  origin calls ${record.originCalls}${record.gc === null ? '' : `  full GCs ${record.gc.full}`}`,
      );
    }
  }
  return scenarios.map((scenario) => {
    const runsOf = records.get(scenario.id) ?? [];
    const bare = records.get(baselineOf(scenario.workload)) ?? [];
    const ratio = (pick: (r: RunRecord) => number): Spread => ratioByRound(runsOf, bare, pick);
    const hasGc = runsOf.every((r) => r.gc !== null);
    return {
      id: scenario.id,
      label: scenario.label,
      workload: scenario.workload,
      requestsPerSecond: spread(runsOf.map((r) => r.requestsPerSecond)),
      p50Ms: spread(runsOf.map((r) => r.p50Ms)),
      p99Ms: spread(runsOf.map((r) => r.p99Ms)),
      rpsVsBare: ratio((r) => r.requestsPerSecond),
      p99VsBare: ratio((r) => r.p99Ms),
      tailShape: spread(runsOf.map((r) => r.p99Ms / r.p50Ms)),
      serverCpuUs: spread(runsOf.map((r) => r.serverCpuUs)),
      gcPausesPerRun: hasGc ? spread(runsOf.map((r) => r.gc?.count ?? 0)) : null,
      gcMsPerRun: hasGc ? spread(runsOf.map((r) => r.gc?.totalMs ?? 0)) : null,
      runsWithFullGc: hasGc ? runsOf.filter((r) => (r.gc?.full ?? 0) > 0).length : null,
      originCallsPerRun: spread(runsOf.map((r) => r.originCalls)),
      non2xx: runsOf.reduce((n, r) => n + r.non2xx, 0),
      errors: runsOf.reduce((n, r) => n + r.errors, 0),
      runs: runsOf,
    };
  });
}

/** Fills a cache with `targets`, a few dozen at a time, and checks every answer. */
/** `dispatcher`: for a server undici's default cannot reach (the HTTP/2 scenario's self-signed TLS). */
export async function warmCache(url: string, targets: readonly string[], authorization: string, concurrency = 32, dispatcher?: Dispatcher): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < targets.length; i = next++) {
      const { statusCode, body } = await request(`${url}${targets[i] ?? ''}`, {
        headers: { authorization },
        ...(dispatcher === undefined ? {} : { dispatcher }),
      });
      await body.dump();
      if (statusCode !== 200) throw new Error(`warming ${targets[i] ?? ''} answered ${statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

export interface CapturedResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  readonly cacheStatus: string;
}

/** Headers Node's http server writes itself; the bare server must not send them twice. */
const SERVER_WRITTEN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** The answer to a GET of `url`, with `authorization` when it is given. */
export async function captureResponse(url: string, authorization: string | undefined, dispatcher?: Dispatcher): Promise<CapturedResponse> {
  const {
    statusCode,
    headers: received,
    body,
  } = await request(url, {
    headers: authorization === undefined ? {} : { authorization },
    ...(dispatcher === undefined ? {} : { dispatcher }),
  });
  const bytes = Buffer.from(await body.arrayBuffer());
  const kept: [string, string][] = [];
  for (const [name, value] of Object.entries(received)) {
    if (SERVER_WRITTEN.has(name) || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) kept.push([name, v]);
  }
  const cacheStatus = received['cache-status'];
  return { status: statusCode, headers: kept, body: bytes.toString('base64'), cacheStatus: typeof cacheStatus === 'string' ? cacheStatus : '' };
}

/** A real search with a full first page, asked of the origin directly, to be the hot URL. */
export async function findHotTarget(originUrl: string, space: QuerySpace, authorization: string): Promise<string> {
  let best = { target: '', results: -1 };
  for (let i = 0; i < 200 && best.results < 20; i++) {
    const target = space.take();
    const { statusCode, body } = await request(`${originUrl}${target}`, { headers: { authorization } });
    const page = (await body.json()) as { results?: unknown[] };
    const results = statusCode === 200 ? (page.results?.length ?? 0) : -1;
    if (results > best.results) best = { target, results };
  }
  return best.target;
}

export interface GatewayMemory {
  readonly rssBytes: number | null;
  readonly cacheEntries: number | null;
  readonly cacheBytes: number | null;
  readonly accessLogBytes: number;
}

export async function gatewayMemory(gateway: ServerProcess): Promise<GatewayMemory> {
  const counters = gatewayCounters(await scrapeMetrics(gateway.adminUrl ?? ''));
  return {
    rssBytes: counters.rssBytes ?? null,
    cacheEntries: counters.cacheEntries ?? null,
    cacheBytes: counters.cacheBytes ?? null,
    accessLogBytes: statSync(gateway.logFile).size,
  };
}
