/**
 * Storing responses in a shared cache (RFC 9111 §3), one `if` per rule: whether a response to a
 * GET may be stored, which of its fields may not, and the facts its reuse is later decided by.
 */
import { deltaSeconds, fieldNames, type HeaderFields } from './cache-control.ts';
import { freshnessLifetime, initialAgeMs, mayBeHeuristic } from './freshness.ts';
import { endToEndFields } from './hop-by-hop.ts';
import { usefulForMs, type ReuseFacts } from './reuse.ts';
import { responseDirectives } from './targeted.ts';

/** A response's status and header fields (lower-case names), as received. */
export interface ResponseHead {
  readonly status: number;
  readonly headers: HeaderFields;
}

/** An origin answer as the gateway received it, with the whole body. */
export interface UpstreamResponse extends ResponseHead {
  readonly body: Buffer;
}

/** Why a response was not stored; also the `detail` of `Cache-Status`. */
export type NotStoredReason = 'status' | 'no-store' | 'private' | 'authorization' | 'set-cookie' | 'vary' | 'no-freshness' | 'already-stale';

/** What a route adds to the origin's directives (Varnish's grace and its heuristic TTL cap). */
export interface StoragePolicy {
  /** Stale-while-revalidate window when the response names none (RFC 5861 §3). */
  readonly staleWhileRevalidateMs: number;
  /** Stale-if-error window when the response names none (RFC 5861 §4). */
  readonly staleIfErrorMs: number;
  /**
   * RFC 9111 §4.2.4: how stale a response may be and still answer while the origin cannot be
   * reached, closes the connection or times out (nginx's `proxy_cache_use_stale error timeout`).
   */
  readonly staleIfDisconnectedMs: number;
  /** Ceiling of a heuristic freshness lifetime (§4.2.2). */
  readonly maxHeuristicMs: number;
  /** RFC 9213 §2.2: the targeted fields this cache obeys over Cache-Control, in order, lower case. */
  readonly targetedFields: readonly string[];
}

export interface StorageRequest {
  /** Whether the request carried `Authorization` (§3.5). */
  readonly authorized: boolean;
  /** The request's own `no-store` directive (§5.2.1.5). */
  readonly noStore: boolean;
  /** When the gateway sent the request (§4.2.3 request_time). */
  readonly requestTime: number;
  /** When the response arrived (§4.2.3 response_time). */
  readonly responseTime: number;
}

export type StorageVerdict =
  | {
      readonly store: true;
      readonly facts: ReuseFacts;
      /** Fields that may not be stored (qualified `private` and `no-cache`, §5.2.2.4, §5.2.2.7). */
      readonly omit: readonly string[];
      /** The request fields this response varies on (§4.1), lower case. */
      readonly vary: readonly string[];
    }
  | { readonly store: false; readonly reason: NotStoredReason };

/**
 * §5.2.2.3 must-understand: the statuses whose caching requirements this cache implements, the
 * final ones RFC 9110 defines less 206 (parts are not stored) and 304 (no representation).
 */
const UNDERSTOOD_STATUSES: ReadonlySet<number> = new Set([
  200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417,
  421, 422, 426, 500, 501, 502, 503, 504, 505,
]);

/**
 * Request fields a response may not vary on here: a secondary key made of them would hold a
 * credential, and the gateway never keys on one.
 */
const NEVER_VARIED_ON: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization']);

