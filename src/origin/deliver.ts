/**
 * Writes a successful JSON representation: strong ETag, `Cache-Control: public` (requests carry
 * `Authorization`, and RFC 9111 §3.5 lets a shared cache store such responses only when told
 * so), the next-page `Link` (RFC 8288), and `304 Not Modified` when If-None-Match matches. A
 * client that accepts a coding gets the document compressed by the gateway's own rules and
 * negotiation (src/gateway/encoding), with the tag of that representation, so that the origin is
 * a realistic one for a gateway that asks for compressed fills.
 */
import type { ServerResponse } from 'node:http';
import type { Config } from '../config/schema.ts';
import { Codec, compressionPolicy, encodingPlan, type CompressionPolicy } from '../gateway/encoding/compress.ts';
import { negotiate, representationTag, varyWithEncoding } from '../gateway/encoding/negotiate.ts';
import { ifNoneMatchMatches, strongEtag } from './etag.ts';

export interface OriginCompression {
  readonly policy: CompressionPolicy;
  readonly codec: Codec;
}

export function originCompression(config: Config): OriginCompression {
  const policy = compressionPolicy(config);
  return { policy, codec: new Codec(policy.levels) };
}

const JSON_HEAD = { 'content-type': 'application/json' };

export interface DeliverOptions {
  readonly isHead: boolean;
  readonly ifNoneMatch: string | undefined;
  readonly acceptEncoding: string | undefined;
  readonly compression: OriginCompression;
  /** The `Cache-Control` value of every cacheable answer (see `cacheControl` in origin.ts). */
  readonly cacheControl: string;
  /** `Surrogate-Key`: space-separated tags of what the document shows; empty sends none. */
  readonly tags: string;
  /** Request target of the next page, if any. */
  readonly next?: string | null;
}

/** Returns the number of body bytes sent. */
export function deliverJson(res: ServerResponse, body: string, options: DeliverOptions): number {
  const identity = Buffer.from(body);
  const etag = strongEtag(body);
  const { offered } = encodingPlan(200, JSON_HEAD, identity.length, options.compression.policy, true);
  const coding = offered.length === 0 ? 'identity' : negotiate(options.acceptEncoding, offered);
  // A 304 carries the validator and caching fields the 200 would have (RFC 9110 §15.4.5).
  res.setHeader('etag', representationTag(etag, 'identity', coding));
  res.setHeader('cache-control', options.cacheControl);
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
  const sent = options.compression.codec.encode(identity, coding);
  res.statusCode = 200;
  res.setHeader('content-type', JSON_HEAD['content-type']);
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
