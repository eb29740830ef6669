/** `npm run bench` flags, checked like the load test's: a bad value names its flag and exits 2. */
import { parseArgs } from 'node:util';
import { UsageError } from '../src/cli/args.ts';
import { CERTIFICATE_KEYS, type CertificateKey } from '../src/cli/local-certificate.ts';
import { SCHEMA } from '../src/config/schema.ts';

type WorkerAccept = (typeof SCHEMA)['gateway.workerAccept']['values'][number];
import { SCENARIO_IDS } from './throughput-bench.ts';
import { SYNTHETIC_TRACE_NAMES } from './traces.ts';

export interface BenchOptions {
  /** Seconds per measured run. */
  readonly duration: number;
  readonly connections: number;
  readonly rounds: number;
  /** Catalog and signing secret live here, so the 100,000-book catalog is seeded once. */
  readonly dataDir: string;
  /** Write a V8 CPU profile of the access-logged gateway and print its hottest functions. */
  readonly cpuProf: boolean;
  /** The cache-memory mode instead of the throughput rounds. */
  readonly memory: boolean;
  /** The hit-path ladder instead: what each part of a hit costs. */
  readonly ladder: boolean;
  /** The fleet's shared tier instead: L2 against L1 hits, purge fan-out, fleet-wide single flight. */
  readonly sharedTier: boolean;
  /** The gateway against nginx over TLS + HTTP/2 instead: hits and new handshakes, with h2load. */
  readonly http2: boolean;
  /** TLS session resumption across two workers (tls-bench.ts) instead of the throughput rounds. */
  readonly tls: boolean;
  /** `--tls`: openssl s_time processes run at once (1, the method: one connection at a time). */
  readonly clients: number;
  /** `--tls`: the bench certificate's key (P-256, as the gateway makes its own, or RSA 2048). */
  readonly tlsKey: CertificateKey;
  /** `--tls`: the gateway's `gateway.workerAccept` (reuseport: a socket per worker, one woken a connection). */
  readonly workerAccept: WorkerAccept;
  /** The hit-ratio replay instead: LRU, the gateway's policy, ARC, S3-FIFO and Bélády's MIN on request traces. */
  readonly hitRatio: boolean;
  /** The tiers' replay instead: memory over disk against memory alone and an unbounded cache. */
  readonly tiers: boolean;
  /** The disk tier's bound in MiB (`--tiers`, `--memory`). */
  readonly diskMib: number;
  /** The origin's offload across a gateway restart instead (restart-bench.ts). */
  readonly restart: boolean;
  /** `--ab DIR`: the other checkout this gateway is measured against. */
  readonly abBase?: string;
  /** The disk-hit rows of `--ab` alone: no other checkout. */
  readonly diskHits: boolean;
  /** Instructions a request under callgrind instead (instructions-bench.ts); with `--ab`, DIR's too. */
  readonly instructions: boolean;
  /** `--instructions`: requests run before counting, and requests counted. */
  readonly warm: number;
  readonly countedRequests: number;
  /** Trace files (`key [size]` per line) to replay instead of the synthetic traces. */
  readonly traceFiles: readonly string[];
  /** Entry size of a trace line without one. */
  readonly traceEntryBytes: number;
  /** Synthetic traces to replay, by name; all when absent. */
  readonly traceNames?: readonly string[];
  /** Requests per synthetic trace. */
  readonly traceRequests: number;
  /** Distinct searches the synthetic traces' popularity ranges over. */
  readonly traceDistinct: number;
  /** Cache bounds of the replay in MiB. */
  readonly boundsMib: readonly number[];
  /** Cache bounds of the replay in entries of --entry-bytes, instead of --bounds. */
  readonly boundEntries: readonly number[];
  readonly entries: number;
  readonly cacheMib: number;
  /** `--memory`: the client's Accept-Encoding, none (`identity`) or a browser's (`gzip`). */
  readonly client: MemoryClient;
  /** `--memory`: books per page of the tiny origin, about 340 B each. */
  readonly books: number;
  readonly save: boolean;
  /** Write to the committed bench/results/ (the figures of docs/benchmarks.md and the README) instead of the ignored bench-results/. */
  readonly updateCommitted: boolean;
  /** Scenario ids to run; all when absent. The bare ceiling always runs, since ratios need it. */
  readonly scenarios?: readonly string[];
}

