/**
 * An lru-cache bounded in entries that takes memory as it fills. Given `max`, lru-cache allocates
 * every slot up front: six lists of `max` (keys, values, links, free stack, and with a TTL two
 * of timestamps). For the gateway's bookkeeping caches, bounded at 100,000 against floods but
 * holding a handful in normal use (rate-limit buckets, event ids), that was 17 MB of a fresh
 * process, more than the V8 heap the rest of it used. Bounded by size instead, at one per entry,
 * lru-cache grows its lists as they fill (docs/performance.md, "Memory").
 */
import { LRUCache } from 'lru-cache';

const ONE = (): number => 1;

export function growingLru<K extends string, V extends object | string | boolean>(maxEntries: number, ttlMs?: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ maxSize: maxEntries, sizeCalculation: ONE, ...(ttlMs === undefined ? {} : { ttl: ttlMs }) });
}
