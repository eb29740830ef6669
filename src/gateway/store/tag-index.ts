/**
 * The tag index (Fastly's surrogate keys, Varnish's xkey): for each tag an origin put on its
 * responses (`Surrogate-Key: bk_1 bk_2 avail_any`), the keys whose stored responses carry it, so
 * a purge by tag touches exactly those entries instead of walking the cache.
 *
 * A search answer carries one tag per book it shows, 20 to 100 of them, so the index holds tens of
 * postings per entry: as JavaScript objects (a Set per tag, a string per tag and entry) they cost
 * more than the compressed body they point at. Postings are therefore numbers in typed arrays
 * outside V8's heap, 13.25 B each: a posting is a node in two linked lists, the tag's (through a
 * hash bucket) and the key's (so a key's postings go when it does). A tag is known here only by
 * a 32-bit hash of its text, so two tags may share one; `keys` then names a key that carries the
 * other, and the caller, which holds the entries' tag text, tells them apart.
 */
import type { CacheKey } from './memory/response-cache.ts';

/** Shared by every response without tags: a list of its own would cost each entry 32 B or more. */
export const NO_TAGS: readonly string[] = Object.freeze([]);

/** Tags as the origin sent them: space-separated tokens, each kept once. */
export function parseTags(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return NO_TAGS;
  const text = typeof value === 'string' ? value : value.join(' ');
  const tags = text.split(' ').filter((t) => t !== '');
  if (tags.length === 0) return NO_TAGS;
  return tags.length === 1 ? tags : [...new Set(tags)];
}

/** Whether `tag` is one of the space-separated tags of `text` (as StoredResponse keeps them). */
export function carriesTag(text: string, tag: string): boolean {
  for (let at = text.indexOf(tag); at !== -1; at = text.indexOf(tag, at + 1)) {
    const end = at + tag.length;
    if ((at === 0 || text.charCodeAt(at - 1) === SPACE) && (end === text.length || text.charCodeAt(end) === SPACE)) return true;
  }
  return false;
}

const SPACE = 0x20;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a: tags are short ASCII tokens, and the hash runs only when entries are stored or purged. */
export function tagHash(tag: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < tag.length; i++) hash = Math.imul(hash ^ tag.charCodeAt(i), FNV_PRIME);
  return hash;
}

/** The tags of `text`, space-separated as StoredResponse#tagText keeps them, counted without a string made for each. */
export function tagCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) !== SPACE && (i === 0 || text.charCodeAt(i - 1) === SPACE)) count++;
  return count;
}

/**
 * A node's fields: the tag's hash, the next in its bucket's list, and the next of its key's, or,
 * in the key's last, minus the key's slot: a purge, which is rare, walks a key's few nodes to find
 * the key, so that no node holds it.
 */
const HASH = 0;
const NEXT = 1;
const NEXT_OF_KEY = 2;
const STRIDE = 3;
/** No node, no key: node 0 and key slot 0 are never used, so a new array means empty without being written. */
const NONE = 0;
/**
 * NEXT_OF_KEY of a node no key holds: a removed node stays in its bucket's list, which is singly
 * linked (4 B a posting less), until the lists are rebuilt without it.
 */
const DEAD = 0;

/**
 * Postings per bucket head at most: a bucket lists the postings of every tag that hashes to it,
 * and there are fewer tags than postings (a book is in many searches), so a purge's walk stays
 * short with a head per eight postings (4 B each: 0.5 B a posting, or less after the table doubles).
 */
const POSTINGS_PER_BUCKET = 8;

/**
 * Removed nodes allowed, as a fraction of the postings: they stay listed in their buckets until
 * the lists are rebuilt without them. A rebuild starts when they pass REBUILT_AT of the postings
 * and scans the nodes in order, SCANNED_PER_CHANGE for each posting added or removed, so that no
 * request waits for all of it (at once, it held the event loop 37 ms at 4.2 million postings:
 * 140,000 entries of 30 tags), and it ends before the removed nodes reach this.
 */
