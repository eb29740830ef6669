/**
 * `Cache-Status` values (RFC 9211): how this gateway handled the request, in one place so the
 * access log, the metrics and the header always tell the same story.
 */

/** The cache's identifier, the first member of every value (RFC 9211 §2). */
export const CACHE_NAME = 'catalog-gateway';

/** §2.1 `hit` with §2.4 `ttl`: answered from storage, with that many seconds of freshness left. */
export function hitStatus(ttlSeconds: number): string {
  return `${CACHE_NAME}; hit; ttl=${ttlSeconds}`;
}

export interface ForwardFacts {
  /**
   * §2.2 `fwd`: `miss` nothing stored (the contract's spelling; with no `Vary` support yet it
   * equals `uri-miss`), `stale` stored but no longer fresh, `bypass` a route that is not cached.
   */
  readonly fwd: 'miss' | 'stale' | 'bypass';
  /** §2.3 `fwd-status`: the origin's status, when it answered. */
  readonly fwdStatus?: number | undefined;
  /** §2.5 `stored`. */
  readonly stored?: boolean;
  /** §2.6 `collapsed`: this request waited for another request's fill. */
  readonly collapsed?: boolean;
  /** §2.8 `detail`: why it was not stored, or what failed. */
  readonly detail?: string | undefined;
}

export function forwardStatus(facts: ForwardFacts): string {
  let value = `${CACHE_NAME}; fwd=${facts.fwd}`;
  if (facts.stored === true) value += '; stored';
  if (facts.collapsed === true) value += '; collapsed';
  if (facts.fwdStatus !== undefined) value += `; fwd-status=${facts.fwdStatus}`;
  if (facts.detail !== undefined) value += `; detail=${facts.detail}`;
  return value;
}
