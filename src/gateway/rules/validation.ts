/**
 * Validation (RFC 9111 §4.3): the conditional request that revalidates a stored response, which
 * stored response a 304 freshens and what it changes, and how a client's own conditional request
 * is answered from storage (RFC 9110 §13).
 */
import { single, type HeaderFields } from './cache-control.ts';
import { parseHttpDate } from './http-date.ts';

/** The validators a stored response carries, as sent by the origin. */
export interface Validators {
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
}

/**
 * The fields by which a client's request asks for a 304, a 412 or a part (RFC 9110 §13.1, §14.2)
 * rather than the whole representation: a fill leaves them out, so that what it stores is whole,
 * and the client's conditions are then answered from it (§4.3.2).
 */
export const CLIENT_CONDITIONS: readonly string[] = ['if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range', 'range'];

/** §4.3.1: the conditional fields that ask the origin whether the stored response is still current. */
export function validationHeaders(stored: Validators): Record<string, string> {
  const headers: Record<string, string> = {};
  if (stored.etag !== undefined) headers['if-none-match'] = stored.etag;
  if (stored.lastModified !== undefined) headers['if-modified-since'] = stored.lastModified;
  return headers;
}

function opaqueTag(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/**
 * §4.3.4: a 304 freshens the stored response it names: with a strong entity tag, the stored
 * response with that same strong tag (a weak one does not identify it); with a weak tag, one whose
 * tag is the same in the weak comparison; else the same Last-Modified; else, when it carries no
 * validator, the one that was validated. §4.3.4 names that last case only for a stored response
 * without validators, but a validation here asks about one stored response alone, and RFC 9110
 * §15.4.5 does not require a 304 to repeat Last-Modified: an origin answering If-Modified-Since
 * with a bare 304 would otherwise cost a second, unconditional request every time (nginx and
 * Varnish take such a 304 for the response they validated too).
 */
export function freshens(stored: Validators, notModified: HeaderFields): boolean {
  const etag = single(notModified.etag);
  if (etag !== undefined) {
    if (stored.etag === undefined) return false;
    return etag.trim().startsWith('W/') ? opaqueTag(stored.etag) === opaqueTag(etag) : stored.etag.trim() === etag.trim();
  }
  const lastModified = single(notModified['last-modified']);
  if (lastModified !== undefined) return stored.lastModified === lastModified;
  return true;
}

/**
 * §3.2: fields a 304 may not change in the stored response: the framing of the body the 304 does
 * not carry (RFC 9110 §8.6, §8.4, §14.4).
 */
const KEPT_ON_UPDATE: ReadonlySet<string> = new Set(['content-length', 'content-encoding', 'content-range', 'transfer-encoding']);

/**
 * §3.2: the stored fields updated by a 304's: each field it carries replaces the stored one
 * (every line of it), the rest stay. Both lists are flat `[name, value, …]`, lower-case names.
 */
export function updatedFields(stored: readonly string[], fromNotModified: readonly string[]): string[] {
  const replaced = new Set<string>();
  for (let i = 0; i < fromNotModified.length; i += 2) {
    const name = fromNotModified[i] ?? '';
    if (!KEPT_ON_UPDATE.has(name)) replaced.add(name);
  }
  const updated: string[] = [];
  for (let i = 0; i < stored.length; i += 2) {
    const name = stored[i] ?? '';
    if (!replaced.has(name)) updated.push(name, stored[i + 1] ?? '');
  }
  for (let i = 0; i < fromNotModified.length; i += 2) {
    const name = fromNotModified[i] ?? '';
    if (replaced.has(name)) updated.push(name, fromNotModified[i + 1] ?? '');
  }
  return updated;
}

/** A client's conditional fields (RFC 9110 §13.1). */
export interface Conditions {
  readonly ifMatch: string | undefined;
  readonly ifUnmodifiedSince: string | undefined;
  readonly ifNoneMatch: string | undefined;
  readonly ifModifiedSince: string | undefined;
}

/**
 * The members of an entity-tag list (RFC 9110 §13.1.1, §13.1.2), trimmed. An opaque tag may hold
 * a comma (§8.8.3 etagc), so a quoted tag is taken whole; anything unquoted runs to the next comma.
 */
function entityTags(list: string): string[] {
  return list.match(/(?:W\/)?"[^"]*"|[^,\s][^,]*/g)?.map((tag) => tag.trim()) ?? [];
}

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison; `*` matches any current representation. */
export function noneMatch(ifNoneMatch: string, etag: string | undefined): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  if (etag === undefined) return false;
  const wanted = opaqueTag(etag);
  return entityTags(ifNoneMatch).some((tag) => opaqueTag(tag) === wanted);
}

/** RFC 9110 §13.1.1: If-Match uses the strong comparison, so a weak tag on either side never matches. */
function anyMatch(ifMatch: string, etag: string | undefined): boolean {
  if (ifMatch.trim() === '*') return true;
  if (etag === undefined || etag.trim().startsWith('W/')) return false;
  return entityTags(ifMatch).includes(etag.trim());
}

/**
 * Whether a date condition holds the way `holds` says, against Last-Modified, or `date` when the
 * stored response has none (RFC 9111 §4.3.2, for If-Modified-Since only); undefined when either is not an HTTP-date (the condition is
 * then ignored, RFC 9110 §13.1.3, §13.1.4).
 */
function byDate(condition: string, stored: Validators, date: string | undefined, holds: (changed: number, since: number) => boolean): boolean | undefined {
  const since = parseHttpDate(condition);
  const changed = parseHttpDate(stored.lastModified ?? date);
  return since === undefined || changed === undefined ? undefined : holds(changed, since);
}

/**
 * RFC 9110 §13.2.2 steps 1 to 4 for a GET or HEAD answered from a stored 2xx (RFC 9111 §4.3.2):
 * 412 when If-Match, or else If-Unmodified-Since, fails; 304 when If-None-Match, or else
 * If-Modified-Since, says the client's copy is current; otherwise 200, the response as stored.
 * `stored` holds the validators of the representation sent; `otherTags`, those of the stored
 * answer's other representations, which a client's If-None-Match may hold as well (§13.1.2).
 */
export function preconditionStatus(conditions: Conditions, stored: Validators, date: string | undefined, otherTags: readonly string[] = []): 200 | 304 | 412 {
  if (conditions.ifMatch !== undefined) {
    if (!anyMatch(conditions.ifMatch, stored.etag)) return 412;
  } else if (
    conditions.ifUnmodifiedSince !== undefined &&
    byDate(conditions.ifUnmodifiedSince, stored, undefined, (changed, since) => changed > since) === true
  ) {
    return 412;
  }
  const { ifNoneMatch } = conditions;
  if (ifNoneMatch !== undefined) return noneMatch(ifNoneMatch, stored.etag) || otherTags.some((tag) => noneMatch(ifNoneMatch, tag)) ? 304 : 200;
  if (conditions.ifModifiedSince === undefined) return 200;
  return byDate(conditions.ifModifiedSince, stored, date, (changed, since) => changed <= since) === true ? 304 : 200;
}
