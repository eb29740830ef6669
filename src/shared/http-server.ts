/**
 * The HTTP/1.1 servers of both processes, made one way: timeouts that cut slow clients
 * (slowloris) early, a connection cap, and every request that never becomes a request (Node's
 * parser refused it, or it is a `CONNECT`) answered with a problem where HTTP still allows an
 * answer, and reported so that it is logged and counted: an attack is visible, not silent.
 *
 * Node is told not to require `Host` itself (it would answer a bare 400); the strict framing
 * rules, `Host` among them, are framing.ts's, applied by each handler first.
 */
import type { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { Config } from '../config/schema.ts';
import { redactTarget } from './credentials.ts';
import type { Logger } from './logger.ts';
import { problem, rawProblemResponse, sendProblem, type Problem } from './problem.ts';

export interface HttpLimits {
  /** Time a client has to send the request's header section (Node's `headersTimeout`). */
  readonly headersTimeoutMs: number;
  /** Time a client has to send the whole request (Node's `requestTimeout`). */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  readonly keepAliveTimeoutMs: number;
  /** Connections beyond this are closed as they arrive. */
  readonly maxConnections: number;
}

export function httpLimits(config: Config): HttpLimits {
  return {
    headersTimeoutMs: config['http.headersTimeoutMs'],
    requestTimeoutMs: config['http.requestTimeoutMs'],
    keepAliveTimeoutMs: config['http.keepAliveTimeoutMs'],
    maxConnections: config['http.maxConnections'],
  };
}

/** Logs a refusal (method, a redacted excerpt of the target, the parser's reason) and counts it. */
export function reportRefusals(logger: Logger, credentialNames: readonly string[], count: (reason: string) => void): (refusal: Refusal) => void {
  return ({ reason, method, target }) => {
    count(reason);
    logger.warn({ reason, method, target: target === undefined ? undefined : redactTarget(target, credentialNames) }, 'request refused before parsing completed');
  };
}

/** A request refused before any handler saw it. */
export interface Refusal {
  /** Bounded: the parser's error code (timeouts included), or `CONNECT`. */
  readonly reason: string;
  readonly method: string | undefined;
  /** The start of the target, at most 128 characters; redact it before logging. */
  readonly target: string | undefined;
}

/** What Node's HTTP parser refused, as a problem; `undefined` where no answer can be sent. */
function clientErrorProblem(code: string | undefined): Problem | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return problem('headers-too-large', 'the request header fields are larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem('request-timeout', 'the request was not received in time');
    default:
      return problem('malformed-request', 'the request is not valid HTTP/1.1');
  }
}

const REQUEST_LINE = /^([A-Z]{1,16}) (\S{0,128})/;

function requestLine(packet: Buffer | undefined): { method: string | undefined; target: string | undefined } {
  const line = REQUEST_LINE.exec(packet?.subarray(0, 160).toString('latin1') ?? '');
  return { method: line?.[1], target: line?.[2] };
}

const CONNECT_REFUSED = problem('method-not-allowed', 'CONNECT is not supported: this is not a forward proxy', { allow: 'GET, HEAD' });

const EXPECTATION_FAILED = problem('expectation-failed', 'the only expectation met is 100-continue (RFC 9110 §10.1.1)');

/**
 * Answers what no handler is given, on node:http and node:http2 servers alike, with a problem
 * instead of Node's bare status, and reports it: a `CONNECT` (this is no forward proxy; on
 * HTTP/1.1 Node hands over the socket, on HTTP/2 a response for the stream) and a request whose
 * `Expect` is not `100-continue`.
 */
export function answerUnsupported(server: EventEmitter, onRefused: (refusal: Refusal) => void): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    onRefused({ reason: 'expectation', method: req.method, target: req.url?.slice(0, 128) });
    res.shouldKeepAlive = false;
    sendProblem(res, EXPECTATION_FAILED, '/', req.method === 'HEAD');
  });
  server.on('connect', (req: IncomingMessage, socketOrResponse: Duplex | ServerResponse) => {
    onRefused({ reason: 'CONNECT', method: 'CONNECT', target: (req.url ?? '').slice(0, 128) });
    // Told apart by what Node handed over, not by the version the request claims (`HTTP/2.0` on
    // an HTTP/1.1 connection is only text).
    if ('writeHead' in socketOrResponse) sendProblem(socketOrResponse, CONNECT_REFUSED, '/', false);
    else socketOrResponse.end(rawProblemResponse(CONNECT_REFUSED, '/'));
  });
}

/** Node's HTTP/1.1 server options for these limits, for any server that speaks HTTP/1.1. */
export function http1Options(limits: HttpLimits): ServerOptions {
  return {
    requireHostHeader: false,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often the timeouts above are checked; a tenth of the shortest keeps the cut prompt.
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.headersTimeoutMs / 10))),
  };
}

export function createHttpServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  limits: HttpLimits,
  onRefused: (refusal: Refusal) => void,
): Server {
  const server = createServer(http1Options(limits), handler);
  server.maxConnections = limits.maxConnections;
  answerRefusals(server, onRefused);
  return server;
}

/**
 * Answers and reports what never became a request on a server that speaks HTTP/1.1 (alone, or
 * beside HTTP/2 on a TLS listener, where a failed handshake arrives the same way).
 */
export function answerRefusals(server: EventEmitter, onRefused: (refusal: Refusal) => void): void {
  answerUnsupported(server, onRefused);
  // Node answers `Expect: 100-continue` with an interim 100 as soon as the header section is read,
  // before the body; when the parser then refuses the body (a transfer coding other than chunked)
  // and the handler has not answered yet, the final answer is still owed. What the 100 wrote is
  // remembered so that it is not mistaken for an answer begun. Otherwise as Node does it.
  const interimBytes = new WeakMap<Duplex, number>();
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    res.writeContinue();
    interimBytes.set(req.socket, req.socket.bytesWritten);
    server.emit('request', req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    // A TLS socket's ALPN protocol stays null until its handshake completes: no HTTP to answer in.
    if (socket instanceof TLSSocket && socket.alpnProtocol === null) {
      onRefused({ reason: 'tls-handshake', method: undefined, target: undefined });
      socket.destroy();
      return;
    }
    const refused = clientErrorProblem(err.code);
    if (refused !== undefined) onRefused({ reason: err.code ?? 'unknown', ...requestLine(err.rawPacket) });
    // A request read whole before this one on the connection (HTTP/1.1 pipelining) may still be
    // being answered: a problem written now would be read as its answer. Node keeps that response
    // as the socket's `_httpMessage` (no public name); it is finished, and the connection closes
    // after it, leaving the refused request unanswered. (When its own body is what was refused,
    // the request is not complete, and the problem is its answer, below.)
    const owed = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (owed !== undefined && owed !== null && !owed.writableEnded && owed.req.complete) {
      owed.shouldKeepAlive = false;
      return;
    }
    const written = (socket as Duplex & { bytesWritten?: number }).bytesWritten ?? 0;
    if (refused !== undefined && socket.writable && (written === 0 || written === interimBytes.get(socket))) socket.end(rawProblemResponse(refused, '/'));
    else socket.destroy();
  });
}
