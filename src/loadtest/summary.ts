/** The load test's result as a few lines for a terminal. */
import type { LoadtestResult } from './result.ts';

const MIB = 1024 * 1024;

function ms(value: number): string {
  return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`;
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)} %`;
}

function mib(bytes: number | null): string {
  return bytes === null ? 'n/a' : `${(bytes / MIB).toFixed(0)} MiB`;
}

function counts(record: Readonly<Record<string, number>>): string {
  const entries = Object.entries(record).filter(([, n]) => n > 0);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k}: ${n}`).join(', ');
}

export function formatSummary(result: LoadtestResult): string {
  const r = result.results;
  const errorStatuses = Object.fromEntries(Object.entries(r.statusCounts).filter(([status]) => !status.startsWith('2')));
  const lines = [
    `target      ${result.target.urls.join(', ')} (${result.target.mode === 'embedded' ? 'origin and gateway started by the load test' : result.target.urls.length > 1 ? `external, a fleet of ${result.target.urls.length}` : 'external'})`,
    `workload    ${result.workload.distinct} distinct queries, zipf s=${result.workload.zipf}, seed ${result.workload.seed}, ${result.workload.subjects} subjects; kinds ${counts(result.workload.queriesByKind)}`,
    `load        ${result.load.connections} connections, ${result.load.amount === null ? `${result.load.duration} s` : `${result.load.amount} requests`}${result.load.rate === null ? '' : ` at ${result.load.rate} req/s`}`,
    `requests    ${r.requests} in ${r.durationSeconds.toFixed(1)} s = ${r.requestsPerSecond.toFixed(0)} req/s`,
    `latency     p50 ${ms(r.latencyMs.p50)}  p90 ${ms(r.latencyMs.p90)}  p99 ${ms(r.latencyMs.p99)}  max ${ms(r.latencyMs.max)}`,
    `non-2xx     ${r.non2xx} (${counts(errorStatuses)}); errors ${r.errorCount} (${counts(r.errors)})`,
  ];
  if (result.cache === null) lines.push('cache       n/a (no --gateway-admin)');
  else {
    lines.push(
      `cache       hit ratio ${percent(result.cache.hitRatio)} (${counts(result.cache.byCache)}); stale reads served ${result.cache.byCache.stale ?? 0}; gateway→origin requests ${result.cache.originRequests}`,
    );
  }
  if (result.origin === null) lines.push('origin      n/a (no --origin-admin)');
  else {
    const offload = result.origin.offload === null ? '' : `; offload ${percent(result.origin.offload)} of requests never reached the origin`;
    const perQuery =
      result.origin.callsPerDistinctQuery === null
        ? ''
        : ` = ${result.origin.callsPerDistinctQuery.toFixed(2)} per distinct query asked (${r.distinctQueriesAsked})`;
    lines.push(`origin      ${result.origin.originCalls} calls by its own count${perQuery}${offload} (setup before the run: ${result.origin.setupCalls} more)`);
  }
  lines.push(`memory      gateway RSS ${mib(result.memory.gatewayRssBytes)}, origin RSS ${mib(result.memory.originRssBytes)}`);
  return `${lines.join('\n')}\n`;
}
