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
import { redactTarget, type CredentialNames } from './credentials.ts';
import type { Logger } from './logger.ts';
import { answersInFlight } from './node-http-internals.ts';
import { isStream, type Reply, type RequestHead } from './message-seam.ts';
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
export function reportRefusals(logger: Logger, credentialNames: CredentialNames, count: (reason: string) => void): (refusal: Refusal) => void {
  return ({ reason, method, target }) => {
    count(reason);
    logger.warn(
      { reason, method, target: target === undefined ? undefined : redactTarget(target, credentialNames) },
      'request refused before parsing completed',
    );
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

/**
 * A request line that is one in its syntax (RFC 9112 §3: a method token, a target, the version):
 * when Node's parser refuses its method, the method is one it does not know, not garbage.
 */
const WELL_FORMED_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32} [^\s]+ HTTP\/1\.[01]\r?\n/;

/**
 * The bytes of the refused request, from what the parser was given when it refused: a method is
 * refused where it stands, and the chunk may hold requests before it (pipelining), so the request
 * starts at that line; other refusals are logged from the chunk's start, as it comes.
 */
function refusedRequest(err: { code?: string | undefined; rawPacket?: Buffer; bytesParsed?: number }): Buffer | undefined {
  const packet = err.rawPacket;
  if (packet === undefined || err.code !== 'HPE_INVALID_METHOD' || err.bytesParsed === undefined) return packet;
  return packet.subarray(packet.lastIndexOf(0x0a, err.bytesParsed - 1) + 1);
}

const UNKNOWN_METHOD = problem('not-implemented', 'the request method is not one this server recognizes (RFC 9110 §9.1)');

const MALFORMED = problem('malformed-request', 'the request is not valid HTTP/1.1');

/** What Node's HTTP parser refused, as a problem; `undefined` where no answer can be sent. */
function clientErrorProblem(code: string | undefined, packet: Buffer | undefined): Problem | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return problem('headers-too-large', 'the request header fields are larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem('request-timeout', 'the request was not received in time');
    case 'HPE_INVALID_METHOD':
      return WELL_FORMED_LINE.test(packet?.subarray(0, 2048).toString('latin1') ?? '') ? UNKNOWN_METHOD : MALFORMED;
    default:
      return MALFORMED;
  }
}

const REQUEST_LINE = /^([A-Z]{1,16}) (\S{0,128})/;

function requestLine(packet: Buffer | undefined): { method: string | undefined; target: string | undefined } {
  const line = REQUEST_LINE.exec(packet?.subarray(0, 160).toString('latin1') ?? '');
  return { method: line?.[1], target: line?.[2] };
}

const CONNECT_REFUSED = problem('method-not-allowed', 'CONNECT is not supported: this is not a forward proxy', { allow: 'GET, HEAD' });

const EXPECTATION_FAILED = problem('expectation-failed', 'the only expectation met is 100-continue (RFC 9110 §10.1.1)');

/** Refuses a `CONNECT` whose answer is `reply` (HTTP/1.1 hands over the socket instead: see `answerUnsupported`). */
export function refuseConnect(req: RequestHead, reply: Reply, onRefused: (refusal: Refusal) => void): void {
  onRefused({ reason: 'CONNECT', method: 'CONNECT', target: (req.url ?? '').slice(0, 128) });
  sendProblem(reply, CONNECT_REFUSED, '/', false);
}

/** Refuses a request whose `Expect` is not `100-continue` (417), and ends its HTTP/1.1 connection after it. */
export function refuseExpectation(req: RequestHead, reply: Reply, onRefused: (refusal: Refusal) => void): void {
  onRefused({ reason: 'expectation', method: req.method, target: req.url?.slice(0, 128) });
  if (!isStream(reply)) reply.shouldKeepAlive = false;
  sendProblem(reply, EXPECTATION_FAILED, '/', req.method === 'HEAD');
}

/**
 * Answers what no handler is given on node:http servers and node:http2 servers' compatibility API
 * alike, with a problem instead of Node's bare status, and reports it: a `CONNECT` (this is no
 * forward proxy; on HTTP/1.1 Node hands over the socket, on HTTP/2 a response for the stream) and
 * a request whose `Expect` is not `100-continue`. A gateway's HTTP/2 streams, which bypass that
 * API, are refused by the same functions in its listener.
 */
export function answerUnsupported(server: EventEmitter, onRefused: (refusal: Refusal) => void): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refuseExpectation(req, res, onRefused);
  });
  server.on('connect', (req: IncomingMessage, socketOrResponse: Duplex | ServerResponse) => {
    // Told apart by what Node handed over, not by the version the request claims (`HTTP/2.0` on
    // an HTTP/1.1 connection is only text).
    if ('writeHead' in socketOrResponse) refuseConnect(req, socketOrResponse, onRefused);
    else {
      onRefused({ reason: 'CONNECT', method: 'CONNECT', target: (req.url ?? '').slice(0, 128) });
      socketOrResponse.end(rawProblemResponse(CONNECT_REFUSED, '/'));
    }
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
  const answerInFlight = answersInFlight(server);
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number }, socket: Duplex) => {
    // A TLS socket's ALPN protocol stays null until its handshake completes: no HTTP to answer in.
    if (socket instanceof TLSSocket && socket.alpnProtocol === null) {
      onRefused({ reason: 'tls-handshake', method: undefined, target: undefined });
      socket.destroy();
      return;
    }
    const packet = refusedRequest(err);
    const refused = clientErrorProblem(err.code, packet);
    if (refused !== undefined) onRefused({ reason: err.code ?? 'unknown', ...requestLine(packet) });
    const answer = (): void => {
      if (refused !== undefined && socket.writable) socket.end(rawProblemResponse(refused, '/'));
      else socket.destroy();
    };
    const inFlight = (): ServerResponse | null | undefined => answerInFlight(socket);
    // The problem goes after every answer owed to a request read whole before the refused one, and
    // not at all after one that closed the connection (`answer` then finds it no longer writable).
    // When the refused request is the one in flight (its body was refused), the problem is its
    // answer, unless that has begun (Node's interim 100 to `Expect: 100-continue` does not begin it).
    const settle = (owed: ServerResponse | null | undefined): void => {
      if (owed === undefined || owed === null || (owed.req.complete && owed.writableFinished)) answer();
      else if (owed.req.complete) {
        owed.once('finish', () => {
          const next = inFlight();
          settle(next === owed ? undefined : next);
        });
      } else if (owed.headersSent) socket.destroy();
      else answer();
    };
    settle(inFlight());
  });
}
