/**
 * The deliver step: the only code that writes a stored or filled response. It sends the
 * representation it is handed (the one negotiation chose, ./encoding/negotiate.ts), adds what
 * every send must carry (`Age`, `Cache-Status`, `X-Request-Id`), answers a client's conditional
 * request with 304 when the stored response satisfies it (RFC 9111 §4.3.2), and leaves the body
 * out for HEAD. Header fields were prepared when the representation was made, so a hit is one
 * `writeHead` and one `end`.
 */
import type { ServerResponse } from 'node:http';
import { cacheStatus, type CacheOutcome } from './cache-outcome.ts';
import { ageSeconds } from './rules/freshness.ts';
import { notModified, type Conditions } from './rules/validation.ts';
import type { Representation, StoredResponse } from './store/stored-response.ts';

export interface DeliverContext {
  readonly isHead: boolean;
  readonly conditions: Conditions;
  readonly requestId: string;
  readonly outcome: CacheOutcome;
  readonly now: number;
}

export interface Delivered {
  readonly status: number;
  /** Body bytes as they went on the wire. */
  readonly bytes: number;
  /** The content coding of the representation sent (`identity` for none), when one was. */
  readonly encoding?: string | undefined;
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

/** The representation's fields (those named in `only`, when given) and the three every send carries. */
function sendFields(response: StoredResponse, representation: Representation, context: DeliverContext, only?: ReadonlySet<string>): string[] {
  fields.length = 0;
  const stored = representation.headers;
  for (let i = 0; i < stored.length; i += 2) {
    const name = stored[i] ?? '';
    if (only === undefined || only.has(name)) fields.push(name, stored[i + 1] ?? '');
  }
  fields.push('age', String(ageSeconds(response, context.now)), 'cache-status', cacheStatus(context.outcome) ?? '', 'x-request-id', context.requestId);
  return fields;
}

/**
 * RFC 9110 §13.1.2: whether the client's copy is current. Each representation of the stored
 * answer has its own tag, and a client may hold any of them (one sent before it changed the
 * encodings it accepts, or the origin's own), so If-None-Match is checked against them all.
 */
function clientCopyCurrent(conditions: Conditions, response: StoredResponse): boolean {
  const date = response.field('date');
  const etags = response.etags;
  if (etags.length <= 1) return notModified(conditions, response, date);
  const { lastModified } = response;
  return etags.some((etag) => notModified(conditions, { etag, lastModified }, date));
}

/** Sends `representation` of `response`. */
export function deliver(res: ServerResponse, response: StoredResponse, representation: Representation, context: DeliverContext): Delivered {
  // RFC 9110 §13.2.1: the condition is evaluated only where a 2xx would otherwise be sent; the
  // validators are looked up only when the request is conditional.
  if (response.status === 200 && isConditional(context.conditions) && clientCopyCurrent(context.conditions, response)) {
    res.writeHead(304, sendFields(response, representation, context, NOT_MODIFIED_FIELDS));
    res.end();
    return { status: 304, bytes: 0 };
  }
  res.writeHead(response.status, sendFields(response, representation, context));
  if (context.isHead) {
    res.end();
    return { status: response.status, bytes: 0, encoding: representation.coding };
  }
  res.end(representation.body);
  return { status: response.status, bytes: representation.body.length, encoding: representation.coding };
}
