/**
 * A real gateway for tests, with a hand-driven clock, its log lines captured from an injected
 * destination, tokens minted with its own secret, and helpers to read its Prometheus text.
 */
import { setImmediate } from 'node:timers/promises';
import { request } from 'undici';
import type { DestinationStream } from 'pino';
import type { Config, ConfigKey } from '../../src/config/schema.ts';
import { startGateway, type RunningGateway } from '../../src/gateway/gateway.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../src/shared/signing-key.ts';
import { testConfig } from './config.ts';

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

export interface GatewayFixture {
  readonly gateway: RunningGateway;
  readonly config: Config;
  readonly clock: Clock;
  readonly logs: LogCapture;
  /** A valid development token for this gateway (scope `catalog:read` unless given). */
  token(scope?: string): Promise<string>;
  /** GET (or another method) through the gateway with a valid token unless headers say otherwise. */
  get(target: string, headers?: Record<string, string>, method?: string): Promise<Reply>;
  /** The gateway's `/metrics` text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startGatewayFixture(originUrl: string, overrides: Partial<Record<ConfigKey, unknown>> = {}): Promise<GatewayFixture> {
  const config = testConfig({ 'gateway.origin': originUrl, 'log.level': 'info', ...overrides });
  const clock = manualClock();
  const logs = captureLogs();
  const gateway = await startGateway(config, { logDestination: logs, now: () => clock.now() });
  const secret = loadOrCreateSecret(secretPath(config));
  const token = (scope = 'catalog:read'): Promise<string> => mintToken(secret, { subject: 'tester', scope, ttlSeconds: 3600 });
  const valid = await token();
  return {
    gateway,
    config,
    clock,
    logs,
    token,
    get: (target, headers = {}, method = 'GET') => get(`${gateway.url}${target}`, { authorization: `Bearer ${valid}`, ...headers }, method),
    metrics: async () => (await get(`${gateway.adminUrl}/metrics`)).body,
    stop: () => gateway.stop(),
  };
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
