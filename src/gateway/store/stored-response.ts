/**
 * A response prepared once, when it arrives, so that sending it again costs next to nothing and
 * keeping it costs little. A cache holds hundreds of thousands of these, so the layout is about
 * bytes per entry: one object with the reuse facts as its own fields, the header fields in one
 * exact-size list whose common values are shared between the entries of one cache (EntryMaker),
 * and the body in an exact-size Buffer of its own outside the V8 heap. What one costs is worked
 * out in entry-size.ts.
 */
import type { HeaderFields } from '../rules/cache-control.ts';
import { hasNoContent } from '../rules/message.ts';
import type { ReuseFacts } from '../rules/reuse.ts';
import { storedFields } from '../rules/storage.ts';
import { updatedFields, type Validators } from '../rules/validation.ts';
import { currentAgeMs } from '../rules/freshness.ts';
import { responseBytes, stringBytes } from './entry-size.ts';
import { NO_TAGS } from './tag-index.ts';

/** The request fields a response varies on, and their values in the request that caused it (RFC 9111 §4.1). */
export interface SecondaryKey {
  readonly vary: readonly string[];
  readonly selecting: readonly (string | undefined)[];
}

/** Shared by every response that does not vary, so they cost no list of their own. */
const NO_SECONDARY_KEY: SecondaryKey = { vary: [], selecting: [] };

export class StoredResponse implements ReuseFacts, SecondaryKey, Validators {
  readonly status: number;
  /** Flat `[name, value, …]` list for `writeHead`, `Content-Length` included. */
  readonly headers: readonly string[];
  readonly body: Buffer;
  readonly lifetimeMs: number;
  readonly initialAgeMs: number;
  readonly storedAt: number;
  readonly staleWhileRevalidateMs: number;
  readonly staleIfErrorMs: number;
  readonly mustRevalidate: boolean;
  readonly noCache: boolean;
  readonly vary: readonly string[];
  readonly selecting: readonly (string | undefined)[];
  /** The origin's tags for it (`Surrogate-Key`), by which a purge finds it. */
  readonly tags: readonly string[];
  /** What this response holds in memory: header list, strings of its own, body (entry-size.ts). */
  readonly bytes: number;

  constructor(status: number, headers: readonly string[], body: Buffer, facts: ReuseFacts, key: SecondaryKey, tags: readonly string[], bytes: number) {
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.lifetimeMs = facts.lifetimeMs;
    this.initialAgeMs = facts.initialAgeMs;
    this.storedAt = facts.storedAt;
    this.staleWhileRevalidateMs = facts.staleWhileRevalidateMs;
    this.staleIfErrorMs = facts.staleIfErrorMs;
    this.mustRevalidate = facts.mustRevalidate;
    this.noCache = facts.noCache;
    this.vary = key.vary;
    this.selecting = key.selecting;
    this.tags = tags;
    this.bytes = bytes;
  }

  /** A header field's first value, looked up only off the hit path (conditionals, revalidation). */
  field(name: string): string | undefined {
    for (let i = 0; i < this.headers.length; i += 2) if (this.headers[i] === name) return this.headers[i + 1];
    return undefined;
  }

  /** The origin's entity tag, kept as sent (RFC 9110 §8.8.3). */
  get etag(): string | undefined {
    return this.field('etag');
  }

  get lastModified(): string | undefined {
    return this.field('last-modified');
  }
}

/** Fields whose value names one representation: sharing them saves nothing and churns the table. */
const UNSHARED: ReadonlySet<string> = new Set(['etag', 'last-modified', 'content-md5', 'digest', 'date', 'expires', 'surrogate-key']);

/** Entries of the shared table; emptied when full, so values that never repeat cannot grow it. */
const SHARED_LIMIT = 4096;

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

/**
 * Makes one cache's entries, and keeps their layout to itself: header names and values seen
 * before are shared, so that a million entries saying `application/json` hold one string (the
 * strings entries already hold stay valid when the table is emptied). One per cache, so no two
 * gateways in a process share a table.
 */
export class EntryMaker {
  readonly #shared = new Map<string, string>();

