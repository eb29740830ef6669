/**
 * `npm run bench -- --tiers`: the hit ratio of memory and disk together. Replays the synthetic
 * traces of the hit-ratio bench (traces.ts) through the real tiers — the memory tier
 * (ResponseCache, W-TinyLFU as by default) over the disk tier (DiskStore, SQLite in a temporary
 * directory) — as the gateway looks up: memory, then disk (a disk hit offered to memory), and on
 * a miss a fill kept in both. Each entry's body has its trace size, so the disk tier holds and
 * counts real bytes. Next to it: memory alone at the same bound, and an unbounded cache, which
 * misses only a key's first request (the compulsory-miss limit).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { PurgeLog } from '../src/gateway/purge/purge-log.ts';
import { DiskMetrics } from '../src/gateway/store/disk/disk-metrics.ts';
import { DiskStore } from '../src/gateway/store/disk/disk-store.ts';
import { cacheKey, ResponseCache, type CacheKey } from '../src/gateway/store/memory/response-cache.ts';
import { Codec } from '../src/shared/encoding/codec.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { BenchOptions } from './args.ts';
import { machineLine } from './table.ts';
import { leastEntryBytes, syntheticTraces, type Trace } from './traces.ts';
import { freshFacts } from '../test/support/entry-facts.ts';

const MIB = 1024 * 1024;
const FACTS = freshFacts(3_600_000, Date.now());
/** The gateway's default `gateway.cache.maxEntryBytes`. */
const MAX_ENTRY_BYTES = MIB;
/** The traces the tiers are measured on (issue 57: the Zipf and crawler traces). */
const TRACES = ['zipf-0.9', 'crawler-30%'];
/** Requests between two commits of the disk tier's queued writes (the gateway commits once per turn). */
const COMMIT_EVERY = 256;
const ZEROS = Buffer.alloc(MAX_ENTRY_BYTES);

export interface TiersRow {
  readonly trace: string;
  readonly requests: number;
  readonly distinct: number;
  readonly memoryBytes: number;
  readonly diskBytes: number;
  readonly memoryOnly: number;
  readonly tiered: number;
  /** Of the tiered run's requests, those answered by memory and by disk. */
  readonly memoryHits: number;
  readonly diskHits: number;
  readonly unbounded: number;
  readonly diskEntries: number;
  readonly diskEvictions: number;
  readonly seconds: number;
}

export interface TiersReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'tiers';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly rows: readonly TiersRow[];
}

interface Run {
  readonly memoryHits: number;
  readonly diskHits: number;
  readonly diskEntries: number;
  readonly diskEvictions: number;
}

async function replay(trace: Trace, memoryBytes: number, diskBytes: number | undefined): Promise<Run> {
  const purges = new PurgeLog();
  const stamp = { generation: 0, mark: '' };
  const memory = new ResponseCache({
    maxBytes: memoryBytes,
    maxEntryBytes: MAX_ENTRY_BYTES,
    purges,
    admission: true,
    codec: new Codec({ gzip: 1, br: 0, zstd: 1 }),
  });
  const dir = diskBytes === undefined ? undefined : mkdtempSync(join(tmpdir(), 'catalog-tiers-'));
  const registry = new Registry();
  const disk =
    dir === undefined || diskBytes === undefined
      ? undefined
      : new DiskStore({
          dir,
          maxBytes: diskBytes,
          maxEntryBytes: MAX_ENTRY_BYTES,
          owner: process.pid,
          maker: memory.maker,
          purges,
          metrics: new DiskMetrics(registry, () => undefined),
          logger: pino({ level: 'silent' }),
          now: Date.now,
        });
  const keys: CacheKey[] = trace.keys.map(cacheKey);
  let memoryHits = 0;
  let diskHits = 0;
  try {
    trace.requests.forEach((id, i) => {
      const key = keys[id] as CacheKey;
      if (memory.lookup(key, {}).kind === 'found') {
        memoryHits++;
      } else {
        const found = disk?.get(key, {});
        if (found !== undefined) {
          diskHits++;
          memory.put(key, found, stamp);
        } else {
          const body = ZEROS.subarray(0, Math.max(0, (trace.sizes[id] ?? 0) - leastEntryBytes(trace.keys[id] ?? '')));
          const response = memory.maker.prepare(
            200,
            { 'content-type': 'application/json' },
            body,
            { keep: 'identity', offered: [] },
            FACTS,
            undefined,
            [],
            ['bk_1'],
          );
          memory.put(key, response, stamp);
          void disk?.put(key, response, stamp);
        }
      }
      if (i % COMMIT_EVERY === 0) disk?.flush();
    });
    disk?.flush();
    const evictions = (await registry.getMetricsAsJSON()).find((m) => m.name === 'catalog_gateway_disk_evictions_total')?.values[0]?.value ?? 0;
    return { memoryHits, diskHits, diskEntries: disk?.size().entries ?? 0, diskEvictions: evictions };
  } finally {
    disk?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export async function tiersBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<TiersReport> {
  const startedAt = new Date().toISOString();
  const traces = syntheticTraces({ dataDir: options.dataDir, requests: options.traceRequests, distinct: options.traceDistinct }, log).filter(
    (t): t is Trace => 'requests' in t && TRACES.includes(t.name),
  );
  const memoryBytes = options.cacheMib * MIB;
  const diskBytes = options.diskMib * MIB;
  const rows: TiersRow[] = [];
  for (const trace of traces) {
    const requests = trace.requests.length;
    const distinct = new Set(trace.requests).size;
    log(`${trace.name}: memory ${options.cacheMib} MiB alone…`);
    const alone = await replay(trace, memoryBytes, undefined);
    log(`${trace.name}: memory ${options.cacheMib} MiB over disk ${options.diskMib} MiB…`);
    const started = performance.now();
    const tiered = await replay(trace, memoryBytes, diskBytes);
    rows.push({
      trace: trace.name,
      requests,
      distinct,
      memoryBytes,
      diskBytes,
      memoryOnly: alone.memoryHits / requests,
      tiered: (tiered.memoryHits + tiered.diskHits) / requests,
      memoryHits: tiered.memoryHits / requests,
      diskHits: tiered.diskHits / requests,
      unbounded: (requests - distinct) / requests,
      diskEntries: tiered.diskEntries,
      diskEvictions: tiered.diskEvictions,
      seconds: (performance.now() - started) / 1000,
    });
  }
  return { tool: 'catalog-gateway bench', mode: 'tiers', startedAt, command, machine: machineInfo(), rows };
}

const percent = (n: number): string => `${(n * 100).toFixed(1)} %`;

export function tiersMarkdown(r: TiersReport): string {
  const lines = [
    `### Memory over disk: hit ratio (${r.startedAt})`,
    '',
    machineLine(r.machine),
    '',
    '| trace | requests | distinct | memory alone | memory + disk | of which memory / disk | unbounded | gap to unbounded | disk entries, evicted |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (row) =>
        `| ${row.trace} | ${row.requests.toLocaleString('en-US')} | ${row.distinct.toLocaleString('en-US')} | ${percent(row.memoryOnly)} (${row.memoryBytes / MIB} MiB) | ${percent(row.tiered)} (+ ${row.diskBytes / MIB} MiB) | ${percent(row.memoryHits)} / ${percent(row.diskHits)} | ${percent(row.unbounded)} | ${((row.unbounded - row.tiered) * 100).toFixed(2)} points | ${row.diskEntries.toLocaleString('en-US')}, ${row.diskEvictions.toLocaleString('en-US')} |`,
    ),
    '',
    `\`${r.command}\``,
    '',
  ];
  return lines.join('\n');
}
