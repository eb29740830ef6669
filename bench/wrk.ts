/**
 * Load from `wrk` (C, epoll), one thread pinned to its own core: a single-process Node load
 * generator saturates on this 2-core machine long before a Node server does, and then measures
 * itself. bench/wrk-driver.lua formats every request once and reports in one parsable line.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const DRIVER = fileURLToPath(new URL('wrk-driver.lua', import.meta.url));

export interface WrkRun {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  /** `Bearer …`, sent on every request. */
  readonly authorization?: string;
  /** Sent on every request when given: a compressing client. */
  readonly acceptEncoding?: string | undefined;
  /** A file of targets, one per line, and optionally the order to ask them in (1-based indexes). */
  readonly targetsFile?: string;
  readonly orderFile?: string;
  /** CPU the generator is pinned to, or undefined on a one-core machine. */
  readonly cpu: number | undefined;
}

export interface WrkResult {
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Responses outside 2xx/3xx. */
  readonly non2xx: number;
  /** Connect, read and write errors and timeouts. */
  readonly errors: number;
}

interface Reported {
  readonly requests: number;
  readonly durationUs: number;
  readonly connectErrors: number;
  readonly readErrors: number;
  readonly writeErrors: number;
  readonly non2xx: number;
  readonly timeouts: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
}

export async function wrk(options: WrkRun): Promise<WrkResult> {
  const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '10s', '-s', DRIVER, options.url];
  const [command, argv] = options.cpu === undefined ? ['wrk', args] : ['taskset', ['-c', String(options.cpu), 'wrk', ...args]];
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  if (options.authorization !== undefined) env.BENCH_AUTH = options.authorization;
  if (options.acceptEncoding !== undefined) env.BENCH_ACCEPT_ENCODING = options.acceptEncoding;
  if (options.targetsFile !== undefined) env.BENCH_TARGETS = options.targetsFile;
  if (options.orderFile !== undefined) env.BENCH_ORDER = options.orderFile;
  const { stdout } = await run(command, argv, { env, maxBuffer: 1 << 20 });
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (line === undefined) throw new Error(`wrk printed no result:\n${stdout}`);
  const r = JSON.parse(line.slice('BENCH_RESULT '.length)) as Reported;
  return {
    requests: r.requests,
    requestsPerSecond: r.requests / (r.durationUs / 1e6),
    p50Ms: r.p50Us / 1000,
    p90Ms: r.p90Us / 1000,
    p99Ms: r.p99Us / 1000,
    maxMs: r.maxUs / 1000,
    non2xx: r.non2xx,
    errors: r.connectErrors + r.readErrors + r.writeErrors + r.timeouts,
  };
}
