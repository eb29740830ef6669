/**
 * Per-token-subject rate limit: a fixed one-minute window per subject. Over the limit, the
 * problem carries `Retry-After` (RFC 9110 §10.2.3) and the `RateLimit-Policy` / `RateLimit`
 * fields of draft-ietf-httpapi-ratelimit-headers. They are sent on 429 only: successful
 * responses are `public` and shared by every token through caches, so a per-token count on them
 * would be shown to the wrong clients.
 */
import { growingLru } from '../shared/growing-lru.ts';
import { problem, type Problem } from '../shared/problem.ts';

const WINDOW_MS = 60_000;
const POLICY = 'default';
/** Subjects tracked at once; beyond it the least recently seen one starts a fresh window. */
const MAX_SUBJECTS = 100_000;

interface Window {
  start: number;
  used: number;
}

export class RateLimiter {
  readonly #limit: number;
  readonly #now: () => number;
  readonly #windows = growingLru<string, Window>(MAX_SUBJECTS);

  /** `limitPerMinute` of 0 turns the limit off. */
  constructor(limitPerMinute: number, now: () => number) {
    this.#limit = limitPerMinute;
    this.#now = now;
  }

  /** Counts one request by `subject`; a problem when it is over the limit. */
  take(subject: string): Problem | undefined {
    if (this.#limit === 0) return undefined;
    const now = this.#now();
    let window = this.#windows.get(subject);
    if (window === undefined || now - window.start >= WINDOW_MS) {
      window = { start: now, used: 0 };
      this.#windows.set(subject, window);
    }
    window.used++;
    if (window.used <= this.#limit) return undefined;
    const reset = Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000));
    return problem('rate-limited', `at most ${this.#limit} requests per minute per token subject; retry in ${reset} s`, {
      'retry-after': String(reset),
      'ratelimit-policy': `"${POLICY}";q=${this.#limit};w=${WINDOW_MS / 1000}`,
      ratelimit: `"${POLICY}";r=0;t=${reset}`,
    });
  }
}
