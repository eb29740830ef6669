/**
 * `npm run bench -- --hit-ratio`: replays request traces through the real store (ResponseCache,
 * no HTTP: look up, and on a miss store an entry of the trace's size) at several byte bounds,
 * with plain LRU (`gateway.cache.admission: false`) and with the gateway's policy (adaptive
 * W-TinyLFU, the default), next to two published policies simulated on the same trace and bound
 * (ARC, arc.ts; S3-FIFO, s3-fifo.ts), Bélády's offline optimum (belady.ts), the best a policy
 * knowing only popularity can do (static-optimum.ts) and what exact counts of the requests so far
 * reach (online-lfu.ts). Reports request and byte hit ratios, and how much of LRU's gap to each
 * optimum the policy closes.
 */
import { PurgeLog } from '../src/gateway/purge/purge-log.ts';
import { heldBytes } from '../src/gateway/store/entry-size.ts';
import { FieldShape } from '../src/gateway/store/field-shapes.ts';
import { prepare, RecordWriter } from '../src/gateway/store/record/entry-record.ts';
import { cacheKey, ResponseCache, type CacheKey } from '../src/gateway/store/memory/response-cache.ts';
import { Representation, StoredResponse } from '../src/gateway/store/stored-response.ts';
import { Codec } from '../src/shared/encoding/codec.ts';
import type { Coding } from '../src/shared/encoding/negotiate.ts';
import { machineInfo, type MachineInfo } from '../src/loadtest/machine.ts';
import type { BenchOptions } from './args.ts';
import { arcHits } from './arc.ts';
import { beladyHits, type Hits } from './belady.ts';
import { onlineLfuHits } from './online-lfu.ts';
import { s3FifoHits } from './s3-fifo.ts';
import { staticOptimumHits } from './static-optimum.ts';
import { machineLine } from './table.ts';
import { leastEntryBytes, readTrace, syntheticTraces, traceAt, type Trace, type TraceFamily } from './traces.ts';
import { freshFacts } from '../test/support/entry-facts.ts';

const MIB = 1024 * 1024;
const FACTS = freshFacts(3_600_000, 0);
/** Trace entries hold no fields and no body: what they cost is their trace size, given as the bytes of a shape they brought (`extra`). */
const NO_FIELDS = new FieldShape([], []);
const NO_BODY = Buffer.alloc(0);
/** Sent only as kept. */
const NOT_OFFERED: readonly Coding[] = [];
/** Never used: the replay makes no representation. */
const NO_CODEC = new Codec({ gzip: 1, br: 0, zstd: 1 });
const NO_REQUEST_FIELDS = {};
/** The gateway's default `gateway.cache.maxEntryBytes`. */
const MAX_ENTRY_BYTES = MIB;

export interface PolicyResult {
  readonly requestHitRatio: number;
  readonly byteHitRatio: number;
}

export interface ReplayRow {
  readonly trace: string;
  readonly boundBytes: number;
  /** Entries of the trace's mean size the bound holds. */
  readonly boundEntries: number;
  readonly lru: PolicyResult & { readonly seconds: number };
  /** The gateway's policy. */
  readonly admission: PolicyResult & { readonly seconds: number; readonly admitted: number; readonly refused: number };
  readonly arc: PolicyResult;
  readonly s3fifo: PolicyResult;
  readonly belady: PolicyResult;
  /** Perfect LFU: the entries with the most requests per byte over the whole trace, kept from the start. */
  readonly staticOptimum: PolicyResult;
  /** LFU with exact counts of every request so far, nothing forgotten: what learning popularity from the requests reaches. */
  readonly onlineLfu: PolicyResult;
  /** (policy − LRU) / (MIN − LRU), request hit ratio: the share of LRU's gap to the optimum closed. */
  readonly gapClosed: number;
  /** (policy − LRU) / (perfect LFU − LRU): the same against the popularity-only optimum. */
  readonly staticGapClosed: number;
}

