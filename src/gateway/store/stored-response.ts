/**
 * A response prepared once, when it arrives, so that sending it again costs next to nothing: the
 * reuse facts as fields of one object, and each representation (one per content coding sent,
 * RFC 9110 §8.4) with its body and the fields it is sent with: a shape shared with the
 * representations that send the same (field-shapes.ts) and its own values. This is the form the
 * rules and the deliver step read; a cache keeps it as bytes (entry-record.ts) and makes one of
 * these again for each request that reads it. The body kept is usually compressed; the other
 * codings are made from it when first asked for and kept beside it (docs/performance.md,
 * "Compression").
 */
import { BoundedMemo } from '../../shared/bounded-memo.ts';
import type { Codec } from '../../shared/encoding/codec.ts';
import { codingOf, representationTag, varyWithEncoding, type Coding } from '../../shared/encoding/negotiate.ts';
import type { EncodingPlan } from '../encoding/plan.ts';
import type { HeaderFields } from '../rules/cache-control.ts';
import { hasNoContent } from '../rules/message.ts';
import type { ReuseFacts } from '../rules/reuse.ts';
import { storedFields } from '../rules/storage.ts';
import { updatedFields, type Validators } from '../rules/validation.ts';
import { currentAgeMs, type FreshnessFacts } from '../rules/freshness.ts';
import { FieldShapes, type FieldShape } from './field-shapes.ts';
import { NO_TAGS } from './tag-index.ts';

/** The request fields a response varies on, and their values in the request that caused it (RFC 9111 §4.1). */
export interface SecondaryKey {
  readonly vary: readonly string[];
  readonly selecting: readonly (string | undefined)[];
}

/** Shared by every response that does not vary, so they cost no list of their own. */
const NO_SECONDARY_KEY: SecondaryKey = { vary: [], selecting: [] };

/**
 * One form of a stored response: its body in one content coding, and the fields it is sent with.
 * Its body is `bodyLength` bytes of `bodyStore` from `bodyOffset`: the Buffer a fill made, or the
 * record a cache keeps it in (record-slabs.ts), so that reading an entry makes no view of the body
 * until it is sent.
 */
export class Representation {
  /** The `Content-Encoding` sent, `identity` for none. */
  readonly coding: string;
  /**
   * The fields it is sent with (`Content-Length`, `Content-Encoding`, its `ETag`, `Vary` among
   * them): their names and the values it shares with other representations (field-shapes.ts)…
   */
  readonly shape: FieldShape;
  /** …and, in order, the values where the shape has none (the list given, not a copy). */
  readonly own: readonly string[];
  readonly bodyStore: Buffer;
  readonly bodyOffset: number;
  readonly bodyLength: number;
  /** What its shape cost the table when this representation brought it there, else 0: the entry that keeps it pays (entry-size.ts). */
  readonly shapeBytes: number;

  constructor(coding: string, shape: FieldShape, own: readonly string[], bodyStore: Buffer, bodyOffset: number, bodyLength: number, shapeBytes: number) {
    this.coding = coding;
    this.shape = shape;
    this.own = own;
    this.bodyStore = bodyStore;
    this.bodyOffset = bodyOffset;
    this.bodyLength = bodyLength;
    this.shapeBytes = shapeBytes;
  }

  /** The body: a view made for the caller when it is part of a larger store (about 30 ns). */
  get body(): Buffer {
    const store = this.bodyStore;
    if (this.bodyOffset === 0 && store.length === this.bodyLength) return store;
    return Buffer.from(store.buffer, store.byteOffset + this.bodyOffset, this.bodyLength);
  }

  /** The `i`-th of its own values (a send reads them in order, in the shape's gaps). */
  ownValue(i: number): string {
    return this.own[i] ?? '';
  }

  /** The fields it is sent with, as a flat `[name, value, …]` list made for the caller (off the hit path). */
  get headers(): string[] {
    const { names, values } = this.shape;
    const list = new Array<string>(2 * names.length);
    let own = 0;
    for (let i = 0; i < names.length; i++) {
      list[2 * i] = names[i] ?? '';
      list[2 * i + 1] = values[i] ?? this.ownValue(own++);
    }
    return list;
  }

  /** Its entity tag (each coding has its own), looked up only off the hit path (conditionals, ranges). */
  get etag(): string | undefined {
    return fieldOf(this.headers, 'etag');
  }
}

/** No representation made from the kept one: shared by every response that has none. */
export const NONE_MADE: readonly Representation[] = [];

