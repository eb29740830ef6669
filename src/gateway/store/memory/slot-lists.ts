/**
 * A few LRU orders over one set of slots, kept in typed arrays: each slot is in at most one list,
 * linked to its older and newer neighbours, with its size in bytes. windowed-lru.ts keeps its three
 * segments here, so that an entry moving between them changes a few numbers and no key is added to
 * any Map: every key a V8 `Map` adds may make it rebuild its table in the old generation, and what
 * reaches the old generation sets how often full collections run (docs/performance.md, "A disk
 * hit's tail"). The arrays double as slots are taken, 17 B a slot, and released slots are reused.
 */

/** No slot: the end of a list, or an empty one. */
export const NONE = -1;

/** Slots the arrays start with. */
const INITIAL_SLOTS = 64;

export class SlotLists {
  /** Towards the newest, and towards the oldest, of the slot's list. */
  #newer: Int32Array;
  #older: Int32Array;
  /** The list a slot is in; NONE while taken out of every list. */
  #list: Int8Array;
  #sizes: Float64Array;
  /** Released slots, linked through `#older`. */
  #free = NONE;
  /** Slots ever taken: the ones above are untouched. */
  #used = 0;
  readonly #oldest: Int32Array;
  readonly #newest: Int32Array;
  readonly #counts: Float64Array;
  readonly #bytes: Float64Array;

  constructor(lists: number) {
    this.#newer = new Int32Array(INITIAL_SLOTS);
    this.#older = new Int32Array(INITIAL_SLOTS);
    this.#list = new Int8Array(INITIAL_SLOTS);
    this.#sizes = new Float64Array(INITIAL_SLOTS);
    this.#oldest = new Int32Array(lists).fill(NONE);
    this.#newest = new Int32Array(lists).fill(NONE);
    this.#counts = new Float64Array(lists);
    this.#bytes = new Float64Array(lists);
  }

  /** A slot in no list, to be `push`ed into one. */
  take(): number {
    const released = this.#free;
    if (released !== NONE) {
      this.#free = this.#older[released] as number;
      return released;
    }
    if (this.#used === this.#newer.length) this.#grow();
    const slot = this.#used++;
    this.#list[slot] = NONE;
    return slot;
  }

  /** Gives back a slot, taking it out of its list first. */
  release(slot: number): void {
    this.remove(slot);
    this.#older[slot] = this.#free;
    this.#free = slot;
  }

  /** Puts a slot in no list at the newest end of `list`, holding `size` bytes. */
  push(list: number, slot: number, size: number): void {
    this.#list[slot] = list;
    this.#sizes[slot] = size;
    const newest = this.#newest[list] as number;
    this.#older[slot] = newest;
    this.#newer[slot] = NONE;
    if (newest === NONE) this.#oldest[list] = slot;
    else this.#newer[newest] = slot;
    this.#newest[list] = slot;
    this.#counts[list] = (this.#counts[list] as number) + 1;
    this.#bytes[list] = (this.#bytes[list] as number) + size;
  }

  /** Takes a slot out of its list, if it is in one; its size stays readable. */
  remove(slot: number): void {
    const list = this.#list[slot] as number;
    if (list === NONE) return;
    const newer = this.#newer[slot] as number;
    const older = this.#older[slot] as number;
    if (newer === NONE) this.#newest[list] = older;
    else this.#older[newer] = older;
    if (older === NONE) this.#oldest[list] = newer;
    else this.#newer[older] = newer;
    this.#list[slot] = NONE;
    this.#counts[list] = (this.#counts[list] as number) - 1;
    this.#bytes[list] = (this.#bytes[list] as number) - (this.#sizes[slot] as number);
  }

  /** Moves a slot to the newest end of `list` (its own or another), holding `size` bytes (by default what it held). */
  move(slot: number, list: number, size = this.#sizes[slot] as number): void {
    this.remove(slot);
    this.push(list, slot, size);
  }

  /** The list `slot` is in, or NONE. */
  listOf(slot: number): number {
    return this.#list[slot] as number;
  }

  sizeOf(slot: number): number {
    return this.#sizes[slot] as number;
  }

  oldest(list: number): number {
    return this.#oldest[list] as number;
  }

  newest(list: number): number {
    return this.#newest[list] as number;
  }

  /** The slot after `slot` towards the newest end of its list, or NONE. */
  newer(slot: number): number {
    return this.#newer[slot] as number;
  }

  /** The slot after `slot` towards the oldest end of its list, or NONE. */
  older(slot: number): number {
    return this.#older[slot] as number;
  }

  /** Slots ever taken: every slot is below. */
  get used(): number {
    return this.#used;
  }

  /** Slots in `list`. */
  count(list: number): number {
    return this.#counts[list] as number;
  }

  /** Bytes the slots in `list` hold. */
  bytes(list: number): number {
    return this.#bytes[list] as number;
  }

  #grow(): void {
    const length = this.#newer.length * 2;
    const grown = <T extends Int32Array | Int8Array | Float64Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.#newer = grown(this.#newer, new Int32Array(length));
    this.#older = grown(this.#older, new Int32Array(length));
    this.#list = grown(this.#list, new Int8Array(length));
    this.#sizes = grown(this.#sizes, new Float64Array(length));
  }
}
