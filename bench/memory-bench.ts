/**
 * `npm run bench -- --memory`: fills one gateway's cache with a million distinct cached queries
 * at a 256 MiB bound and compares the process's RSS with the bound plus 150 MiB. The fill goes
 * through a tiny bench origin (tiny-origin.ts) because a million real searches would take most of
 * an hour; what is measured — the gateway's memory for what it stores and how it counts it — is
 * the same. `--books` sizes the answers (3 books: ~1 KiB, 6: ~2 KB), `--client` picks the client:
 * a browser's Accept-Encoding (the gzip body kept is sent), or none (`identity`: it asks for each
 * target twice, the second time once the first has been answered, and the hit makes the entry keep
 * an identity body beside its gzip one, an entry's heaviest form).
 * `--disk-mib 0` turns the disk tier off, so that the process holds the memory tier alone; with it
 * on and a memory bound smaller than the fill (`--cache-mib 64`), the cache holds more than memory
 * does, and the process's anonymous memory (RssAnon: the heap and Buffers, not the mapped binary
 * or the page cache) is what to hold against the memory bound plus the same 150 MiB.
 */
import { readFileSync } from 'node:fs';
import { HEAP_RESERVE } from '../src/gateway/store/entry-size.ts';
import { GATEWAY_NODE_FLAGS } from '../src/loadtest/server-process.ts';
import { join } from 'node:path';
import { readCatalogVocabulary } from '../src/loadtest/catalog-vocabulary.ts';
import { runLoad } from '../src/loadtest/load-run.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { PrometheusSamples } from '../src/loadtest/prometheus-text.ts';
import { gatewayCounters, scrapeMetrics, steadyRead, type GatewayCounters } from '../src/loadtest/server-metrics.ts';
import { loadOrCreateSecret, mintToken } from '../src/shared/signing-key.ts';
import type { BenchOptions, MemoryClient } from './args.ts';
import { Fleet } from './fleet.ts';
import { QuerySpace } from './query-space.ts';
import { BROWSER_ACCEPT_ENCODING } from './throughput-bench.ts';
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
  /** The client's Accept-Encoding: a browser's (`gzip`) or none (`identity`). */
  readonly client: MemoryClient;
  /** Books per page of the tiny origin, and the mean body it sent. */
  readonly books: number;
  readonly meanBodyBytes: number;
  /** Node/V8 flags of the gateway process. */
  readonly gatewayNodeFlags: readonly string[];
  readonly requested: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly misses: number;
  /** Requests sent: each target once, or twice in a row by an identity client. */
  readonly requests: number;
  readonly hits: number;
  readonly originRequests: number;
  readonly cacheBoundBytes: number;
  readonly cacheEntries: number | null;
  readonly cacheBytes: number | null;
  readonly evictions: number | null;
  readonly rssBytes: number | null;
  readonly peakRssBytes: number;
  /** Where the memory is at the end: V8's heap (used and reserved) and memory outside it (Buffers). */
  readonly heapUsedBytes: number | null;
  readonly heapTotalBytes: number | null;
  readonly externalBytes: number | null;
  readonly limitBytes: number;
  readonly met: boolean;
  /** The disk tier's bound and what it held at the end. */
  readonly diskBoundBytes: number;
  readonly diskEntries: number | null;
  readonly diskBytes: number | null;
  /** Anonymous resident memory (`RssAnon` in /proc/<pid>/status), at the end and at its highest sample. */
  readonly rssAnonBytes: number | null;
  readonly peakRssAnonBytes: number;
  /** Samples every 5 s of the fill. */
  readonly trajectory: readonly MemorySample[];
}

export interface MemorySample {
  readonly second: number;
  readonly rssAnonBytes: number | null;
  readonly entries: number | null;
  readonly cacheBytes: number | null;
  readonly rssBytes: number | null;
  readonly heapUsedBytes: number | null;
  readonly externalBytes: number | null;
}

/** `RssAnon` of a process, in bytes; null where /proc does not say. */
function rssAnon(pid: number): number | null {
  try {
    const kib = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? null : Number(kib) * 1024;
  } catch {
    return null;
  }
}

function memorySample(second: number, metrics: PrometheusSamples, pid: number): MemorySample {
  const counters = gatewayCounters(metrics);
  return {
    second,
    rssAnonBytes: rssAnon(pid),
    entries: counters.cacheEntries ?? null,
    cacheBytes: counters.cacheBytes ?? null,
    rssBytes: counters.rssBytes ?? null,
    heapUsedBytes: metrics.value('nodejs_heap_size_used_bytes') ?? null,
    externalBytes: metrics.value('nodejs_external_memory_bytes') ?? null,
  };
}

