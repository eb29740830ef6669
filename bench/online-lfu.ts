/**
 * What learning popularity from the requests can reach: LFU with exact counts of every request
 * since the start, nothing forgotten, keeping the entries with the most requests per byte seen so
 * far. A key asked for and not held is admitted when it has been asked more often than the least
 * dense entries it would push out together (ties refused, as the gateway's admission does). No
 * sketch, no window, no memory of its own counted against the bound. On a trace of independent
 * requests (the Zipf traces) it is close to the best an online policy can do, and what is left
 * between it and perfect LFU (static-optimum.ts) is the price of learning, which the gateway's
 * policy pays too; the distance between it and the gateway's policy is what the sketch, the
 * window and the segmented main space cost. On traces whose popularity changes it forgets
 * nothing, and is no bound there.
 */
import type { Hits } from './belady.ts';
import type { Trace } from './traces.ts';

/**
 * Entries by requests per byte, least dense first: a binary heap whose stale items (an entry asked
 * again since it was pushed, or no longer held) are dropped when they reach the top.
 */
class DensityHeap {
  #density: number[] = [];
  #id: number[] = [];
  #count: number[] = [];

  get length(): number {
    return this.#id.length;
  }

  push(density: number, id: number, count: number): void {
    this.#density.push(density);
    this.#id.push(id);
    this.#count.push(count);
    let i = this.#id.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.#before(parent, i)) break;
      this.#swap(i, parent);
      i = parent;
    }
  }

  /** The top item: its id, and the count it was pushed with. */
  topId(): number {
    return this.#id[0] ?? -1;
  }

  topCount(): number {
    return this.#count[0] ?? -1;
  }

  topDensity(): number {
    return this.#density[0] ?? 0;
  }

  pop(): void {
    const last = this.#id.length - 1;
    this.#swap(0, last);
    this.#density.pop();
    this.#id.pop();
    this.#count.pop();
    for (let i = 0; ;) {
      const left = 2 * i + 1;
      let least = i;
      if (left < this.#id.length && !this.#before(least, left)) least = left;
      if (left + 1 < this.#id.length && !this.#before(least, left + 1)) least = left + 1;
      if (least === i) return;
      this.#swap(i, least);
      i = least;
    }
  }

  /** Keeps only the items `current` accepts, when stale ones outnumber them. */
  compact(current: (id: number, count: number) => boolean): void {
    const items = this.#id.map((id, i) => ({ density: this.#density[i] ?? 0, id, count: this.#count[i] ?? 0 })).filter((item) => current(item.id, item.count));
    this.#density = [];
    this.#id = [];
    this.#count = [];
    for (const item of items) this.push(item.density, item.id, item.count);
  }

  /** Less dense first; of two alike, the lower id, so that a replay is the same on every run. */
  #before(a: number, b: number): boolean {
    const da = this.#density[a] ?? 0;
    const db = this.#density[b] ?? 0;
    return da < db || (da === db && (this.#id[a] ?? 0) <= (this.#id[b] ?? 0));
  }

  #swap(a: number, b: number): void {
    [this.#density[a], this.#density[b]] = [this.#density[b] ?? 0, this.#density[a] ?? 0];
    [this.#id[a], this.#id[b]] = [this.#id[b] ?? 0, this.#id[a] ?? 0];
    [this.#count[a], this.#count[b]] = [this.#count[b] ?? 0, this.#count[a] ?? 0];
  }
}

export function onlineLfuHits(trace: Trace, boundBytes: number, maxEntryBytes: number): Hits {
  const { requests, sizes } = trace;
  const counts = new Uint32Array(trace.keys.length);
  const held = new Uint8Array(trace.keys.length);
  const heap = new DensityHeap();
  const current = (id: number, count: number): boolean => held[id] === 1 && counts[id] === count;
  let heldEntries = 0;
  let used = 0;
  let hits = 0;
  let hitBytes = 0;
  const popped: { density: number; id: number; count: number }[] = [];
  for (const id of requests) {
    const count = (counts[id] = (counts[id] ?? 0) + 1);
    const size = sizes[id] ?? 0;
    const density = count / Math.max(1, size);
    if (held[id] === 1) {
      hits++;
      hitBytes += size;
      heap.push(density, id, count);
    } else if (size <= boundBytes && size <= maxEntryBytes) {
      // The least dense first, until the newcomer fits or they were asked as often as it, together.
      popped.length = 0;
      let freed = 0;
      let cost = 0;
      while (used - freed + size > boundBytes && cost < count) {
        while (heap.length > 0 && !current(heap.topId(), heap.topCount())) heap.pop();
        if (heap.length === 0) break;
        const victim = heap.topId();
        popped.push({ density: heap.topDensity(), id: victim, count: heap.topCount() });
        heap.pop();
        cost += counts[victim] ?? 0;
        freed += sizes[victim] ?? 0;
      }
      if (cost < count && used - freed + size <= boundBytes) {
        for (const victim of popped) held[victim.id] = 0;
        heldEntries += 1 - popped.length;
        used += size - freed;
        held[id] = 1;
        heap.push(density, id, count);
      } else {
        for (const victim of popped) heap.push(victim.density, victim.id, victim.count);
      }
    }
    if (heap.length > 4 * heldEntries + 1024) heap.compact(current);
  }
  return { hits, hitBytes };
}