/** Decides whether a response to a GET may be stored by a shared cache, and how it may be reused. */
export function storageVerdict(response: ResponseHead, request: StorageRequest, policy: StoragePolicy): StorageVerdict {
  const { headers, status } = response;
  const { directives: cc, targeted } = responseDirectives(headers, policy.targetedFields);
  // §5.2.1.5: the request's no-store forbids storing the response to it.
  if (request.noStore) return { store: false, reason: 'no-store' };
  // §3: only final, complete responses; a 206 is a part (the gateway does not combine ranges)
  // and a 304 has no representation of its own.
  if (status < 200 || status === 206 || status === 304) return { store: false, reason: 'status' };
  // §5.2.2.3: must-understand stores only a status whose caching rules this cache implements,
  // and for such a status it overrides the no-store sent beside it for caches that do not.
  const mustUnderstand = cc.has('must-understand');
  if (mustUnderstand && !UNDERSTOOD_STATUSES.has(status)) return { store: false, reason: 'status' };
  // §3, §5.2.2.5: no-store forbids storing.
  if (cc.has('no-store') && !mustUnderstand) return { store: false, reason: 'no-store' };
  // §5.2.2.7: a shared cache must not store a private response; the qualified form names only
  // the fields it must not store.
  const privateFields = cc.get('private');
  if (privateFields === true) return { store: false, reason: 'private' };
  // §3.5: a request with Authorization may be answered from a shared cache only when the origin
  // said so explicitly with public, s-maxage or must-revalidate.
  if (request.authorized && !cc.has('public') && !cc.has('s-maxage') && !cc.has('must-revalidate')) {
    return { store: false, reason: 'authorization' };
  }
  const noCache = cc.get('no-cache');
  const omit = [...fieldNames(privateFields), ...fieldNames(noCache)];
  // §7.3 and RFC 6265 §8: a cookie is meant for one client; replaying it to others leaks it
  // (nginx and Varnish refuse too) unless the origin said to keep it out of the stored response.
  if (headers['set-cookie'] !== undefined && !omit.includes('set-cookie')) return { store: false, reason: 'set-cookie' };
  // §4.1: `Vary: *` never matches a later request.
  const vary = fieldNames(headers.vary);
  if (vary.some((name) => name === '*' || NEVER_VARIED_ON.has(name))) return { store: false, reason: 'vary' };
  const lifetime = freshnessLifetime(status, headers, cc, request.responseTime, policy.maxHeuristicMs, !targeted);
  const hasValidator = headers.etag !== undefined || headers['last-modified'] !== undefined;
  // §3: without explicit freshness only a heuristically cacheable status or `public` may be
  // stored at all (a 201, 302 or 500 with only an ETag may not), and then, without a heuristic
  // lifetime, only a validator makes a stored copy useful: it is revalidated on every use.
  if (lifetime.kind === 'none' && (!hasValidator || !mayBeHeuristic(status, cc))) return { store: false, reason: 'no-freshness' };
  const facts: ReuseFacts = {
    lifetimeMs: lifetime.kind === 'none' ? 0 : lifetime.ms,
    initialAgeMs: initialAgeMs(headers, request.requestTime, request.responseTime),
    storedAt: request.responseTime,
    staleWhileRevalidateMs: staleWindowMs(cc.get('stale-while-revalidate'), policy.staleWhileRevalidateMs),
    staleIfErrorMs: staleWindowMs(cc.get('stale-if-error'), policy.staleIfErrorMs),
    // §5.2.2.2 must-revalidate, §5.2.2.8 proxy-revalidate (shared caches), and §5.2.2.10:
    // s-maxage implies proxy-revalidate.
    mustRevalidate: cc.has('must-revalidate') || cc.has('proxy-revalidate') || cc.has('s-maxage'),
    // §5.2.2.4: unqualified no-cache means "validate before every reuse".
    noCache: noCache === true,
  };
  // Without a validator a response is worth keeping only while it can answer without the origin:
  // fresh, or within a stale-while-revalidate or stale-if-error window (RFC 5861), so that
  // `max-age=0, stale-while-revalidate=60` is served stale while it is refreshed. An unqualified
  // no-cache answers nothing unvalidated, stale or not.
  if (!hasValidator && (facts.noCache ? facts.lifetimeMs <= facts.initialAgeMs : usefulForMs(facts, request.responseTime) === 0)) {
    return { store: false, reason: 'already-stale' };
  }
  return { store: true, omit, vary, facts };
}

/**
 * §4.3.3, §4: a full response to the validation of a stored response is the origin's newer
 * answer, and a cache uses the most recent response it has; so when that answer may not be
 * stored (`no-store`, `private`…), the older one is dropped rather than served on (Varnish's
 * hit-for-miss object hides it the same way). Not when the answer was kept out for this request's
 * own sake (its `Authorization`, its `no-store`), nor for a server error, which is no new
 * representation.
 */
export function retiresStored(status: number, request: StorageRequest): boolean {
  return status < 500 && !request.authorized && !request.noStore;
}

/** RFC 5861: the response's own window wins; the route's applies when it names none. */
function staleWindowMs(directive: string | true | undefined, routeDefaultMs: number): number {
  const seconds = deltaSeconds(directive);
  return seconds === undefined ? routeDefaultMs : (seconds ?? 0) * 1000;
}

/**
 * Fields never stored besides the hop-by-hop ones (§3.1): `Age` is recomputed on every send
 * (§5.1), `Content-Length` from the body actually stored, and `X-Request-Id` belongs to one
 * exchange, not to the representation.
 */
const NOT_STORED: readonly string[] = ['age', 'content-length', 'x-request-id'];

/** The fields to store and replay, as received, as a flat `[name, value, …]` list; `omit` names more. */
export function storedFields(headers: HeaderFields, omit: readonly string[] = []): string[] {
  return endToEndFields(headers, omit.length === 0 ? NOT_STORED : [...NOT_STORED, ...omit]);
}
