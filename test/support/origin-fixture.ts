/**
 * A real origin for tests: a small catalog seeded once per test file (each file runs in its own
 * process) and shared read-only by every origin the file starts, port 0, a hand-driven clock,
 * captured log lines and tokens minted with the origin's own secret.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Config, ConfigKey } from '../../src/config/schema.ts';
import { startOrigin, type RunningOrigin } from '../../src/origin/origin.ts';
import { seedCatalog } from '../../src/origin/seed.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../src/shared/signing-key.ts';
import { tempDir, testConfig } from './config.ts';
import { captureLogs, get, manualClock, type Clock, type LogCapture, type Reply } from './harness.ts';

export const TEST_BOOKS = 2000;

let seeded: string | undefined;

/** The path of this test file's catalog of `TEST_BOOKS` books, built on first use. */
export function sharedCatalog(): string {
  if (seeded === undefined) {
    const path = join(tempDir('catalog-db-'), 'catalog.db');
    seedCatalog(path, TEST_BOOKS);
    seeded = path;
  }
  return seeded;
}

export interface Holding {
  readonly book: string;
  readonly branch: string;
}

/** Holdings of the test catalog with exactly `copies` copies, none on loan, each of another book. */
export function freeHoldings(copies: number, count: number, order: 'ASC' | 'DESC' = 'ASC'): Holding[] {
  const db = new DatabaseSync(sharedCatalog(), { readOnly: true });
  const rows = db
    .prepare(`SELECT book_id, min(branch_id) AS branch_id FROM holding WHERE copies = ? AND on_loan = 0 GROUP BY book_id ORDER BY book_id ${order} LIMIT ?`)
    .all(copies, count);
  db.close();
  return rows.map((r) => ({ book: `bk_${r.book_id as number}`, branch: r.branch_id as string }));
}

export interface TokenOptions {
  readonly subject?: string;
  readonly scope?: string;
  readonly ttlSeconds?: number;
}

export interface OriginFixture {
  readonly origin: RunningOrigin;
  readonly config: Config;
  readonly clock: Clock;
  readonly logs: LogCapture;
  /** A token signed with this origin's secret; `catalog:read`, subject "tester", one hour unless given. */
  token(options?: TokenOptions): Promise<string>;
  /** A request with a valid token unless `headers` carry their own `authorization`. */
  get(target: string, headers?: Record<string, string>, method?: string): Promise<Reply>;
  /** A request without any `Authorization` header. */
  anonymous(target: string, headers?: Record<string, string>, method?: string): Promise<Reply>;
  /** The admin listener's `/metrics` text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startOriginFixture(overrides: Partial<Record<ConfigKey, unknown>> = {}): Promise<OriginFixture> {
  const config = testConfig({ 'origin.db': sharedCatalog(), 'log.level': 'info', ...overrides });
  const clock = manualClock();
  const logs = captureLogs();
  const origin = await startOrigin(config, { logDestination: logs, now: () => clock.now() });
  const secret = config['auth.jwks'] === null ? loadOrCreateSecret(secretPath(config)) : undefined;
  const token = (options: TokenOptions = {}): Promise<string> => {
    if (secret === undefined) throw new Error('this origin verifies tokens with a JWKS; mint them with its private key');
    return mintToken(secret, { subject: options.subject ?? 'tester', scope: options.scope ?? 'catalog:read', ttlSeconds: options.ttlSeconds ?? 3600 });
  };
  const valid = secret === undefined ? '' : await token();
  return {
    origin,
    config,
    clock,
    logs,
    token,
    get: (target, headers = {}, method = 'GET') => get(`${origin.url}${target}`, { authorization: `Bearer ${valid}`, ...headers }, method),
    anonymous: (target, headers = {}, method = 'GET') => get(`${origin.url}${target}`, headers, method),
    metrics: async () => (await get(`${origin.adminUrl}/metrics`)).body,
    stop: () => origin.stop(),
  };
}

/** The parsed JSON body of a reply, typed by the caller. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the document type it expects
export function json<T = Record<string, unknown>>(reply: Reply): T {
  return JSON.parse(reply.body) as T;
}

export interface BusyConnection {
  /** Completes the pending request and reads its response until the server closes the connection. */
  finish(): Promise<Reply>;
  close(): void;
}

function parseRawResponse(text: string): Reply {
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...fields] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(':');
    headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) };
}

/**
 * A keep-alive connection with a request in progress: one complete request has been answered and
 * a second one (`method target`, authorised with `token`) has been sent up to its request line,
 * pipelined in the same write. The server has begun parsing it, so the connection is busy, not
 * idle: a drain started now must wait for it rather than close it.
 */
export async function openBusyConnection(baseUrl: string, token: string, method: string, target: string): Promise<BusyConnection> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const ended = once(socket, 'close');
  const rest = `Host: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  socket.write(`GET /v1/branches HTTP/1.1\r\n${rest}${method} ${target} HTTP/1.1\r\n`);
  const firstAnswered = (): boolean => {
    const split = text.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: ([0-9]+)/i.exec(text)?.[1];
    return split !== -1 && length !== undefined && Buffer.byteLength(text) >= split + 4 + Number(length);
  };
  while (!firstAnswered()) await Promise.race([once(socket, 'data'), ended.then(() => Promise.reject(new Error(`closed early: ${text}`)))]);
  const first = parseRawResponse(text);
  if (first.status !== 200) throw new Error(`the first request failed: ${text}`);
  return {
    async finish() {
      const offset = text.length;
      socket.write(rest);
      await ended;
      return parseRawResponse(text.slice(offset));
    },
    close: () => socket.destroy(),
  };
}
