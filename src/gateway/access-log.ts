/**
 * One JSON line per request. The path is logged with its query string (the specification wants
 * searches visible in access logs); the token never is: only its verified subject is logged,
 * and the logger's redaction is a second line of defence.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../shared/logger.ts';
import type { CacheResult } from './metrics.ts';

export interface Exchange {
  readonly reqId: string;
  readonly method: string;
  /** The request target as received: path and query. */
  readonly path: string;
  readonly status: number;
  /** Body bytes sent. */
  readonly bytes: number;
  readonly durationMs: number;
  readonly cache: CacheResult;
  /** How long the origin took, when this request waited for it. */
  readonly originMs: number | undefined;
  /** The verified token's subject, when there was one. */
  readonly sub: string | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Propagates a well-formed `X-Request-Id`; anything else is replaced, never echoed. */
export function requestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

export type AccessLog = (exchange: Exchange) => void;

export function createAccessLog(logger: Logger, enabled: boolean): AccessLog {
  if (!enabled) return () => undefined;
  return (exchange) => {
    logger.info(exchange, 'request');
  };
}
