/**
 * The deliver step: the only code that writes a stored or filled response. It adds what every
 * send must carry (`Age`, `Cache-Status`, `X-Request-Id`), answers a client's conditional request
 * with 304 when the stored response satisfies it (RFC 9111 §4.3.2), and leaves the body out for
 * HEAD. Header fields were prepared when the response arrived, so a hit is one `writeHead` and
 * one `end`.
 */
import type { ServerResponse } from 'node:http';
import { cacheStatus, type CacheOutcome } from './cache-outcome.ts';
import { ageSeconds } from './rules/freshness.ts';
import { notModified, type Conditions } from './rules/validation.ts';
import type { StoredResponse } from './store/stored-response.ts';

export interface DeliverContext {
  readonly isHead: boolean;
  readonly conditions: Conditions;
  readonly requestId: string;
  readonly outcome: CacheOutcome;
  readonly now: number;
}

export interface Delivered {
  readonly status: number;
  readonly bytes: number;
}

/** RFC 9110 §15.4.5: the fields a 304 must repeat from the 200 it stands for. */
const NOT_MODIFIED_FIELDS: ReadonlySet<string> = new Set(['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary']);

function isConditional(conditions: Conditions): boolean {
  return conditions.ifNoneMatch !== undefined || conditions.ifModifiedSince !== undefined;
}

/**
 * The field list handed to `writeHead`, reused by every send: Node turns it into the header block
 * before `writeHead` returns and keeps no reference, so a send allocates no array of its own.
 */
const fields: string[] = [];

/** The stored fields (those named in `only`, when given) and the three every send carries. */
function sendFields(response: StoredResponse, context: DeliverContext, only?: ReadonlySet<string>): string[] {
  fields.length = 0;
  const stored = response.headers;
  for (let i = 0; i < stored.length; i += 2) {
    const name = stored[i] ?? '';
    if (only === undefined || only.has(name)) fields.push(name, stored[i + 1] ?? '');
  }
  fields.push('age', String(ageSeconds(response, context.now)), 'cache-status', cacheStatus(context.outcome) ?? '', 'x-request-id', context.requestId);
  return fields;
}

export function deliver(res: ServerResponse, response: StoredResponse, context: DeliverContext): Delivered {
  // RFC 9110 §13.2.1: the condition is evaluated only where a 2xx would otherwise be sent; the
  // validators are looked up only when the request is conditional.
  if (response.status === 200 && isConditional(context.conditions) && notModified(context.conditions, response, response.field('date'))) {
    res.writeHead(304, sendFields(response, context, NOT_MODIFIED_FIELDS));
    res.end();
    return { status: 304, bytes: 0 };
  }
  res.writeHead(response.status, sendFields(response, context));
  if (context.isHead) {
    res.end();
    return { status: response.status, bytes: 0 };
  }
  res.end(response.body);
  return { status: response.status, bytes: response.body.length };
}
