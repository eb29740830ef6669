/**
 * Load over HTTP/2 and TLS from `h2load` (nghttp2's C load generator, Debian's nghttp2-client),
 * pinned to its own core like wrk. Two shapes: a fixed duration of requests over a few long
 * connections (the hit path), and a batch of clients that each open a connection, make one
 * request and go (every request pays a full TLS handshake: h2load keeps no session to resume).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface H2loadRun {
  readonly url: string;
  /**
   * A file of URLs, one a line, that each client asks for in turn (h2load `-i`; the first line's
   * scheme and authority serve for all) instead of `url` alone.
   */
  readonly urlFile?: string | undefined;
  /** `Bearer …`, sent on every request. */
  readonly authorization: string;
  readonly cpu: number | undefined;
}

export interface H2loadResult {
  /** Requests that got an answer, of any status. */
  readonly requests: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** Answers with a status outside 2xx. */
  readonly non2xx: number;
  /**
   * Requests that got no answer (a reset, a closed connection, a timeout). A timed run ends with
   * the requests still in flight counted here, at most connections × streams.
   */
  readonly errors: number;
  /** Mean time per request, ms. */
  readonly meanMs: number;
  /**
   * The 99th percentile of the time per answered request, ms, from h2load's per-request log (its
   * summary has no percentiles); NaN where no log was asked for.
   */
  readonly p99Ms: number;
  /** The TLS version and cipher negotiated, as h2load names them. */
  readonly tls: string;
}

const UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000 };

function parse(stdout: string): H2loadResult {
  const finished = /finished in ([0-9.]+)(us|ms|s), ([0-9.]+) req\/s/.exec(stdout);
  const counts = /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(stdout);
  const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(stdout);
  const tls = [/TLS Protocol: (\S+)/.exec(stdout)?.[1], /Cipher: (\S+)/.exec(stdout)?.[1]].filter((part) => part !== undefined).join(' ');
  const mean = /time for request:\s+\S+\s+\S+\s+([0-9.]+)(us|ms|s)/.exec(stdout);
  if (finished === null || counts === null || codes === null) throw new Error(`h2load printed no result:\n${stdout}`);
  const seconds = (Number(finished[1]) * (UNIT_MS[finished[2] ?? 's'] ?? 1000)) / 1000;
  return {
    requests: Number(counts[2]),
    seconds,
    requestsPerSecond: Number(finished[3]),
    non2xx: Number(codes[2]) + Number(codes[3]) + Number(codes[4]),
    // h2load's "failed" also holds the non-2xx answers; "errored" and "timeout" are the unanswered.
    errors: Number(counts[5]) + Number(counts[6]),
    meanMs: mean === null ? Number.NaN : Number(mean[1]) * (UNIT_MS[mean[2] ?? 'ms'] ?? 1),
    p99Ms: Number.NaN,
    tls,
  };
}

/**
 * The 99th percentile, ms, of `--log-file`'s rows: start (µs since the epoch), status (-1 for a
 * stream that failed, left out), µs until the answer ended.
 */
export function p99FromLog(text: string): number {
  const durations: number[] = [];
  for (const row of text.split('\n')) {
    const [, status, micros] = row.split('\t');
    if (status === undefined || micros === undefined || status === '-1') continue;
    durations.push(Number(micros));
  }
  if (durations.length === 0) return Number.NaN;
  durations.sort((a, b) => a - b);
  return (durations[Math.min(durations.length - 1, Math.ceil(durations.length * 0.99) - 1)] ?? Number.NaN) / 1000;
}

async function h2load(options: H2loadRun, shape: readonly string[]): Promise<H2loadResult> {
  const args = ['-t1', ...shape, '-H', `authorization: ${options.authorization}`, ...(options.urlFile === undefined ? [options.url] : ['-i', options.urlFile])];
  const [command, argv] = options.cpu === undefined ? ['h2load', args] : ['taskset', ['-c', String(options.cpu), 'h2load', ...args]];
  const { stdout } = await run(command, argv, { env: { PATH: process.env.PATH }, maxBuffer: 1 << 20 });
  return parse(stdout);
}

/** Seconds h2load runs a sustained load before it starts counting. */
export const H2LOAD_WARM_UP_SECONDS = 1;

/** `connections` connections with `streams` requests in flight on each, for `seconds`; p99 from its per-request log. */
export async function h2loadSustained(options: H2loadRun, connections: number, streams: number, seconds: number): Promise<H2loadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'h2load-'));
  const log = join(dir, 'requests.tsv');
  try {
    const result = await h2load(options, [`-c${connections}`, `-m${streams}`, `-D${seconds}`, `--warm-up-time=${H2LOAD_WARM_UP_SECONDS}`, `--log-file=${log}`]);
    return { ...result, p99Ms: p99FromLog(readFileSync(log, 'utf8')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `clients` clients at once, each one new connection (one TLS handshake) and one request. */
export function h2loadHandshakes(options: H2loadRun, clients: number): Promise<H2loadResult> {
  return h2load(options, [`-c${clients}`, `-n${clients}`, '-m1']);
}
