/**
 * A response prepared once, when it arrives, so that sending it again costs next to nothing and
 * keeping it costs little. A cache holds hundreds of thousands of these, so the layout is about
 * bytes per entry: one object with the freshness facts as its own fields, the header fields in
 * one exact-size list whose common values are shared between entries, and the body in an
 * exact-size Buffer of its own outside the V8 heap. What one costs is worked out in entry-size.ts.
 */
import { replayableHeaders, type Freshness, type UpstreamResponse } from './cache-policy.ts';
import { bufferBytes, headerListBytes, stringBytes } from './entry-size.ts';

export class PreparedResponse implements Freshness {
  readonly status: number;
  /** Flat `[name, value, …]` list for `writeHead`, `Content-Length` included. */
  readonly headers: readonly string[];
  readonly body: Buffer;
  readonly lifetimeMs: number;
  readonly initialAgeSeconds: number;
  readonly storedAt: number;
  /** What this response holds in memory: header list, strings of its own, body (entry-size.ts). */
  readonly bytes: number;

  constructor(status: number, headers: readonly string[], body: Buffer, freshness: Freshness, bytes: number) {
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.lifetimeMs = freshness.lifetimeMs;
    this.initialAgeSeconds = freshness.initialAgeSeconds;
    this.storedAt = freshness.storedAt;
    this.bytes = bytes;
  }

  /** The origin's entity tag, kept as sent (RFC 9110 §8.8.3); looked up only for conditional requests. */
  get etag(): string | undefined {
    for (let i = 0; i < this.headers.length; i += 2) if (this.headers[i] === 'etag') return this.headers[i + 1];
    return undefined;
  }
}

/** RFC 9110 §8.6: no Content-Length on 1xx, 204 and 304 responses. */
function hasContentLength(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

/**
 * Header names and values seen before, so that a million entries saying `application/json` share
 * one string. Bounded, and emptied when full, so values that never repeat cannot grow it; the
 * strings entries already hold stay valid. Process-wide, since strings are immutable.
 */
const SHARED_LIMIT = 4096;
const shared = new Map<string, string>();

/** Fields whose value names one representation: sharing them saves nothing and churns the table. */
const UNSHARED: ReadonlySet<string> = new Set(['etag', 'last-modified', 'content-md5', 'digest']);

/** Prepares an origin answer for sending and keeping; `freshness` is how long it may be reused. */
export function prepareResponse(response: UpstreamResponse, freshness: Freshness): PreparedResponse {
  const fields = replayableHeaders(response.headers);
  if (hasContentLength(response.status)) fields.push('content-length', String(response.body.length));
  const headers = new Array<string>(fields.length);
  // Bytes of the strings only this entry holds; a string already in the table is counted by the
  // entry that brought it.
  let own = 0;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? '';
    const isValue = i % 2 === 1;
    const known = isValue && UNSHARED.has(fields[i - 1] ?? '') ? undefined : share(field);
    headers[i] = known ?? field;
    if (known !== field) own += stringBytes(field);
  }
  const body = ownBuffer(response.body);
  return new PreparedResponse(response.status, headers, body, freshness, headerListBytes(headers.length) + own + bufferBytes(body.length));
}

/**
 * The shared copy of `text`, or undefined when it is new (it is then added and this entry owns
 * the copy it brought).
 */
function share(text: string): string | undefined {
  const known = shared.get(text);
  if (known !== undefined) return known;
  if (shared.size >= SHARED_LIMIT) shared.clear();
  shared.set(text, text);
  return undefined;
}

/**
 * The body in a Buffer that owns exactly its bytes. A slice of a pooled or larger buffer would
 * keep the whole backing store alive (8 KiB for Node's pool) for as long as the entry lives.
 */
function ownBuffer(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
}