const DEAD_ALLOWED = 1 / 16;
const REBUILT_AT = 1 / 32;
const SCANNED_PER_CHANGE = 40;
/** Fewer removed nodes than this never start a rebuild, so that a small index is not rebuilt for each. */
const LEAST_REBUILT = 1024;

/**
 * What one posting costs: its node (STRIDE × 4 B) with its share of the removed nodes allowed,
 * and its share of the bucket heads. The typed arrays double, but a new one is zeroed memory that
 * is resident only once written (NONE is 0 so that it need not be filled), and nodes are reused
 * from a free list before the array grows, so what is resident is the nodes ever held at once.
 */
export const POSTING_BYTES = STRIDE * 4 * (1 + DEAD_ALLOWED) + 4 / POSTINGS_PER_BUCKET;

const FIRST_CAPACITY = 1024;

function grown(array: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  if (length <= array.length) return array;
  let capacity = array.length;
  while (capacity < length) capacity *= 2;
  const next = new Int32Array(capacity);
  next.set(array);
  return next;
}

export class TagIndex {
  #nodes = new Int32Array(FIRST_CAPACITY * STRIDE);
  /** Nodes ever used, node 0 included; those no key holds are DEAD, and free once a rebuild has seen them. */
  #used = 1;
  /** Free nodes, chained through NEXT. */
  #free = NONE;
  #postings = 0;
  /** Removed nodes still listed in a bucket. */
  #dead = 0;
  #heads = new Int32Array(FIRST_CAPACITY);
  /**
   * While the bucket lists are rebuilt, the nodes from #scanned up to #scanEnd are yet to be seen
   * (listed in no bucket until then); nodes linked meanwhile are below or above these.
   */
  #scanned = 0;
  #scanEnd = 0;
  /** A key's slot: where its first node and the key itself are found from a node. */
  readonly #keys: (CacheKey | undefined)[] = [undefined];
  #firstOfKey = new Int32Array(FIRST_CAPACITY);
  readonly #freeSlots: number[] = [];
  /**
   * The slots by their keys: an open-addressed table (linear probing, at most half full) of slot
   * numbers, each slot's key hash kept beside it. A Map from key to slot cost every tagged entry
   * about 40 B of heap (its entry, its share of the hash table, the table's growth slack); this
   * costs 8–16 B outside the heap, and a hash of the key's characters when it is stored or goes.
   */
  #table = new Int32Array(2 * FIRST_CAPACITY);
  #slotHash = new Int32Array(FIRST_CAPACITY);
  #tabled = 0;

  /**
   * Indexes `key` under exactly the tags of `text` (space-separated, each once, as
   * StoredResponse#tagText keeps them), replacing what it was indexed under. Each tag is hashed
   * where it stands in the text: a string for each and a Set to hold them would be about 2 KB of
   * V8's young generation for an entry of 21 tags, on every promotion from the disk tier
   * (docs/performance.md, "A disk hit's tail").
   */
  set(key: CacheKey, text: string): void {
    const hash = tagHash(key);
    this.#forget(this.#find(key, hash));
    let slot = NONE;
    let tag = FNV_OFFSET;
    for (let i = 0; i <= text.length; i++) {
      const char = i === text.length ? SPACE : text.charCodeAt(i);
      if (char !== SPACE) {
        tag = Math.imul(tag ^ char, FNV_PRIME);
        continue;
      }
      if (i === 0 || text.charCodeAt(i - 1) === SPACE) continue;
      if (slot === NONE) slot = this.#slotFor(key, hash);
      this.#link(slot, tag);
      tag = FNV_OFFSET;
    }
  }

