/**
 * Recency lists of 32-bit key hashes and sizes, in typed arrays: what the window tuner's two
 * miniature caches (shadow-lru.ts, shadow-tinylfu.ts) are built of. They keep no values, since
 * they only answer whether a policy would still hold a sampled key, and their memory is taken from
 * the cache's own bound: 17 B a node and 8 to 16 B of hash table, where an lru-cache of the same
 * keys cost 128 B a key (its Map entry and slots, and a heap number for every hash above V8's
 * small integers).
 *
 * Every node is on one of a few lists, each linked from its most recently used (head) to its
 * least (tail). One table indexes them all: open-addressed with linear probing and backward-shift
 * deletion, so it never fills with tombstones however the sample churns.
 */

export const NONE = -1;
/** Multiplicative hashing's constant (2^32 / φ): the table is indexed by the product's high bits. */
const GOLDEN = 0x9e3779b1;

export class HashLists {
  readonly #hashes: Uint32Array;
  readonly #sizes: Uint32Array;
  readonly #newer: Int32Array;
  readonly #older: Int32Array;
  readonly #list: Uint8Array;
  /** Node index + 1 per slot; 0 is an empty slot. */
  readonly #table: Int32Array;
  readonly #tableShift: number;
  readonly #tableMask: number;
  readonly #heads: Int32Array;
  readonly #tails: Int32Array;
  readonly #listBytes: Float64Array;
  /** Nodes handed out so far; beyond them, the ones freed by removal, linked through `#older`. */
  #used = 0;
  #free = NONE;
  #count = 0;
  #bytes = 0;

  /** `maxKeys`: the most keys held at once; `lists`: how many lists they are kept on. */
  constructor(maxKeys: number, lists: number) {
    const nodes = Math.max(1, Math.ceil(maxKeys));
    this.#hashes = new Uint32Array(nodes);
    this.#sizes = new Uint32Array(nodes);
    this.#newer = new Int32Array(nodes);
    this.#older = new Int32Array(nodes);
    this.#list = new Uint8Array(nodes);
    // At most half full, so that a probe finds an empty slot within a few steps.
    const bits = Math.max(1, Math.ceil(Math.log2(nodes * 2)));
    this.#table = new Int32Array(2 ** bits);
    this.#tableShift = 32 - bits;
    this.#tableMask = this.#table.length - 1;
    this.#heads = new Int32Array(lists).fill(NONE);
    this.#tails = new Int32Array(lists).fill(NONE);
    this.#listBytes = new Float64Array(lists);
  }

  /** What its arrays hold in memory. */
  get bytes(): number {
    return this.#hashes.byteLength + this.#sizes.byteLength + this.#newer.byteLength + this.#older.byteLength + this.#list.byteLength + this.#table.byteLength;
  }

  /** Keys held, on every list. */
  get count(): number {
    return this.#count;
  }

  /** Sum of the sizes held, on every list. */
  get totalBytes(): number {
    return this.#bytes;
  }

  /** Whether every node is in use: a key can be added only after one is removed. */
  get full(): boolean {
    return this.#free === NONE && this.#used === this.#hashes.length;
  }

  listBytes(list: number): number {
    return this.#listBytes[list] ?? 0;
  }

  /** The least recently used node of `list`, or NONE. */
  oldest(list: number): number {
    return this.#tails[list] ?? NONE;
  }

  /** The node used just after `node` on its list, or NONE. */
  newer(node: number): number {
    return this.#newer[node] ?? NONE;
  }

  hashOf(node: number): number {
    return this.#hashes[node] ?? 0;
  }

  sizeOf(node: number): number {
    return this.#sizes[node] ?? 0;
  }

  listOf(node: number): number {
    return this.#list[node] ?? 0;
  }

