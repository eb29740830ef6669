/**
 * The tag index (Fastly's surrogate keys, Varnish's xkey): for each tag an origin put on its
 * responses (`Surrogate-Key: bk_1 bk_2 avail_any`), the keys whose stored responses carry it, so
 * a purge by tag touches exactly those entries instead of walking the cache.
 */
import type { CacheKey } from './response-cache.ts';

/** Shared by every response without tags: a list of its own would cost each entry 32 B or more. */
export const NO_TAGS: readonly string[] = Object.freeze([]);

/** Tags as the origin sent them: space-separated tokens, each kept once. */
export function parseTags(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return NO_TAGS;
  const text = typeof value === 'string' ? value : value.join(' ');
  const tags = text.split(' ').filter((t) => t !== '');
  if (tags.length === 0) return NO_TAGS;
  return tags.length === 1 ? tags : [...new Set(tags)];
}

export class TagIndex {
  readonly #keys = new Map<string, Set<CacheKey>>();

  add(key: CacheKey, tags: Iterable<string>): void {
    for (const tag of tags) {
      let keys = this.#keys.get(tag);
      if (keys === undefined) {
        keys = new Set();
        this.#keys.set(tag, keys);
      }
      keys.add(key);
    }
  }

  /** Forgets `key` under each of `tags` but those in `kept` (the tags of what is stored there now). */
  remove(key: CacheKey, tags: Iterable<string>, kept: ReadonlySet<string>): void {
    for (const tag of tags) {
      if (kept.has(tag)) continue;
      const keys = this.#keys.get(tag);
      if (keys === undefined) continue;
      keys.delete(key);
      if (keys.size === 0) this.#keys.delete(tag);
    }
  }

  /** Every key stored under any of `tags`. */
  keys(tags: readonly string[]): Set<CacheKey> {
    const found = new Set<CacheKey>();
    for (const tag of tags) for (const key of this.#keys.get(tag) ?? []) found.add(key);
    return found;
  }

  get tags(): number {
    return this.#keys.size;
  }
}