/**
 * The target of the `sent`-th request when each of `targets` is asked twice, the second ask a hit
 * that makes the entry keep an identity body beside its gzip one: targets go in blocks of `lag`,
 * asked once each and then again, so that a second ask comes `lag` requests after the first. With
 * `lag` at least twice the connections, the first has been answered by then; asked in a row, the
 * second ask joined the first's fill and almost never was a hit.
 */
export function askedTwice(targets: number, lag: number): (sent: number) => number {
  return (sent) => {
    const start = Math.floor(sent / (2 * lag)) * lag;
    return start + ((sent - 2 * start) % Math.min(lag, targets - start));
  };
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
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (options.client === 'gzip') headers['accept-encoding'] = BROWSER_ACCEPT_ENCODING;
    const origin = await fleet.script('tiny-origin', 'tiny-origin.ts', ['--books', String(options.books)]);
    // The access log is off: a million lines on disk are not what this measures.
    const diskBoundBytes = options.diskMib * MIB;
    const gateway = await fleet.gateway('gateway', origin, {
      CATALOG_GATEWAY_ACCESS_LOG: 'false',
      CATALOG_GATEWAY_CACHE_MAX_BYTES: String(boundBytes),
      ...(diskBoundBytes === 0 ? { CATALOG_GATEWAY_CACHE_DISK_ENABLED: 'false' } : { CATALOG_GATEWAY_CACHE_DISK_MAX_BYTES: String(diskBoundBytes) }),
    });
    const admin = gateway.adminUrl ?? '';
    const trajectory: MemorySample[] = [memorySample(0, await scrapeMetrics(admin), gateway.pid)];
    const sample = (second: number): void => {
      void scrapeMetrics(admin).then(
        (m) => {
          trajectory.push(memorySample(second, m, gateway.pid));
        },
        () => undefined,
      );
    };
    log(
      `filling the gateway's cache (${options.cacheMib} MiB bound) with ${options.entries.toLocaleString('en-US')} distinct queries through the tiny bench origin…`,
    );
    const asks = options.client === 'identity' ? 2 : 1;
    const order = asks === 1 ? (sent: number) => sent : askedTwice(options.entries, 2 * options.connections);
    let sent = 0;
    const run = await runLoad({
      urls: [gateway.url],
      connections: options.connections,
      amount: asks * options.entries,
      requests: { next: () => ({ path: space.at(order(sent++)), headers }) },
      progress: true,
      onSecond: (second) => {
        if (second % 5 === 0) sample(second);
      },
    });
    const read = async (): Promise<GatewayCounters> => gatewayCounters(await scrapeMetrics(admin));
    const after = await steadyRead(read, (a, b) => a.requests === b.requests);
    const samples = await scrapeMetrics(admin);
    const end = memorySample(Math.round(run.durationSeconds), samples, gateway.pid);
    trajectory.push(end);
    trajectory.sort((a, b) => a.second - b.second);
    const rss = end.rssBytes;
    const peakRss = Math.max(...trajectory.map((t) => t.rssBytes ?? 0));
    const peakRssAnon = Math.max(...trajectory.map((t) => t.rssAnonBytes ?? 0));
    const limitBytes = boundBytes + HEADROOM_MIB * MIB;
    return {
      tool: 'catalog-gateway bench',
      mode: 'memory',
      startedAt,
      command,
      machine: machineInfo(),
      origin: `bench/tiny-origin.ts: every /v1/books target answered at once with a ${options.books}-book JSON page, Cache-Control: public, max-age=3600`,
      client: options.client,
      books: options.books,
      meanBodyBytes: run.bytes / Math.max(1, run.responses),
      gatewayNodeFlags: GATEWAY_NODE_FLAGS,
      requested: options.entries,
      seconds: run.durationSeconds,
      requestsPerSecond: run.requestsPerSecond,
      non2xx: run.non2xx,
      errors: run.errorCount,
      misses: after.byCache.miss ?? 0,
      requests: asks * options.entries,
      hits: after.byCache.hit ?? 0,
      originRequests: after.originRequests,
      cacheBoundBytes: boundBytes,
      cacheEntries: after.cacheEntries ?? null,
      cacheBytes: after.cacheBytes ?? null,
      evictions: samples.value('catalog_gateway_cache_evictions_total') ?? null,
      rssBytes: rss,
      peakRssBytes: peakRss,
      heapUsedBytes: end.heapUsedBytes,
      heapTotalBytes: samples.value('nodejs_heap_size_total_bytes') ?? null,
      externalBytes: end.externalBytes,
      limitBytes,
      met: peakRss < limitBytes,
      diskBoundBytes,
      diskEntries: samples.value('catalog_gateway_disk_entries') ?? null,
      diskBytes: samples.value('catalog_gateway_disk_bytes') ?? null,
      rssAnonBytes: end.rssAnonBytes,
      peakRssAnonBytes: peakRssAnon,
      trajectory,
    };
  } finally {
    await fleet.close();
  }
}

