/**
 * The throughput bench: every scenario run for a few seconds in each of several rounds, the order
 * rotated each round so no scenario always runs first (or right after the noisiest one), and
 * every gateway figure divided by the bare server's figure from the same round. The machine is
 * shared and noisy; ratios measured side by side are what stays comparable across runs.
 */
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { runLoad, type PlannedRequest, type RequestSource } from '../src/loadtest/load-run.ts';
import { gatewayCounters, originCounters, scrapeMetrics, steadyRead } from '../src/loadtest/server-metrics.ts';
import type { ServerProcess } from '../src/loadtest/server-process.ts';
import type { QuerySpace } from './query-space.ts';
import { spread, type Spread } from './stats.ts';

export type ServerRole = 'bare' | 'origin' | 'gateway' | 'gateway-nolog';

export interface Scenario {
  readonly id: string;
  readonly label: string;
  readonly server: ServerRole;
  /** Each call gives the requests for one run. */
  readonly requests: () => RequestSource;
  /** Hits must cost the origin nothing; a hit scenario that reaches it is reported as broken. */
  readonly hits: boolean;
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
  /** CPU time of this (load-generating) process over wall time: near 1 means the generator was the limit. */
  readonly generatorCpu: number;
}

export interface ScenarioResult {
  readonly id: string;
  readonly label: string;
  readonly requestsPerSecond: Spread;
  readonly p50Ms: Spread;
  readonly p99Ms: Spread;
  /** Per round: this scenario's figure over the bare server's in the same round. */
  readonly rpsVsBare: Spread;
  readonly p99VsBare: Spread;
  readonly originCallsPerRun: Spread;
  readonly non2xx: number;
  readonly errors: number;
  readonly generatorCpu: Spread;
  readonly runs: readonly RunRecord[];
}

export interface Servers {
  readonly bare: ServerProcess;
  readonly origin: ServerProcess;
  readonly gateway: ServerProcess;
  readonly 'gateway-nolog': ServerProcess;
}

export interface RoundsOptions {
  readonly duration: number;
  readonly connections: number;
  readonly rounds: number;
  readonly log: (message: string) => void;
}

async function originRequests(origin: ServerProcess): Promise<number> {
  return originCounters(await scrapeMetrics(origin.adminUrl ?? '')).requests;
}

async function measure(scenario: Scenario, servers: Servers, options: RoundsOptions, round: number, position: number): Promise<RunRecord> {
  const target = servers[scenario.server];
  const before = await originRequests(servers.origin);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const run = await runLoad({ url: target.url, connections: options.connections, duration: options.duration, requests: scenario.requests() });
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const after = await steadyRead(() => originRequests(servers.origin), (a, b) => a === b);
  return {
    round,
    position,
    requestsPerSecond: run.requestsPerSecond,
    p50Ms: run.latency.percentile(50),
    p99Ms: run.latency.percentile(99),
    responses: run.responses,
    non2xx: run.non2xx,
    errors: run.errorCount,
    originCalls: after - before,
    generatorCpu: (cpu.user + cpu.system) / 1000 / wallMs,
  };
}

export async function runRounds(scenarios: readonly Scenario[], servers: Servers, options: RoundsOptions): Promise<ScenarioResult[]> {
  const records = new Map<string, RunRecord[]>(scenarios.map((s) => [s.id, []]));
  for (let round = 1; round <= options.rounds; round++) {
    const shift = (round - 1) % scenarios.length;
    const order = [...scenarios.slice(shift), ...scenarios.slice(0, shift)];
    for (const [position, scenario] of order.entries()) {
      const record = await measure(scenario, servers, options, round, position + 1);
      records.get(scenario.id)?.push(record);
      options.log(
        `round ${round}/${options.rounds} ${scenario.id.padEnd(16)} ${record.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${record.p50Ms.toFixed(2)} ms  p99 ${record.p99Ms.toFixed(2)} ms  origin calls ${record.originCalls}  generator CPU ${(record.generatorCpu * 100).toFixed(0)} %`,
      );
    }
  }
  const bare = new Map((records.get('bare') ?? []).map((r) => [r.round, r]));
  return scenarios.map((scenario) => {
    const runs = records.get(scenario.id) ?? [];
    const ratio = (pick: (r: RunRecord) => number): Spread =>
      spread(runs.flatMap((r) => {
        const base = bare.get(r.round);
        return base === undefined || pick(base) === 0 ? [] : [pick(r) / pick(base)];
      }));
    return {
      id: scenario.id,
      label: scenario.label,
      requestsPerSecond: spread(runs.map((r) => r.requestsPerSecond)),
      p50Ms: spread(runs.map((r) => r.p50Ms)),
      p99Ms: spread(runs.map((r) => r.p99Ms)),
      rpsVsBare: ratio((r) => r.requestsPerSecond),
      p99VsBare: ratio((r) => r.p99Ms),
      originCallsPerRun: spread(runs.map((r) => r.originCalls)),
      non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
      errors: runs.reduce((n, r) => n + r.errors, 0),
      generatorCpu: spread(runs.map((r) => r.generatorCpu)),
      runs,
    };
  });
}

/** A short unmeasured run per server, so the first measured round does not pay for JIT warm-up. */
export async function warmUp(scenarios: readonly Scenario[], servers: Servers, connections: number): Promise<Map<ServerRole, number>> {
  const served = new Map<ServerRole, number>();
  for (const scenario of scenarios) {
    const run = await runLoad({ url: servers[scenario.server].url, connections, duration: 2, requests: scenario.requests() });
    served.set(scenario.server, (served.get(scenario.server) ?? 0) + run.responses);
  }
  return served;
}

/** Fills a gateway's cache with `targets`, a few dozen at a time, and checks every answer. */
export async function warmCache(gatewayUrl: string, targets: readonly string[], headers: PlannedRequest['headers'], concurrency = 32): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < targets.length; i = next++) {
      const { statusCode, body } = await request(`${gatewayUrl}${targets[i] ?? ''}`, { headers });
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

export async function captureResponse(url: string, headers: PlannedRequest['headers']): Promise<CapturedResponse> {
  const { statusCode, headers: received, body } = await request(url, { headers });
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
export async function findHotTarget(originUrl: string, space: QuerySpace, headers: PlannedRequest['headers']): Promise<string> {
  let best = { target: '', results: -1 };
  for (let i = 0; i < 200 && best.results < 20; i++) {
    const target = space.take();
    const { statusCode, body } = await request(`${originUrl}${target}`, { headers });
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