/**
 * The reuse facts that most stored responses share (no stale windows, no revalidation forced),
 * held as one object per combination (EntryMaker): four fields of every response would cost it 45 B counted.
 */
export type Terms = Pick<ReuseFacts, 'staleWhileRevalidateMs' | 'staleIfErrorMs' | 'mustRevalidate' | 'noCache'>;

/** The terms of most stored responses: no stale windows, no revalidation forced. */
const PLAIN_TERMS: Terms = { staleWhileRevalidateMs: 0, staleIfErrorMs: 0, mustRevalidate: false, noCache: false };

/** Combinations of terms an EntryMaker keeps; few occur. */
const TERMS_LIMIT = 256;

/**
 * A response's tags and the origin's own values (StoredResponse#tagText, #originValues): what a hit
 * never reads, so that a response read from a record reads them from it only when asked
 * (entry-record.ts), while one made from an answer holds them as given.
 */
export interface Rest {
  readonly tagText: string;
  readonly originValues: readonly string[] | undefined;
}

export class StoredResponse implements ReuseFacts, SecondaryKey, Validators {
  readonly status: number;
  /** The representation kept: the others are made from its body. */
  readonly kept: Representation;
  /**
   * When it is sent in negotiated codings, the origin's own values of the fields each
   * representation has its own of (`ETag`, `Content-Encoding`, `Vary`), flat, or AS_SENT when
   * they are the kept representation's (the origin sent the coding kept, with its `Vary`);
   * otherwise undefined, and the kept representation's fields are the origin's with the length.
   * One field list is kept, not two: `headers` is made from these when the rules ask.
   */
  get originValues(): readonly string[] | undefined {
    return this.#rest.originValues;
  }

  /** The codings it may be sent in, in the server's order; empty: only as kept (EncodingPlan). */
  readonly offered: readonly Coding[];
  readonly lifetimeMs: number;
  readonly initialAgeMs: number;
  readonly storedAt: number;
  /** The other reuse facts, in an object shared by the responses that have the same (EntryMaker). */
  readonly #terms: Terms;
  readonly #key: SecondaryKey;
  /**
   * The origin's tags for it (`Surrogate-Key`), by which a purge finds it, space-separated: one
   * string costs less than a list of dozens (tag-index.ts).
   */
  get tagText(): string {
    return this.#rest.tagText;
  }

  /**
   * Its tags and origin values: as given, or its record's rest, read when first asked for. A copy
   * of it (`with`, `staleFrom`) shares this, so that copying a response read from a record reads
   * no more of the record than the copy is asked for.
   */
  readonly #rest: Rest;
  /** Representations made from the kept one since it was stored; none until one is asked for. */
  readonly #made: readonly Representation[] | undefined;
  /**
   * Which stored answer it is, the same however often the cache reads it: a cache numbers what it
   * keeps (0 until then), and an entry that gains a representation or goes stale keeps its number.
   */
  readonly serial: number;

  constructor(
    status: number,
    kept: Representation,
    rest: Rest,
    offered: readonly Coding[],
    facts: FreshnessFacts,
    terms: Terms,
    key: SecondaryKey,
    made: readonly Representation[] = NONE_MADE,
    serial = 0,
  ) {
    this.status = status;
    this.kept = kept;
    this.#rest = rest;
    this.offered = offered;
    this.lifetimeMs = facts.lifetimeMs;
    this.initialAgeMs = facts.initialAgeMs;
    this.storedAt = facts.storedAt;
    this.#terms = terms;
    // Another response's key is shared, not the response: that would keep it alive.
    this.#key = key.vary.length === 0 ? NO_SECONDARY_KEY : key instanceof StoredResponse ? key.#key : key;
    this.serial = serial;
    // Every caller hands a list no one changes after: kept, not copied.
    this.#made = made.length === 0 ? undefined : made;
  }

  get staleWhileRevalidateMs(): number {
    return this.#terms.staleWhileRevalidateMs;
  }

  get staleIfErrorMs(): number {
    return this.#terms.staleIfErrorMs;
  }

  get mustRevalidate(): boolean {
    return this.#terms.mustRevalidate;
  }

  get noCache(): boolean {
    return this.#terms.noCache;
  }

  /** The request fields it varies on (RFC 9111 §4.1). */
  get vary(): readonly string[] {
    return this.#key.vary;
  }

  get selecting(): readonly (string | undefined)[] {
    return this.#key.selecting;
  }

