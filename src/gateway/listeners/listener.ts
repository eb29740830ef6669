/**
 * The gateway's API listener, one of three servers that hand every request to the same pipeline:
 *
 *   cleartext HTTP/1.1   node:http (http-server.ts), the default
 *   TLS                  node:http2 `createSecureServer`: ALPN `h2`, or `http/1.1` for the
 *                        clients that do not offer h2; certificate reload (certificate-reload.ts)
 *   h2c (`http.h2c`)     node:http2 `createServer`: HTTP/2 with prior knowledge, for a load
 *                        balancer that speaks it
 *
 * HTTP/2 requests reach the pipeline from the server's 'stream' event, as a StreamRequest (the
 * stream, its header object and the connection's peer) and the stream to answer on, not through
 * Node's compatibility API (stream-request.ts; ../../shared/message-seam.ts). What HTTP/2 does
 * differently is settled here or in the rules: Host comes from `:authority`, pseudo-header fields
 * are not forwarded (rules/hop-by-hop.ts), a connection-specific field in an answer is dropped,
 * and there is no keep-alive to end (a drain sends GOAWAY instead). `CONNECT` and an `Expect`
 * other than `100-continue` are refused as on HTTP/1.1, and `100-continue` is met, as Node's
 * compatibility API would. The pipeline learns the protocol only from `httpVersion`, for the
 * access log, and from the kind of answer it writes to.
 */
import type { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import {
  createSecureServer,
  createServer,
  type Http2SecureServer,
  type Http2Server,
  type SecureServerOptions,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/schema.ts';
import { answerRefusals, createHttpServer, http1Options, refuseConnect, refuseExpectation, type HttpLimits, type Refusal } from '../../shared/http-server.ts';
import { baseUrl, drain, listen } from '../../shared/lifecycle.ts';
import { problem, sendProblem } from '../../shared/problem.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Reply, RequestHead } from '../../shared/message-seam.ts';
import { keepStreamsInSlots } from '../../shared/node-http-internals.ts';
import { CertificateReload } from './certificate-reload.ts';
import { OpenConnections } from './closed-connections.ts';
import { ConnectionGuard, type Connection, type GuardLimits } from './connection-guard.ts';
import { Http2Refusals } from './http2-refusals.ts';
import { ListenerMetrics } from './listener-metrics.ts';
import { answerPlainHttp } from './plain-http.ts';
import { StreamRequest } from './stream-request.ts';
import { keepTicketKeys, useTicketKeys } from './ticket-keys.ts';
import { tlsPaths } from './tls-identity.ts';

export type Handler = (req: RequestHead, res: Reply) => void;

const HEADER_LIST_TOO_LARGE = problem('headers-too-large', 'the request header list is larger than the server accepts (SETTINGS_MAX_HEADER_LIST_SIZE)');

/**
 * RFC 9113 §6.5.2: a header list's size, each field its name's and value's octets and 32 more
 * (`rawHeaders` holds a field as two strings, each character one octet).
 */
function headerListBytes(raw: readonly string[]): number {
  let bytes = 0;
  for (const part of raw) bytes += part.length + 16;
  return bytes;
}

function ignoreStreamError(): void {
  // One function for every stream: see `serveStream`.
}

/**
 * Hands each HTTP/2 stream of `server` to `serve`, with its connection as `guard` watches it. Node
 * attaches its compatibility API's own 'stream' listener (which makes an Http2ServerRequest and
 * Http2ServerResponse for every stream) as soon as the server has a 'request' listener, which a
 * TLS server has for its HTTP/1.1 clients; that listener is taken off, so that a stream's only
 * objects are Node's stream and the gateway's StreamRequest. One listener per connection both
 * hands a stream to the guard and serves it; the guard's Connection, which read the peer's address
 * once, is the peer each stream's request names. Node's own tables of the session's streams are
 * replaced by slots before the first stream (../../shared/slot-table.ts).
 */
function servedFromStreams(
  server: Http2SecureServer | Http2Server,
  guard: ConnectionGuard,
  serve: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[], connection: Connection) => void,
): void {
  for (const listener of server.listeners('stream')) server.removeListener('stream', listener as (...args: unknown[]) => void);
  server.on('session', (session: ServerHttp2Session) => {
    keepStreamsInSlots(session);
    const connection = guard.watch(session);
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, _flags: number, rawHeaders: string[]) => {
      serve(stream, headers, rawHeaders, connection);
    });
  });
}

