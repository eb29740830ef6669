/**
 * A real HTTP origin for gateway tests: it serves catalog-shaped JSON with whatever headers a
 * test asks for, counts the requests it receives per target, can hold its answers behind a gate
 * until the test releases them, and can fail in the ways real origins fail (stalled headers,
 * stalled body, reset mid-body, bytes that are not HTTP, 5xx, oversize bodies).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { baseUrl, listen } from '../../src/shared/lifecycle.ts';
import { answeredHealthCheck } from './health-check.ts';

export type Behaviour =
  /** A JSON answer. Header values override the defaults; `null` removes a default header. */
  | {
      readonly kind: 'json';
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string | string[] | null>>;
      readonly padBytes?: number;
      readonly body?: string;
    }
  /** Accepts the request and never answers. */
  | { readonly kind: 'stall-headers' }
  /** Sends headers and part of the body, then nothing more. */
  | { readonly kind: 'stall-body' }
  /** Sends headers and part of the body, then resets the connection. */
  | { readonly kind: 'reset-mid-body' }
  /** Answers with bytes that are not HTTP. */
  | { readonly kind: 'garbage' };

export interface Received {
  readonly method: string;
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
}

export interface Gate {
  /** Lets every held answer (and every later one) go. */
  release(): void;
}

export interface FaultOrigin {
  readonly url: string;
  /** Requests received, for one target or in total. */
  count(target?: string): number;
  readonly received: readonly Received[];
  /** Resolves once `n` requests have been received in total. */
  receivedAtLeast(n: number): Promise<void>;
  /** How the origin answers from now on. */
  behave(choose: (target: string) => Behaviour): void;
  /** Down: open connections are closed and new ones reset at once, as by a crashed origin host. */
  down(): void;
  /** Up again: connections are accepted and answered. */
  up(): void;
  /** Holds every answer from now on until the returned gate is released. */
  hold(): Gate;
  close(): Promise<void>;
}

export const OK: Behaviour = { kind: 'json' };

/** A body shaped like a catalog search page, distinct per target. */
export function catalogBody(target: string, padBytes = 0): string {
  const title = `Echoes of ${target}`;
  const book = { id: 'bk_1', title, authors: ['Test Author'], availability: [{ branch: 'branch_central', available: true }], pad: 'x'.repeat(padBytes) };
  return JSON.stringify({ results: [book], next: null });
}

function strongEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

function answerJson(req: IncomingMessage, res: ServerResponse, target: string, behaviour: Extract<Behaviour, { kind: 'json' }>): void {
  const body = behaviour.body ?? catalogBody(target, behaviour.padBytes);
  const headers: Record<string, string | string[]> = {
    'content-type': 'application/json',
    'cache-control': 'public, max-age=60',
    etag: strongEtag(body),
    'content-length': String(Buffer.byteLength(body)),
  };
  for (const [name, value] of Object.entries(behaviour.headers ?? {})) {
    if (value === null) Reflect.deleteProperty(headers, name);
    else headers[name] = value;
  }
  // A validator that still matches gets a 304 with the same fields and no content, as the real origin does.
  const status = behaviour.status ?? 200;
  if (status === 200 && headers.etag !== undefined && req.headers['if-none-match'] === headers.etag) {
    Reflect.deleteProperty(headers, 'content-length');
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(status, headers);
  res.end(body);
}

const PARTIAL = '{"results":[{"id":"bk_1","title":"Half a';

export async function startFaultOrigin(): Promise<FaultOrigin> {
  const counts = new Map<string, number>();
  const received: Received[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let choose: (target: string) => Behaviour = () => OK;
  let gate: Promise<void> | undefined;

  const server = createServer((req, res) => {
    if (answeredHealthCheck(req, res)) return;
    const target = req.url ?? '/';
    counts.set(target, (counts.get(target) ?? 0) + 1);
    received.push({ method: req.method ?? 'GET', target, headers: req.headers });
    for (const waiter of waiters.filter((w) => received.length >= w.n)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const behaviour = choose(target);
    const answer = (): void => {
      switch (behaviour.kind) {
        case 'json':
          answerJson(req, res, target, behaviour);
          return;
        case 'stall-headers':
          return;
        case 'stall-body':
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60', 'content-length': '1000' });
          res.write(PARTIAL);
          return;
        case 'reset-mid-body':
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=60', 'content-length': '1000' });
          res.write(PARTIAL, () => res.socket?.resetAndDestroy());
          return;
        case 'garbage':
          req.socket.end('SSH-2.0-definitely-not-http\r\n\0\0\0\r\n\r\n');
          return;
      }
    };
    if (gate === undefined) answer();
    else void gate.then(answer);
  });
  let isDown = false;
  server.on('connection', (socket: Socket) => {
    if (isDown) socket.resetAndDestroy();
  });
  const url = baseUrl(await listen(server, '127.0.0.1', 0));

  return {
    url,
    received,
    count: (target) => (target === undefined ? received.length : (counts.get(target) ?? 0)),
    receivedAtLeast: (n) =>
      received.length >= n
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            waiters.push({ n, resolve });
          }),
    behave(next) {
      choose = next;
    },
    down() {
      isDown = true;
      server.closeAllConnections();
    },
    up() {
      isDown = false;
    },
    hold() {
      let release = (): void => undefined;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return {
        release: () => {
          gate = undefined;
          release();
        },
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}
