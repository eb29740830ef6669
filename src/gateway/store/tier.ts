/**
 * The one contract every tier of the cache keeps — the process's memory (response-cache.ts), the
 * host's disk (disk-store.ts), the fleet's Redis (redis-store.ts) — after undici's cache stores
 * and Varnish's stevedores: get, put, delete, purge, size. One contract suite
 * (test/gateway/tier-contract.test.ts) runs against each.
 *
 * Which responses may be stored and reused is the rules' business (../rules/); a tier only keeps
 * them. What a tier must do itself is judge a response by the purges made since its fill began,
 * so that a purge is never undone by a fill already under way: `judged` is that judgement, the one
 * place a PurgeLog verdict becomes an action. Memory and disk judge on `put` (by the process's
 * purge generations); Redis, which processes that read the purge stream at different speeds
 * share, judges on `get` (by the stream's marks).
 */
import type { HeaderFields } from '../rules/cache-control.ts';
import { varyMatches } from '../rules/vary.ts';
import type { Purge, Verdict } from '../purge/purge-log.ts';
import type { CacheKey } from './memory/response-cache.ts';
import { staleFrom, type StoredResponse } from './stored-response.ts';

export type TierName = 'memory' | 'disk' | 'redis';

/** Where a fill began, in both orders the purge log keeps (../purge/purge-log.ts). */
export interface FillStamp {
  /** The process's purge generation. */
  readonly generation: number;
  /** The last fleet purge read from the stream. */
  readonly mark: string;
}

/** Why a response the rules let be stored was not kept; `refused` by the admission filter, `failed` by the tier's medium. */
export type NotKept = 'too-large' | 'purged' | 'refused' | 'failed';

export interface TierSize {
  readonly entries: number;
  readonly bytes: number;
}

/** A value now, or later from a tier that does I/O. */
export type Awaitable<T> = T | Promise<T>;

export interface CacheTier {
  readonly name: TierName;
  /** The stored response `request` selects (RFC 9111 §4.1), as the purges since its fill leave it. */
  get(key: CacheKey, request: HeaderFields): Awaitable<StoredResponse | undefined>;
  /** Keeps `response` for `key` unless a purge since `stamp` names it; says why when it does not. */
  put(key: CacheKey, response: StoredResponse, stamp: FillStamp): Awaitable<NotKept | undefined>;
  /** Forgets what is stored for `keys`. */
  delete(keys: readonly CacheKey[]): Awaitable<void>;
  /** Removes (hard) or marks stale (soft) what `purge` names; the number of entries it found. */
  purge(purge: Purge): Awaitable<number>;
  size(): Awaitable<TierSize>;
}

/** `response` as a purge verdict leaves it: gone, stale from the purge on, or as it was. */
export function judged(verdict: Verdict, response: StoredResponse): StoredResponse | undefined {
  switch (verdict.kind) {
    case 'intact':
      return response;
    case 'purged':
      return undefined;
    case 'stale-from':
      return staleFrom(response, verdict.at);
  }
}

/** Whether a stored response answers `request`: it varies on nothing, or on fields the request has as it had them. */
export function selects(response: StoredResponse, request: HeaderFields): boolean {
  return response.vary.length === 0 || varyMatches(response.vary, response.selecting, request);
}
