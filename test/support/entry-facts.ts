/**
 * Reuse facts of an answer stored fresh for `lifetimeMs` from `storedAt`, with no stale windows
 * and nothing forcing revalidation: what tests and benches give `EntryMaker#prepare` or a
 * `StoredResponse` when only freshness matters.
 */
import type { ReuseFacts } from '../../src/gateway/rules/reuse.ts';

export function freshFacts(lifetimeMs: number, storedAt: number): ReuseFacts {
  return { lifetimeMs, initialAgeMs: 0, storedAt, staleWhileRevalidateMs: 0, staleIfErrorMs: 0, mustRevalidate: false, noCache: false };
}
