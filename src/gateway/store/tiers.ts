/**
 * The process's view of its cache tiers: memory first, then the host's disk (when
 * `gateway.cache.disk` is on). A memory miss looks on disk before the fill asks the fleet or the
 * origin; a disk hit is offered to memory, where admission decides whether it stays. A fill is
 * kept in both; the disk's write is committed with the turn's others and the request does not
 * wait for it. The fleet's Redis tier is consulted by the single flight (../fill/flight.ts), since
 * it takes a lock and a wait that the local tiers do not; so is the disk tier once more when the
 * host's workers take turns at a fill (../workers/host-fill.ts).
 */
import type { Purge, PurgeLog } from '../purge/purge-log.ts';
import type { HeaderFields } from '../rules/cache-control.ts';
import type { DiskStore } from './disk-store.ts';
import type { CacheKey, Lookup, ResponseCache } from './response-cache.ts';
import type { Representation, StoredResponse } from './stored-response.ts';
import type { Coding } from '../../shared/encoding/negotiate.ts';
import type { FillStamp, NotKept } from './tier.ts';

/** A lookup across the local tiers; `disk` when the answer came from the disk tier. */
export type TieredLookup = Lookup & { readonly fromDisk?: boolean };

export class Tiers {
  readonly memory: ResponseCache;
  readonly disk: DiskStore | undefined;
  readonly #purges: PurgeLog;

  constructor(memory: ResponseCache, disk: DiskStore | undefined, purges: PurgeLog) {
    this.memory = memory;
    this.disk = disk;
    this.#purges = purges;
  }

  /** Where a fill that begins now stands in the purge log's two orders. */
  stamp(): FillStamp {
    return { generation: this.#purges.generation, mark: this.#purges.mark };
  }

  lookup(key: CacheKey, request: HeaderFields): TieredLookup {
    const found = this.memory.lookup(key, request);
    if (found.kind === 'found' || this.disk === undefined) return found;
    const response = this.disk.get(key, request);
    if (response === undefined) return found;
    this.promote(key, response, this.stamp());
    return { kind: 'found', response, fromDisk: true };
  }

  /**
   * Offers an entry found on disk to memory, where admission decides whether it stays: the bytes
   * read are copied when they are the entry as stored (ResponseCache#adopt), else it is put.
   */
  promote(key: CacheKey, response: StoredResponse, stamp: FillStamp): void {
    const variants = this.disk?.variantsOf(response);
    if (variants === undefined) this.memory.put(key, response, stamp);
    else this.memory.adopt(key, response, variants, stamp);
  }

  /**
   * `response`'s representation in `coding` (ResponseCache#represent). One made for a hit from the
   * disk tier is added to the value there too (DiskStore#add): memory may evict the entry before its
   * next ask, and the disk would otherwise make it again on every hit.
   */
  represent(key: CacheKey, response: StoredResponse, coding: Coding, keep: boolean): Representation {
    const known = response.representation(coding);
    if (known !== undefined) return known;
    const made = this.memory.represent(key, response, coding, keep);
    this.disk?.add(response, made);
    return made;
  }

  /**
   * Keeps a fill in every local tier. Not kept when memory says it is too large or purged; one
   * that memory's admission turned away is kept all the same when the disk tier took it.
   */
  keep(key: CacheKey, response: StoredResponse, stamp: FillStamp): NotKept | undefined {
    const memory = this.memory.put(key, response, stamp);
    if (memory === 'too-large' || memory === 'purged' || this.disk === undefined) return memory;
    void this.disk.put(key, response, stamp);
    return undefined;
  }

  /** RFC 9111 §4.3.4: `updated`, freshened by a 304, takes the place of `stored`. */
  replace(key: CacheKey, stored: StoredResponse, updated: StoredResponse, stamp: FillStamp): void {
    this.memory.replace(key, stored, updated);
    void this.disk?.put(key, updated, stamp);
  }

  /** Applies a purge to every local tier; the entries memory held that it named. */
  purge(purge: Purge): number {
    this.disk?.purge(purge);
    return this.memory.purge(purge);
  }
}