  /** The node holding `h`, or NONE. */
  find(h: number): number {
    return (this.#table[this.#slot(h)] ?? 0) - 1;
  }

  /** Adds `h`, not held, as the newest of `list`; the caller removes a node first when `full`. */
  add(h: number, size: number, list: number): number {
    const node = this.#free === NONE ? this.#used++ : this.#free;
    if (node === this.#free) this.#free = this.#older[node] ?? NONE;
    this.#hashes[node] = h;
    this.#sizes[node] = size;
    this.#table[this.#slot(h)] = node + 1;
    this.#count++;
    this.#bytes += size;
    this.#link(node, list);
    return node;
  }

  /** Makes `node` the newest of `list` (its own, or another). */
  moveTo(node: number, list: number): void {
    this.#unlink(node);
    this.#link(node, list);
  }

  /** Puts every node of `from` behind the oldest of `to`, in their order: they become its oldest. */
  appendOldest(from: number, to: number): void {
    const head = this.#heads[from] ?? NONE;
    if (head === NONE || from === to) return;
    const tail = this.#tails[from] ?? NONE;
    for (let node = head; node !== NONE; node = this.#older[node] ?? NONE) this.#list[node] = to;
    const oldest = this.#tails[to] ?? NONE;
    if (oldest === NONE) this.#heads[to] = head;
    else {
      this.#older[oldest] = head;
      this.#newer[head] = oldest;
    }
    this.#tails[to] = tail;
    this.#heads[from] = NONE;
    this.#tails[from] = NONE;
    this.#listBytes[to] = (this.#listBytes[to] ?? 0) + (this.#listBytes[from] ?? 0);
    this.#listBytes[from] = 0;
  }

  /** Gives `node` a new size, where it stands. */
  resize(node: number, size: number): void {
    const change = size - (this.#sizes[node] ?? 0);
    this.#sizes[node] = size;
    this.#bytes += change;
    const list = this.listOf(node);
    this.#listBytes[list] = (this.#listBytes[list] ?? 0) + change;
  }

  remove(node: number): void {
    this.#unlink(node);
    this.#unindex(this.#slot(this.#hashes[node] ?? 0));
    this.#bytes -= this.#sizes[node] ?? 0;
    this.#count--;
    this.#older[node] = this.#free;
    this.#free = node;
  }

  #home(h: number): number {
    return Math.imul(h, GOLDEN) >>> this.#tableShift;
  }

  /** The slot holding `h`'s node, or the empty slot where it would go. */
  #slot(h: number): number {
    let slot = this.#home(h);
    for (;;) {
      const entry = this.#table[slot] ?? 0;
      if (entry === 0 || this.#hashes[entry - 1] === h) return slot;
      slot = (slot + 1) & this.#tableMask;
    }
  }

  /**
   * Empties `slot` and moves back each later entry of its run that may not sit past the hole
   * (its home is not cyclically within (hole, its slot]), so that every key stays reachable from
   * its home without tombstones.
   */
  #unindex(slot: number): void {
    let hole = slot;
    let next = slot;
    for (;;) {
      next = (next + 1) & this.#tableMask;
      const entry = this.#table[next] ?? 0;
      if (entry === 0) break;
      const home = this.#home(this.#hashes[entry - 1] ?? 0);
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      this.#table[hole] = entry;
      hole = next;
    }
    this.#table[hole] = 0;
  }

  #unlink(node: number): void {
    const list = this.listOf(node);
    const newer = this.#newer[node] ?? NONE;
    const older = this.#older[node] ?? NONE;
    if (newer === NONE) this.#heads[list] = older;
    else this.#older[newer] = older;
    if (older === NONE) this.#tails[list] = newer;
    else this.#newer[older] = newer;
    this.#listBytes[list] = (this.#listBytes[list] ?? 0) - (this.#sizes[node] ?? 0);
  }

  #link(node: number, list: number): void {
    const head = this.#heads[list] ?? NONE;
    this.#list[node] = list;
    this.#newer[node] = NONE;
    this.#older[node] = head;
    if (head === NONE) this.#tails[list] = node;
    else this.#newer[head] = node;
    this.#heads[list] = node;
    this.#listBytes[list] = (this.#listBytes[list] ?? 0) + (this.#sizes[node] ?? 0);
  }
}
