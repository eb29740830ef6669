/**
 * What every server test needs: a hand-driven clock, log lines captured from an injected
 * destination, a plain HTTP client, a wait on real server state, and Prometheus text reading.
 */
import { setImmediate } from 'node:timers/promises';
import type { DestinationStream } from 'pino';
import { request } from 'undici';

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
 * Re-checks a condition that reads real server state (a metric, a counter) until it holds. Each
 * check is itself real I/O, so this waits on the system under test, not on a timer.
 */
export async function until(check: () => Promise<boolean>, attempts = 20_000): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await setImmediate();
  }
  throw new Error('the condition never held');
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  const res = await request(url, { method, headers });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*"';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (-?[0-9.]+(?:e[+-]?[0-9]+)?|[Nn][Aa][Nn]|[+-]?[Ii]nf)(?: -?[0-9]+)?$`);
const COMMENT = new RegExp(`^# (?:HELP ${NAME} .*|TYPE ${NAME} (?:counter|gauge|histogram|summary|untyped))$`);

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * Parses Prometheus text exposition format 0.0.4, throwing on any line that does not conform.
 * Values follow Go's ParseFloat, as Prometheus does: NaN and Inf in any letter case.
 */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || COMMENT.test(line)) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not Prometheus text: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  return parsePrometheus(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
