/**
 * Validation (RFC 9111 §4.3): the conditional request that revalidates a stored response, which
 * stored response a 304 freshens and what it changes, and how a client's own conditional request
 * is answered from storage (RFC 9110 §13).
 */
import { single, type HeaderFields } from './cache-control.ts';

/** The validators a stored response carries, as sent by the origin. */
export interface Validators {
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
}

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
 * §4.3.4: a 304 freshens the stored response it names: the same strong entity tag; else, when
 * either tag is weak, the same opaque tag; else the same Last-Modified; else, when neither carries
 * a validator, the one that was validated.
 */
export function freshens(stored: Validators, notModified: HeaderFields): boolean {
  const etag = single(notModified.etag);
  if (etag !== undefined) return stored.etag !== undefined && opaqueTag(stored.etag) === opaqueTag(etag);
  const lastModified = single(notModified['last-modified']);
  if (lastModified !== undefined) return stored.lastModified === lastModified;
  return stored.etag === undefined && stored.lastModified === undefined;
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
  readonly ifNoneMatch: string | undefined;
  readonly ifModifiedSince: string | undefined;
}

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison; `*` matches any current representation. */
export function noneMatch(ifNoneMatch: string, etag: string | undefined): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  if (etag === undefined) return false;
  const wanted = opaqueTag(etag);
  return ifNoneMatch.split(',').some((tag) => opaqueTag(tag) === wanted);
}

/**
 * §4.3.2 with RFC 9110 §13.2.2: whether a GET or HEAD for a stored 200 is answered 304.
 * If-None-Match decides when present; If-Modified-Since otherwise, against Last-Modified, or the
 * origin's Date when the stored response has no Last-Modified.
 */
export function notModified(conditions: Conditions, stored: Validators, date: string | undefined): boolean {
  if (conditions.ifNoneMatch !== undefined) return noneMatch(conditions.ifNoneMatch, stored.etag);
  if (conditions.ifModifiedSince === undefined) return false;
  const since = Date.parse(conditions.ifModifiedSince);
  const changed = Date.parse(stored.lastModified ?? date ?? '');
  return !Number.isNaN(since) && !Number.isNaN(changed) && changed <= since;
}
