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
import { rangeAnswer, type RangeRequest } from './rules/ranges.ts';
import { preconditionStatus, type Conditions } from './rules/validation.ts';
import type { StoredResponse } from './store/stored-response.ts';

export interface DeliverContext {
  readonly isHead: boolean;
  readonly conditions: Conditions;
  /** A GET's Range and If-Range (RFC 9110 §14.2); undefined without Range, and for HEAD. */
  readonly range: RangeRequest | undefined;
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

/** For a 412 or 416: no stored field is the answer's. */
const NO_STORED_FIELDS: ReadonlySet<string> = new Set();

function isConditional(conditions: Conditions): boolean {
  return conditions.ifNoneMatch !== undefined || conditions.ifModifiedSince !== undefined || conditions.ifMatch !== undefined || conditions.ifUnmodifiedSince !== undefined;
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

/** A 412 or 416: the three fields every send carries, and `more`; no content. */
function sendEmpty(res: ServerResponse, status: number, response: StoredResponse, context: DeliverContext, more: readonly string[]): Delivered {
  res.writeHead(status, [...sendFields(response, context, NO_STORED_FIELDS), 'content-length', '0', ...more]);
  res.end();
  return { status, bytes: 0 };
}

/**
 * RFC 9110 §14.2 and §15.3.7: a single range of a stored 200 as a 206, with the stored fields,
 * `Content-Length` of the part and `Content-Range`; 416 when no range is satisfiable (§15.5.17);
 * undefined when the whole representation is to be sent.
 */
function deliverRange(res: ServerResponse, response: StoredResponse, context: DeliverContext, range: RangeRequest): Delivered | undefined {
  const length = response.body.length;
  const answer = rangeAnswer(range, length, response, response.field('date'));
  if (answer.kind === 'whole') return undefined;
  if (answer.kind === 'unsatisfiable') return sendEmpty(res, 416, response, context, ['content-range', `bytes */${length}`]);
  const part = sendFields(response, context);
  for (let i = 0; i < part.length; i += 2) if (part[i] === 'content-length') part[i + 1] = String(answer.end - answer.start + 1);
  part.push('content-range', `bytes ${answer.start}-${answer.end}/${length}`);
  res.writeHead(206, part);
  res.end(response.body.subarray(answer.start, answer.end + 1));
  return { status: 206, bytes: answer.end - answer.start + 1 };
}

export function deliver(res: ServerResponse, response: StoredResponse, context: DeliverContext): Delivered {
  // RFC 9110 §13.2.1: conditions are evaluated only where a 2xx would otherwise be sent; the
  // validators are looked up only when the request is conditional.
  const precondition = response.status >= 200 && response.status < 300 && isConditional(context.conditions) ? preconditionStatus(context.conditions, response, response.field('date')) : 200;
  if (precondition === 412) return sendEmpty(res, 412, response, context, []);
  if (precondition === 304) {
    res.writeHead(304, sendFields(response, context, NOT_MODIFIED_FIELDS));
    res.end();
    return { status: 304, bytes: 0 };
  }
  // RFC 9110 §13.2.2 step 5: Range, with its If-Range, after the other conditions.
  const ranged = context.range === undefined || response.status !== 200 ? undefined : deliverRange(res, response, context, context.range);
  if (ranged !== undefined) return ranged;
  res.writeHead(response.status, sendFields(response, context));
  if (context.isHead) {
    res.end();
    return { status: response.status, bytes: 0 };
  }
  res.end(response.body);
  return { status: response.status, bytes: response.body.length };
}
