/**
 * The deliver step: the only code that writes a cached or relayed response. It adds what every
 * send must carry (`Age`, `Cache-Status`, `X-Request-Id`), answers a matching `If-None-Match`
 * with 304, and leaves the body out for HEAD. Headers were prepared when the response arrived,
 * so a hit is one `writeHead` and one `end`.
 */
import type { ServerResponse } from 'node:http';
import { ageSeconds } from './cache-policy.ts';
import type { PreparedResponse } from './prepared-response.ts';

export interface DeliverContext {
  readonly isHead: boolean;
  readonly ifNoneMatch: string | undefined;
  readonly requestId: string;
  readonly cacheStatus: string;
  readonly now: number;
}

export interface Delivered {
  readonly status: number;
  readonly bytes: number;
}

/** RFC 9110 §15.4.5: the fields a 304 must repeat from the 200 it stands for. */
const NOT_MODIFIED_FIELDS: ReadonlySet<string> = new Set(['cache-control', 'content-location', 'date', 'etag', 'expires', 'vary']);

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison; `*` matches any current representation. */
export function noneMatch(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (ifNoneMatch === undefined || etag === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => opaque(tag.trim()) === wanted);
}

export function deliver(res: ServerResponse, response: PreparedResponse, context: DeliverContext): Delivered {
  const extra = ['age', String(ageSeconds(response, context.now)), 'cache-status', context.cacheStatus, 'x-request-id', context.requestId];
  // RFC 9110 §13.2.1: the condition is evaluated only where a 2xx would otherwise be sent.
  // The entity tag is looked up only when the request is conditional.
  if (response.status === 200 && context.ifNoneMatch !== undefined && noneMatch(context.ifNoneMatch, response.etag)) {
    const kept: string[] = [];
    for (let i = 0; i < response.headers.length; i += 2) {
      const name = response.headers[i] ?? '';
      if (NOT_MODIFIED_FIELDS.has(name)) kept.push(name, response.headers[i + 1] ?? '');
    }
    res.writeHead(304, [...kept, ...extra]);
    res.end();
    return { status: 304, bytes: 0 };
  }
  res.writeHead(response.status, [...response.headers, ...extra]);
  if (context.isHead) {
    res.end();
    return { status: response.status, bytes: 0 };
  }
  res.end(response.body);
  return { status: response.status, bytes: response.body.length };
}
