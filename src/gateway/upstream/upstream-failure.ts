/**
 * The one table that turns an upstream failure into the problem the client gets, keyed by the
 * error's stable `code` (undici `UND_ERR_*`, Node errno codes, llhttp `HPE_*`), never by its
 * message. Timeouts are 504 (the origin did not answer in time); everything else is 502 (the
 * origin is unreachable or answered something the gateway cannot relay).
 */
import { errors } from 'undici';
import { problem, type Problem } from '../../shared/problem.ts';

const FAILURES: Readonly<Record<string, Problem>> = {
  ECONNREFUSED: problem('bad-gateway', 'the origin refused the connection'),
  ECONNRESET: problem('bad-gateway', 'the origin closed the connection'),
  EPIPE: problem('bad-gateway', 'the origin closed the connection'),
  ENOTFOUND: problem('bad-gateway', 'the origin host name does not resolve'),
  EHOSTUNREACH: problem('bad-gateway', 'the origin host is unreachable'),
  UND_ERR_SOCKET: problem('bad-gateway', 'the origin connection failed before the response was complete'),
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: problem('bad-gateway', 'the origin response body does not match its Content-Length'),
  UND_ERR_RES_EXCEEDED_MAX_SIZE: problem('bad-gateway', 'the origin response is larger than the gateway accepts'),
  UND_ERR_HEADERS_OVERFLOW: problem('bad-gateway', 'the origin response headers are too large'),
  UND_ERR_CONNECT_TIMEOUT: problem('gateway-timeout', 'the origin did not accept a connection in time'),
  UND_ERR_HEADERS_TIMEOUT: problem('gateway-timeout', 'the origin did not send response headers in time'),
  UND_ERR_BODY_TIMEOUT: problem('gateway-timeout', 'the origin stalled while sending the response body'),
  ETIMEDOUT: problem('gateway-timeout', 'the origin did not answer in time'),
};

/**
 * Failures that mean the gateway is disconnected from the origin (RFC 9111 §4.2.4): it could not
 * connect, the connection closed or reset before the answer was complete, or the origin went
 * silent. An answer that arrived but cannot be used (not HTTP, too large) is not one.
 */
const DISCONNECTED: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

const NOT_HTTP = problem('bad-gateway', 'the origin answered with something that is not HTTP');
const UNREACHABLE = problem('bad-gateway', 'the origin could not be reached');

export interface UpstreamFailure {
  /** The error code, for logs and metrics; `status-5xx` when the origin answered a server error. */
  readonly code: string;
  readonly problem: Problem;
  /** The origin was unreachable, closed the connection or timed out (§4.2.4 "disconnected"). */
  readonly disconnected: boolean;
}

/** undici's parser error sometimes carries no code (a response that is not HTTP at all). */
const PARSER_ERROR = 'HPE_UNKNOWN';

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, cause } = err as { code?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  if (err instanceof errors.HTTPParserError) return PARSER_ERROR;
  return cause === undefined ? undefined : codeOf(cause);
}

export function upstreamFailure(err: unknown): UpstreamFailure {
  const code = codeOf(err) ?? 'unknown';
  const known = FAILURES[code];
  const disconnected = DISCONNECTED.has(code);
  if (known !== undefined) return { code, problem: known, disconnected };
  return { code, problem: code.startsWith('HPE_') ? NOT_HTTP : UNREACHABLE, disconnected };
}

/** An origin 5xx is not relayed: the client gets a 502 that says what the origin answered. */
export function originServerError(status: number): UpstreamFailure {
  return { code: `status-${status}`, problem: problem('bad-gateway', `the origin answered ${status}`), disconnected: false };
}