  /**
   * Indexes `key` under the tags whose hashes (`tagHash`) are the `count` u32s (little-endian) at
   * `at` of `bytes`, each once, replacing what it was indexed under: a value from the disk or the
   * shared tier carries them (entry-codec.ts), so that a promotion does not hash the tags' text.
   */
  setHashes(key: CacheKey, bytes: Uint8Array, at: number, count: number): void {
    const hash = tagHash(key);
    this.#forget(this.#find(key, hash));
    if (count === 0) return;
    const slot = this.#slotFor(key, hash);
    for (let i = at; i < at + 4 * count; i += 4)
      this.#link(slot, (bytes[i] ?? 0) | ((bytes[i + 1] ?? 0) << 8) | ((bytes[i + 2] ?? 0) << 16) | ((bytes[i + 3] ?? 0) << 24));
  }

  /** Forgets every tag of `key`. */
  remove(key: CacheKey): void {
    this.#forget(this.#find(key, tagHash(key)));
  }

  /** Forgets every tag of the key in `slot`; NONE: nothing to forget. */
  #forget(slot: number): void {
    if (slot === NONE) return;
    const nodes = this.#nodes;
    let removed = 0;
    for (let node = this.#firstOfKey[slot] ?? NONE; node > NONE;) {
      const at = node * STRIDE + NEXT_OF_KEY;
      const next = nodes[at] ?? NONE;
      nodes[at] = DEAD;
      // A node the rebuild has yet to see is listed nowhere: the rebuild frees it.
      if (node < this.#scanned || node >= this.#scanEnd) this.#dead++;
      removed++;
      node = next;
    }
    this.#postings -= removed;
    this.#untable(slot);
    this.#keys[slot] = undefined;
    this.#firstOfKey[slot] = NONE;
    this.#freeSlots.push(slot);
    if (this.#scanEnd === 0 && this.#dead >= LEAST_REBUILT && this.#dead > REBUILT_AT * this.#postings) this.#startRebuild(this.#heads.length);
    this.#scan(removed * SCANNED_PER_CHANGE);
  }

  /** The keys indexed under any of `tags`, and maybe some under a tag of the same hash. */
  keys(tags: readonly string[]): Set<CacheKey> {
    // A purge is rare: the rebuild is finished for it rather than read half done.
    this.#scan(Infinity);
    const found = new Set<CacheKey>();
    const nodes = this.#nodes;
    for (const tag of tags) {
      const hash = tagHash(tag);
      for (let node = this.#heads[hash & (this.#heads.length - 1)] ?? NONE; node !== NONE; node = nodes[node * STRIDE + NEXT] ?? NONE) {
        if (nodes[node * STRIDE + HASH] !== hash || nodes[node * STRIDE + NEXT_OF_KEY] === DEAD) continue;
        const key = this.#keys[this.#slotOf(node)];
        if (key !== undefined) found.add(key);
      }
    }
    return found;
  }

  /** Postings held: for each key, the tags it is indexed under. */
  get postings(): number {
    return this.#postings;
  }

  #slotFor(key: CacheKey, hash: number): number {
    const slot = this.#freeSlots.pop() ?? this.#keys.length;
    this.#keys[slot] = key;
    this.#firstOfKey = grown(this.#firstOfKey, slot + 1);
    this.#slotHash = grown(this.#slotHash, slot + 1);
    this.#slotHash[slot] = hash;
    if (2 * (this.#tabled + 1) > this.#table.length) this.#growTable();
    this.#table[this.#vacancy(hash)] = slot;
    this.#tabled++;
    return slot;
  }

  /** The slot of `key`, whose hash is `hash`, or NONE. */
  #find(key: CacheKey, hash: number): number {
    const table = this.#table;
    const mask = table.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const slot = table[at] ?? NONE;
      if (slot === NONE || this.#keys[slot] === key) return slot;
    }
  }

  /** The first empty place in the table for a key of hash `hash`. */
  #vacancy(hash: number): number {
    const table = this.#table;
    const mask = table.length - 1;
    let at = hash & mask;
    while (table[at] !== NONE) at = (at + 1) & mask;
    return at;
  }

