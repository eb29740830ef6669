/**
 * The admin listener of either server: `/metrics` (Prometheus text from the server's own
 * registry), `/healthz` (the process answers) and `/readyz` (ready to take traffic, not draining),
 * and whatever `POST` endpoints the server adds (the gateway's purge API and event receiver).
 * It sits on its own port so scrapes and probes never queue behind API traffic.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createHttpServer, type HttpLimits, type Refusal } from './http-server.ts';
import type { Registry } from 'prom-client';
import { ArrivalFields } from './access-log.ts';
import { Framing } from './framing.ts';
import { problem, sendProblem } from './problem.ts';

export interface AdminOptions {
  readonly registry: Registry;
  /** Undefined when ready, or the reason it is not; never waits on anything (a probe reads state). */
  readonly notReadyReason: () => string | undefined;
  /**
   * What works less well than it should without making the server unready (the gateway's shared
   * tier being down): a load balancer must not pull every replica because Redis went away.
   */
  readonly degradedReason?: () => string | undefined;
  readonly limits: HttpLimits;
  readonly onRefused: (refusal: Refusal) => void;
  /** `POST` endpoints by path; each answers its request in full. */
  readonly endpoints?: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>>;
}

/** The listener's own endpoints, read with GET or HEAD. */
const READ_PATHS: ReadonlySet<string> = new Set(['/metrics', '/healthz', '/readyz']);

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function createAdminServer(options: AdminOptions): Server {
  const framing = new Framing();
  const arrivals = new ArrivalFields();
  return createHttpServer(
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const answer = async (): Promise<void> => {
        // The same strict framing as the API listeners: a proxy in front of the purge API reads a
        // request with two Hosts or a coding other than chunked differently too.
        const refused = framing.problem(req);
        if (refused !== undefined) {
          sendProblem(res, refused, path ?? '/', req.method === 'HEAD');
          return;
        }
        // A probe or a scrape that is not a GET is a client's mistake: answered 200, a `DELETE
        // /healthz` or a `POST /metrics` would look as if it had done something.
        if (READ_PATHS.has(path ?? '') && req.method !== 'GET' && req.method !== 'HEAD') {
          sendProblem(res, problem('method-not-allowed', `${path ?? ''} supports GET and HEAD`, { allow: 'GET, HEAD' }), path ?? '/', false);
          return;
        }
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
            const reason = options.notReadyReason();
            const degraded = options.degradedReason?.();
            if (reason === undefined) sendJson(res, 200, degraded === undefined ? { status: 'ready' } : { status: 'ready', degraded });
            else sendProblem(res, problem('not-ready', reason), '/readyz', req.method === 'HEAD');
            return;
          }
          default: {
            const endpoint = options.endpoints?.[path ?? ''];
            if (endpoint === undefined) {
              sendProblem(
                res,
                problem('not-found', `admin endpoints: ${[...READ_PATHS, ...Object.keys(options.endpoints ?? {})].join(', ')}`),
                path ?? '/',
                req.method === 'HEAD',
              );
            } else if (req.method !== 'POST') {
              sendProblem(res, problem('method-not-allowed', `${path ?? ''} supports POST`, { allow: 'POST' }), path ?? '/', req.method === 'HEAD');
            } else {
              res.setHeader('x-request-id', arrivals.requestId(req.headers['x-request-id']));
              await endpoint(req, res);
            }
          }
        }
      };
      answer().catch((err: unknown) => {
        if (!res.headersSent) sendProblem(res, problem('internal-error', 'the admin endpoint failed'), path ?? '/', false);
        else res.destroy(err instanceof Error ? err : undefined);
      });
    },
    options.limits,
    options.onRefused,
  );
}
