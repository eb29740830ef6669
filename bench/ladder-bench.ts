/**
 * `npm run bench -- --ladder`: the price of each part of a cache hit. Every level of
 * hit-ladder.ts and the gateway itself answer the hot URL in interleaved rounds (wrk on one
 * core, the servers on the other); each part costs the difference in server CPU time per
 * request between its level and the one below, measured in the same round.
 */
import { join } from 'node:path';
import { GATEWAY_NODE_FLAGS } from '../src/loadtest/server-process.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { LADDER } from './ladder-levels.ts';
import { CORES, pin } from './process-cpu.ts';
import { spread, type Spread } from './stats.ts';
import { machineLine } from './table.ts';
import { findHotTarget, runRounds, warmCache, type Scenario, type ScenarioResult } from './throughput.ts';

const PARTS: Readonly<Record<string, string>> = {
  bare: 'bare node:http, the stored bytes prebuilt (ceiling)',
  deliver: 'deliver() from the stored entry: Age, Cache-Status, X-Request-Id per hit',
  target: 'request target parsed and checked, canonical cache key',
  lookup: 'LRU lookup, Vary check, RFC 9111 reuse decision',
  auth: 'bearer token checked against the verified-token cache',
  metrics: 'request counter and duration histogram',
  log: 'access line (JSON, to a file)',
  gateway: 'the gateway itself: route table, framing and credential checks, rate-limit buckets, client address, in-flight set, pipeline objects',
};

export interface LadderStep {
  readonly id: string;
  readonly part: string;
  readonly requestsPerSecond: Spread;
  readonly serverCpuUs: Spread;
  /** This level's CPU per request less the level below's, per round. */
  readonly addedUs: Spread | null;
  readonly p99Ms: Spread;
}

export interface LadderReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'ladder';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly settings: { readonly duration: number; readonly connections: number; readonly rounds: number; readonly pinning: string };
  readonly hotTarget: string;
  readonly steps: readonly LadderStep[];
}

export async function ladderBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<LadderReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  try {
    log('starting the origin…');
    const origin = await fleet.origin();
    const { space, authorization } = await fleet.reader();
    const hotTarget = await findHotTarget(origin.url, space, authorization);
    log('starting one server per ladder level, and the gateway…');
    const servers: Record<string, { url: string; pid: number }> = {};
    for (const level of LADDER) {
      servers[level] = await fleet.script(
        `ladder-${level}`,
        'hit-ladder.ts',
        [level, origin.url, hotTarget, fleet.dataDir, join(fleet.logDir, `ladder-${level}-access.log`), authorization],
        GATEWAY_NODE_FLAGS,
      );
    }
    const gateway = await fleet.gateway('gateway', origin, { CATALOG_GATEWAY_ACCESS_LOG: 'true' });
    await warmCache(gateway.url, [hotTarget], authorization);
    servers.gateway = gateway;
    for (const server of Object.values(servers)) pin(server.pid, CORES?.server);
    const ids = [...LADDER, 'gateway'];
    const scenarios: Scenario[] = ids.map((id) => ({ id, label: PARTS[id] ?? id, server: id, workload: 'hot', hits: true }));
    const rounds = {
      duration: options.duration,
      connections: options.connections,
      rounds: options.rounds,
      authorization,
      hotTarget,
      workload: () => ({}),
      log,
    };
    log('warming up each server for 2 s…');
    await runRounds(scenarios, servers, origin, { ...rounds, duration: 2, rounds: 1, log: () => undefined });
    const results = await runRounds(scenarios, servers, origin, rounds);
    return {
      tool: 'catalog-gateway bench',
      mode: 'ladder',
      startedAt,
      command,
      machine: machineInfo(),
      settings: {
        duration: options.duration,
        connections: options.connections,
        rounds: options.rounds,
        pinning: CORES === undefined ? 'none (one core)' : `servers on CPU ${CORES.server}, wrk on CPU ${CORES.generator}`,
      },
      hotTarget,
      steps: results.map((r, i) => step(r, i === 0 ? undefined : results[i - 1])),
    };
  } finally {
    await fleet.close();
  }
}

function step(result: ScenarioResult, below: ScenarioResult | undefined): LadderStep {
  const belowByRound = new Map((below?.runs ?? []).map((r) => [r.round, r.serverCpuUs]));
  const added =
    below === undefined
      ? null
      : spread(
          result.runs.flatMap((r) => {
            const base = belowByRound.get(r.round);
            return base === undefined ? [] : [r.serverCpuUs - base];
          }),
        );
  return {
    id: result.id,
    part: result.label,
    requestsPerSecond: result.requestsPerSecond,
    serverCpuUs: result.serverCpuUs,
    addedUs: added,
    p99Ms: result.p99Ms,
  };
}

export function ladderMarkdown(report: LadderReport): string {
  const f = (s: Spread, digits: number): string => `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
  const bare = report.steps[0]?.serverCpuUs.median ?? Number.NaN;
  const rows = report.steps.map(
    (s) =>
      `| ${s.id} | ${s.part} | ${f(s.serverCpuUs, 1)} | ${s.addedUs === null ? '—' : f(s.addedUs, 1)} | ${(bare / s.serverCpuUs.median).toFixed(2)} | ${Math.round(s.requestsPerSecond.median).toLocaleString('en-US')} | ${s.p99Ms.median.toFixed(2)} |`,
  );
  return [
    '| level | adds | server CPU µs/req median (range) | added µs/req median (range) | bare µs ÷ level µs | req/s median | p99 ms |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Hot URL \`${report.hotTarget}\`; ${report.settings.rounds} rounds × ${report.settings.duration} s per level, order rotated each round; wrk, 1 thread, ${report.settings.connections} connections; ${report.settings.pinning}. "Added" is this level's CPU per request less the level above's, in the same round. Machine: ${machineLine(report.machine)}. Command: \`${report.command}\`.`,
    '',
  ].join('\n');
}
