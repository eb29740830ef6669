/**
 * `npm run bench -- --memory`: fills one gateway's cache with a million distinct cached queries
 * at a 256 MiB bound and compares its RSS with the bound plus 150 MiB. The fill goes through a
 * tiny bench origin (tiny-origin.ts) because a million real searches would take most of an hour;
 * what is measured — the gateway's memory for what it stores and how it counts it — is the same.
 */
import { join } from 'node:path';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { runLoad } from '../src/loadtest/load-run.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import { gatewayCounters, scrapeMetrics, steadyRead, type GatewayCounters } from '../src/loadtest/server-metrics.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions } from './args.ts';
import { Fleet } from './fleet.ts';
import { QuerySpace } from './query-space.ts';
import { machineLine, mib } from './table.ts';

const MIB = 1024 * 1024;
const HEADROOM_MIB = 150;

export interface MemoryReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'memory';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly origin: string;
  readonly requested: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly misses: number;
  readonly originRequests: number;
  readonly cacheBoundBytes: number;
  readonly cacheEntries: number | null;
  readonly cacheBytes: number | null;
  readonly evictions: number | null;
  readonly rssBytes: number | null;
  readonly peakRssBytes: number;
  readonly limitBytes: number;
  readonly met: boolean;
}

export async function memoryBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<MemoryReport> {
  const startedAt = new Date().toISOString();
  const fleet = new Fleet(options.dataDir);
  const boundBytes = options.cacheMib * MIB;
  try {
    // The real origin only seeds the catalog the query texts come from; the fill goes elsewhere.
    const seeded = await fleet.origin();
    await fleet.stop(seeded);
    const space = new QuerySpace(readCatalogVocabulary(join(fleet.dataDir, 'catalog.db')));
    if (space.size < options.entries) throw new Error(`only ${space.size} distinct queries can be made from the catalog`);
    const token = await mintToken(loadOrCreateSecret(join(fleet.dataDir, 'signing-secret')), { subject: 'bench', scope: 'catalog:read', ttlSeconds: 86_400 });
    const headers = { authorization: `Bearer ${token}` };
    const origin = await fleet.script('tiny-origin', 'tiny-origin.ts');
    // The access log is off: a million lines on disk are not what this measures.
    const gateway = await fleet.gateway('gateway', origin.url, { CATALOG_GATEWAY_ACCESS_LOG: 'false', CATALOG_GATEWAY_CACHE_MAX_BYTES: String(boundBytes) });
    const admin = gateway.adminUrl ?? '';
    let peakRss = 0;
    const sample = (): void => {
      void scrapeMetrics(admin).then(
        (m) => { peakRss = Math.max(peakRss, gatewayCounters(m).rssBytes ?? 0); },
        () => undefined,
      );
    };
    log(`filling the gateway's cache (${options.cacheMib} MiB bound) with ${options.entries.toLocaleString('en-US')} distinct queries through the tiny bench origin…`);
    const run = await runLoad({
      url: gateway.url,
      connections: options.connections,
      amount: options.entries,
      requests: { next: () => ({ path: space.take(), headers }) },
      progress: true,
      onSecond: (second) => { if (second % 5 === 0) sample(); },
    });
    const read = async (): Promise<GatewayCounters> => gatewayCounters(await scrapeMetrics(admin));
    const after = await steadyRead(read, (a, b) => a.requests === b.requests);
    const samples = await scrapeMetrics(admin);
    const rss = after.rssBytes ?? null;
    peakRss = Math.max(peakRss, rss ?? 0);
    const limitBytes = boundBytes + HEADROOM_MIB * MIB;
    return {
      tool: 'catalog-gateway bench',
      mode: 'memory',
      startedAt,
      command,
      machine: machineInfo(),
      origin: 'bench/tiny-origin.ts: every /v1/books target answered at once with a ~1 KiB three-book page, Cache-Control: public, max-age=3600',
      requested: options.entries,
      seconds: run.durationSeconds,
      requestsPerSecond: run.requestsPerSecond,
      non2xx: run.non2xx,
      errors: run.errorCount,
      misses: after.byCache.miss ?? 0,
      originRequests: after.originRequests,
      cacheBoundBytes: boundBytes,
      cacheEntries: after.cacheEntries ?? null,
      cacheBytes: after.cacheBytes ?? null,
      evictions: samples.value('catalog_gateway_cache_evictions_total') ?? null,
      rssBytes: rss,
      peakRssBytes: peakRss,
      limitBytes,
      met: peakRss < limitBytes,
    };
  } finally {
    await fleet.close();
  }
}

export function memoryMarkdown(r: MemoryReport): string {
  return [
    '| distinct queries sent | misses stored / origin calls | entries in cache | bytes counted | evictions | RSS at end | peak RSS | limit (bound + 150 MiB) | target |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    `| ${r.requested.toLocaleString('en-US')} | ${r.misses.toLocaleString('en-US')} / ${r.originRequests.toLocaleString('en-US')} | ${r.cacheEntries?.toLocaleString('en-US') ?? 'n/a'} | ${mib(r.cacheBytes)} | ${r.evictions?.toLocaleString('en-US') ?? 'n/a'} | ${mib(r.rssBytes)} | ${mib(r.peakRssBytes)} | ${mib(r.limitBytes)} | ${r.met ? 'met' : '**missed**'} |`,
    '',
    `Filled in ${r.seconds.toFixed(0)} s (${r.requestsPerSecond.toFixed(0)} req/s, ${r.non2xx} non-2xx, ${r.errors} errors) through ${r.origin}; gateway access log off.`,
    `Machine: ${machineLine(r.machine)}. Command: \`${r.command}\`.`,
    '',
  ].join('\n');
}
