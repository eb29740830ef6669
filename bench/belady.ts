/**
 * The offline optimum the replay compares with: Bélády's MIN, which knows the whole trace and
 * keeps what is asked again soonest. Entries of one size make it exact: at each eviction, the
 * entry whose next request is farthest goes (the one just asked for included, so an entry asked
 * later than all the others is not kept). Sizes that differ make the optimum NP-hard, so it is
 * approximated by evicting the entry that holds the most byte-time until its next request, in two
 * ways, and the replay reports the better: each is a schedule an offline cache could follow, so
 * each is a lower bound on the optimum.
 *
 * - From the eviction: (next request − now) × size. Entries are kept in one heap per size class,
 *   ordered by when they are next asked for (within a class that is the byte-time order, exactly
 *   when the class is one size), and an eviction takes the class top with the most byte-time.
 *   This is MIN with one size.
 * - From the entry's last request: (next request − last request) × size, fixed when it was asked
 *   for, in one heap. Not MIN even with one size (an entry asked long ago with a short gap goes
 *   before a recent one asked again later: on a looping block trace it read 9 points below the
 *   first), but on the synthetic catalog traces, whose sizes vary, up to 0.6 points above it.
 */
import type { Trace } from './traces.ts';

export interface Hits {
  readonly hits: number;
  readonly hitBytes: number;
}

/** A max-heap of (priority, key id, version) in typed arrays; stale versions are skipped when popped. */
class LazyMaxHeap {
  readonly #priority: Float64Array;
  readonly #key: Uint32Array;
  readonly #version: Uint32Array;
  #length = 0;

  constructor(capacity: number) {
    this.#priority = new Float64Array(capacity);
    this.#key = new Uint32Array(capacity);
    this.#version = new Uint32Array(capacity);
  }

  get length(): number {
    return this.#length;
  }

  push(priority: number, key: number, version: number): void {
    let i = this.#length++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.#priority[parent] ?? 0) >= priority) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#priority[i] = priority;
    this.#key[i] = key;
    this.#version[i] = version;
  }

  /** The top's key and version, through `into`, left in place. */
  peek(into: { key: number; version: number }): void {
    into.key = this.#key[0] ?? 0;
    into.version = this.#version[0] ?? 0;
  }

  /** Removes the top; returns its key and version through `into`. */
  pop(into: { key: number; version: number }): void {
    into.key = this.#key[0] ?? 0;
    into.version = this.#version[0] ?? 0;
    const last = --this.#length;
    const priority = this.#priority[last] ?? 0;
    const key = this.#key[last] ?? 0;
    const version = this.#version[last] ?? 0;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (child + 1 < last && (this.#priority[child + 1] ?? 0) > (this.#priority[child] ?? 0)) child++;
      if ((this.#priority[child] ?? 0) <= priority) break;
      this.#move(child, i);
      i = child;
    }
    this.#priority[i] = priority;
    this.#key[i] = key;
    this.#version[i] = version;
  }

  #move(from: number, to: number): void {
    this.#priority[to] = this.#priority[from] ?? 0;
    this.#key[to] = this.#key[from] ?? 0;
    this.#version[to] = this.#version[from] ?? 0;
  }
}

/** Size classes: one per size while there are at most this many sizes, else this many geometric buckets. */
const MAX_CLASSES = 64;

/** Each key's size class, and how many classes there are. */
function sizeClasses(sizes: Uint32Array): { readonly classOf: Uint16Array; readonly count: number } {
  const distinct = [...new Set(sizes)].sort((a, b) => a - b);
  const classOf = new Uint16Array(sizes.length);
  if (distinct.length <= MAX_CLASSES) {
    const index = new Map(distinct.map((size, i) => [size, i]));
    for (let id = 0; id < sizes.length; id++) classOf[id] = index.get(sizes[id] ?? 0) ?? 0;
    return { classOf, count: distinct.length };
  }
  const least = Math.max(1, distinct[0] ?? 1);
  const span = Math.log((distinct.at(-1) ?? least) / least) || 1;
  for (let id = 0; id < sizes.length; id++)
    classOf[id] = Math.min(MAX_CLASSES - 1, Math.floor((Math.log(Math.max(1, sizes[id] ?? 1) / least) / span) * MAX_CLASSES));
  return { classOf, count: MAX_CLASSES };
}

