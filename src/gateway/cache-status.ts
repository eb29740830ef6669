/**
 * `Cache-Status` values (RFC 9211): how this gateway handled the request, in one place so the
 * access log, the metrics and the header always tell the same story.
 */

/** The cache's identifier, the first member of every value (RFC 9211 §2). */
export const CACHE_NAME = 'catalog-gateway';

/**
 * §2.1 `hit` with §2.4 `ttl`: answered from storage without asking the origin, with that many
 * seconds of freshness left (negative when a stale response was allowed); §2.8 `detail` says why
 * a stale one was.
 */
export function hitStatus(ttlSeconds: number, detail?: string): string {
  return detail === undefined ? `${CACHE_NAME}; hit; ttl=${ttlSeconds}` : `${CACHE_NAME}; hit; ttl=${ttlSeconds}; detail=${detail}`;
}

/**
 * §2.2 `fwd`, why the request went to the origin: `miss` nothing stored for the target (the
 * contract's spelling of `uri-miss`), `vary-miss` stored responses but none this request selects,
 * `stale` a stored response that needed validation, `request` the request's own directives
 * (no-cache, max-age…) asked for it, `method` an unsafe or uncacheable method, `bypass` a route
 * that is not cached.
 */
export type Forward = 'miss' | 'vary-miss' | 'stale' | 'request' | 'method' | 'bypass';

export interface ForwardFacts {
  readonly fwd: Forward;
  /** §2.3 `fwd-status`: the origin's status, when it answered. */
  readonly fwdStatus?: number | undefined;
  /** §2.5 `stored`: the response was stored (or the stored one updated by a 304). */
  readonly stored?: boolean;
  /** §2.6 `collapsed`: this request waited for another request's fill. */
  readonly collapsed?: boolean;
  /** §2.4 `ttl`, when a stored response was sent. */
  readonly ttl?: number | undefined;
  /** §2.8 `detail`: why it was not stored, what failed, or why a stale response was sent. */
  readonly detail?: string | undefined;
}

export function forwardStatus(facts: ForwardFacts): string {
  let value = `${CACHE_NAME}; fwd=${facts.fwd}`;
  if (facts.stored === true) value += '; stored';
  if (facts.collapsed === true) value += '; collapsed';
  if (facts.fwdStatus !== undefined) value += `; fwd-status=${facts.fwdStatus}`;
  if (facts.ttl !== undefined) value += `; ttl=${facts.ttl}`;
  if (facts.detail !== undefined) value += `; detail=${facts.detail}`;
  return value;
}
