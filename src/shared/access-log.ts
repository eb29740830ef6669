/**
 * One JSON access-log line per request, the same fields from the origin and the gateway. The
 * path is logged with its query string (the specification wants searches visible in access
 * logs); a token never is: the record has no field that could hold one, only the verified
 * token's subject, and the logger's redaction is a second line of defence.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { redactTarget } from './credentials.ts';
import type { Logger } from './logger.ts';

export interface AccessRecord {
  /** `X-Request-Id` as propagated or generated. */
  readonly reqId: string;
  readonly method: string;
  /** The request target as received: path and query. */
  readonly path: string;
  readonly status: number;
  /** Body bytes sent (0 for HEAD and 304). */
  readonly bytes: number;
  readonly durationMs: number;
  /** The verified token's subject, when there was one. */
  readonly sub: string | undefined;
  /** The peer address of the connection (not `X-Forwarded-For`, which any client can write). */
  readonly remote: string | undefined;
  /** `User-Agent`, at most 256 characters. */
  readonly ua: string | undefined;
  /** `HTTP/1.1`, `HTTP/1.0`. */
  readonly proto: string;
}

/** The access record's fields about the client and its connection. */
export function peerFields(req: IncomingMessage): Pick<AccessRecord, 'remote' | 'ua' | 'proto'> {
  const ua = req.headers['user-agent'];
  return { remote: req.socket.remoteAddress, ua: ua === undefined || ua.length <= 256 ? ua : ua.slice(0, 256), proto: `HTTP/${req.httpVersion}` };
}

/** A caller's request id is kept only if it cannot inject anything into logs or headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A JWT (three base64url segments): a client that sends its token as its request id must not see it echoed. */
const JWT_SHAPED = /^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$/;

/** Propagates a well-formed `X-Request-Id`; anything else is replaced, never echoed. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) && !JWT_SHAPED.test(header) ? header : randomUUID();
}

export type AccessLog<R extends AccessRecord = AccessRecord> = (record: R) => void;

/** `credentialNames`: query parameters whose values are redacted from the logged path (credentials.ts). */
export function createAccessLog<R extends AccessRecord>(logger: Logger, enabled: boolean, credentialNames: readonly string[]): AccessLog<R> {
  if (!enabled) return () => undefined;
  return (record) => {
    // The record is logged as it is unless its path carries something to redact: no copy per line.
    const path = redactTarget(record.path, credentialNames);
    const line: AccessRecord = path === record.path ? record : { ...record, path };
    logger.info(line, 'request');
  };
}

/** Milliseconds as the log shows them: to the microsecond. */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
