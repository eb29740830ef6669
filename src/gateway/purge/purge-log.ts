/**
 * The one purge log of a process, and the one generation check: what lets a response whose fill
 * began before a purge be judged by it, so a purge is never undone by a fill already under way,
 * whether the response is about to enter this process's cache (L1) or was read from the fleet's
 * shared tier (L2).
 *
 * It keeps the purges in the two orders a response can be placed in:
 * - the order this process applied them in (its generations): a local fill notes the generation
 *   when it begins;
 * - the order of the fleet's purge stream (stream ids): a shared entry carries the id of the last
 *   purge its filler had read when the fill began (its mark). Purges this process took and has
 *   not yet read back from the stream have no id yet; they count against every shared entry, so
 *   a process never serves from the shared tier what it has just purged itself.
 *
 * A purge matching the response makes it purged (hard) or stale from the purge's time on (soft),
 * the same verdict with and without a fleet. A response older than everything remembered is
 * taken as purged: refusing one costs one origin call, keeping a stale one shows a stale loan for
 * up to `max-age`.
 */
import { compareIds, FIRST_ID } from '../fleet/stream-id.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';

/** What invalidated a target: the answer to an unsafe request (§4.4), or a validation that retired it (§4.3.3). */
export const INVALIDATION_CAUSES = ['unsafe-request', 'validation'] as const;
export type InvalidationCause = (typeof INVALIDATION_CAUSES)[number];

export type PurgeSelector =
  | { readonly kind: 'tags'; readonly tags: readonly string[] }
  | { readonly kind: 'urls'; readonly keys: readonly CacheKey[] }
  | { readonly kind: 'prefix'; readonly prefix: string }
  | { readonly kind: 'all' };

export interface Purge {
  readonly selector: PurgeSelector;
  /** Soft: matching entries are kept, stale from `at` on (Fastly's soft purge). */
  readonly soft: boolean;
  /** When it was taken, ms since the epoch. */
  readonly at: number;
  /** The `webhook-id` of the availability event it stands for, when it stands for one. */
  readonly event?: string;
  /**
   * When it is an invalidation, not a purge (RFC 9111 §4.4 after an unsafe request, or a stored
   * response a validation retired), what caused it: the processes it reaches do not count it.
   */
  readonly invalidation?: InvalidationCause;
}

/** What the purges since a response's fill began say of it. */
export type Verdict = { readonly kind: 'intact' } | { readonly kind: 'purged' } | { readonly kind: 'stale-from'; readonly at: number };

const INTACT: Verdict = { kind: 'intact' };
const PURGED: Verdict = { kind: 'purged' };

/** Purges remembered in each order; fills last seconds, so this covers far more than any fill can span. */
export const REMEMBERED = 4096;

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

/** Folds the purges that match into one verdict: any hard one purges, soft ones stale from the earliest. */
class Judgement {
  #staleFrom: number | undefined;
  #purged = false;

  /** Returns true once the verdict cannot change any more. */
  take(purge: Purge, key: CacheKey, tags: readonly string[]): boolean {
    if (!matchesPurge(purge.selector, key, tags)) return false;
    if (!purge.soft) {
      this.#purged = true;
      return true;
    }
    this.#staleFrom = Math.min(this.#staleFrom ?? purge.at, purge.at);
    return false;
  }

  get verdict(): Verdict {
    if (this.#purged) return PURGED;
    return this.#staleFrom === undefined ? INTACT : { kind: 'stale-from', at: this.#staleFrom };
  }
}

interface Applied {
  readonly generation: number;
  readonly purge: Purge;
}

interface Streamed {
  readonly id: string;
  readonly purge: Purge;
}

export class PurgeLog {
  #generation = 0;
  readonly #applied: Applied[] = [];
  readonly #streamed: Streamed[] = [];
  /** Stream purges at or before this id may be unknown. */
  #floor = FIRST_ID;
  /** Purges this process took for the stream and has not read back yet, by generation. */
  readonly #unread = new Map<number, Purge>();

  /** The generation now: a local fill notes it when it begins. */
  get generation(): number {
    return this.#generation;
  }

  /** The id of the last stream purge read: the mark a fill that begins now carries into the shared tier. */
  get mark(): string {
    return this.#streamed.at(-1)?.id ?? this.#floor;
  }

  /** Records a purge this process applies; `unread` when it is on its way to the stream. Returns its generation. */
  applied(purge: Purge, unread: boolean): number {
    const generation = ++this.#generation;
    this.#applied.push({ generation, purge });
    if (this.#applied.length > REMEMBERED) this.#applied.splice(0, this.#applied.length - REMEMBERED);
    if (unread) {
      this.#unread.set(generation, purge);
      // Unread for this long, they will not be read back (the stream stood in one purge of
      // everything for them): the oldest go, and shared entries are judged by what stands for them.
      if (this.#unread.size > REMEMBERED) this.#unread.delete(this.#unread.keys().next().value ?? generation);
    }
    return generation;
  }

  /** The verdict on a response for `key` whose local fill began at `generation`. */
  sinceGeneration(generation: number, key: CacheKey, tags: readonly string[]): Verdict {
    if (generation === this.#generation) return INTACT;
    const oldest = this.#applied[0];
    if (oldest === undefined || oldest.generation > generation + 1) return PURGED;
    const judgement = new Judgement();
    for (let i = this.#applied.length - 1; i >= 0; i--) {
      const applied = this.#applied[i];
      if (applied === undefined || applied.generation <= generation) break;
      if (judgement.take(applied.purge, key, tags)) break;
    }
    return judgement.verdict;
  }

  /** Starts the stream's order over, knowing nothing at or before `floor`. */
  resetStream(floor: string): void {
    this.#streamed.length = 0;
    this.#floor = floor;
  }

  /**
   * Records a purge read from the stream, in order; older or repeated ids are ignored. `ownUpTo`,
   * for a purge this process sent, is the generation it had here: it and every earlier one of
   * this process's have now been read back (the stream keeps their order).
   */
  streamed(id: string, purge: Purge, ownUpTo?: number): void {
    if (ownUpTo !== undefined) for (const generation of this.#unread.keys()) if (generation <= ownUpTo) this.#unread.delete(generation);
    if (compareIds(id, this.mark) <= 0) return;
    this.#streamed.push({ id, purge });
    if (this.#streamed.length > REMEMBERED) {
      const dropped = this.#streamed.splice(0, this.#streamed.length - REMEMBERED);
      this.#floor = dropped.at(-1)?.id ?? this.#floor;
    }
  }

  /** The verdict on a shared entry for `key` whose fill began at stream position `mark`. */
  sinceMark(mark: string, key: CacheKey, tags: readonly string[]): Verdict {
    if (compareIds(mark, this.#floor) < 0) return PURGED;
    const judgement = new Judgement();
    for (const purge of this.#unread.values()) if (judgement.take(purge, key, tags)) return PURGED;
    for (let i = this.#streamed.length - 1; i >= 0; i--) {
      const streamed = this.#streamed[i];
      if (streamed === undefined || compareIds(streamed.id, mark) <= 0) break;
      if (judgement.take(streamed.purge, key, tags)) break;
    }
    return judgement.verdict;
  }
}
