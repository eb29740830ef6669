/**
 * One JSON access-log line per request. The query string is logged (the specification wants
 * searches to appear in access logs); the token never is, only its subject once verified.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../shared/logger.ts';

/** A caller's request id is kept only if it cannot inject anything into logs or headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

export interface AccessRecord {
  readonly requestId: string;
  readonly method: string;
  /** Path with query string, as received. */
  readonly path: string;
  readonly status: number;
  /** Body bytes sent (0 for HEAD and 304). */
  readonly bytes: number;
  readonly durationMs: number;
  /** `sub` of a verified token, else null. */
  readonly subject: string | null;
}

export function logAccess(logger: Logger, record: AccessRecord): void {
  logger.info({ ...record, durationMs: Math.round(record.durationMs * 1000) / 1000 }, 'request');
}
