/**
 * The best a policy that knows only popularity can do: keep, from the start, the entries with the
 * most requests per byte over the whole trace until the bound is full (perfect LFU, size-aware
 * by the usual greedy knapsack), each paying one miss when first asked. On a trace of
 * independent requests (the Zipf traces) no online policy can beat it on average, while
 * Bélády's MIN also knows *when* each request comes and so sits above every online policy; the
 * distance between the two is what no admission or eviction rule can close. A trace whose
 * popularity changes (the shift) is not independent, and there a policy that follows the change
 * can beat this one.
 */
import type { Hits } from './belady.ts';
import type { Trace } from './traces.ts';

export function staticOptimumHits(trace: Trace, boundBytes: number, maxEntryBytes: number): Hits {
  const counts = new Uint32Array(trace.keys.length);
  for (const id of trace.requests) counts[id] = (counts[id] ?? 0) + 1;
  const ids: number[] = [];
  for (let id = 0; id < counts.length; id++) if ((counts[id] ?? 0) > 1 && (trace.sizes[id] ?? 0) <= maxEntryBytes) ids.push(id);
  const density = (id: number): number => (counts[id] ?? 0) / Math.max(1, trace.sizes[id] ?? 0);
  ids.sort((a, b) => density(b) - density(a));
  let used = 0;
  let hits = 0;
  let hitBytes = 0;
  for (const id of ids) {
    const size = trace.sizes[id] ?? 0;
    if (used + size > boundBytes) continue;
    used += size;
    const repeats = (counts[id] ?? 0) - 1;
    hits += repeats;
    hitBytes += repeats * size;
  }
  return { hits, hitBytes };
}
