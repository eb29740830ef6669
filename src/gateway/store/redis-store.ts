/**
 * The shared tier (L2): stored responses in Redis, where every process of the fleet finds what
 * any of them filled. One key per target holds the variant stored last (a target that varies
 * keeps its other variants in each process's own L1 only). An entry expires when it can no longer
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
import type { PurgeLog } from '../purge/purge-log.ts';
import { usefulForMs } from '../rules/reuse.ts';
import { decodeEntry, encodeEntry } from './entry-codec.ts';
import type { CacheKey } from './response-cache.ts';
import { staleFrom, type EntryMaker, type StoredResponse } from './stored-response.ts';

export class RedisStore {
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

  /** The entry for `key` as the purges since its fill leave it; undefined when there is none or Redis fails. */
  async read(key: CacheKey): Promise<StoredResponse | undefined> {
    const bytes = await this.#link.run((c) => c.getBuffer(this.#prefix + key));
    if (bytes === undefined) {
      this.#metrics.read('error');
      return undefined;
    }
    const entry = bytes === null ? undefined : decodeEntry(bytes, this.#maker);
    if (entry === undefined) {
      this.#metrics.read('miss');
      return undefined;
    }
    const verdict = this.#purges.sinceMark(entry.mark, key, entry.response.tags);
    if (verdict.kind === 'purged') {
      this.#metrics.read('purged');
      return undefined;
    }
    this.#metrics.read('hit');
    return verdict.kind === 'stale-from' ? staleFrom(entry.response, verdict.at) : entry.response;
  }

  /** Stores `response` for as long as it can answer; `mark` is the purge mark its fill began at. */
  async write(key: CacheKey, response: StoredResponse, mark: string): Promise<boolean> {
    const ttlMs = Math.ceil(usefulForMs(response, this.#now()));
    if (ttlMs <= 0) return false;
    const done = await this.#link.run((c) => c.set(this.#prefix + key, encodeEntry(response, mark), 'PX', ttlMs));
    this.#metrics.written(done !== undefined);
    return done !== undefined;
  }

  /** Removes the entries for `keys`; false when Redis did not answer. */
  async forget(keys: readonly CacheKey[]): Promise<boolean> {
    if (keys.length === 0) return true;
    // One DEL per key: on a Cluster the keys live on different nodes.
    const done = await Promise.all(keys.map((key) => this.#link.run((c) => c.del(this.#prefix + key))));
    return done.every((d) => d !== undefined);
  }
}
