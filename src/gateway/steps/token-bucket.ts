/**
 * Token buckets per key (a token's subject, a client address): `rate` requests a second on
 * average, `burst` at once. Over the limit the answer is the contract's 429 problem with
 * `Retry-After` (RFC 9110 §10.2.3) and the `RateLimit-Policy` / `RateLimit` fields of
 * draft-ietf-httpapi-ratelimit-headers, as the origin sends them. Bounded: the least recently
 * seen keys are forgotten first (a forgotten key starts with a full bucket).
 */
import { growingLru } from '../../shared/growing-lru.ts';
import { problem, type Problem } from '../../shared/problem.ts';

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_KEYS = 100_000;

export class TokenBuckets {
  readonly #rate: number;
  readonly #burst: number;
  readonly #policy: string;
  readonly #what: string;
  readonly #now: () => number;
  readonly #buckets = growingLru<string, Bucket>(MAX_KEYS);

  /** `rate` per second, 0 = no limit; `what` names the key in the problem ("token subject"). */
  constructor(rate: number, burst: number, policy: string, what: string, now: () => number) {
    this.#rate = rate;
    this.#burst = Math.max(1, burst);
    this.#policy = policy;
    this.#what = what;
    this.#now = now;
  }

  get enabled(): boolean {
    return this.#rate > 0;
  }

  /** Takes one request's token for `key`; a 429 problem when the bucket is empty. */
  take(key: string): Problem | undefined {
    if (this.#rate === 0) return undefined;
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, at: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.at) / 1000) * this.#rate);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    const wait = Math.max(1, Math.ceil((1 - bucket.tokens) / this.#rate));
    return problem('rate-limited', `at most ${this.#rate} requests per second per ${this.#what} (bursts of ${this.#burst}); retry in ${wait} s`, {
      'retry-after': String(wait),
      'ratelimit-policy': `"${this.#policy}";q=${this.#burst};w=${Math.max(1, Math.ceil(this.#burst / this.#rate))}`,
      ratelimit: `"${this.#policy}";r=0;t=${wait}`,
    });
  }
}