  /** Its tags, each once. */
  get tags(): readonly string[] {
    return this.tagText === '' ? NO_TAGS : this.tagText.split(' ');
  }

  /** The body as kept. */
  get body(): Buffer {
    return this.kept.body;
  }

  /** The representation in `coding`, when it is the kept one or has been made. */
  representation(coding: string): Representation | undefined {
    if (this.kept.coding === coding) return this.kept;
    // A loop, not `find`: an identity client's every hit asks, and a callback is one more object.
    for (const made of this.#made ?? NONE_MADE) if (made.coding === coding) return made;
    return undefined;
  }

  /** Representations made since it was stored, which a copy of it (a soft purge) keeps. */
  get made(): readonly Representation[] {
    return this.#made ?? NONE_MADE;
  }

  /** The same response, holding `made` too (a representation made from the kept one, EntryMaker.derive). */
  with(made: Representation): StoredResponse {
    return new StoredResponse(this.status, this.kept, this.#rest, this.offered, this, this.#terms, this, [...this.made, made], this.serial);
  }

  /** Its tags and origin values as it holds them, read or not, for a copy of it to share. */
  get rest(): Rest {
    return this.#rest;
  }

  /** The terms it shares with the responses that have the same. */
  get terms(): Terms {
    return this.#terms;
  }

  /** The origin's fields as stored, flat `[name, value, …]`, without `Content-Length`: what the rules read, off the hit path. */
  get headers(): readonly string[] {
    const own = this.originValues === AS_SENT ? undefined : this.originValues;
    const fields: string[] = [];
    const sent = this.kept.headers;
    for (let i = 0; i < sent.length; i += 2) {
      const name = sent[i] ?? '';
      if (name !== 'content-length' && (own === undefined || !REPRESENTATION_FIELDS.has(name))) fields.push(name, sent[i + 1] ?? '');
    }
    if (own !== undefined) fields.push(...own);
    return fields;
  }

  /** A header field's first value as the origin sent it, looked up only off the hit path (conditionals, revalidation). */
  field(name: string): string | undefined {
    if (name === 'content-length') return undefined;
    if (this.originValues !== undefined && this.originValues !== AS_SENT && REPRESENTATION_FIELDS.has(name)) return fieldOf(this.originValues, name);
    return fieldOf(this.kept.headers, name);
  }

  /** The origin's entity tag, kept as sent (RFC 9110 §8.8.3). */
  get etag(): string | undefined {
    return this.field('etag');
  }

  get lastModified(): string | undefined {
    return this.field('last-modified');
  }

  /**
   * The entity tags of every representation it may be sent in: a client may hold any of them
   * (RFC 9110 §13.1.2), and each names this same stored answer.
   */
  get etags(): readonly string[] {
    const etag = this.etag;
    if (etag === undefined) return [];
    const sent = codingOf(this.field('content-encoding'));
    if (sent === undefined || this.offered.length === 0) return [etag];
    return this.offered.map((coding) => representationTag(etag, sent, coding));
  }
}

/**
 * Fields whose value names one representation: sharing them saves nothing and churns the table.
 * `Date` and `Expires` are not among them: they change once a second, and every answer filled in
 * that second shares one string (67 B counted each).
 */
const UNSHARED: ReadonlySet<string> = new Set(['etag', 'last-modified', 'content-md5', 'digest', 'surrogate-key']);

/**
 * Fields whose values differ between answers even when repeated (a length, a date): each
 * representation keeps them as its own, so that they do not make a shape per value.
 */
const PER_ANSWER: ReadonlySet<string> = new Set([...UNSHARED, 'date', 'expires', 'content-length', 'link', 'content-range']);

/** Entries of the shared table; emptied when full, so values that never repeat cannot grow it. */
const SHARED_LIMIT = 4096;

/**
 * Makes one cache's entries, and keeps their layout to itself: header names and values seen
 * before are shared, so that a million entries saying `application/json` hold one string (the
 * strings entries already hold stay valid when the table is emptied). One per cache, so no two
 * gateways in a process share a table.
 */
export class EntryMaker {
  readonly #shared = new BoundedMemo<string, string>(SHARED_LIMIT);
  readonly #terms = new BoundedMemo<string, Terms>(TERMS_LIMIT);
  /** The shapes of the fields its representations are sent with, which a cache's records name by number. */
  readonly shapes = new FieldShapes();
  /** Encodes and decodes bodies, for representations made after the fill. */
  readonly codec: Codec;

  constructor(codec: Codec) {
    this.codec = codec;
  }

  /**
   * Prepares an origin answer for sending and keeping: `body` is the body to keep, in the coding
   * `plan` says; `key` when it varies (RFC 9111 §4.1), `omit` names fields that are not kept (not
   * storable, or the tag field the gateway does not pass on), `tags` are the answer's surrogate keys.
   */
  prepare(
    status: number,
    headers: HeaderFields,
    body: Buffer,
    plan: EncodingPlan,
    facts: ReuseFacts,
    key: SecondaryKey | undefined,
    omit: readonly string[],
    tags: readonly string[],
  ): StoredResponse {
    return this.restore(status, storedFields(headers, omit), body, plan, facts, key, tags);
  }

  /** A response as another process stored it (entry-codec.ts): fields already chosen. */
  restore(
    status: number,
    fields: readonly string[],
    body: Buffer,
    plan: EncodingPlan,
    facts: ReuseFacts,
    key: SecondaryKey | undefined,
    tags: readonly string[],
  ): StoredResponse {
    return this.#assemble(status, fields, plan.keep ?? fieldOf(fields, 'content-encoding') ?? 'identity', body, plan.offered, facts, key, tags.join(' '), []);
  }

  /**
   * RFC 9111 §4.3.4: the stored response made fresh again by a 304, with the fields it updated;
   * the representations made from it keep their bodies and are sent with the updated fields.
   */
  freshen(stored: StoredResponse, fields: readonly string[], facts: ReuseFacts): StoredResponse {
    const made = stored.made.map((m) => this.#represent(stored.status, fields, stored.offered, m.coding, m.body));
    return this.#assemble(stored.status, fields, stored.kept.coding, stored.body, stored.offered, facts, stored, stored.tagText, made);
  }

  /**
   * The `coding` representation of `stored`, made from the kept body (decoded, and encoded again
   * unless identity is asked for); the caller keeps it (`StoredResponse#with`).
   */
  derive(stored: StoredResponse, coding: Coding): Representation {
    const identity = this.codec.decode(stored.body, codingOf(stored.kept.coding) ?? 'identity');
    return this.#represent(stored.status, stored.headers, stored.offered, coding, this.codec.encode(identity, coding));
  }

  /** The shared copy of `text`, or undefined when it is new (it is then added, and its bringer owns it). */
  #share(text: string): string | undefined {
    const known = this.#shared.get(text);
    if (known === undefined) this.#shared.keep(text, text);
    return known;
  }

  /** `facts`' terms as the one object this maker's responses with the same hold. */
  terms(facts: Terms): Terms {
    if (facts.staleWhileRevalidateMs === 0 && facts.staleIfErrorMs === 0 && !facts.mustRevalidate && !facts.noCache) return PLAIN_TERMS;
    const name = `${facts.staleWhileRevalidateMs} ${facts.staleIfErrorMs} ${facts.mustRevalidate} ${facts.noCache}`;
    return (
      this.#terms.get(name) ??
      this.#terms.keep(name, {
        staleWhileRevalidateMs: facts.staleWhileRevalidateMs,
        staleIfErrorMs: facts.staleIfErrorMs,
        mustRevalidate: facts.mustRevalidate,
        noCache: facts.noCache,
      })
    );
  }