export interface HitRatioReport {
  readonly tool: 'catalog-gateway bench';
  readonly mode: 'hit-ratio';
  readonly startedAt: string;
  readonly command: string;
  readonly machine: MachineInfo;
  readonly traces: readonly {
    readonly name: string;
    readonly description: string;
    readonly requests: number;
    readonly distinct: number;
    readonly meanEntryBytes: number;
    readonly distinctBytes: number;
  }[];
  readonly rows: readonly ReplayRow[];
}

function ratio(hits: Hits, trace: Trace, totalBytes: number): PolicyResult {
  return { requestHitRatio: hits.hits / trace.requests.length, byteHitRatio: hits.hitBytes / totalBytes };
}

/** Trace entries hold no fields: their sizes come from the trace. */
const NOT_VARYING = { vary: [], selecting: [] };
/** …and no tags or origin values. */
const NO_REST = { tagText: '', originValues: undefined };

function entry(extra: number): StoredResponse {
  return new StoredResponse(200, new Representation('identity', NO_FIELDS, [], NO_BODY, 0, 0, extra), NO_REST, NOT_OFFERED, FACTS, FACTS, NOT_VARYING);
}

/** One replay through the real store. */
function replay(trace: Trace, boundBytes: number, admission: boolean): Hits & { seconds: number; admitted: number; refused: number } {
  const purges = new PurgeLog();
  const cache = new ResponseCache({ maxBytes: boundBytes, maxEntryBytes: MAX_ENTRY_BYTES, purges, admission, codec: NO_CODEC });
  const keys: CacheKey[] = trace.keys.map(cacheKey);
  // What each key's response holds, so that the entry costs its trace size (entry-size.ts adds the key and the fixed part).
  const held = trace.keys.map((key, id) => (trace.sizes[id] ?? 0) - leastEntryBytes(key));
  const empty = heldBytes(RecordWriter.length(prepare([entry(0)])), 0, 0);
  let hits = 0;
  let hitBytes = 0;
  const started = performance.now();
  for (const id of trace.requests) {
    const key = keys[id] as CacheKey;
    if (cache.lookup(key, NO_REQUEST_FIELDS).kind === 'found') {
      hits++;
      hitBytes += trace.sizes[id] ?? 0;
    } else {
      cache.put(key, entry(Math.max(0, (held[id] ?? 0) - empty)), {
        generation: purges.generation,
        mark: '',
      });
    }
    if (cache.bytes > boundBytes) throw new Error(`the store holds ${cache.bytes} B over its bound of ${boundBytes} B`);
  }
  return { hits, hitBytes, seconds: (performance.now() - started) / 1000, admitted: cache.admitted, refused: cache.refused };
}

function describe(trace: Trace): HitRatioReport['traces'][number] {
  let distinctBytes = 0;
  for (const size of trace.sizes) distinctBytes += size;
  return {
    name: trace.name,
    description: trace.description,
    requests: trace.requests.length,
    distinct: trace.keys.length,
    meanEntryBytes: Math.round(distinctBytes / trace.keys.length),
    distinctBytes,
  };
}

