/**
 * The generation check: every purge gets the next generation number, and the last purges are
 * remembered, so that a fill that began before a purge matching its key or tags is not stored
 * (it may carry exactly what the purge removed). A fill older than everything remembered is
 * treated as purged: refusing one store costs one origin call, storing a stale one shows a
 * stale loan for up to `max-age`.
 */
import type { CacheKey } from './response-cache.ts';

export type PurgeSelector =
  | { readonly kind: 'tags'; readonly tags: readonly string[] }
  | { readonly kind: 'urls'; readonly keys: readonly CacheKey[] }
  | { readonly kind: 'prefix'; readonly prefix: string }
  | { readonly kind: 'all' };

interface Recorded {
  readonly generation: number;
  readonly selector: PurgeSelector;
}

/** Purges remembered; fills last seconds, so this covers far more than any fill can span. */
const REMEMBERED = 4096;

export function matchesPurge(selector: PurgeSelector, key: CacheKey, tags: readonly string[]): boolean {
  switch (selector.kind) {
    case 'all':
      return true;
    case 'prefix':
      return key.startsWith(selector.prefix);
    case 'urls':
      return selector.keys.includes(key);
    case 'tags':
      return tags.some((t) => selector.tags.includes(t));
  }
}

export class PurgeLog {
  #generation = 0;
  readonly #recent: Recorded[] = [];

  /** The current generation: a fill notes it when it starts. */
  get generation(): number {
    return this.#generation;
  }

  record(selector: PurgeSelector): void {
    this.#generation++;
    this.#recent.push({ generation: this.#generation, selector });
    if (this.#recent.length > REMEMBERED) this.#recent.splice(0, this.#recent.length - REMEMBERED);
  }

  /** Whether a purge since `generation` matches a response for `key` carrying `tags`. */
  purgedSince(generation: number, key: CacheKey, tags: readonly string[]): boolean {
    if (generation === this.#generation) return false;
    const oldest = this.#recent[0];
    if (oldest === undefined || oldest.generation > generation + 1) return true;
    for (let i = this.#recent.length - 1; i >= 0; i--) {
      const recorded = this.#recent[i];
      if (recorded === undefined || recorded.generation <= generation) break;
      if (matchesPurge(recorded.selector, key, tags)) return true;
    }
    return false;
  }
}