export function memoryMarkdown(r: MemoryReport): string {
  return [
    '| client | mean response | distinct queries sent | misses stored / origin calls | requests / hits | entries in cache | bytes counted | evictions | RSS at end | peak RSS | limit (bound + 150 MiB) | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    `| ${r.client} | ${r.meanBodyBytes.toFixed(0)} B | ${r.requested.toLocaleString('en-US')} | ${r.misses.toLocaleString('en-US')} / ${r.originRequests.toLocaleString('en-US')} | ${r.requests.toLocaleString('en-US')} / ${r.hits.toLocaleString('en-US')} | ${r.cacheEntries?.toLocaleString('en-US') ?? 'n/a'} | ${mib(r.cacheBytes)} | ${r.evictions?.toLocaleString('en-US') ?? 'n/a'} | ${mib(r.rssBytes)} | ${mib(r.peakRssBytes)} | ${mib(r.limitBytes)} | ${r.met ? 'met' : '**missed**'} |`,
    '',
    `${r.diskBoundBytes === 0 ? 'Disk tier off.' : `Disk tier (bound ${mib(r.diskBoundBytes)}): ${r.diskEntries?.toLocaleString('en-US') ?? 'n/a'} entries, ${mib(r.diskBytes)} counted.`} Anonymous RSS (RssAnon) at the end ${mib(r.rssAnonBytes)}, peak sampled ${mib(r.peakRssAnonBytes)}: ${r.peakRssAnonBytes < r.limitBytes ? 'within' : '**over**'} the bound + 150 MiB.`,
    `At the end: V8 heap ${mib(r.heapUsedBytes)} used of ${mib(r.heapTotalBytes)} reserved, ${mib(r.externalBytes)} outside the heap (Buffers); ${perEntry(r)}.`,
    `Filled in ${r.seconds.toFixed(0)} s (${r.requestsPerSecond.toFixed(0)} req/s, ${r.non2xx} non-2xx, ${r.errors} errors) through ${r.origin}; gateway access log off; gateway Node flags: ${r.gatewayNodeFlags.length === 0 ? 'none' : r.gatewayNodeFlags.map((f) => `\`${f}\``).join(' ')}.`,
    `RSS during the fill: ${trajectoryLine(r.trajectory)}.`,
    `Machine: ${machineLine(r.machine)}. Command: \`${r.command}\`.`,
    '',
  ].join('\n');
}

/** About eight points of the trajectory: entries in the cache → RSS. */
function trajectoryLine(trajectory: readonly MemorySample[]): string {
  const step = Math.max(1, Math.ceil(trajectory.length / 8));
  return trajectory
    .filter((_, i) => i % step === 0 || i === trajectory.length - 1)
    .map((t) => `${t.second} s: ${t.entries?.toLocaleString('en-US') ?? '?'} entries, ${mib(t.cacheBytes)} counted, RSS ${mib(t.rssBytes)}`)
    .join('; ');
}

/** Heap used plus external memory grown since before the fill, per cached entry, next to what the cache counts. */
function perEntry(r: MemoryReport): string {
  const start = r.trajectory[0];
  if (start === undefined || r.cacheEntries === null || r.cacheEntries === 0 || r.cacheBytes === null || r.heapUsedBytes === null || r.externalBytes === null)
    return 'no per-entry figure';
  const grown = r.heapUsedBytes + r.externalBytes - (start.heapUsedBytes ?? 0) - (start.externalBytes ?? 0);
  return `${(grown / r.cacheEntries).toFixed(0)} B of heap used and Buffers per entry against ${(r.cacheBytes / r.cacheEntries).toFixed(0)} B counted (heap objects counted at ${HEAP_RESERVE}× for the reserve V8 keeps around them, and the records of each Buffer)`;
}
