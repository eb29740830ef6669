/**
 * Writes a successful JSON representation: strong ETag, `Cache-Control: public` (requests carry
 * `Authorization`, and RFC 9111 §3.5 lets a shared cache store such responses only when told
 * so), the next-page `Link` (RFC 8288), and `304 Not Modified` when If-None-Match matches.
 */
import type { ServerResponse } from 'node:http';
import { ifNoneMatchMatches, strongEtag } from './etag.ts';

export interface DeliverOptions {
  readonly isHead: boolean;
  readonly ifNoneMatch: string | undefined;
  /** The caching fields of every cacheable answer (see `cachingFields` in origin.ts). */
  readonly cachingFields: Readonly<Record<string, string>>;
  /** `Surrogate-Key`: space-separated tags of what the document shows; empty sends none. */
  readonly tags: string;
  /** Request target of the next page, if any. */
  readonly next?: string | null;
}

/** Returns the number of body bytes sent. */
export function deliverJson(res: ServerResponse, body: string, options: DeliverOptions): number {
  const etag = strongEtag(body);
  // A 304 carries the validator and caching fields the 200 would have (RFC 9110 §15.4.5).
  res.setHeader('etag', etag);
  for (const name in options.cachingFields) res.setHeader(name, options.cachingFields[name] ?? '');
  if (options.next != null) res.setHeader('link', `<${options.next}>; rel="next"`);
  if (options.tags !== '') res.setHeader('surrogate-key', options.tags);
  if (ifNoneMatchMatches(options.ifNoneMatch, etag)) {
    res.statusCode = 304;
    res.end();
    return 0;
  }
  const bytes = Buffer.byteLength(body);
  res.statusCode = 200;
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', bytes);
  res.end(options.isHead ? undefined : body);
  return options.isHead ? 0 : bytes;
}

/** An answer of the circulation resources: never stored by any cache (contract: `no-store`). */
export function deliverWritten(res: ServerResponse, status: number, body: unknown, location: string | undefined, isHead: boolean): number {
  res.statusCode = status;
  res.setHeader('cache-control', 'no-store');
  if (location !== undefined) res.setHeader('location', location);
  if (body === undefined) {
    res.end();
    return 0;
  }
  const text = JSON.stringify(body);
  const bytes = Buffer.byteLength(text);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', bytes);
  res.end(isHead ? undefined : text);
  return isHead ? 0 : bytes;
}
