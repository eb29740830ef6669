/**
 * The store: an LRU of prepared responses keyed by the canonical request target, bounded in
 * bytes: what each entry really costs in memory (entry-size.ts), key and bookkeeping included.
 * Which responses go in and when they stop being fresh is decided by cache-policy.ts; this
 * module only keeps them within the bound.
 */
import { LRUCache } from 'lru-cache';
import type { TargetVerdict } from '../shared/request-target.ts';
import { isFresh } from './cache-policy.ts';
import { entryBytes } from './entry-size.ts';
import type { PreparedResponse } from './prepared-response.ts';

declare const cacheKeyBrand: unique symbol;
/**
 * A canonical request target (path and query). Only `cacheKey` makes one, from a parsed target,
 * so a raw URL or anything carrying a token cannot become a key by accident.
 */
export type CacheKey = string & { readonly [cacheKeyBrand]: true };

export function cacheKey(target: Extract<TargetVerdict, { ok: true }>): CacheKey {
  return target.canonical as CacheKey;
}

export type Lookup =
  | { readonly kind: 'fresh'; readonly response: PreparedResponse }
  /** Stored but no longer fresh: kept for revalidation and stale serving, not served today. */
  | { readonly kind: 'stale'; readonly response: PreparedResponse }
  | { readonly kind: 'absent' };

export interface ResponseCacheOptions {
  /** Total bound in bytes (`gateway.cache.maxBytes`). */
  readonly maxBytes: number;
  /** Largest single entry in bytes (`gateway.cache.maxEntryBytes`). */
  readonly maxEntryBytes: number;
  /** Called once for every entry pushed out to make room. */
  readonly onEvict: () => void;
}

const ABSENT: Lookup = { kind: 'absent' };

export class ResponseCache {
  readonly #lru: LRUCache<CacheKey, PreparedResponse>;
  readonly #maxEntryBytes: number;

  constructor(options: ResponseCacheOptions) {
    this.#maxEntryBytes = Math.min(options.maxEntryBytes, options.maxBytes);
    this.#lru = new LRUCache<CacheKey, PreparedResponse>({
      maxSize: options.maxBytes,
      maxEntrySize: this.#maxEntryBytes,
      disposeAfter: (_response, _key, reason) => {
        if (reason === 'evict') options.onEvict();
      },
    });
  }

  lookup(key: CacheKey, now: number): Lookup {
    const response = this.#lru.get(key);
    if (response === undefined) return ABSENT;
    return { kind: isFresh(response, now) ? 'fresh' : 'stale', response };
  }

  /** Stores a response; false when it is larger than the largest entry allowed. */
  store(key: CacheKey, response: PreparedResponse): boolean {
    const size = entryBytes(key, response.bytes);
    if (size > this.#maxEntryBytes) {
      this.#lru.delete(key);
      return false;
    }
    this.#lru.set(key, response, { size });
    return true;
  }

  get entries(): number {
    return this.#lru.size;
  }

  get bytes(): number {
    return this.#lru.calculatedSize;
  }
}
