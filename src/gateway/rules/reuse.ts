/**
 * Reusing stored responses (RFC 9111 §4): whether a stored response may answer a request as it
 * is, stale, while it is refreshed in the background, or only after validation; and whether it may
 * stand in for an origin that failed. The request's own directives (§5.2.1) take part.
 */
import { deltaSeconds, parseCacheControl, single, type HeaderFields } from './cache-control.ts';
import { currentAgeMs, stalenessMs, type FreshnessFacts } from './freshness.ts';

/** What reuse needs of a stored response. */
export interface ReuseFacts extends FreshnessFacts {
  /** RFC 5861 §3: how long past freshness it may be served while a refresh runs. */
  readonly staleWhileRevalidateMs: number;
  /** RFC 5861 §4: how long past freshness it may stand in for a failed origin. */
  readonly staleIfErrorMs: number;
  /** must-revalidate, proxy-revalidate or s-maxage: never served stale (§4.2.4). */
  readonly mustRevalidate: boolean;
  /** Unqualified `no-cache`: validated before every reuse (§5.2.2.4). */
  readonly noCache: boolean;
}

/** The request's cache directives (§5.2.1), seconds. */
export interface RequestDirectives {
  readonly maxAge: number | undefined;
  readonly minFresh: number | undefined;
  /** `Infinity` for a bare `max-stale`: any staleness is acceptable. */
  readonly maxStale: number | undefined;
  readonly noCache: boolean;
  readonly noStore: boolean;
  readonly onlyIfCached: boolean;
}

export const NO_DIRECTIVES: RequestDirectives = {
  maxAge: undefined,
  minFresh: undefined,
  maxStale: undefined,
  noCache: false,
  noStore: false,
  onlyIfCached: false,
};

/** §5.2.1, and §5.4: `Pragma: no-cache` counts as `no-cache` only when there is no Cache-Control. */
export function requestDirectives(headers: HeaderFields): RequestDirectives {
  const cacheControl = headers['cache-control'];
  if (cacheControl === undefined) {
    const pragma = single(headers.pragma);
    return pragma !== undefined && /(?:^|,)\s*no-cache\s*(?:,|$)/i.test(pragma) ? { ...NO_DIRECTIVES, noCache: true } : NO_DIRECTIVES;
  }
  const cc = parseCacheControl(cacheControl);
  const maxStale = cc.get('max-stale');
  return {
    // §5.2.1.1, §5.2.1.3: an invalid value is ignored rather than guessed at.
    maxAge: deltaSeconds(cc.get('max-age')) ?? undefined,
    minFresh: deltaSeconds(cc.get('min-fresh')) ?? undefined,
    maxStale: maxStale === true ? Number.POSITIVE_INFINITY : (deltaSeconds(maxStale) ?? undefined),
    noCache: cc.has('no-cache'),
    noStore: cc.has('no-store'),
    onlyIfCached: cc.has('only-if-cached'),
  };
}

export type Reuse =
  /** Fresh, and the request accepts it. */
  | 'fresh'
  /** Stale, but the request's max-stale accepts it (§5.2.1.2). */
  | 'stale-accepted'
  /** Stale within its stale-while-revalidate window: serve it and refresh in the background. */
  | 'stale-while-revalidate'
  /** Only after the origin validates it (§4.3), or replaces it. */
  | 'validate';

/** §4: whether and how a stored response may answer a request with these directives. */
export function reuse(facts: ReuseFacts, request: RequestDirectives, now: number): Reuse {
  // §5.2.2.4, §5.2.1.4: no-cache on either side means validation before reuse.
  if (facts.noCache || request.noCache) return 'validate';
  const age = currentAgeMs(facts, now);
  // §5.2.1.1: the client does not want a response older than max-age. Ages are counted in ms, so
  // a response filled within the same millisecond would pass `max-age=0`; but that is the reload
  // that asks for validation whatever the age (RFC 2616 §14.9.4's end-to-end revalidation), and
  // Squid validates too.
  if (request.maxAge !== undefined && (request.maxAge === 0 || age > request.maxAge * 1000)) return 'validate';
  // §5.2.1.3: nor one that stays fresh for less than min-fresh.
  if (request.minFresh !== undefined && facts.lifetimeMs - age < request.minFresh * 1000) return 'validate';
  if (age < facts.lifetimeMs) return 'fresh';
  // §4.2.4: never stale where must-revalidate, proxy-revalidate or s-maxage forbid it.
  if (facts.mustRevalidate) return 'validate';
  const staleness = age - facts.lifetimeMs;
  if (request.maxStale !== undefined && staleness <= request.maxStale * 1000) return 'stale-accepted';
  // §5.2.1.1: with max-age and no max-stale the client does not wish to receive a stale response,
  // which §4.2.4 puts before a response's permission to serve one (RFC 5861 §3).
  if (request.maxAge !== undefined) return 'validate';
  if (staleness < facts.staleWhileRevalidateMs) return 'stale-while-revalidate';
  return 'validate';
}

/**
 * RFC 5861 §4: a stored response may stand in for an origin that could not be reached, timed out
 * or answered 5xx while it is within its stale-if-error window, and never where §4.2.4 forbids
 * stale responses. A fresh one may always stand in.
 */
export function mayServeOnError(facts: ReuseFacts, now: number): boolean {
  return mayStandIn(facts, now, facts.staleIfErrorMs);
}

/** RFC 5861 §4: the statuses an error would have the client get. */
const ERROR_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);

/**
 * RFC 5861 §4: whether an origin's 5xx is an error a stored response may stand in for, that is,
 * one that would have the client get a 500, 502, 503 or 504: every 5xx where the route answers
 * them with its own 502, only those four where it relays them as they are (a 501 or 505 is the
 * origin's answer, not its failure).
 */
export function isError(status: number, relayed: boolean): boolean {
  return status >= 500 && (!relayed || ERROR_STATUSES.has(status));
}

/**
 * §4.2.4: a cache may serve a stale response while it is disconnected from the origin; the route
 * bounds how stale (`boundMs`), and must-revalidate, proxy-revalidate, s-maxage and no-cache
 * forbid it as they forbid any stale response.
 */
export function mayServeDisconnected(facts: ReuseFacts, now: number, boundMs: number): boolean {
  return mayStandIn(facts, now, boundMs);
}

function mayStandIn(facts: ReuseFacts, now: number, windowMs: number): boolean {
  const staleness = stalenessMs(facts, now);
  if (staleness === 0 && !facts.noCache) return true;
  return !facts.mustRevalidate && !facts.noCache && staleness <= windowMs;
}

/**
 * How much longer a stored response can answer anyone without the origin: its freshness left,
 * then its stale-while-revalidate or stale-if-error window, whichever is longer. A shared tier
 * keeps an entry that long (Varnish's ttl + grace + keep, without the keep); 0 when it is spent.
 */
export function usefulForMs(facts: ReuseFacts, now: number): number {
  const stale = facts.mustRevalidate ? 0 : Math.max(facts.staleWhileRevalidateMs, facts.staleIfErrorMs);
  return Math.max(0, facts.lifetimeMs + stale - currentAgeMs(facts, now));
}
