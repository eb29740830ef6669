/**
 * The window tuner's shadow: an LRU of 32-bit key hashes and sizes under a byte bound, held in
 * typed arrays. It only ever answers whether plain LRU would still hold a sampled key, so it
 * keeps no values, and its memory is taken from the cache's own bound: an lru-cache of the same
 * keys cost 128 B a key (its Map entry and slots, and a heap number for every hash above V8's
 * small integers), this one 16 B a node and 8 to 16 B of hash table, with room for twice the keys
 * the tuner expects (docs/performance.md, "Hit ratio").
 *
 * Nodes are linked from the most recently used (`#head`) to the least (`#tail`); the table is
 * open-addressed with linear probing and backward-shift deletion, so it never fills with
 * tombstones however the sample churns.
 */

const NONE = -1;
/** Multiplicative hashing's constant (2^32 / φ): the table is indexed by the product's high bits. */
const GOLDEN = 0x9e3779b1;

export class ShadowLru {
  readonly #maxBytes: number;
  readonly #hashes: Uint32Array;
  readonly #sizes: Uint32Array;
  readonly #newer: Int32Array;
  readonly #older: Int32Array;
  /** Node index + 1 per slot; 0 is an empty slot. */
  readonly #table: Int32Array;
  readonly #tableShift: number;
  readonly #tableMask: number;
  #head = NONE;
  #tail = NONE;
  /** Nodes handed out so far; beyond them, the ones freed by deletion, linked through `#older`. */
  #used = 0;
  #free = NONE;
  #count = 0;
  #bytes = 0;

  /** `maxBytes`: the bound on the sizes held; `maxKeys`: the most keys held, whatever their sizes. */
  constructor(maxBytes: number, maxKeys: number) {
    this.#maxBytes = maxBytes;
    const nodes = Math.max(1, Math.ceil(maxKeys));
    this.#hashes = new Uint32Array(nodes);
    this.#sizes = new Uint32Array(nodes);
    this.#newer = new Int32Array(nodes);
    this.#older = new Int32Array(nodes);
    // At most half full, so that a probe finds an empty slot within a few steps.
    const bits = Math.max(1, Math.ceil(Math.log2(nodes * 2)));
    this.#table = new Int32Array(2 ** bits);
    this.#tableShift = 32 - bits;
    this.#tableMask = this.#table.length - 1;
  }

  /** What its arrays hold in memory. */
  get bytes(): number {
    return this.#hashes.byteLength + this.#sizes.byteLength + this.#newer.byteLength + this.#older.byteLength + this.#table.byteLength;
  }

  /** Keys held. */
  get size(): number {
    return this.#count;
  }

  /** Sum of the sizes held. */
  get calculatedSize(): number {
    return this.#bytes;
  }

  /** Whether `h` is held; a held key becomes the most recently used. */
  get(h: number): boolean {
    const node = this.#find(h);
    if (node === NONE) return false;
    this.#unlink(node);
    this.#linkNewest(node);
    return true;
  }

  /**
   * Holds `h` with `size` as the most recently used, pushing out the least recently used while
   * the bound is passed. A size larger than the whole bound is not held (nor is an older `h`), as
   * lru-cache does.
   */
  set(h: number, size: number): void {
    let node = this.#find(h);
    if (size > this.#maxBytes) {
      if (node !== NONE) this.#remove(node);
      return;
    }
    if (node === NONE) {
      if (this.#free === NONE && this.#used === this.#hashes.length) this.#remove(this.#tail);
      node = this.#allocate();
      this.#hashes[node] = h;
      this.#sizes[node] = 0;
      this.#insert(node);
      this.#count++;
    } else {
      this.#unlink(node);
    }
    this.#bytes += size - (this.#sizes[node] ?? 0);
    this.#sizes[node] = size;
    this.#linkNewest(node);
    while (this.#bytes > this.#maxBytes) this.#remove(this.#tail);
  }

  /**
   * Holds `h`, not held, at the mean size of the keys held: for a key plain LRU would have fetched
   * and kept, whose size the caller does not know without a lookup that allocates. Nothing while
   * nothing is held.
   */
  learn(h: number): void {
    if (this.#count > 0) this.set(h, Math.round(this.#bytes / this.#count));
  }

  /** Forgets `h`; true when it was held. */
  delete(h: number): boolean {
    const node = this.#find(h);
    if (node === NONE) return false;
    this.#remove(node);
    return true;
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

  #find(h: number): number {
    return (this.#table[this.#slot(h)] ?? 0) - 1;
  }

  #insert(node: number): void {
    this.#table[this.#slot(this.#hashes[node] ?? 0)] = node + 1;
  }

  #allocate(): number {
    if (this.#free === NONE) return this.#used++;
    const node = this.#free;
    this.#free = this.#older[node] ?? NONE;
    return node;
  }

  #remove(node: number): void {
    this.#unlink(node);
    this.#unindex(this.#slot(this.#hashes[node] ?? 0));
    this.#bytes -= this.#sizes[node] ?? 0;
    this.#count--;
    this.#older[node] = this.#free;
    this.#free = node;
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
    const newer = this.#newer[node] ?? NONE;
    const older = this.#older[node] ?? NONE;
    if (newer === NONE) this.#head = older;
    else this.#older[newer] = older;
    if (older === NONE) this.#tail = newer;
    else this.#newer[older] = newer;
  }

  #linkNewest(node: number): void {
    this.#newer[node] = NONE;
    this.#older[node] = this.#head;
    if (this.#head === NONE) this.#tail = node;
    else this.#newer[this.#head] = node;
    this.#head = node;
  }
}