export const MEMORY_CLIENTS = ['identity', 'gzip'] as const;
export type MemoryClient = (typeof MEMORY_CLIENTS)[number];

export const BENCH_HELP = () => `Usage: npm run bench -- [flags]

Measures with wrk (pinned to one core, the servers to the other), in interleaved rounds: a bare
node:http server (the ceiling), nginx proxy_cache with an access log (the peer), and the gateway
with its access log on and off, on one hot URL and on 1,000 URLs in Zipf order; then the origin
and the gateway on cold misses. Prints a markdown table and writes the JSON to bench-results/ (git-ignored); the
figures docs/benchmarks.md quotes are in bench/results/, written only with --update-committed.

Flags:
  --duration SECONDS   length of each measured run (default 5)
  --connections N      concurrent connections (default 64)
  --rounds N           repetitions, scenario order rotated each round (default 5)
  --data DIR           catalog and signing secret (default data/bench)
  --scenarios LIST     comma-separated subset of: ${SCENARIO_IDS.join(', ')}
                       (bare-hot and bare-zipf always run: every ratio is to them)
  --cpu-prof           profile the Node servers and print where the gateway's time goes
  --ladder             instead: price each part of a cache hit (bench/hit-ladder.ts levels and
                       the gateway, interleaved) for docs/performance.md
  --shared-tier        instead: three gateways sharing one Redis: a hit from Redis against a local
                       hit, how fast a purge reaches the others, one origin call per cold query
  --http2              instead: the gateway, nginx (http2, proxy_cache) and a bare node:http2
                       server (the ceiling) on one self-signed certificate, with h2load: hits
                       over TLS + HTTP/2 (p99 from h2load's per-request log), new TLS handshakes
  --tls                instead: a gateway of two workers, a bare node:https server, two bare
                       ones on one SO_REUSEPORT port and nginx of two workers, openssl s_time:
                       new TLS connections
                       against resumed ones (session tickets), TLS 1.2 and 1.3, with s_time's
                       own CPU per connection
  --clients N          in --tls mode, N s_time at once (default 1: one connection at a time)
  --tls-key KEY        in --tls mode, the certificate's key: p256 (the default, as the gateway
                       makes its own) or rsa2048 (what most sites serve)
  --worker-accept M    in --tls mode, the gateway's gateway.workerAccept: reuseport (the
                       default: a socket per worker), workers (one shared socket) or primary
  --hit-ratio          instead: replay request traces through the store (no HTTP) with plain LRU
                       and with the gateway's policy (adaptive W-TinyLFU), beside simulated ARC,
                       S3-FIFO, perfect LFU, LFU on exact counts so far (online LFU) and
                       Bélády's offline optimum (MIN), and report request and byte hit ratios
                       per trace and bound
  --trace FILE         in --hit-ratio mode, replay FILE (one request per line: key [size]; may be
                       repeated; FILE.gz and FILE.zst are decompressed) instead of the synthetic
                       Zipf, crawler, shift, recency, phases and loop traces
  --traces LIST        in --hit-ratio mode, only these synthetic traces, comma-separated, of:
                       ${SYNTHETIC_TRACE_NAMES.join(', ')}
  --entry-bytes N      size of a trace line without one (default 4096)
  --bounds LIST        cache bounds in MiB, comma-separated (default 16,64,256)
  --bound-entries LIST cache bounds in entries of --entry-bytes instead (a block trace's bound)
  --requests N         requests per synthetic trace (default 2000000); in --instructions mode,
                       requests counted (default 4000)
  --distinct N         distinct searches of the synthetic traces (default 1000000)
  --tiers              instead: replay the Zipf and crawler traces through memory (--cache-mib)
                       over the disk tier (--disk-mib), against memory alone and an unbounded cache
  --ab DIR             instead: this gateway against the one in checkout DIR (its own npm ci), one
                       URL and 1,000 URLs, and disk-tier hits against memory hits (bench/ab-bench.ts);
                       with --tls, DIR's gateway in the TLS rounds too, and CPU a connection over it
  --disk-hits          instead: --ab's disk-tier hits against memory hits alone, needing no DIR
  --instructions       instead: instructions a request under callgrind (memory hits, disk hits), which
                       repeat within 0.3 % on a busy machine; with --ab DIR, DIR's gateway too
  --warm N             in --instructions mode, requests before counting (default 20000)
  --restart            instead: the origin's offload in the --duration seconds before and after a
                       gateway restart (SIGTERM, SIGKILL, SIGUSR2 with 2 workers; SIGTERM without
                       the disk tier as the control)
  --disk-mib N         the disk tier's bound in --tiers and --memory modes (default 4096; 0 in
                       --memory mode: the disk tier off)
  --memory             instead: fill the gateway's cache with --entries distinct queries at a
                       --cache-mib bound and report its RSS against bound + 150 MiB
  --entries N          distinct cached queries in --memory mode (default 1000000)
  --cache-mib N        cache bound in --memory mode (default 256)
  --client NAME        the --memory mode's client: gzip (a browser's Accept-Encoding, the default)
                       or identity (none: the cache derives an identity body and keeps it on a hit)
  --books N            books per tiny-origin page in --memory mode, ~340 B each (default 3: ~1 KiB;
                       6: ~2 KB)
  --no-save            print only; write no file
  --update-committed   write bench/results/ (the committed figures) instead of bench-results/
  --help               show this help
`;

