/**
 * Doubly linked lists of a trace's key ids, for the reference policies' simulators (arc.ts,
 * s3-fifo.ts): every key is in at most one of a few lists at a time, so one pair of link arrays
 * serves them all, each list keeps its head (the newest), its tail (the oldest) and the sum of
 * its keys' sizes, and nothing is allocated per request.
 */

const NONE = -1;

export class IdLists {
  readonly #sizes: Uint32Array;
  /** The list each key is in, NONE for none. */
  readonly #listOf: Int8Array;
  readonly #newer: Int32Array;
  readonly #older: Int32Array;
  readonly #head: Int32Array;
  readonly #tail: Int32Array;
  readonly #bytes: Float64Array;
  readonly #count: Uint32Array;

  /** `sizes`: each key's bytes, by id; `lists`: how many lists. */
  constructor(sizes: Uint32Array, lists: number) {
    this.#sizes = sizes;
    this.#listOf = new Int8Array(sizes.length).fill(NONE);
    this.#newer = new Int32Array(sizes.length);
    this.#older = new Int32Array(sizes.length);
    this.#head = new Int32Array(lists).fill(NONE);
    this.#tail = new Int32Array(lists).fill(NONE);
    this.#bytes = new Float64Array(lists);
    this.#count = new Uint32Array(lists);
  }

  /** The list `id` is in, or -1. */
  listOf(id: number): number {
    return this.#listOf[id] ?? NONE;
  }

  /** The sum of the sizes of the keys in `list`. */
  bytes(list: number): number {
    return this.#bytes[list] ?? 0;
  }

  /** How many keys are in `list`. */
  count(list: number): number {
    return this.#count[list] ?? 0;
  }

  /** The oldest key of `list`, or -1 when it is empty. */
  oldest(list: number): number {
    return this.#tail[list] ?? NONE;
  }

  /** Puts `id` at the head of `list`, taking it out of the list it was in. */
  pushNewest(list: number, id: number): void {
    this.remove(id);
    const head = this.#head[list] ?? NONE;
    this.#newer[id] = NONE;
    this.#older[id] = head;
    if (head === NONE) this.#tail[list] = id;
    else this.#newer[head] = id;
    this.#head[list] = id;
    this.#listOf[id] = list;
    this.#bytes[list] = (this.#bytes[list] ?? 0) + (this.#sizes[id] ?? 0);
    this.#count[list] = (this.#count[list] ?? 0) + 1;
  }

  /** Takes `id` out of its list, if it is in one. */
  remove(id: number): void {
    const list = this.#listOf[id] ?? NONE;
    if (list === NONE) return;
    const newer = this.#newer[id] ?? NONE;
    const older = this.#older[id] ?? NONE;
    if (newer === NONE) this.#head[list] = older;
    else this.#older[newer] = older;
    if (older === NONE) this.#tail[list] = newer;
    else this.#newer[older] = newer;
    this.#listOf[id] = NONE;
    this.#bytes[list] = (this.#bytes[list] ?? 0) - (this.#sizes[id] ?? 0);
    this.#count[list] = (this.#count[list] ?? 0) - 1;
  }
}
