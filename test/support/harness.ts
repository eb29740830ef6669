/**
 * What every server test needs: a hand-driven clock, log lines captured from an injected
 * destination, a plain HTTP client, a wait on real server state, and Prometheus text reading.
 */
import { connect } from 'node:net';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import type { DestinationStream } from 'pino';
import { request, type Dispatcher } from 'undici';
import { parsePrometheusText, type Sample } from '../../src/loadtest/prometheus-text.ts';

export interface Clock {
  now(): number;
  advance(ms: number): void;
}

export function manualClock(start = Date.now()): Clock {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}

export interface LogCapture extends DestinationStream {
  readonly text: () => string;
  readonly lines: () => Record<string, unknown>[];
}

export function captureLogs(): LogCapture {
  const chunks: string[] = [];
  return {
    write(msg: string) {
      chunks.push(msg);
    },
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/**
 * Re-checks a condition that reads real server state (a metric, a counter) until it holds, for at
 * most `ms`. Each check is itself real I/O, so the checks are paced by the system under test; the
 * bound is time, not a number of checks, since how many checks fit in one of a server's intervals
 * depends on the machine: a bound of 20,000 checks ran out after 2.9 s on a fast one, before the
 * two probes a second apart that the readiness test waits for.
 */
export async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (await check()) return;
    await setImmediate();
  }
  throw new Error(`the condition never held within ${ms} ms`);
}

/** Whether `check` holds within `ms`, asked every few milliseconds. */
export async function holdsWithin(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (await check()) return true;
    await sleep(5);
  }
  return false;
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** `dispatcher`: how to reach the server (test/support/protocols.ts); undici's default speaks HTTP/1.1. */
export async function get(url: string, headers: Record<string, string> = {}, method = 'GET', signal?: AbortSignal, dispatcher?: Dispatcher): Promise<Reply> {
  const res = await request(url, { method, headers, ...(signal === undefined ? {} : { signal }), ...(dispatcher === undefined ? {} : { dispatcher }) });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

/**
 * Sends raw bytes to a server and collects everything it writes until it closes the connection,
 * or `waitMs` passes (then the connection is closed from this side).
 */
export function rawExchange(url: string, bytes: string, waitMs = 2000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let received = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on('error', () => {
      resolve(received);
    });
  });
}

/** A request with a body (a JSON value is sent as application/json unless `headers` say otherwise). */
export async function send(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const res = await request(url, {
    method,
    headers: text === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(text === undefined ? {} : { body: text }),
  });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*"';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (-?[0-9.]+(?:e[+-]?[0-9]+)?|[Nn][Aa][Nn]|[+-]?[Ii]nf)(?: -?[0-9]+)?$`);
const COMMENT = new RegExp(`^# (?:HELP ${NAME} .*|TYPE ${NAME} (?:counter|gauge|histogram|summary|untyped))$`);

/**
 * Checks that every line of a scrape is Prometheus text exposition format 0.0.4 — stricter than
 * the loadtest's reader, which skips comments — and returns the samples read.
 */
export function parsePrometheus(text: string): readonly Sample[] {
  for (const line of text.split('\n')) {
    if (line !== '' && !COMMENT.test(line) && !SAMPLE.test(line)) throw new Error(`not Prometheus text: ${line}`);
  }
  return parsePrometheusText(text).all;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  return parsePrometheusText(text).sum(name, labels);
}
