/**
 * The gateway's RFC 9111 shared-cache rules, all of them, one `if` per rule: whether a response
 * may be stored, how long it stays fresh, and how old a stored response is when it is sent.
 * Nothing here knows about the catalog; the next steps (revalidation, stale serving, `Vary`
 * secondary keys, purge) extend these functions rather than special-casing routes elsewhere.
 */

/** An origin answer as the gateway received it: lower-case header names, the whole body. */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: Buffer;
}

/** Why a response was not stored; also sent as the `detail` of `Cache-Status`. */
export type NotStoredReason =
  | 'status'
  | 'no-store'
  | 'private'
  | 'no-cache'
  | 'authorization'
  | 'set-cookie'
  | 'vary'
  | 'no-freshness'
  | 'already-stale';

export type StorageVerdict =
  | { readonly store: true; readonly freshness: FreshnessFacts }
  | { readonly store: false; readonly reason: NotStoredReason };

/** What freshness needs, as received: the lifetime and the age the response already had. */
export interface FreshnessFacts {
  readonly lifetimeMs: number;
  /** The `Age` header value (RFC 9111 §5.1), seconds. */
  readonly initialAgeSeconds: number;
}

/** Freshness of a stored response: the facts plus when, by the gateway's clock, it was stored. */
export interface Freshness extends FreshnessFacts {
  readonly storedAt: number;
}

export interface RequestFacts {
  /** Whether the request that caused the fill carried `Authorization`. */
  readonly authorized: boolean;
  /** Request header names (lower case) the gateway forwards; `Vary` on any of them varies. */
  readonly forwardedHeaders: ReadonlySet<string>;
}

/**
 * Statuses that are heuristically cacheable (RFC 9110 §15.1); the gateway stores them only with
 * explicit freshness, so the set is about understanding the status, not guessing lifetimes.
 */
const CACHEABLE_STATUSES: ReadonlySet<number> = new Set([200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]);

export type Directives = ReadonlyMap<string, string | true>;

/** Parses `Cache-Control` (RFC 9111 §5.2); names are case-insensitive, the first occurrence wins (§4.2.1). */
export function parseCacheControl(value: string | readonly string[] | undefined): Directives {
  const directives = new Map<string, string | true>();
  if (value === undefined) return directives;
  const text = typeof value === 'string' ? value : value.join(',');
  for (const match of text.matchAll(/([^=,\s]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^,\s]*))?/g)) {
    const name = (match[1] ?? '').toLowerCase();
    if (directives.has(name)) continue;
    const raw = match[2];
    directives.set(name, raw === undefined ? true : raw.startsWith('"') ? raw.slice(1, -1) : raw);
  }
  return directives;
}

/** delta-seconds (RFC 9111 §1.2.2); an invalid value is treated as 0, which makes the response stale. */
function deltaSeconds(value: string | true | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value !== true && /^[0-9]+$/.test(value) ? Math.min(Number(value), 2 ** 31) : 0;
}

function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

/** RFC 9111 §4.2.1: `s-maxage` over `max-age` for a shared cache, then `Expires` minus `Date`. */
function freshnessLifetimeMs(headers: UpstreamResponse['headers'], cc: Directives): number | undefined {
  const sMaxAge = deltaSeconds(cc.get('s-maxage'));
  if (sMaxAge !== undefined) return sMaxAge * 1000;
  const maxAge = deltaSeconds(cc.get('max-age'));
  if (maxAge !== undefined) return maxAge * 1000;
  const expires = single(headers.expires);
  if (expires === undefined) return undefined;
  // §5.3: an invalid Expires means "already expired"; the origin's Date is the base, not our clock.
  const expiresAt = Date.parse(expires);
  const date = Date.parse(single(headers.date) ?? '');
  if (Number.isNaN(expiresAt) || Number.isNaN(date)) return 0;
  return Math.max(0, expiresAt - date);
}

