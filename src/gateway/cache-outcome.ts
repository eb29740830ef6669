/**
 * How the cache answered one request, as one value set at the transitions of the request's path
 * (after Varnish, which derives its counters from flags set as a request moves). The
 * `Cache-Status` field (RFC 9211), the access log's `cache` field and the metric label are all
 * derived from it here, so they always tell the same story.
 */

/** The cache's identifier, the first member of every `Cache-Status` value (RFC 9211 §2). */
export const CACHE_NAME = 'catalog-gateway';

/**
 * §2.2 `fwd`, why the request went to the origin: `miss` nothing stored for the target (the
 * contract's spelling of `uri-miss`), `vary-miss` stored responses but none this request selects,
 * `stale` a stored response that needed validation, `request` the request's own directives
 * (no-cache, max-age…) asked for it, `method` an unsafe or uncacheable method, `bypass` a route
 * that is not cached.
 */
export type Forward = 'miss' | 'vary-miss' | 'stale' | 'request' | 'method' | 'bypass';

/**
 * What the client got: `hit` a fresh stored response; `stale` a stale stored response
 * (stale-while-revalidate, max-stale, stale-if-error, or `disconnected`: RFC 9111 §4.2.4); `revalidated` a stored response the origin
 * confirmed with 304; `miss` the origin's answer or failure; `pass` a relayed answer the cache
 * never holds; `none` a refusal before the cache.
 */
export type OutcomeKind = 'hit' | 'stale' | 'revalidated' | 'miss' | 'pass' | 'none';

export interface CacheOutcome {
  readonly kind: OutcomeKind;
  /** Set when the origin was asked (or, for `pass`, the request relayed). */
  readonly fwd?: Forward | undefined;
  /** §2.3 `fwd-status`: the origin's status, when it answered. */
  readonly fwdStatus?: number | undefined;
  /** §2.5 `stored`: the response was stored (or the stored one updated by a 304). */
  readonly stored?: boolean | undefined;
  /** §2.6 `collapsed`: this request waited for another request's fill and got its outcome. */
  readonly collapsed?: boolean | undefined;
  /** §2.4 `ttl`, when a stored response was sent. */
  readonly ttl?: number | undefined;
  /** §2.8 `detail`: why it was not stored, what failed, why a stale response was sent, or `shared`. */
  readonly detail?: string | undefined;
}

/** The access log's `cache` field and the metric label. */
export type CacheResult = OutcomeKind | 'collapsed';

/**
 * The one table from outcome to label: a request that waited for another's fill is `collapsed`
 * whatever that fill brought (the origin's answer, a 304, a failure, a stale stand-in, an entry
 * from the shared tier); otherwise the label is the outcome's kind. docs/caching.md shows it row
 * by row, and a test holds the two equal.
 */
export const CACHE_LABELS: Readonly<Record<OutcomeKind, { readonly alone: CacheResult; readonly collapsed: CacheResult }>> = {
  hit: { alone: 'hit', collapsed: 'collapsed' },
  stale: { alone: 'stale', collapsed: 'collapsed' },
  revalidated: { alone: 'revalidated', collapsed: 'collapsed' },
  miss: { alone: 'miss', collapsed: 'collapsed' },
  pass: { alone: 'pass', collapsed: 'pass' },
  none: { alone: 'none', collapsed: 'none' },
};

export function cacheLabel(outcome: CacheOutcome): CacheResult {
  const labels = CACHE_LABELS[outcome.kind];
  return outcome.collapsed === true ? labels.collapsed : labels.alone;
}

/** A refusal before the cache: no `Cache-Status`. */
export const REFUSED: CacheOutcome = { kind: 'none' };

let lastHitTtl = Number.NaN;
let lastHit = '';

/**
 * The `Cache-Status` value: §2.1 `hit` (with `ttl`, and `detail` for why a stale one was
 * allowed) when the origin was not asked, §2.2 `fwd` with its parameters when it was; none for
 * a refusal before the cache.
 */
export function cacheStatus(o: CacheOutcome): string | undefined {
  if (o.kind === 'none') return undefined;
  if (o.fwd === undefined) {
    const ttl = o.ttl ?? 0;
    // Hits of one second share a ttl: the plain hit's value is made once a second, not per hit.
    if (o.detail === undefined && ttl === lastHitTtl) return lastHit;
    const hit = `${CACHE_NAME}; hit; ttl=${ttl}`;
    if (o.detail !== undefined) return `${hit}; detail=${o.detail}`;
    lastHitTtl = ttl;
    lastHit = hit;
    return hit;
  }
  let value = `${CACHE_NAME}; fwd=${o.fwd}`;
  if (o.stored === true) value += '; stored';
  if (o.collapsed === true) value += '; collapsed';
  if (o.fwdStatus !== undefined) value += `; fwd-status=${o.fwdStatus}`;
  if (o.ttl !== undefined) value += `; ttl=${o.ttl}`;
  if (o.detail !== undefined) value += `; detail=${o.detail}`;
  return value;
}