  /** Takes `slot` out of the table, moving back the slots after it that would no longer be found. */
  #untable(slot: number): void {
    const table = this.#table;
    const mask = table.length - 1;
    let hole = (this.#slotHash[slot] ?? 0) & mask;
    while (table[hole] !== slot) hole = (hole + 1) & mask;
    table[hole] = NONE;
    for (let at = (hole + 1) & mask; table[at] !== NONE; at = (at + 1) & mask) {
      const moved = table[at] ?? NONE;
      const home = (this.#slotHash[moved] ?? 0) & mask;
      // `moved` stays where it is when its home lies after the hole, up to where it stands (cyclically).
      const stays = hole <= at ? hole < home && home <= at : hole < home || home <= at;
      if (stays) continue;
      table[hole] = moved;
      table[at] = NONE;
      hole = at;
    }
    this.#tabled--;
  }

  #growTable(): void {
    const old = this.#table;
    this.#table = new Int32Array(2 * old.length);
    for (const slot of old) if (slot !== NONE) this.#table[this.#vacancy(this.#slotHash[slot] ?? 0)] = slot;
  }

  /** The key slot of `node`, at the end of its key's list. */
  #slotOf(node: number): number {
    const nodes = this.#nodes;
    let next = nodes[node * STRIDE + NEXT_OF_KEY] ?? NONE;
    while (next > NONE) next = nodes[next * STRIDE + NEXT_OF_KEY] ?? NONE;
    return -next;
  }

  #link(slot: number, hash: number): void {
    if (this.#postings >= this.#heads.length * POSTINGS_PER_BUCKET) this.#startRebuild(this.#heads.length * 2);
    // A free node has been seen by the rebuild, a new one is past what it has to see.
    let node = this.#free;
    if (node !== NONE) this.#free = this.#nodes[node * STRIDE + NEXT] ?? NONE;
    else {
      node = this.#used++;
      this.#nodes = grown(this.#nodes, this.#used * STRIDE);
    }
    const nodes = this.#nodes;
    const at = node * STRIDE;
    nodes[at + HASH] = hash;
    const first = this.#firstOfKey[slot] ?? NONE;
    nodes[at + NEXT_OF_KEY] = first === NONE ? -slot : first;
    this.#firstOfKey[slot] = node;
    this.#pushToBucket(node, hash);
    this.#postings++;
    this.#scan(SCANNED_PER_CHANGE);
  }

  #pushToBucket(node: number, hash: number): void {
    const bucket = hash & (this.#heads.length - 1);
    this.#nodes[node * STRIDE + NEXT] = this.#heads[bucket] ?? NONE;
    this.#heads[bucket] = node;
  }

  /**
   * Starts making the bucket lists again, with `buckets` heads (more as postings grow, so that a
   * list stays short), of the nodes keys hold; every other node becomes free as it is seen.
   */
  #startRebuild(buckets: number): void {
    this.#scan(Infinity);
    // The same table, emptied: a new one each time handed the collector 4 MiB a rebuild at 4.2
    // million postings, and the collections it caused held requests up to 11 ms.
    if (buckets === this.#heads.length) this.#heads.fill(NONE);
    else this.#heads = new Int32Array(buckets);
    this.#free = NONE;
    this.#dead = 0;
    this.#scanned = 1;
    this.#scanEnd = this.#used;
  }

  /** Goes on with the rebuild, if one is under way, for `count` more nodes. */
  #scan(count: number): void {
    if (this.#scanEnd === 0) return;
    const nodes = this.#nodes;
    const end = Math.min(this.#scanEnd, this.#scanned + count);
    for (let node = this.#scanned; node < end; node++) {
      const at = node * STRIDE;
      if (nodes[at + NEXT_OF_KEY] === DEAD) {
        nodes[at + NEXT] = this.#free;
        this.#free = node;
      } else {
        this.#pushToBucket(node, nodes[at + HASH] ?? 0);
      }
    }
    this.#scanned = end;
    if (end === this.#scanEnd) this.#scanEnd = this.#scanned = 0;
  }
}