/** Decides whether a response to a GET may be stored by a shared cache, and for how long. */
export function storageVerdict(response: UpstreamResponse, request: RequestFacts): StorageVerdict {
  const { headers } = response;
  const cc = parseCacheControl(headers['cache-control']);
  // §3: the status must be one the cache understands and may store.
  if (!CACHEABLE_STATUSES.has(response.status)) return { store: false, reason: 'status' };
  // §3, §5.2.2.5: no-store forbids storing.
  if (cc.has('no-store')) return { store: false, reason: 'no-store' };
  // §3, §5.2.2.7: a shared cache must not store a private response.
  if (cc.has('private')) return { store: false, reason: 'private' };
  // §5.2.2.4: no-cache requires revalidation before every reuse; until revalidation exists
  // here, storing would only waste space.
  if (cc.has('no-cache')) return { store: false, reason: 'no-cache' };
  // §3.5: a request with Authorization may be answered from a shared cache only when the origin
  // said so explicitly with public, s-maxage or must-revalidate.
  if (request.authorized && !cc.has('public') && !cc.has('s-maxage') && !cc.has('must-revalidate')) {
    return { store: false, reason: 'authorization' };
  }
  // §7.3 and RFC 6265 §8: a cookie is meant for one client; replaying it to others leaks it.
  if (headers['set-cookie'] !== undefined) return { store: false, reason: 'set-cookie' };
  // §4.1: `Vary: *` never matches. Secondary keys do not exist yet, so a response that varies on
  // a header the gateway forwards (and so may differ between clients) is not stored either.
  if (variesOnForwarded(headers.vary, request.forwardedHeaders)) return { store: false, reason: 'vary' };
  // §4.2.1: without explicit freshness the gateway does not guess a heuristic lifetime (§4.2.2).
  const lifetimeMs = freshnessLifetimeMs(headers, cc);
  if (lifetimeMs === undefined) return { store: false, reason: 'no-freshness' };
  // §4.2.3: the Age it already has counts against the lifetime. The origin's Date is not used
  // for apparent age: the two hosts' clocks need not agree.
  const initialAgeSeconds = receivedAgeSeconds(headers);
  if (lifetimeMs <= initialAgeSeconds * 1000) return { store: false, reason: 'already-stale' };
  return { store: true, freshness: { lifetimeMs, initialAgeSeconds } };
}

function variesOnForwarded(vary: string | readonly string[] | undefined, forwarded: ReadonlySet<string>): boolean {
  if (vary === undefined) return false;
  const names = (typeof vary === 'string' ? vary : vary.join(',')).split(',').map((n) => n.trim().toLowerCase());
  return names.some((name) => name === '*' || forwarded.has(name));
}

/** §5.1: the `Age` the response arrived with; absent or invalid counts as 0. */
export function receivedAgeSeconds(headers: UpstreamResponse['headers']): number {
  return deltaSeconds(single(headers.age)) ?? 0;
}

/** §4.2.3: current age = the age it arrived with plus the time it has been resident here. */
export function currentAgeMs(freshness: Freshness, now: number): number {
  return freshness.initialAgeSeconds * 1000 + Math.max(0, now - freshness.storedAt);
}

/** §4.2: fresh while its current age is below its freshness lifetime. */
export function isFresh(freshness: Freshness, now: number): boolean {
  return currentAgeMs(freshness, now) < freshness.lifetimeMs;
}

/** §5.1: the `Age` a response sent from the cache must carry, whole seconds. */
export function ageSeconds(freshness: Freshness, now: number): number {
  return Math.floor(currentAgeMs(freshness, now) / 1000);
}

/**
 * RFC 9211 §2.4 `ttl`: remaining freshness lifetime in whole seconds, counted so that `Age` plus
 * `ttl` equals the lifetime the origin gave (max-age=60 reads `Age: 0` … `ttl=60`).
 */
export function ttlSeconds(freshness: Freshness, now: number): number {
  return Math.floor(freshness.lifetimeMs / 1000) - ageSeconds(freshness, now);
}

/**
 * Header fields never replayed from storage. RFC 9111 §3.1: hop-by-hop fields and the ones named
 * in `Connection` (RFC 9110 §7.6.1) are removed before forwarding, which may be done before
 * storage; `Age` is recomputed on every send (§5.1); `Content-Length` is recomputed from the body
 * that is actually stored; `X-Request-Id` belongs to one exchange, not to the representation.
 */
const NOT_REPLAYED: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'age',
  'content-length',
  'x-request-id',
]);

/** The header fields to replay, as a flat `[name, value, …]` list ready for `writeHead`. */
export function replayableHeaders(headers: UpstreamResponse['headers']): string[] {
  const named = new Set(
    (single(headers.connection) ?? '')
      .split(',')
      .map((n) => n.trim().toLowerCase())
      .filter((n) => n !== ''),
  );
  const flat: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_REPLAYED.has(name) || named.has(name)) continue;
    if (typeof value === 'string') flat.push(name, value);
    else for (const one of value) flat.push(name, one);
  }
  return flat;
}
