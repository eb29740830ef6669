/**
 * The admin listener of either server: `/metrics` (Prometheus text from the server's own
 * registry), `/healthz` (the process answers) and `/readyz` (ready to take traffic, not draining).
 * It sits on its own port so scrapes and probes never queue behind API traffic.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { problem, sendProblem } from './problem.ts';

export interface AdminOptions {
  readonly registry: Registry;
  /** Resolves to undefined when ready, or to the reason it is not. */
  readonly notReadyReason: () => Promise<string | undefined>;
}

function sendJson(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function createAdminServer(options: AdminOptions): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = async (): Promise<void> => {
      switch (path) {
        case '/metrics': {
          const text = await options.registry.metrics();
          res.writeHead(200, { 'content-type': options.registry.contentType, 'cache-control': 'no-store' });
          res.end(text);
          return;
        }
        case '/healthz':
          sendJson(res, 200, { status: 'ok' });
          return;
        case '/readyz': {
          const reason = await options.notReadyReason();
          if (reason === undefined) sendJson(res, 200, { status: 'ready' });
          else sendProblem(res, problem('not-ready', reason), '/readyz', req.method === 'HEAD');
          return;
        }
        default:
          sendProblem(res, problem('not-found', 'admin endpoints: /metrics, /healthz, /readyz'), path ?? '/', req.method === 'HEAD');
      }
    };
    answer().catch((err: unknown) => {
      if (!res.headersSent) sendProblem(res, problem('internal-error', 'the admin endpoint failed'), path ?? '/', false);
      else res.destroy(err instanceof Error ? err : undefined);
    });
  });
}
