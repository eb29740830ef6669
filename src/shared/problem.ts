/**
 * RFC 9457 problem details. Every error either server sends is one of these kinds; the kind is the
 * stable identity (its `type` URI never changes), the detail is free text for humans. The table
 * below is the single place where a failure is mapped to an HTTP status, and `docs/problems.md`
 * is kept in step with it by a test.
 */
import type { IncomingMessage } from 'node:http';
import { sendOnStream } from './http2-stream.ts';
import { isStream, type Reply } from './message-seam.ts';
import { bodyLeftUnread } from './request-content.ts';

export const PROBLEM_BASE = 'https://catalog.example/problems/';

export const PROBLEM_KINDS = {
  'invalid-parameter': { status: 400, title: 'Invalid query parameter' },
  'unknown-parameter': { status: 400, title: 'Unknown query parameter' },
  'invalid-cursor': { status: 400, title: 'Malformed cursor' },
  'malformed-request': { status: 400, title: 'Malformed HTTP request' },
  'credentials-in-target': { status: 400, title: 'Credentials in the request target' },
  'plain-http-to-https': { status: 400, title: 'Plain HTTP request sent to an HTTPS port' },
  'missing-token': { status: 401, title: 'Authentication required' },
  'invalid-token': { status: 401, title: 'Invalid access token' },
  'insufficient-scope': { status: 403, title: 'Insufficient scope' },
  'webhook-signature': { status: 401, title: 'Webhook signature not accepted' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'request-timeout': { status: 408, title: 'Request timeout' },
  'no-copy-free': { status: 409, title: 'No copy available' },
  'webhook-replayed': { status: 409, title: 'Webhook already received' },
  'events-expired': { status: 410, title: 'Events no longer kept' },
  'precondition-failed': { status: 412, title: 'Precondition failed' },
  'body-too-large': { status: 413, title: 'Request body too large' },
  'uri-too-long': { status: 414, title: 'Request target too long' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'range-not-satisfiable': { status: 416, title: 'Range not satisfiable' },
  'expectation-failed': { status: 417, title: 'Expectation failed' },
  'invalid-body': { status: 422, title: 'Invalid request body' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'headers-too-large': { status: 431, title: 'Request header fields too large' },
  'internal-error': { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Not implemented' },
  'bad-gateway': { status: 502, title: 'Bad gateway' },
  'not-ready': { status: 503, title: 'Service unavailable' },
  'gateway-timeout': { status: 504, title: 'Gateway timeout' },
  'not-cached': { status: 504, title: 'Not in cache' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

export type ProblemHeaders = Readonly<Record<string, string>>;

export interface Problem {
  readonly kind: ProblemKind;
  readonly detail: string;
  /** Extra response headers the kind requires: `Allow`, `WWW-Authenticate`, `Retry-After`, `Content-Range`. */
  readonly headers?: ProblemHeaders;
}

export function problem(kind: ProblemKind, detail: string, headers?: ProblemHeaders): Problem {
  return headers === undefined ? { kind, detail } : { kind, detail, headers };
}

export function problemStatus(p: Problem): number {
  return PROBLEM_KINDS[p.kind].status;
}

/** `instance` is the request target; tokens travel in a header, so it never carries one. */
export function problemBody(p: Problem, instance: string): string {
  const { status, title } = PROBLEM_KINDS[p.kind];
  return JSON.stringify({ type: PROBLEM_BASE + p.kind, title, status, detail: p.detail, instance });
}

/**
 * A complete HTTP/1.1 response carrying a problem, for a socket whose request Node's parser
 * refused before any `ServerResponse` existed; the connection is closed after it.
 */
export function rawProblemResponse(p: Problem, instance: string): string {
  const body = problemBody(p, instance);
  const { status, title } = PROBLEM_KINDS[p.kind];
  const extra = Object.entries(p.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\n${extra}connection: close\r\n\r\n${body}`;
}

/**
 * Sends `p` as `reply`'s answer, with `added` (flat `[name, value, …]`: the fields a server adds
 * to every answer of its own) beside the problem's fields; returns the body's length.
 */
export function sendProblem(reply: Reply, p: Problem, instance: string, isHead: boolean, added: readonly string[] = []): number {
  const body = problemBody(p, instance);
  const status = problemStatus(p);
  const length = Buffer.byteLength(body);
  if (isStream(reply)) {
    const fields = [
      ':status',
      String(status),
      'content-type',
      'application/problem+json',
      'content-length',
      String(length),
      'cache-control',
      'no-store',
      ...added,
    ];
    // RFC 9113 §8.2.2: HTTP/2 has no connection-specific fields; a problem that closes an
    // HTTP/1.1 connection ends only its stream here.
    for (const [name, value] of Object.entries(p.headers ?? {})) if (name !== 'connection') fields.push(name, value);
    sendOnStream(reply, fields, isHead ? undefined : body);
    return length;
  }
  // One list to `writeHead`, which Node turns into header text as it goes; a `setHeader` per field
  // would have each kept in an object first, then read back.
  const fields = [...added, 'content-type', 'application/problem+json', 'content-length', String(length), 'cache-control', 'no-store'];
  const own = p.headers ?? {};
  for (const [name, value] of Object.entries(own)) fields.push(name, value);
  const req = reply.req as IncomingMessage | undefined;
  if (own.connection === undefined && req !== undefined && bodyLeftUnread(req)) fields.push('connection', 'close');
  reply.writeHead(status, fields);
  reply.end(isHead ? undefined : body);
  return length;
}
