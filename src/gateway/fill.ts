/**
 * The fill step (Varnish's backend fetch): ask the origin once, count it, decide with the cache
 * policy whether the answer is stored, store it, and hand every waiter the same outcome. A
 * failed fill stores nothing, and neither does an origin 5xx.
 */
import { performance } from 'node:perf_hooks';
import { receivedAgeSeconds, storageVerdict, type NotStoredReason } from './cache-policy.ts';
import type { GatewayMetrics } from './metrics.ts';
import { FORWARDED_HEADER_NAMES, type ForwardedHeaders, type OriginClient } from './origin-client.ts';
import { prepareResponse, type PreparedResponse } from './prepared-response.ts';
import type { CacheKey, ResponseCache } from './response-cache.ts';
import { originServerError, type UpstreamFailure } from './upstream-failure.ts';

export type FillOutcome =
  | {
      readonly kind: 'response';
      readonly response: PreparedResponse;
      readonly stored: boolean;
      /** Why it was not stored; `too-large` when the policy allowed it but it exceeds the largest entry. */
      readonly notStored: NotStoredReason | 'too-large' | undefined;
      readonly originMs: number;
    }
  | { readonly kind: 'failed'; readonly failure: UpstreamFailure; readonly fwdStatus: number | undefined; readonly originMs: number };

export class Filler {
  readonly #origin: OriginClient;
  readonly #cache: ResponseCache;
  readonly #metrics: GatewayMetrics;
  readonly #now: () => number;

  constructor(origin: OriginClient, cache: ResponseCache, metrics: GatewayMetrics, now: () => number) {
    this.#origin = origin;
    this.#cache = cache;
    this.#metrics = metrics;
    this.#now = now;
  }

  async fill(key: CacheKey, forwarded: ForwardedHeaders): Promise<FillOutcome> {
    const started = performance.now();
    const answer = await this.#origin.get(key, forwarded);
    const originMs = performance.now() - started;
    this.#metrics.originAnswer(answer.ok ? answer.response.status : 'error', originMs / 1000);
    if (!answer.ok) return { kind: 'failed', failure: answer.failure, fwdStatus: undefined, originMs };
    const { response } = answer;
    if (response.status >= 500) return { kind: 'failed', failure: originServerError(response.status), fwdStatus: response.status, originMs };
    const verdict = storageVerdict(response, { authorized: forwarded.authorization !== undefined, forwardedHeaders: FORWARDED_HEADER_NAMES });
    const storedAt = this.#now();
    if (!verdict.store) {
      const freshness = { lifetimeMs: 0, initialAgeSeconds: receivedAgeSeconds(response.headers), storedAt };
      return { kind: 'response', response: prepareResponse(response, freshness), stored: false, notStored: verdict.reason, originMs };
    }
    const prepared = prepareResponse(response, { ...verdict.freshness, storedAt });
    const stored = this.#cache.store(key, prepared);
    return { kind: 'response', response: prepared, stored, notStored: stored ? undefined : 'too-large', originMs };
  }
}
