/**
 * The pass step (Varnish's vcl_pass): routes listed in `gateway.passThrough` are streamed to the
 * origin with http-proxy-3 on one keep-alive agent and never cached. This is the only file that
 * touches http-proxy-3's event API; it installs the error handler on every request, so an
 * upstream failure becomes a 502/504 problem and never an uncaught exception.
 */
import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createProxyServer, type ProxyServer } from 'http-proxy-3';
import type { Config } from '../config/schema.ts';
import { sendProblem } from '../shared/problem.ts';
import { problemInstance } from '../shared/request-target.ts';
import { forwardStatus } from './cache-status.ts';
import type { Delivered } from './deliver.ts';
import { upstreamFailure } from './upstream-failure.ts';

/** RFC 9110 §7.6.1: connection-specific fields, never forwarded by an intermediary. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade'];

/** The fields to drop from a message: the fixed hop-by-hop set plus those its `Connection` names. */
function hopByHop(connection: string | string[] | number | undefined): string[] {
  const named = typeof connection === 'string' ? connection.split(',').map((n) => n.trim().toLowerCase()) : [];
  return [...HOP_BY_HOP, ...named.filter((n) => n !== '')];
}

const BYPASS = forwardStatus({ fwd: 'bypass' });

export class PassThrough {
  readonly #prefixes: readonly string[];
  readonly #agent: Agent;
  readonly #proxy: ProxyServer;
  readonly #timeoutMs: number;
  readonly #maxTargetBytes: number;
  /** Body bytes relayed per request, for the access log. */
  readonly #relayed = new WeakMap<IncomingMessage, { bytes: number }>();

  constructor(config: Config) {
    this.#prefixes = config['gateway.passThrough'];
    this.#timeoutMs = config['gateway.upstream.headersTimeoutMs'];
    this.#maxTargetBytes = config['http.maxTargetBytes'];
    // Without an agent http-proxy-3 sends `Connection: close` and opens a connection per request.
    this.#agent = new Agent({ keepAlive: true, maxSockets: config['gateway.upstream.connections'] });
    this.#proxy = createProxyServer({
      target: config['gateway.origin'],
      agent: this.#agent,
      xfwd: false,
      connectTimeout: config['gateway.upstream.connectTimeoutMs'],
    });
    this.#proxy.on('proxyReq', (proxyReq, req) => {
      this.#prepareRequest(proxyReq, req);
    });
    this.#proxy.on('proxyRes', (proxyRes, req) => {
      for (const name of hopByHop(proxyRes.headers.connection)) Reflect.deleteProperty(proxyRes.headers, name);
      const relayed = this.#relayed.get(req);
      if (relayed !== undefined) proxyRes.on('data', (chunk: Buffer) => { relayed.bytes += chunk.length; });
    });
    // A listener must exist even though every call passes its own callback: without one an
    // error that reaches the emitter is thrown.
    this.#proxy.on('error', () => undefined);
  }

  /** Whether the path of `target` is one of the configured prefixes or below one. */
  matches(target: string): boolean {
    if (this.#prefixes.length === 0) return false;
    const qmark = target.indexOf('?');
    const path = qmark === -1 ? target : target.slice(0, qmark);
    return this.#prefixes.some((prefix) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`));
  }

  #prepareRequest(proxyReq: ClientRequest, req: IncomingMessage): void {
    for (const name of hopByHop(req.headers.connection)) proxyReq.removeHeader(name);
    // The client's X-Forwarded-For is not trusted: the gateway states the peer it saw.
    proxyReq.setHeader('x-forwarded-for', req.socket.remoteAddress ?? 'unknown');
    proxyReq.setTimeout(this.#timeoutMs, () => {
      proxyReq.destroy(Object.assign(new Error('the origin did not answer in time'), { code: 'ETIMEDOUT' }));
    });
  }

  /** Streams one request to the origin and its answer back; resolves once the response is done. */
  forward(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<Delivered> {
    return new Promise((resolve) => {
      const relayed = { bytes: 0 };
      this.#relayed.set(req, relayed);
      req.headers['x-request-id'] = requestId;
      res.setHeader('x-request-id', requestId);
      res.setHeader('cache-status', BYPASS);
      res.once('close', () => {
        resolve({ status: res.statusCode, bytes: relayed.bytes });
      });
      this.#proxy.web(req, res, {}, (err) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const failure = upstreamFailure(err);
        res.setHeader('cache-status', forwardStatus({ fwd: 'bypass', detail: failure.code }));
        relayed.bytes = sendProblem(res, failure.problem, problemInstance(req.url ?? '/', this.#maxTargetBytes), req.method === 'HEAD');
      });
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