function integer(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^[0-9]+$/.test(text) || Number(text) < min || Number(text) > max)
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${text}"`);
  return Number(text);
}

function integers(flag: string, text: string, min: number, max: number): number[] {
  return text.split(',').map((item) => integer(flag, item.trim(), 0, min, max));
}

export function parseBenchArgs(argv: readonly string[]): BenchOptions | 'help' {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        duration: { type: 'string' },
        connections: { type: 'string' },
        rounds: { type: 'string' },
        data: { type: 'string' },
        'cpu-prof': { type: 'boolean' },
        memory: { type: 'boolean' },
        ladder: { type: 'boolean' },
        'shared-tier': { type: 'boolean' },
        http2: { type: 'boolean' },
        tls: { type: 'boolean' },
        clients: { type: 'string' },
        'tls-key': { type: 'string' },
        'worker-accept': { type: 'string' },
        'hit-ratio': { type: 'boolean' },
        tiers: { type: 'boolean' },
        ab: { type: 'string' },
        'disk-hits': { type: 'boolean' },
        instructions: { type: 'boolean' },
        warm: { type: 'string' },
        restart: { type: 'boolean' },
        'disk-mib': { type: 'string' },
        trace: { type: 'string', multiple: true },
        traces: { type: 'string' },
        'entry-bytes': { type: 'string' },
        bounds: { type: 'string' },
        'bound-entries': { type: 'string' },
        requests: { type: 'string' },
        distinct: { type: 'string' },
        entries: { type: 'string' },
        'cache-mib': { type: 'string' },
        client: { type: 'string' },
        books: { type: 'string' },
        'no-save': { type: 'boolean' },
        'update-committed': { type: 'boolean' },
        scenarios: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help === true) return 'help';
  if (values.tiers === true && values['disk-mib'] === '0') throw new UsageError('--disk-mib: the --tiers mode needs a disk tier (1 or more)');
  const text = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
  const data = text('data');
  const ab = text('ab');
  if (data?.trim() === '') throw new UsageError('--data must not be empty');
  const list = text('scenarios')
    ?.split(',')
    .map((id) => id.trim());
  const unknown = list?.find((id) => !(SCENARIO_IDS as readonly string[]).includes(id));
  if (unknown !== undefined) throw new UsageError(`--scenarios: unknown scenario "${unknown}"; known: ${SCENARIO_IDS.join(', ')}`);
  const traceNames = text('traces')
    ?.split(',')
    .map((name) => name.trim());
  const unknownTrace = traceNames?.find((name) => !(SYNTHETIC_TRACE_NAMES as readonly string[]).includes(name));
  if (unknownTrace !== undefined) throw new UsageError(`--traces: unknown trace "${unknownTrace}"; known: ${SYNTHETIC_TRACE_NAMES.join(', ')}`);
  return {
    duration: integer('duration', text('duration'), 5, 1, 3600),
    connections: integer('connections', text('connections'), 64, 1, 10_000),
    rounds: integer('rounds', text('rounds'), 5, 1, 100),
    dataDir: data ?? 'data/bench',
    cpuProf: values['cpu-prof'] === true,
    memory: values.memory === true,
    ladder: values.ladder === true,
    sharedTier: values['shared-tier'] === true,
    http2: values.http2 === true,
    tls: values.tls === true,
    clients: integer('clients', text('clients'), 1, 1, 64),
    tlsKey: oneOf('tls-key', text('tls-key'), CERTIFICATE_KEYS, 'p256'),
    workerAccept: oneOf('worker-accept', text('worker-accept'), SCHEMA['gateway.workerAccept'].values, 'reuseport'),
    hitRatio: values['hit-ratio'] === true,
    tiers: values.tiers === true,
    restart: values.restart === true,
    diskHits: values['disk-hits'] === true,
    instructions: values.instructions === true,
    warm: integer('warm', text('warm'), 20_000, 0, 10_000_000),
    countedRequests: integer('requests', text('requests'), 4000, 1000, 100_000_000),
    diskMib: integer('disk-mib', text('disk-mib'), 4096, 0, 16 * 1024 * 1024),
    traceFiles: Array.isArray(values.trace) ? values.trace : [],
    traceEntryBytes: integer('entry-bytes', text('entry-bytes'), 4096, 1, 1024 * 1024 * 1024),
    traceRequests: integer('requests', text('requests'), 2_000_000, 1000, 100_000_000),
    traceDistinct: integer('distinct', text('distinct'), 1_000_000, 1000, 5_000_000),
    boundsMib: integers('bounds', text('bounds') ?? '16,64,256', 1, 65_536),
    boundEntries: text('bound-entries') === undefined ? [] : integers('bound-entries', text('bound-entries') ?? '', 1, 1_000_000_000),
    entries: integer('entries', text('entries'), 1_000_000, 1000, 100_000_000),
    cacheMib: integer('cache-mib', text('cache-mib'), 256, 1, 65_536),
    client: oneOf('client', text('client'), MEMORY_CLIENTS, 'gzip'),
    books: integer('books', text('books'), 3, 1, 100),
    save: values['no-save'] !== true,
    updateCommitted: values['update-committed'] === true,
    ...(traceNames === undefined ? {} : { traceNames: [...new Set(traceNames)] }),
    ...(ab === undefined ? {} : { abBase: ab }),
    ...(list === undefined ? {} : { scenarios: [...new Set(['bare-hot', 'bare-zipf', ...list])] }),
  };
}

/** `value` of `--flag` when it is one of `known`; `fallback` when it is not given. */
function oneOf<T extends string>(flag: string, value: string | undefined, known: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  const found = known.find((name) => name === value);
  if (found === undefined) throw new UsageError(`--${flag}: unknown value "${value}"; known: ${known.join(', ')}`);
  return found;
}
