/**
 * A real HTTP origin whose answers a test writes as a function of the request, for the generic
 * (`http`, `pass`) routes: any method, any status and fields, request bodies read, and raw bytes
 * on the socket for origins that break framing. It counts what it receives per method and target.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { baseUrl, listen } from '../../src/shared/lifecycle.ts';
import { answeredHealthCheck } from './health-check.ts';

export interface Seen {
  readonly method: string;
  readonly target: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type Script = (req: Seen, res: ServerResponse) => void;

export interface ScriptedOrigin {
  readonly url: string;
  readonly seen: readonly Seen[];
  /** Requests received for `method target`, or for a target with any method. */
  count(target: string, method?: string): number;
  script(handler: Script): void;
  /** Closes the listener: connections are refused until `start` listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startScriptedOrigin(initial: Script): Promise<ScriptedOrigin> {
  const seen: Seen[] = [];
  let handler = initial;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    if (answeredHealthCheck(req, res)) return;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const one = { method: req.method ?? 'GET', target: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(one);
      handler(one, res);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const address = await listen(server, '127.0.0.1', 0);
  const url = baseUrl(address);
  const closeServer = async (): Promise<void> => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  };
  return {
    url,
    seen,
    count: (target, method) => seen.filter((s) => s.target === target && (method === undefined || s.method === method)).length,
    script(next) {
      handler = next;
    },
    stop: closeServer,
    async start() {
      await listen(server, '127.0.0.1', address.port);
    },
    close: closeServer,
  };
}

/** Writes a whole response as raw bytes on the request's socket, bypassing Node's framing. */
/** An answer of `status` with `headers` over a `text/plain` default, and `body`. */
export function plainAnswer(status: number, headers: Record<string, string>, body: string): Script {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  };
}

export function raw(res: ServerResponse, bytes: string): void {
  res.socket?.write(bytes);
}
