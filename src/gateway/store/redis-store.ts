/**
 * The fleet's tier: stored responses in Redis, where every process of the fleet finds what any of
 * them filled. One key per target holds the variant stored last (a target that varies keeps its
 * other variants in each process's memory tier only). An entry expires when it can no longer
 * answer without the origin (`usefulForMs`); beyond that Redis's own `maxmemory` with a
 * `volatile-lru` policy bounds the tier. Every entry is judged on the way out against the purges
 * made since its fill began (../purge/purge-log.ts), so a purge never has to find it; a purge by
 * URL also removes the entries it names at once, so no process that has not read it yet finds them
 * (a validation that retires a stored response, RFC 9111 §4.3.3, is such a purge: ../fill/flight.ts).
 *
 * Reads and writes go through the RedisLink: bounded in time, and `undefined` rather than an
 * error when Redis is slow or gone.
 */
import type { FleetMetrics } from '../fleet/fleet-metrics.ts';
import type { RedisLink } from '../fleet/redis-link.ts';
import type { Purge, PurgeLog } from '../purge/purge-log.ts';
import type { HeaderFields } from '../rules/cache-control.ts';
import { usefulForMs } from '../rules/reuse.ts';
import { decodeEntry, encodeEntry } from './record/entry-codec.ts';
import type { CacheKey } from './memory/response-cache.ts';
import type { EntryMaker, StoredResponse } from './stored-response.ts';
import { judged, selects, type CacheTier, type FillStamp, type NotKept, type TierSize } from './tier.ts';

/** Keys a size count reads per SCAN: the count walks the keyspace, so it is for operators and tests, not requests. */
const SCAN_COUNT = 1000;

export class RedisStore implements CacheTier {
  readonly name = 'redis';
  readonly #link: RedisLink;
  readonly #prefix: string;
  readonly #purges: PurgeLog;
  readonly #metrics: FleetMetrics;
  readonly #now: () => number;
  readonly #maker: EntryMaker;

  constructor(link: RedisLink, prefix: string, purges: PurgeLog, metrics: FleetMetrics, now: () => number, maker: EntryMaker) {
    this.#maker = maker;
    this.#link = link;
    this.#prefix = `${prefix}entry:`;
    this.#purges = purges;
    this.#metrics = metrics;
    this.#now = now;
  }

  /** The entry for `key` as the purges since its fill leave it; undefined when there is none, `request` selects another, or Redis fails. */
  async get(key: CacheKey, request: HeaderFields): Promise<StoredResponse | undefined> {
    const bytes = await this.#link.run((c) => c.getBuffer(this.#prefix + key));
    if (bytes === undefined) {
      this.#metrics.read('error');
      return undefined;
    }
    const entry = bytes === null ? undefined : decodeEntry(bytes, this.#maker);
    if (entry === undefined || !selects(entry.response, request)) {
      this.#metrics.read('miss');
      return undefined;
    }
    const response = judged(this.#purges.sinceMark(entry.mark, key, entry.response.tags), entry.response);
    this.#metrics.read(response === undefined ? 'purged' : 'hit');
    return response;
  }

  /** Stores `response` for as long as it can answer, with the purge mark its fill began at. */
  async put(key: CacheKey, response: StoredResponse, stamp: FillStamp): Promise<NotKept | undefined> {
    const ttlMs = Math.ceil(usefulForMs(response, this.#now()));
    if (ttlMs <= 0) return 'purged';
    const done = await this.#link.run((c) => c.set(this.#prefix + key, encodeEntry(response, stamp.mark), 'PX', ttlMs));
    this.#metrics.written(done !== undefined);
    return done === undefined ? 'failed' : undefined;
  }

  /** Removes the entries for `keys`; one DEL per key, since on a Cluster they live on different nodes. */
  async delete(keys: readonly CacheKey[]): Promise<void> {
    await this.#remove(keys);
  }

  /**
   * A purge by URL removes its entries at once; any other is left to the judgement on `get`,
   * which every process makes by the purge stream, so no purge has to find a shared entry.
   */
  async purge(purge: Purge): Promise<number> {
    if (purge.selector.kind !== 'urls' || purge.soft) return 0;
    return this.#remove(purge.selector.keys);
  }

  /** The entries at `keys` removed, and how many there were. */
  async #remove(keys: readonly CacheKey[]): Promise<number> {
    const removed = await Promise.all(keys.map((key) => this.#link.run((c) => c.del(this.#prefix + key))));
    return removed.reduce<number>((sum, n) => sum + (n ?? 0), 0);
  }

  async size(): Promise<TierSize> {
    let cursor = '0';
    let entries = 0;
    let bytes = 0;
    do {
      const page = await this.#link.run((c) => c.scan(cursor, 'MATCH', `${this.#prefix}*`, 'COUNT', SCAN_COUNT));
      if (page === undefined) break;
      const [next, keys] = page;
      cursor = next;
      entries += keys.length;
      const sizes = await Promise.all(keys.map((k) => this.#link.run((c) => c.strlen(k))));
      for (const n of sizes) bytes += n ?? 0;
    } while (cursor !== '0');
    return { entries, bytes };
  }
}