  /** `fields` as an exact-size list of shared strings where possible and, per string, whether the table had it before. */
  #list(fields: readonly string[]): { headers: string[]; known: boolean[] } {
    const headers = new Array<string>(fields.length);
    const wasKnown = new Array<boolean>(fields.length);
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i] ?? '';
      const known = i % 2 === 1 && UNSHARED.has(fields[i - 1] ?? '') ? undefined : this.#share(field);
      wasKnown[i] = known !== undefined;
      headers[i] = known ?? field;
    }
    return { headers, known: wasKnown };
  }

  #assemble(
    status: number,
    fields: readonly string[],
    keptCoding: string,
    body: Buffer,
    offered: readonly Coding[],
    facts: ReuseFacts,
    varies: SecondaryKey | undefined,
    tagText: string,
    made: readonly Representation[],
  ): StoredResponse {
    const key = varies === undefined || varies.vary.length === 0 ? NO_SECONDARY_KEY : varies;
    const { headers } = this.#list(fields);
    const representation = this.#represent(status, headers, offered, keptCoding, body);
    const originValues = negotiatedCoding(headers, offered) === undefined ? undefined : representationValues(headers, representation.headers);
    return new StoredResponse(status, representation, { tagText, originValues }, offered, facts, this.terms(facts), key, made);
  }

  /**
   * The representation in `coding`, with `body`, of an answer with these stored `fields`: the
   * fields it is sent with are made once, here, not on every send.
   */
  #represent(status: number, fields: readonly string[], offered: readonly Coding[], coding: string, body: Buffer): Representation {
    const sent = negotiatedCoding(fields, offered);
    const list: string[] = [];
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i] ?? '';
      if (sent === undefined || !REPRESENTATION_FIELDS.has(name)) list.push(name, fields[i + 1] ?? '');
    }
    if (sent !== undefined) {
      const etag = fieldOf(fields, 'etag');
      if (etag !== undefined) list.push('etag', representationTag(etag, sent, coding as Coding));
      if (coding !== 'identity') list.push('content-encoding', coding);
      list.push('vary', varyWithEncoding(fieldOf(fields, 'vary')));
    }
    // RFC 9110 §8.6: a stored GET answer carries its length unless it has no content at all.
    if (!hasNoContent(status, 'GET')) list.push('content-length', String(body.length));
    const { headers, known } = this.#list(list);
    const names = new Array<string>(headers.length / 2);
    const values = new Array<string | undefined>(names.length);
    const own: string[] = [];
    for (let i = 0; i < names.length; i++) {
      const name = headers[2 * i] ?? '';
      const value = headers[2 * i + 1] ?? '';
      names[i] = name;
      // In the shape, a value seen before that does not change from one answer to the next.
      const inShape = known[2 * i + 1] === true && !PER_ANSWER.has(name);
      values[i] = inShape ? value : undefined;
      if (!inShape) own.push(value);
    }
    const shape = this.shapes.shape(names, values);
    return new Representation(coding, shape.shape, own, body, 0, body.length, shape.bytes);
  }
}

