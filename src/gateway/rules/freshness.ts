/**
 * Freshness (RFC 9111 §4.2): how long a response stays fresh, how old a stored response is, and
 * what `Age` and the `Cache-Status` ttl say about it. Times are milliseconds on the gateway's
 * clock (injectable), except where a header carries seconds.
 */
import { DELTA_SECONDS_CAP, deltaSeconds, single, type Directives, type HeaderFields } from './cache-control.ts';
import { parseHttpDate } from './http-date.ts';

/** What freshness needs of a stored response. */
export interface FreshnessFacts {
  /** Freshness lifetime (§4.2.1), or the heuristic one (§4.2.2). */
  readonly lifetimeMs: number;
  /** corrected_initial_age (§4.2.3): the age it arrived with plus the time the origin took. */
  readonly initialAgeMs: number;
  /** response_time (§4.2.3): when the gateway received it. */
  readonly storedAt: number;
}

/** Statuses a cache may give a heuristic lifetime (RFC 9110 §15.1, "heuristically cacheable"). */
export const HEURISTICALLY_CACHEABLE: ReadonlySet<number> = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);

/**
 * §3, §4.2.2: whether a response without explicit freshness may be stored and given a heuristic
 * lifetime at all: its status is heuristically cacheable, or it is marked `public`.
 */
export function mayBeHeuristic(status: number, cc: Directives): boolean {
  return HEURISTICALLY_CACHEABLE.has(status) || cc.has('public');
}

/** §4.2.2: the customary 10% of the time since the representation last changed. */
const HEURISTIC_FRACTION = 0.1;

export type Lifetime = { readonly kind: 'explicit'; readonly ms: number } | { readonly kind: 'heuristic'; readonly ms: number } | { readonly kind: 'none' };

/**
 * §4.2.1: `s-maxage` (shared caches) over `max-age`, then `Expires` minus `Date`; an invalid
 * value makes the response stale at once (§5.2.2.1, §5.3). Without any, §4.2.2 allows a heuristic
 * lifetime for heuristically cacheable statuses or `public` responses, from `Last-Modified`.
 * `expires` is false when a targeted field decides instead (RFC 9213 §2.2 ignores Expires then).
 */
export function freshnessLifetime(
  status: number,
  headers: HeaderFields,
  cc: Directives,
  responseTime: number,
  maxHeuristicMs: number,
  expires = true,
): Lifetime {
  const sMaxAge = deltaSeconds(cc.get('s-maxage'));
  if (sMaxAge !== undefined) return { kind: 'explicit', ms: (sMaxAge ?? 0) * 1000 };
  const maxAge = deltaSeconds(cc.get('max-age'));
  if (maxAge !== undefined) return { kind: 'explicit', ms: (maxAge ?? 0) * 1000 };
  if (expires && headers.expires !== undefined) {
    // §5.3: more than one Expires, or one that is not an HTTP-date, means "already expired".
    const expiresAt = typeof headers.expires === 'string' ? parseHttpDate(headers.expires, responseTime) : undefined;
    return { kind: 'explicit', ms: expiresAt === undefined ? 0 : Math.max(0, expiresAt - dateValue(headers, responseTime)) };
  }
  if (!mayBeHeuristic(status, cc)) return { kind: 'none' };
  const lastModified = parseHttpDate(single(headers['last-modified']), responseTime);
  if (lastModified === undefined) return { kind: 'none' };
  const since = dateValue(headers, responseTime) - lastModified;
  if (since <= 0) return { kind: 'none' };
  return { kind: 'heuristic', ms: Math.min(maxHeuristicMs, Math.floor(since * HEURISTIC_FRACTION)) };
}

/** The origin's `Date`, or the time of receipt when it sent none or an invalid one (RFC 9110 §6.6.1). */
function dateValue(headers: HeaderFields, responseTime: number): number {
  return parseHttpDate(single(headers.date), responseTime) ?? responseTime;
}

/**
 * §5.1: the `Age` the response arrived with, seconds (§4.2.3 age_value). A list-based value counts
 * by its first member; a value that is not a non-negative integer (`7200a`, `-1`, `1.5`) is
 * ignored, so it counts as 0.
 */
export function receivedAgeSeconds(headers: HeaderFields): number {
  const age = headers.age;
  if (age === undefined) return 0;
  const first = (typeof age === 'string' ? age : age.join(',')).split(',')[0]?.trim();
  return deltaSeconds(first) ?? 0;
}

/**
 * §4.2.3 corrected_initial_age, without apparent_age: the origin's `Date` is not compared with the
 * gateway's clock, because two hosts' clocks need not agree and a skewed origin would make every
 * response look old. The Age it arrived with plus the round trip is what the RFC's
 * corrected_age_value is.
 */
export function initialAgeMs(headers: HeaderFields, requestTime: number, responseTime: number): number {
  return receivedAgeSeconds(headers) * 1000 + Math.max(0, responseTime - requestTime);
}

/** §4.2.3: current age = the age it arrived with plus the time it has been resident here. */
export function currentAgeMs(facts: FreshnessFacts, now: number): number {
  return facts.initialAgeMs + Math.max(0, now - facts.storedAt);
}

/** §4.2: fresh while its current age is below its freshness lifetime. */
export function isFresh(facts: FreshnessFacts, now: number): boolean {
  return currentAgeMs(facts, now) < facts.lifetimeMs;
}

/** How long past its freshness lifetime a stored response is; 0 while fresh. */
export function stalenessMs(facts: FreshnessFacts, now: number): number {
  return Math.max(0, currentAgeMs(facts, now) - facts.lifetimeMs);
}

/**
 * §5.1: the `Age` a response sent from the cache must carry, whole seconds; an age past 2^31 s
 * (an origin's `Age` at the cap, plus the time since) is sent as 2^31.
 */
export function ageSeconds(facts: FreshnessFacts, now: number): number {
  return Math.min(DELTA_SECONDS_CAP, Math.floor(currentAgeMs(facts, now) / 1000));
}

/**
 * RFC 9211 §2.4 `ttl`: remaining freshness lifetime in whole seconds, negative once stale, counted
 * so that `Age` plus `ttl` equals the lifetime the origin gave (max-age=60 reads `Age: 0` … `ttl=60`).
 */
export function ttlSeconds(facts: FreshnessFacts, now: number): number {
  return Math.floor(facts.lifetimeMs / 1000) - ageSeconds(facts, now);
}
