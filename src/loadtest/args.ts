/**
 * `npm run loadtest` flags: parsed strictly, each value checked, and every refusal a UsageError
 * that names the flag, so a typo in a long benchmark command fails at once instead of running
 * the wrong load for a minute.
 */
import { UsageError, parseFlags } from '../cli/args.ts';
import { MAX_SUBJECTS } from './workload.ts';

export interface LoadtestOptions {
  /**
   * Gateway base URLs, loaded side by side (a fleet's members); absent means "start origin and
   * gateway on embedded defaults".
   */
  readonly urls?: readonly string[];
  /** Their admin URLs (or their primaries'), summed for the fleet's cache figures. */
  readonly gatewayAdmins?: readonly string[];
  readonly originAdmin?: string;
  /** HMAC secret the tokens are signed with; defaults to the configuration's. */
  readonly secretFile?: string;
  /** Catalog database the search texts are drawn from; defaults to the configuration's. */
  readonly db?: string;
  /** A config file layered over config/default.jsonc, as for the servers. */
  readonly config?: string;
  readonly connections: number;
  /** Seconds; exactly one of duration and amount is set. */
  readonly duration?: number;
  readonly amount?: number;
  /** Requests per second over all connections; absent means as fast as the target answers. */
  readonly rate?: number;
  readonly zipf: number;
  readonly distinct: number;
  readonly paging: number;
  readonly filters: number;
  /** Share of requests from a crawler (one-off searches). */
  readonly crawler: number;
  /** The clients' Accept-Encoding, when they compress (absent: identity clients). */
  readonly acceptEncoding?: string;
  readonly subjects: number;
  readonly seed: number;
  readonly out: string;
  readonly json: boolean;
  /** The circulation workload (circulation.ts) instead of the search-only one. */
  readonly circulation: boolean;
  readonly loansPerSecond: number;
  readonly allowedLagMs: number;
}

interface FlagDoc {
  readonly name: string;
  readonly value?: string;
  readonly description: string;
}

const FLAGS: readonly FlagDoc[] = [
  {
    name: 'url',
    value: 'URL[,URL…]',
    description:
      "gateway to load, or a fleet's gateways, comma-separated, loaded side by side (default: start origin and gateway on embedded defaults and a data directory of their own, remove both afterwards)",
  },
  {
    name: 'gateway-admin',
    value: 'URL[,URL…]',
    description: "the gateways' admin URLs, for cache hits and RSS from /metrics, summed over a fleet (with --url)",
  },
  { name: 'origin-admin', value: 'URL', description: "the origin's admin URL, for its own request count and RSS (with --url)" },
  {
    name: 'secret-file',
    value: 'PATH',
    description: "HMAC secret the tokens are signed with (default: the started servers', or the configuration's with --url)",
  },
  { name: 'db', value: 'PATH', description: "catalog database the search texts come from (default: the started servers', or the configuration's with --url)" },
  { name: 'config', value: 'FILE', description: 'JSONC file layered over config/default.jsonc' },
  { name: 'connections', value: 'N', description: 'concurrent connections (default 50)' },
  { name: 'duration', value: 'SECONDS', description: 'how long to send load (default 30)' },
  { name: 'amount', value: 'N', description: 'send exactly N requests instead of running for a duration' },
  { name: 'rate', value: 'N', description: 'requests per second over all connections (default: unlimited)' },
  { name: 'zipf', value: 'S', description: 'Zipf exponent of query popularity, 0 = uniform (default 1.0)' },
  { name: 'distinct', value: 'N', description: 'distinct queries (default 10000)' },
  { name: 'paging', value: 'SHARE', description: 'share of queries asking for a second page, 0..1 (default 0.1)' },
  { name: 'filters', value: 'SHARE', description: 'share of queries with branch/available filters, 0..1 (default 0.15)' },
  { name: 'crawler', value: 'SHARE', description: 'share of requests from a crawler, each a search asked once in the run, 0..1 (default 0)' },
  { name: 'accept-encoding', value: 'VALUE', description: 'Accept-Encoding every request sends, e.g. "gzip, br" (default: none, identity clients)' },
  { name: 'subjects', value: 'N', description: 'token subjects the requests are spread over (default 20)' },
  { name: 'seed', value: 'N', description: 'seed of the workload; the same seed sends the same requests (default 1)' },
  { name: 'out', value: 'DIR', description: 'where the JSON and HTML reports are written (default loadtest-results)' },
  { name: 'json', description: 'print the result JSON on stdout (progress and summary go to stderr)' },
  {
    name: 'circulation',
    description: 'loans and returns against the origin while searching, max-age=3600, every answer checked for stale availability (embedded servers only)',
  },
  { name: 'loans-per-second', value: 'N', description: 'circulation: loans and returns per second (default 1)' },
  {
    name: 'allowed-lag-ms',
    value: 'MS',
    description: 'circulation: how old a change an answer may still miss before it counts as a stale read (default 1000)',
  },
  { name: 'help', description: 'show this help' },
];