/** A field's first value in a flat `[name, value, …]` list. */
function fieldOf(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** Fields a representation of a negotiated answer has of its own (RFC 9110 §8.4, §8.8.3, §12.5.5). */
const REPRESENTATION_FIELDS: ReadonlySet<string> = new Set(['etag', 'content-encoding', 'vary']);

/**
 * The coding the origin sent an answer with these stored `fields` in, when the answer is sent in
 * codings of the client's choosing, each a representation of its own; undefined when it is not.
 */
function negotiatedCoding(fields: readonly string[], offered: readonly Coding[]): Coding | undefined {
  return offered.length === 0 ? undefined : codingOf(fieldOf(fields, 'content-encoding'));
}

/**
 * The origin's values of REPRESENTATION_FIELDS in `fields`, flat, or AS_SENT when the kept
 * representation is `sent` with these very values: then the list would repeat them (135 B counted).
 */
function representationValues(fields: readonly string[], sent: readonly string[]): readonly string[] {
  const values: string[] = [];
  for (let i = 0; i < fields.length; i += 2) if (REPRESENTATION_FIELDS.has(fields[i] ?? '')) values.push(fields[i] ?? '', fields[i + 1] ?? '');
  if (sentWith(values, sent)) return AS_SENT;
  // A copy: an array grown by `push` keeps room for 16 more, 128 B an entry would hold for nothing.
  return values.length === 0 ? NO_VALUES : values.slice();
}

/** Whether the REPRESENTATION_FIELDS in `sent` are exactly `values`, each once. */
function sentWith(values: readonly string[], sent: readonly string[]): boolean {
  let present = 0;
  for (let i = 0; i < sent.length; i += 2) if (REPRESENTATION_FIELDS.has(sent[i] ?? '')) present++;
  if (2 * present !== values.length) return false;
  for (let i = 0; i < values.length; i += 2) if (fieldOf(sent, values[i] ?? '') !== values[i + 1]) return false;
  return true;
}

export const NO_VALUES: readonly string[] = Object.freeze([]);

/** The origin's REPRESENTATION_FIELDS are the kept representation's (StoredResponse#originValues). */
export const AS_SENT: readonly string[] = Object.freeze([]);

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
  return new StoredResponse(
    stored.status,
    stored.kept,
    stored.rest,
    stored.offered,
    { lifetimeMs, initialAgeMs: stored.initialAgeMs, storedAt: stored.storedAt },
    stored.terms,
    stored,
    stored.made,
    stored.serial,
  );
}
