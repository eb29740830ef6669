/**
 * Writes a successful JSON representation: strong ETag, `Cache-Control: public` (requests carry
 * `Authorization`, and RFC 9111 §3.5 lets a shared cache store such responses only when told
 * so), the next-page `Link` (RFC 8288), and `304 Not Modified` when If-None-Match matches. A
 * client that accepts a coding gets the document compressed by the gateway's own rules and
 * negotiation (src/shared/encoding), with the tag of that representation, so that the origin is
 * a realistic one for a gateway that asks for compressed fills.
 */
import type { ServerResponse } from 'node:http';
import type { Config } from '../config/schema.ts';
import { Codec } from '../shared/encoding/codec.ts';
import { negotiate, offeredList, representationTag, varyWithEncoding, type Coding } from '../shared/encoding/negotiate.ts';
import { compressionPolicy, worthCompressing, type CompressionPolicy } from '../shared/encoding/policy.ts';
import { ifNoneMatchMatches, strongEtag } from './etag.ts';

export interface OriginCompression {
  readonly policy: CompressionPolicy;
  /** The codings a document worth compressing is offered in: the configured ones, then identity. */
  readonly offered: readonly Coding[];
  readonly codec: Codec;
}

export function originCompression(config: Config): OriginCompression {
  const policy = compressionPolicy(config);
  return { policy, offered: offeredList([...policy.encodings, 'identity']), codec: new Codec(policy.levels) };
}

const JSON_TYPE = 'application/json';

export interface DeliverOptions {
  readonly isHead: boolean;
  readonly ifNoneMatch: string | undefined;
  readonly acceptEncoding: string | undefined;
  readonly compression: OriginCompression;
  /** The caching fields of every cacheable answer (see `cachingFields` in origin.ts). */
  readonly cachingFields: Readonly<Record<string, string>>;
  /** `Surrogate-Key`: space-separated tags of what the document shows; empty sends none. */
  readonly tags: string;
  /** Request target of the next page, if any. */
  readonly next?: string | null;
}

/** Returns the number of body bytes sent. */
export function deliverJson(res: ServerResponse, body: string, options: DeliverOptions): number {
  const identity = Buffer.from(body);
  const etag = strongEtag(body);
  const { compression } = options;
  const offered = worthCompressing(200, JSON_TYPE, identity.length, compression.policy) ? compression.offered : [];
  const coding = offered.length === 0 ? 'identity' : negotiate(options.acceptEncoding, offered);
  // A 304 carries the validator and caching fields the 200 would have (RFC 9110 §15.4.5).
  res.setHeader('etag', representationTag(etag, 'identity', coding));
  for (const name in options.cachingFields) res.setHeader(name, options.cachingFields[name] ?? '');
  if (offered.length > 0) res.setHeader('vary', varyWithEncoding(undefined));
  if (options.next != null) res.setHeader('link', `<${options.next}>; rel="next"`);
  if (options.tags !== '') res.setHeader('surrogate-key', options.tags);
  // The client may hold the tag of any representation (RFC 9110 §13.1.2).
  const tags = offered.length === 0 ? [etag] : offered.map((c) => representationTag(etag, 'identity', c));
  if (tags.some((tag) => ifNoneMatchMatches(options.ifNoneMatch, tag))) {
    res.statusCode = 304;
    res.end();
    return 0;
  }
  const sent = compression.codec.encode(identity, coding);
  res.statusCode = 200;
  res.setHeader('content-type', JSON_TYPE);
  if (coding !== 'identity') res.setHeader('content-encoding', coding);
  res.setHeader('content-length', sent.length);
  res.end(options.isHead ? undefined : sent);
  return options.isHead ? 0 : sent.length;
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