export async function hitRatioBench(options: BenchOptions, command: string, log: (m: string) => void): Promise<HitRatioReport> {
  const startedAt = new Date().toISOString();
  // Every synthetic trace is drawn even when only some are replayed, so that each is the same whichever are chosen.
  const families: readonly TraceFamily[] =
    options.traceFiles.length > 0
      ? await Promise.all(options.traceFiles.map((file) => readTrace(file, options.traceEntryBytes)))
      : syntheticTraces({ dataDir: options.dataDir, requests: options.traceRequests, distinct: options.traceDistinct }, log).filter(
          (trace) => options.traceNames === undefined || options.traceNames.includes(trace.name),
        );
  const rows: ReplayRow[] = [];
  const described = new Map<string, HitRatioReport['traces'][number]>();
  const bounds = options.boundEntries.length > 0 ? options.boundEntries.map((n) => n * options.traceEntryBytes) : options.boundsMib.map((m) => m * MIB);
  for (const family of families) {
    for (const boundBytes of bounds) {
      const trace = traceAt(family, boundBytes);
      const info = describe(trace);
      described.set(info.description, info);
      let totalBytes = 0;
      for (const id of trace.requests) totalBytes += trace.sizes[id] ?? 0;
      log(`${trace.name} at ${(boundBytes / MIB).toFixed(1)} MiB: LRU, the policy, ARC, S3-FIFO, MIN, perfect and online LFU…`);
      const lru = replay(trace, boundBytes, false);
      const policy = replay(trace, boundBytes, true);
      const lruRatio = ratio(lru, trace, totalBytes);
      const policyRatio = ratio(policy, trace, totalBytes);
      const minRatio = ratio(beladyHits(trace, boundBytes, MAX_ENTRY_BYTES), trace, totalBytes);
      const lfu = ratio(staticOptimumHits(trace, boundBytes, MAX_ENTRY_BYTES), trace, totalBytes);
      const closed = (optimum: PolicyResult): number => {
        const gap = optimum.requestHitRatio - lruRatio.requestHitRatio;
        return gap <= 0 ? 1 : (policyRatio.requestHitRatio - lruRatio.requestHitRatio) / gap;
      };
      rows.push({
        trace: trace.name,
        boundBytes,
        boundEntries: Math.round(boundBytes / info.meanEntryBytes),
        lru: { ...lruRatio, seconds: lru.seconds },
        admission: { ...policyRatio, seconds: policy.seconds, admitted: policy.admitted, refused: policy.refused },
        arc: ratio(arcHits(trace, boundBytes, MAX_ENTRY_BYTES), trace, totalBytes),
        s3fifo: ratio(s3FifoHits(trace, boundBytes, MAX_ENTRY_BYTES), trace, totalBytes),
        belady: minRatio,
        staticOptimum: lfu,
        onlineLfu: ratio(onlineLfuHits(trace, boundBytes, MAX_ENTRY_BYTES), trace, totalBytes),
        gapClosed: closed(minRatio),
        staticGapClosed: closed(lfu),
      });
    }
  }
  return { tool: 'catalog-gateway bench', mode: 'hit-ratio', startedAt, command, machine: machineInfo(), traces: [...described.values()], rows };
}

const percent = (n: number): string => `${(n * 100).toFixed(1)} %`;

export function hitRatioMarkdown(r: HitRatioReport): string {
  const bound = (row: ReplayRow): string =>
    `${(row.boundBytes / MIB).toFixed(row.boundBytes < 10 * MIB ? 1 : 0)} MiB (~${row.boundEntries.toLocaleString('en-US')} entries)`;
  const points = (a: PolicyResult, b: PolicyResult): string => ((a.requestHitRatio - b.requestHitRatio) * 100).toFixed(2);
  const lines = [
    '| trace | bound | LRU | policy | ARC | S3-FIFO | MIN | perfect LFU | online LFU | policy − LRU (points) | policy − ARC (points) | gap to MIN closed | refused / admitted |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.rows
      .map((row) =>
        [
          row.trace,
          bound(row),
          percent(row.lru.requestHitRatio),
          percent(row.admission.requestHitRatio),
          percent(row.arc.requestHitRatio),
          percent(row.s3fifo.requestHitRatio),
          percent(row.belady.requestHitRatio),
          percent(row.staticOptimum.requestHitRatio),
          percent(row.onlineLfu.requestHitRatio),
          points(row.admission, row.lru),
          points(row.admission, row.arc),
          percent(row.gapClosed),
          `${row.admission.refused.toLocaleString('en-US')} / ${row.admission.admitted.toLocaleString('en-US')}`,
        ].join(' | '),
      )
      .map((row) => `| ${row} |`),
    '',
    ...r.traces.map(
      (t) =>
        `- ${t.name}: ${t.description}; ${t.requests.toLocaleString('en-US')} requests, ${t.distinct.toLocaleString('en-US')} distinct keys, ${t.meanEntryBytes.toLocaleString('en-US')} B per entry on average (${(t.distinctBytes / MIB).toFixed(0)} MiB for all).`,
    ),
    '',
    `Machine: ${machineLine(r.machine)}. Command: \`${r.command}\`.`,
    '',
  ];
  return lines.join('\n');
}
