/**
 * Where a disk hit's tail comes from, at a fixed modest rate rather than at saturation: the
 * gateways of `npm run bench -- --disk-hits` (memory hits; disk hits into a 1 MiB plain LRU, every
 * one promoted; the same with admission), each asked the same 1,000 URLs in a cycle by an
 * open-loop client (fixed-rate-client.ts) on the other core, in interleaved rounds. Each run is
 * read against the gateway's own `--trace-gc` lines, placed in time by the process's time origin:
 * which requests a full collection overlapped, from its marking's start (on a pinned core the
 * marking threads take the core from the requests) to its pause's end, the share of the slowest
 * hundredth among them, and the p99 of the others, which is what the tail would be without full
 * collections; and, from `--trace-gc-verbose`, how fast the old generation grew between
 * collections (what the requests allocated there directly and what scavenges promoted), which is
 * what sets how often full collections start (docs/performance.md, "A disk hit's tail"). Prints a
 * markdown table; the figures are medians over the rounds.
 *
 *   node --import tsx bench/disk-tail.ts [rate=3000] [seconds=10] [rounds=4] [accept-encoding='']
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Fleet, REPO_ROOT } from './fleet.ts';
import { CORES, cpuSeconds, pin } from './process-cpu.ts';
import { scrapeMetrics } from '../src/loadtest/server-metrics.ts';
import { warmCache } from './throughput.ts';

const MIB = 1024 * 1024;
const URLS = 1000;
const [rate = '3000', seconds = '10', rounds = '4', acceptEncoding = ''] = process.argv.slice(2);
/** The time origin printed first, so that `--trace-gc`'s times since the isolate's start can be placed on the clock. */
const TIME_ORIGIN = 'data:text/javascript,console.log("TIME_ORIGIN",performance.timeOrigin)';

interface Collection {
  readonly full: boolean;
  /** Epoch ms: the pause's start and end, and for a full one when its marking began. */
  readonly start: number;
  readonly end: number;
  readonly markingFrom: number;
  /** Bytes used in the old generation (old space and large objects) after it. */
  oldBytes: number;
  /** The heap's objects before and after it (0.1 MB as printed). */
  readonly heapBefore: number;
  readonly heapAfter: number;
}

/** `--trace-gc-verbose`'s line for an old-generation space, after each collection's own line. */
const OLD_SPACE = /\] (?:Old space|Large object space),\s+used:\s+(\d+) KB/;

const LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+([\d.]+) ms: (Scavenge|Minor Mark-Sweep|Mark-Compact)\b[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms(?:.*?walltime since start of marking ([\d.]+) ms)?/;

/** The collections of the last process that wrote `log` (the bin's launcher may exec once: its own lines come first). */
function collections(log: string): Collection[] {
  let origin = 0;
  let found: Collection[] = [];
  for (const line of readFileSync(log, 'latin1').split('\n')) {
    if (line.startsWith('TIME_ORIGIN ')) {
      origin = Number(line.slice('TIME_ORIGIN '.length));
      found = [];
      continue;
    }
    const space = OLD_SPACE.exec(line);
    const last = found.at(-1);
    if (space !== null && last !== undefined) last.oldBytes += Number(space[1]) * 1024;
    const m = LINE.exec(line);
    if (m === null) continue;
    const end = origin + Number(m[1]);
    const start = end - Number(m[5]);
    found.push({
      full: m[2] === 'Mark-Compact',
      start,
      end,
      markingFrom: end - Number(m[6] ?? m[5]),
      oldBytes: 0,
      heapBefore: Number(m[3]) * MIB,
      heapAfter: Number(m[4]) * MIB,
    });
  }
  return found;
}

interface Run {
  readonly failed: number;
  readonly dueAt: readonly number[];
  readonly latencyMs: readonly number[];
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/**
 * The old generation's growth per request, from one collection to the next scavenge (which frees
 * nothing there), over the collections of a run at `perSecond` requests a second.
 */
function oldGrowthPerRequest(run: readonly Collection[], perSecond: number): number {
  let grown = 0;
  let ms = 0;
  for (let i = 1; i < run.length; i++) {
    const [before, after] = [run[i - 1], run[i]];
    if (before === undefined || after === undefined || after.full) continue;
    grown += after.oldBytes - before.oldBytes;
    ms += after.end - before.end;
  }
  return ms === 0 ? 0 : (grown / ms) * (1000 / perSecond);
}

/**
 * What the requests allocated on the heap, young and old generation together, a request: the
 * heap's growth from each collection to the next, over a run at `perSecond` requests a second.
 * Scavenges come about as often as the young generation fills with it.
 */
function allocatedPerRequest(run: readonly Collection[], perSecond: number): number {
  let allocated = 0;
  for (let i = 1; i < run.length; i++) {
    const [before, after] = [run[i - 1], run[i]];
    if (before !== undefined && after !== undefined) allocated += after.heapBefore - before.heapAfter;
  }
  const ms = (run.at(-1)?.start ?? 0) - (run[0]?.end ?? 0);
  return ms <= 0 ? 0 : (allocated / ms) * (1000 / perSecond);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const fleet = new Fleet('data/bench');
try {
  const origin = await fleet.origin();
  const { space, authorization } = await fleet.reader();
  const targetsFile = join(fleet.logDir, 'targets.txt');
  const targets = Array.from({ length: URLS }, () => space.take());
  writeFileSync(targetsFile, `${targets.join('\n')}\n`);
  const log = { CATALOG_GATEWAY_ACCESS_LOG: 'true' };
  const kinds = [
    { id: 'memory', label: 'memory hits', env: log },
    {
      id: 'disk',
      label: 'disk hits, 1 MiB LRU memory',
      env: { ...log, CATALOG_GATEWAY_CACHE_MAX_BYTES: String(MIB), CATALOG_GATEWAY_CACHE_ADMISSION: 'false' },
    },
    { id: 'disk-admitting', label: 'disk hits, 1 MiB memory with admission', env: { ...log, CATALOG_GATEWAY_CACHE_MAX_BYTES: String(MIB) } },
  ];
  const gateways = [];
  for (const kind of kinds) gateways.push(await fleet.gateway(kind.id, origin, kind.env, ['--trace-gc', '--trace-gc-verbose', '--import', TIME_ORIGIN]));
  for (const gateway of gateways) await warmCache(gateway.url, targets, authorization);
  for (const server of [origin, ...gateways]) pin(server.pid, CORES?.server);

  const ask = (url: string, secs: string): Promise<Run> =>
    new Promise((resolve, reject) => {
      const client = spawn(
        'taskset',
        [
          '-c',
          String(CORES?.generator ?? 0),
          process.execPath,
          join(REPO_ROOT, 'bench', 'fixed-rate-client.ts'),
          url,
          targetsFile,
          authorization,
          acceptEncoding,
          rate,
          secs,
          '32',
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      client.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      client.on('exit', (code) => {
        if (code === 0) resolve(JSON.parse(out) as Run);
        else reject(new Error(`the client exited with ${String(code)}`));
      });
    });
  for (const gateway of gateways) await ask(gateway.url, '2');

  interface Row {
    readonly p50: number;
    readonly p99: number;
    readonly p999: number;
    /** The p99 of the requests that no full collection overlapped, from its marking's start to its pause's end. */
    readonly p99Clear: number;
    readonly full: number;
    readonly scavenges: number;
    /** Bytes a request added to the old generation, directly or promoted by scavenges. */
    readonly oldGrowth: number;
    /** Bytes a request allocated on the heap (allocatedPerRequest). */
    readonly allocated: number;
    readonly cpuUs: number;
    /** Of the requests at or above the p99, the share a full collection overlapped. */
    readonly slowInFull: number;
    /** Of the requests at or above the p99, the share a scavenge's pause overlapped. */
    readonly slowInScavenge: number;
    /** The p99 of the requests that no collection overlapped, full or young. */
    readonly p99NoGc: number;
    /** Scavenges' pauses, ms per 100k requests. */
    readonly scavengeMs: number;
    /** Of the requests, the share the disk tier answered, and its writes (each a transaction on the event loop) per 1,000 requests. */
    readonly fromDisk: number;
    readonly writes: number;
  }
  const disk = async (adminUrl: string | undefined): Promise<{ hits: number; writes: number }> => {
    const samples = await scrapeMetrics(adminUrl ?? '');
    return { hits: samples.value('catalog_gateway_disk_reads_total', { result: 'hit' }) ?? 0, writes: samples.value('catalog_gateway_disk_writes_total') ?? 0 };
  };
  const rows = kinds.map((): Row[] => []);
  for (let round = 0; round < Number(rounds); round++)
    for (const [i, gateway] of gateways.entries()) {
      const diskBefore = await disk(gateway.adminUrl);
      const cpuBefore = cpuSeconds(gateway.pid);
      const run = await ask(gateway.url, seconds);
      const cpu = cpuSeconds(gateway.pid) - cpuBefore;
      const diskAfter = await disk(gateway.adminUrl);
      const requests = run.latencyMs.length;
      const sorted = [...run.latencyMs].sort((a, b) => a - b);
      const p99 = percentile(sorted, 0.99);
      const from = run.dueAt[0] ?? 0;
      const to = (run.dueAt[requests - 1] ?? 0) + (sorted[requests - 1] ?? 0);
      const during = collections(gateway.logFile).filter((c) => c.end >= from && c.markingFrom <= to);
      const full = during.filter((c) => c.full);
      const inFull = run.latencyMs.map((ms, j) => {
        const at = run.dueAt[j] ?? 0;
        return full.some((c) => c.markingFrom < at + ms && c.end > at);
      });
      const scavenges = during.filter((c) => !c.full);
      const inScavenge = run.latencyMs.map((ms, j) => {
        const at = run.dueAt[j] ?? 0;
        return scavenges.some((c) => c.start < at + ms && c.end > at);
      });
      const slow = inFull.filter((_, j) => (run.latencyMs[j] ?? 0) >= p99);
      const slowInScavenge = inScavenge.filter((_, j) => (run.latencyMs[j] ?? 0) >= p99);
      rows[i]?.push({
        p50: percentile(sorted, 0.5),
        p99,
        p999: percentile(sorted, 0.999),
        p99Clear: percentile(
          run.latencyMs.filter((_, j) => inFull[j] !== true).sort((a, b) => a - b),
          0.99,
        ),
        full: (full.length * 100_000) / requests,
        scavenges: ((during.length - full.length) * 100_000) / requests,
        oldGrowth: oldGrowthPerRequest(
          during.filter((c) => c.start >= from && c.end <= to),
          Number(rate),
        ),
        allocated: allocatedPerRequest(
          during.filter((c) => c.start >= from && c.end <= to),
          Number(rate),
        ),
        cpuUs: (cpu * 1e6) / requests,
        slowInFull: slow.filter(Boolean).length / Math.max(1, slow.length),
        slowInScavenge: slowInScavenge.filter(Boolean).length / Math.max(1, slowInScavenge.length),
        p99NoGc: percentile(
          run.latencyMs.filter((_, j) => inFull[j] !== true && inScavenge[j] !== true).sort((a, b) => a - b),
          0.99,
        ),
        scavengeMs: (scavenges.reduce((sum, c) => sum + c.end - c.start, 0) * 100_000) / requests,
        fromDisk: (diskAfter.hits - diskBefore.hits) / requests,
        writes: ((diskAfter.writes - diskBefore.writes) * 1000) / requests,
      });
      console.error(`round ${round + 1}, ${kinds[i]?.id ?? ''}: p99 ${p99.toFixed(2)} ms, ${full.length} full collections, ${run.failed} failed`);
    }
  console.log(
    `\n${rate} requests a second for ${seconds} s, ${rounds} interleaved rounds, 1,000 URLs in a cycle${acceptEncoding === '' ? '' : `, Accept-Encoding: ${acceptEncoding}`}; medians over the rounds\n`,
  );
  console.log(
    '| gateway | p50 ms | p99 ms | p99.9 ms | p99 of the requests no full GC overlapped | full GCs per 100k requests | scavenges per 100k | old-generation growth, B a request | heap allocated, KB a request | CPU µs a request | ≥ p99 overlapped by a full GC | ≥ p99 overlapped by a scavenge | p99 of the requests no collection overlapped | scavenge pauses, ms per 100k | from disk | disk writes per 1k |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [i, kind] of kinds.entries()) {
    const r = rows[i] ?? [];
    const m = (pick: (row: Row) => number, digits = 1): string => median(r.map(pick)).toFixed(digits);
    console.log(
      `| ${kind.label} | ${m((x) => x.p50, 2)} | ${m((x) => x.p99, 2)} | ${m((x) => x.p999, 2)} | ${m((x) => x.p99Clear, 2)} | ${m((x) => x.full)} | ${m((x) => x.scavenges, 0)} | ${m((x) => x.oldGrowth)} | ${m((x) => x.allocated / 1024, 2)} | ${m((x) => x.cpuUs)} | ${(median(r.map((x) => x.slowInFull)) * 100).toFixed(0)} % | ${(median(r.map((x) => x.slowInScavenge)) * 100).toFixed(0)} % | ${m((x) => x.p99NoGc, 2)} | ${m((x) => x.scavengeMs)} | ${(median(r.map((x) => x.fromDisk)) * 100).toFixed(0)} % | ${m((x) => x.writes, 2)} |`,
    );
  }
} finally {
  await fleet.close();
}