export interface ListenerDeps {
  readonly limits: HttpLimits;
  readonly onRefused: (refusal: Refusal) => void;
  readonly logger: Logger;
  readonly registry: Registry;
  /** Milliseconds since the epoch, to tell an expired certificate. */
  readonly now: () => number;
}

export interface Listener {
  /**
   * Binds and returns the URL clients use (`https://` with TLS); with `reusePort`, on a socket of
   * its own among the workers' (../workers/reuse-port.ts).
   */
  listen(host: string, port: number, reusePort?: boolean): Promise<string>;
  /**
   * Stops accepting, lets in-flight requests finish (HTTP/2 connections get GOAWAY, HTTP/1.1
   * ones close once idle) and closes what is left after `deadlineMs`.
   */
  drain(deadlineMs: number): Promise<void>;
  /** Applies limits a reload changed to the connections accepted from now on (reload/live-parts.ts). */
  applyLimits(limits: HttpLimits): void;
}

/** The listener `config` asks for; throws a TlsIdentityError when its certificate cannot serve. */
export function createListener(handler: Handler, config: Config, deps: ListenerDeps): Listener {
  const paths = tlsPaths(config);
  if (paths === undefined && !config['http.h2c']) {
    const server = createHttpServer(handler, deps.limits, deps.onRefused);
    return {
      listen: async (host, port, reusePort) => baseUrl(await listen(server, host, port, reusePort)),
      drain: (deadlineMs) => drain(server, deadlineMs),
      // Node reads these server fields per connection and per timeout sweep, so assigning them is enough.
      applyLimits(limits) {
        server.headersTimeout = limits.headersTimeoutMs;
        server.requestTimeout = limits.requestTimeoutMs;
        server.keepAliveTimeout = limits.keepAliveTimeoutMs;
        server.maxConnections = limits.maxConnections;
      },
    };
  }
  const metrics = new ListenerMetrics(deps.registry);
  const maxHeaderList = config['http.http2.maxHeaderListBytes'];
  const options: SecureServerOptions = {
    settings: { maxConcurrentStreams: config['http.http2.maxConcurrentStreams'], maxHeaderListSize: maxHeaderList },
  };
  const guardLimits = (limits: HttpLimits): GuardLimits => ({
    prefaceTimeoutMs: limits.headersTimeoutMs,
    sendTimeoutMs: config['http.http2.sendTimeoutMs'],
    idleTimeoutMs: limits.requestTimeoutMs,
    maxQueuedBytes: config['http.http2.maxQueuedBytes'],
    maxResetsPerSecond: config['http.http2.maxResetsPerSecond'],
  });
  const guard = new ConnectionGuard(guardLimits(deps.limits), new Http2Refusals(metrics, deps.logger), () => {
    metrics.rapidReset();
  });
  const serveStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[], connection: Connection): void => {
    // Node destroys a stream with an error (a write after the client's reset, say) by emitting it,
    // which with no listener would end the process; what the stream's answer became is read from
    // its state (../../shared/access-log.ts, `clientGone`).
    stream.on('error', ignoreStreamError);
    if (!guard.admits(connection, stream)) return;
    const req = new StreamRequest(stream, headers, rawHeaders, connection);
    // The limit is a setting the client learns from the first SETTINGS frame, and nghttp2 holds a
    // client to it only once the client has acknowledged it: the requests a client sends before
    // that are held to it here.
    if (headerListBytes(rawHeaders) > maxHeaderList) {
      deps.onRefused({ reason: 'h2-header-list', method: req.method, target: (req.url ?? '').slice(0, 128) });
      sendProblem(stream, HEADER_LIST_TOO_LARGE, '/', req.method === 'HEAD');
      return;
    }
    if (req.method === 'CONNECT') {
      refuseConnect(req, stream, deps.onRefused);
      return;
    }
    const { expect } = headers;
    if (expect !== undefined) {
      if (expect !== '100-continue') {
        refuseExpectation(req, stream, deps.onRefused);
        return;
      }
      stream.additionalHeaders({ ':status': 100 });
    }
    // RFC 9113 §8.3.1: `:authority` stands for Host, and a request relayed as HTTP/1.1 carries it as Host.
    const authority = headers[':authority'];
    if (headers.host === undefined && typeof authority === 'string') headers.host = authority;
    handler(req, stream);
  };
  const connections = new OpenConnections();
  let server: Http2SecureServer | Http2Server;
  let reload: CertificateReload | undefined;
  let stopTicketKeys: (() => void) | undefined;
  if (paths === undefined) {
    server = createServer(options);
  } else {
    const tls = new CertificateReload(
      paths,
      (identity) => {
        tlsServer.setSecureContext(keepTicketKeys(tlsServer, identity.context));
      },
      metrics,
      deps.logger,
      deps.now,
    );
    const mutual = paths.clientCa !== undefined;
    // A client gets as long for its handshake as for its header section (Node's default is 120 s,
    // which a client that sends nothing would hold a connection for). Until a restart, as below.
    const tlsServer = createSecureServer({
      ...options,
      ...tls.identity.context,
      requestCert: mutual,
      rejectUnauthorized: mutual,
      allowHTTP1: true,
      http1Options: http1Options(deps.limits),
      handshakeTimeout: deps.limits.headersTimeoutMs,
    });
    // With `allowHTTP1`, 'request' brings an HTTP/1.1 client's node:http request and response
    // (its typings name only the compatibility API's); HTTP/2 streams are served from 'stream'.
    const http1: EventEmitter = tlsServer;
    http1.on('request', handler);
    answerRefusals(tlsServer, deps.onRefused);
    answerPlainHttp(tlsServer, deps.onRefused);
    tlsServer.on('secureConnection', (socket: TLSSocket) => {
      connections.secured(socket);
    });
    server = tlsServer;
    reload = tls;
    stopTicketKeys = useTicketKeys(tlsServer, config['http.tls.ticketKeyRotationMs']);
  }
  servedFromStreams(server, guard, serveStream);
  // An HTTP/2 connection has no request to time out between streams, only silence: one that
  // says nothing for as long as a whole request may take is closed (by the guard, which stops the
  // timer Node gives each session from the server's). HTTP/1.1 over TLS keeps the limits it was
  // made with (http1Options) until a restart, and its sockets' idle timeout is the server's.
  const applyLimits = (limits: HttpLimits): void => {
    server.maxConnections = limits.maxConnections;
    server.setTimeout(limits.requestTimeoutMs);
    guard.applyLimits(guardLimits(limits));
  };
  applyLimits(deps.limits);
  server.on('connection', (socket: Socket) => {
    connections.accepted(socket);
  });
  return {
    async listen(host, port, reusePort) {
      const address = await listen(server, host, port, reusePort);
      reload?.start();
      return baseUrl(address, reload === undefined ? 'http' : 'https');
    },
    applyLimits,
    async drain(deadlineMs) {
      reload?.stop();
      stopTicketKeys?.();
      guard.stop();
      if (!server.listening) return;
      // close() sends every HTTP/2 session GOAWAY and closes idle HTTP/1.1 connections; busy ones
      // close after their answer, which the pipeline marks as the last once draining.
      const closed = new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
      const deadline = setTimeout(() => {
        connections.destroyAll();
      }, deadlineMs);
      try {
        await closed;
      } finally {
        clearTimeout(deadline);
      }
    },
  };
}
