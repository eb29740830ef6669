/**
 * An lru-cache bounded in entries that takes memory as it fills. Given `max`, lru-cache allocates
 * every slot up front: lists of `max` keys, values, links and free slots, and with a TTL two of
 * timestamps. The bookkeeping caches are bounded at 100,000 against floods but hold a handful in
 * normal use (rate-limit buckets, webhook and purge event ids): a fresh gateway held twelve
 * 800 KB lists, about 10 MB of heap. The verified-token memory may be configured up to 10,000,000,
 * which would have been 160 MB before the first request. Bounded by size instead, at one per
 * entry, lru-cache grows its lists as they fill (docs/performance.md, "Memory").
 */
import { LRUCache } from 'lru-cache';

const ONE = (): number => 1;

export function growingLru<K extends string, V extends object | string | boolean>(maxEntries: number, ttlMs?: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ maxSize: maxEntries, sizeCalculation: ONE, ...(ttlMs === undefined ? {} : { ttl: ttlMs }) });
}