/** Where an entry's byte-time until its next request is counted from: the eviction, or the entry's last request. */
type CountedFrom = 'eviction' | 'last-request';

/** MIN's hits on `trace` with `boundBytes` of room; entries over `maxEntryBytes` are never stored, as in the gateway. */
export function beladyHits(trace: Trace, boundBytes: number, maxEntryBytes: number): Hits {
  const fromEviction = evictByByteTime(trace, boundBytes, maxEntryBytes, 'eviction');
  const fromLastRequest = evictByByteTime(trace, boundBytes, maxEntryBytes, 'last-request');
  return fromLastRequest.hits > fromEviction.hits ? fromLastRequest : fromEviction;
}

function evictByByteTime(trace: Trace, boundBytes: number, maxEntryBytes: number, from: CountedFrom): Hits {
  const { requests, sizes } = trace;
  const n = requests.length;
  const next = new Uint32Array(n);
  const last = new Uint32Array(sizes.length).fill(n);
  for (let i = n - 1; i >= 0; i--) {
    const id = requests[i] ?? 0;
    next[i] = last[id] ?? n;
    last[id] = i;
  }
  const { classOf, count } = from === 'eviction' ? sizeClasses(sizes) : { classOf: new Uint16Array(sizes.length), count: 1 };
  const pushes = new Uint32Array(count);
  for (let i = 0; i < n; i++) {
    const c = classOf[requests[i] ?? 0] ?? 0;
    pushes[c] = (pushes[c] ?? 0) + 1;
  }
  const heaps = Array.from(pushes, (capacity) => new LazyMaxHeap(capacity));
  const held = new Uint8Array(sizes.length);
  const nextOf = new Uint32Array(sizes.length);
  const version = new Uint32Array(sizes.length);
  const top = { key: 0, version: 0 };
  let used = 0;
  let hits = 0;
  let hitBytes = 0;
  /** The class top that is still held and current, dropping stale ones; -1 for an empty class. */
  const liveTop = (heap: LazyMaxHeap): number => {
    while (heap.length > 0) {
      heap.peek(top);
      if (held[top.key] === 1 && version[top.key] === top.version) return top.key;
      heap.pop(top);
    }
    return -1;
  };
  for (let i = 0; i < n; i++) {
    const id = requests[i] ?? 0;
    const size = sizes[id] ?? 0;
    const reuse = next[i] ?? n;
    if (held[id] === 1) {
      hits++;
      hitBytes += size;
    } else {
      // Never asked again, or never storable: MIN does not store it.
      if (reuse === n || size > maxEntryBytes || size > boundBytes) continue;
      held[id] = 1;
      used += size;
    }
    const v = (version[id] ?? 0) + 1;
    version[id] = v;
    nextOf[id] = reuse;
    heaps[classOf[id] ?? 0]?.push(from === 'eviction' ? reuse : reuse === n ? Infinity : (reuse - i) * size, id, v);
    while (used > boundBytes) {
      let victim = -1;
      let victimHeap: LazyMaxHeap | undefined;
      let most = -1;
      for (const heap of heaps) {
        const key = liveTop(heap);
        if (key === -1) continue;
        const byteTime = ((nextOf[key] ?? n) - i) * (sizes[key] ?? 0);
        if (byteTime > most) {
          most = byteTime;
          victim = key;
          victimHeap = heap;
        }
      }
      if (victim === -1 || victimHeap === undefined) break;
      victimHeap.pop(top);
      held[victim] = 0;
      used -= sizes[victim] ?? 0;
    }
  }
  return { hits, hitBytes };
}
