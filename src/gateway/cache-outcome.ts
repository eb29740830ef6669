/**
 * How the cache answered one request, as one value set at the transitions of the request's path
 * (after Varnish, which derives its counters from flags set as a request moves). The
 * `Cache-Status` field (RFC 9211), the access log's `cache` field and the metric label are all
 * derived from it here, so they always tell the same story.
 */
import { BoundedMemo } from '../shared/bounded-memo.ts';
import type { NotStoredReason } from './rules/storage.ts';
import type { NotKept } from './store/tier.ts';

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

/**
 * Why a stale response was sent: its stale-while-revalidate or stale-if-error window (RFC 5861),
 * the request's max-stale (RFC 9111 §5.2.1.2), or the origin out of reach (§4.2.4).
 */
export const STALE_REASONS = ['stale-while-revalidate', 'stale-if-error', 'max-stale', 'disconnected'] as const;
export type StaleReason = (typeof STALE_REASONS)[number];

/** How a validation of a stored response ended (RFC 9111 §4.3.3, §4.3.4): 304, a new answer, or no answer. */
export type RevalidationOutcome = 'not-modified' | 'replaced' | 'failed';

/**
 * §2.8 `detail` besides a stale response's reason: why an answer was not stored (a rule's reason,
 * or the store's), `shared` a hit in the fleet's shared tier, `disk` a hit in the host's disk
 * tier, `not-acceptable` a stored response in a coding the request does not accept, relayed instead.
 */
export type OutcomeDetail = NotStoredReason | NotKept | 'shared' | 'disk' | 'not-acceptable';

interface OutcomeFields {
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
  /** The upstream failure's code (upstream-failure.ts), written as §2.8 `detail`. */
  readonly failure?: string | undefined;
}

export type CacheOutcome =
  | (OutcomeFields & { readonly kind: 'stale'; readonly detail: StaleReason })
  | (OutcomeFields & { readonly kind: Exclude<OutcomeKind, 'stale'>; readonly detail?: OutcomeDetail | undefined });

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

/**
 * The `Cache-Status` value: §2.1 `hit` (with `ttl`, and `detail` for why a stale one was
 * allowed) when the origin was not asked, §2.2 `fwd` with its parameters when it was; none for
 * a refusal before the cache.
 */
export function cacheStatus(o: CacheOutcome): string | undefined {
  if (o.kind === 'none') return undefined;
  // What failed says more than why the request went to the origin (a relay for a coding not accepted).
  const detail = o.failure ?? o.detail;
  if (o.fwd === undefined) {
    const hit = `${CACHE_NAME}; hit; ttl=${o.ttl ?? 0}`;
    return detail === undefined ? hit : `${hit}; detail=${detail}`;
  }
  let value = `${CACHE_NAME}; fwd=${o.fwd}`;
  if (o.stored === true) value += '; stored';
  if (o.collapsed === true) value += '; collapsed';
  if (o.fwdStatus !== undefined) value += `; fwd-status=${o.fwdStatus}`;
  if (o.ttl !== undefined) value += `; ttl=${o.ttl}`;
  if (detail !== undefined) value += `; detail=${detail}`;
  return value;
}

/** Hits' `Cache-Status` values a pipeline keeps, by ttl, of memory and of the disk tier each: under load many hits share one. */
const HIT_VALUES_KEPT = 1024;

/**
 * `cacheStatus`, with the values of hits kept per ttl, so that a hit, from memory or from the
 * disk tier, makes no string of its own: a disk hit's allocation sets how often the young
 * generation is collected (docs/performance.md, "A disk hit's tail").
 */
export class CacheStatusValues {
  readonly #hits = new BoundedMemo<number, string>(HIT_VALUES_KEPT);
  readonly #diskHits = new BoundedMemo<number, string>(HIT_VALUES_KEPT);

  of(o: CacheOutcome): string | undefined {
    if (o.kind !== 'hit' || o.fwd !== undefined || o.failure !== undefined || o.ttl === undefined) return cacheStatus(o);
    const kept = o.detail === undefined ? this.#hits : o.detail === 'disk' ? this.#diskHits : undefined;
    if (kept === undefined) return cacheStatus(o);
    return kept.get(o.ttl) ?? kept.keep(o.ttl, cacheStatus(o) ?? '');
  }
}
