/**
 * The offline optimum the replay compares with: Bélády's MIN, which knows the whole trace and
 * keeps what is asked again soonest. Entries of one size make it exact (evict the entry whose
 * next request is farthest, and do not store one that is farther still). Sizes that differ make
 * the optimum NP-hard, so this is the usual size-aware approximation: evict the entry with the
 * most byte-time until its next request (distance × size, taken at its last request), which is
 * the entry holding the most room per hit it will bring. Computed by the bench from the trace.
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

/** MIN's hits on `trace` with `boundBytes` of room; entries over `maxEntryBytes` are never stored, as in the gateway. */
export function beladyHits(trace: Trace, boundBytes: number, maxEntryBytes: number): Hits {
  const { requests, sizes } = trace;
  const n = requests.length;
  const next = new Uint32Array(n);
  const last = new Uint32Array(sizes.length).fill(n);
  for (let i = n - 1; i >= 0; i--) {
    const id = requests[i] ?? 0;
    next[i] = last[id] ?? n;
    last[id] = i;
  }
  const held = new Uint8Array(sizes.length);
  const version = new Uint32Array(sizes.length);
  const heap = new LazyMaxHeap(n);
  const top = { key: 0, version: 0 };
  let used = 0;
  let hits = 0;
  let hitBytes = 0;
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
    heap.push(reuse === n ? Infinity : (reuse - i) * size, id, v);
    while (used > boundBytes && heap.length > 0) {
      heap.pop(top);
      if (held[top.key] !== 1 || version[top.key] !== top.version) continue;
      held[top.key] = 0;
      used -= sizes[top.key] ?? 0;
    }
  }
  return { hits, hitBytes };
}
