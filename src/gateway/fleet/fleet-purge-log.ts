/**
 * The purges every process has published, in stream order, as this process has read them: what
 * lets a shared entry be judged without a round trip per tag. An entry carries the mark (stream
 * id) of the last purge its filler had applied when the fill began; a purge after that mark that
 * matches the entry's key or tags means the entry may hold what the purge removed. This works the
 * same on one Redis and on a Cluster, since no purge has to find entries on other nodes.
 *
 * Purges older than the log remembers are unknown: an entry marked before them is treated as
 * purged (one more origin call), never served.
 */
import { matchesPurge, type PurgeSelector } from '../store/purge-log.ts';
import type { CacheKey } from '../store/response-cache.ts';
import { compareIds, FIRST_ID } from './stream-id.ts';

export interface FleetPurge {
  readonly id: string;
  readonly selector: PurgeSelector;
  readonly soft: boolean;
  /** When it was made (ms since the epoch): a soft purge makes entries stale from then. */
  readonly at: number;
}

/** What the purges say of one shared entry. */
export type Verdict = { readonly kind: 'intact' } | { readonly kind: 'purged' } | { readonly kind: 'stale-from'; readonly at: number };

const INTACT: Verdict = { kind: 'intact' };
const PURGED: Verdict = { kind: 'purged' };

export class FleetPurgeLog {
  readonly #records: FleetPurge[] = [];
  readonly #limit: number;
  /** Purges at or before this id may be unknown. */
  #floor = FIRST_ID;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** The id of the last purge recorded: a fill's mark. */
  get mark(): string {
    return this.#records.at(-1)?.id ?? this.#floor;
  }

  /** Starts over knowing nothing at or before `floor`. */
  reset(floor: string): void {
    this.#records.length = 0;
    this.#floor = floor;
  }

  /** Records a purge read from the stream, in order; older or repeated ids are ignored. */
  add(purge: FleetPurge): void {
    if (compareIds(purge.id, this.mark) <= 0) return;
    this.#records.push(purge);
    if (this.#records.length > this.#limit) {
      const dropped = this.#records.splice(0, this.#records.length - this.#limit);
      this.#floor = dropped.at(-1)?.id ?? this.#floor;
    }
  }

  verdict(mark: string, key: CacheKey, tags: readonly string[]): Verdict {
    if (compareIds(mark, this.#floor) < 0) return PURGED;
    let staleFrom: number | undefined;
    for (let i = this.#records.length - 1; i >= 0; i--) {
      const purge = this.#records[i];
      if (purge === undefined || compareIds(purge.id, mark) <= 0) break;
      if (!matchesPurge(purge.selector, key, tags)) continue;
      if (!purge.soft) return PURGED;
      staleFrom = Math.min(staleFrom ?? purge.at, purge.at);
    }
    return staleFrom === undefined ? INTACT : { kind: 'stale-from', at: staleFrom };
  }
}