  /**
   * Prepares an origin answer for sending and keeping; `key` when it varies (RFC 9111 §4.1),
   * `omit` names fields that are not kept (not storable, or the tag field the gateway does not
   * pass on), `tags` are the answer's surrogate keys.
   */
  prepare(status: number, headers: HeaderFields, body: Buffer, facts: ReuseFacts, key: SecondaryKey | undefined, omit: readonly string[], tags: readonly string[]): StoredResponse {
    const fields = storedFields(headers, omit);
    // RFC 9110 §8.6: a stored GET answer carries its length unless it has no content at all.
    if (!hasNoContent(status, 'GET')) fields.push('content-length', String(body.length));
    return this.#assemble(status, fields, ownBuffer(body), facts, key, tags);
  }

  /** A response as another process stored it (entry-codec.ts): fields already chosen. */
  restore(status: number, fields: readonly string[], body: Buffer, facts: ReuseFacts, key: SecondaryKey | undefined, tags: readonly string[]): StoredResponse {
    return this.#assemble(status, fields, ownBuffer(body), facts, key, tags);
  }

  /** RFC 9111 §4.3.4: the stored response made fresh again by a 304, with the fields it updated. */
  freshen(stored: StoredResponse, fields: readonly string[], facts: ReuseFacts): StoredResponse {
    return this.#assemble(stored.status, fields, stored.body, facts, stored, stored.tags);
  }

  /** The shared copy of `text`, or undefined when it is new (it is then added, and its bringer owns it). */
  #share(text: string): string | undefined {
    const known = this.#shared.get(text);
    if (known !== undefined) return known;
    if (this.#shared.size >= SHARED_LIMIT) this.#shared.clear();
    this.#shared.set(text, text);
    return undefined;
  }

  #assemble(status: number, fields: readonly string[], body: Buffer, facts: ReuseFacts, varies: SecondaryKey | undefined, tags: readonly string[]): StoredResponse {
    const key = varies === undefined || varies.vary.length === 0 ? NO_SECONDARY_KEY : varies;
    const headers = new Array<string>(fields.length);
    // Bytes of the strings only this entry holds; a string already in the table is counted by the
    // entry that brought it.
    let own = 0;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] ?? '';
      const known = i % 2 === 1 && UNSHARED.has(fields[i - 1] ?? '') ? undefined : this.#share(field);
      headers[i] = known ?? field;
      if (known !== field) own += stringBytes(field);
    }
    for (const value of key.selecting) if (value !== undefined) own += stringBytes(value);
    const kept = tags.length === 0 ? NO_TAGS : tags;
    return new StoredResponse(status, headers, body, facts, key, kept, responseBytes(headers.length, own, body.length, key.vary.length, kept));
  }
}

/** RFC 9111 §3.2: the stored response's fields as a 304 updates them (less `omit`), flat. */
export function fieldsAfter(stored: StoredResponse, notModified: HeaderFields, omit: readonly string[]): string[] {
  return updatedFields(stored.headers, storedFields(notModified, omit));
}

/**
 * A soft purge (Fastly's): the response as it is, but stale from `now` on, so it must be
 * revalidated before reuse while its stale-while-revalidate and stale-if-error windows, counted
 * from now, still let it stand in for the origin.
 */
export function staleFrom(stored: StoredResponse, now: number): StoredResponse {
  const lifetimeMs = Math.min(stored.lifetimeMs, currentAgeMs(stored, now));
  return new StoredResponse(stored.status, stored.headers, stored.body, { ...reuseFacts(stored), lifetimeMs }, stored, stored.tags, stored.bytes);
}

export function reuseFacts(r: StoredResponse): ReuseFacts {
  return {
    lifetimeMs: r.lifetimeMs,
    initialAgeMs: r.initialAgeMs,
    storedAt: r.storedAt,
    staleWhileRevalidateMs: r.staleWhileRevalidateMs,
    staleIfErrorMs: r.staleIfErrorMs,
    mustRevalidate: r.mustRevalidate,
    noCache: r.noCache,
  };
}