export function loadtestHelp(): string {
  const left = (f: FlagDoc): string => `--${f.name}${f.value === undefined ? '' : ` ${f.value}`}`;
  const width = Math.max(...FLAGS.map((f) => left(f).length)) + 2;
  const rows = FLAGS.map((f) => `  ${left(f).padEnd(width)}${f.description}`).join('\n');
  return `Usage: npm run loadtest -- [flags]\n\nSends a realistic search workload to a gateway and reports throughput, latency, the cache hit ratio and the origin offload.\n\nFlags:\n${rows}\n`;
}

function integer(flag: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

function decimal(flag: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`--${flag} must be a number from ${min} to ${max}, got "${text}"`);
  }
  return value;
}

function httpUrl(flag: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new UsageError(`--${flag} must be an http:// or https:// URL, got "${text}"`);
  return url.origin;
}

function httpUrls(flag: string, text: string | undefined): readonly string[] | undefined {
  if (text === undefined) return undefined;
  const urls = text.split(',').map((part) => httpUrl(flag, part.trim()) ?? '');
  if (new Set(urls).size !== urls.length) throw new UsageError(`--${flag} names a URL twice`);
  return urls;
}

function path(flag: string, text: string | undefined): string | undefined {
  if (text !== undefined && text.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  return text;
}

export function parseLoadtestArgs(argv: readonly string[]): LoadtestOptions | 'help' {
  const options = Object.fromEntries(FLAGS.map((f) => [f.name, { type: f.value === undefined ? 'boolean' : 'string' }] as const));
  const values = parseFlags(argv, options);
  if (values.help === true) return 'help';
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const urls = httpUrls('url', text('url'));
  const gatewayAdmins = httpUrls('gateway-admin', text('gateway-admin'));
  const originAdmin = httpUrl('origin-admin', text('origin-admin'));
  if (urls === undefined && (gatewayAdmins !== undefined || originAdmin !== undefined)) {
    throw new UsageError('--gateway-admin and --origin-admin need --url (without it the load test starts its own servers)');
  }
  const duration = integer('duration', text('duration'), 1, 86_400);
  const amount = integer('amount', text('amount'), 1, 1_000_000_000);
  if (duration !== undefined && amount !== undefined) throw new UsageError('give --duration or --amount, not both');
  const connections = integer('connections', text('connections'), 1, 10_000) ?? 50;
  if (amount !== undefined && amount < connections) throw new UsageError(`--amount (${amount}) must be at least --connections (${connections})`);
  const paging = decimal('paging', text('paging'), 0, 1) ?? 0.1;
  const filters = decimal('filters', text('filters'), 0, 1) ?? 0.15;
  if (paging + filters > 1) throw new UsageError(`--paging and --filters add up to more than 1 (${paging} + ${filters})`);
  const rate = integer('rate', text('rate'), 1, 10_000_000);
  const secretFile = path('secret-file', text('secret-file'));
  const db = path('db', text('db'));
  const config = path('config', text('config'));
  const acceptEncoding = path('accept-encoding', text('accept-encoding'));
  const circulation = values.circulation === true;
  if (urls !== undefined && urls.length < 2 && (gatewayAdmins?.length ?? 0) > 1)
    throw new UsageError('--gateway-admin names more admin URLs than --url names gateways');
  if (circulation && urls !== undefined) throw new UsageError('--circulation starts its own origin and gateway; it cannot be given --url');
  return {
    ...(urls === undefined ? {} : { urls }),
    ...(gatewayAdmins === undefined ? {} : { gatewayAdmins }),
    ...(originAdmin === undefined ? {} : { originAdmin }),
    ...(secretFile === undefined ? {} : { secretFile }),
    ...(db === undefined ? {} : { db }),
    ...(config === undefined ? {} : { config }),
    ...(acceptEncoding === undefined ? {} : { acceptEncoding }),
    ...(amount === undefined ? { duration: duration ?? 30 } : { amount }),
    ...(rate === undefined ? {} : { rate }),
    connections,
    zipf: decimal('zipf', text('zipf'), 0, 10) ?? 1,
    distinct: integer('distinct', text('distinct'), 1, 1_000_000) ?? 10_000,
    paging,
    filters,
    crawler: decimal('crawler', text('crawler'), 0, 1) ?? 0,
    subjects: integer('subjects', text('subjects'), 1, MAX_SUBJECTS) ?? 20,
    seed: integer('seed', text('seed'), 0, 2 ** 32 - 1) ?? 1,
    out: path('out', text('out')) ?? 'loadtest-results',
    json: values.json === true,
    circulation,
    loansPerSecond: decimal('loans-per-second', text('loans-per-second'), 0.01, 1000) ?? 1,
    allowedLagMs: integer('allowed-lag-ms', text('allowed-lag-ms'), 0, 600_000) ?? 1000,
  };
}
