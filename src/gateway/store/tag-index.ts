/**
 * The tag index (Fastly's surrogate keys, Varnish's xkey): for each tag an origin put on its
 * responses (`Surrogate-Key: bk_1 bk_2 avail_any`), the keys whose stored responses carry it, so
 * a purge by tag touches exactly those entries instead of walking the cache.
 *
 * A search answer carries one tag per book it shows, 20 to 100 of them, so the index holds tens of
 * postings per entry: as JavaScript objects (a Set per tag, a string per tag and entry) they cost
 * more than the compressed body they point at. Postings are therefore numbers in typed arrays
 * outside V8's heap, 17 B each: a posting is a node in two linked lists, the tag's (through a
 * hash bucket) and the key's (so a key's postings go when it does). A tag is known here only by
 * a 32-bit hash of its text, so two tags may share one; `keys` then names a key that carries the
 * other, and the caller, which holds the entries' tag text, tells them apart.
 */
import type { CacheKey } from './response-cache.ts';

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

/** FNV-1a: tags are short ASCII tokens, and the hash runs only when entries are stored or purged. */
export function tagHash(tag: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < tag.length; i++) hash = Math.imul(hash ^ tag.charCodeAt(i), 0x01000193);
  return hash;
}

/**
 * A node's fields: the tag's hash, its neighbours in the bucket's list, and the next of its key's,
 * or, in the key's last, minus the key's slot: a purge, which is rare, walks a key's few nodes to
 * find the key, so that no node holds it (4 B a posting).
 */
const HASH = 0;
const PREVIOUS = 1;
const NEXT = 2;
const NEXT_OF_KEY = 3;
const STRIDE = 4;
/** No node, no key: node 0 and key slot 0 are never used, so a new array means empty without being written. */
const NONE = 0;
/** PREVIOUS of a free node, which no bucket lists (a node's PREVIOUS is a node or NONE). */
const FREE = -1;

/**
 * Postings per bucket head at most: a bucket lists the postings of every tag that hashes to it,
 * and there are fewer tags than postings (a book is in many searches), so a purge's walk stays
 * short with a head per four postings (4 B each: 1 B a posting, or less after the table doubles).
 */
const POSTINGS_PER_BUCKET = 4;

/**
 * What one posting costs: its node (STRIDE × 4 B) and its share of the bucket heads. The typed
 * arrays double, but a new one is zeroed memory that is resident only once written (NONE is 0 so
 * that it need not be filled), and nodes are reused from a free list before the array grows, so
 * what is resident is the nodes ever live at once.
 */
export const POSTING_BYTES = STRIDE * 4 + 4 / POSTINGS_PER_BUCKET;

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
  /** Nodes ever used, node 0 included; those below it that are free are chained through NEXT_OF_KEY. */
  #used = 1;
  #free = NONE;
  #postings = 0;
  #heads = new Int32Array(FIRST_CAPACITY);
  /** A key's slot: where its first node and the key itself are found from a node. */
  readonly #slots = new Map<CacheKey, number>();
  readonly #keys: (CacheKey | undefined)[] = [undefined];
  #firstOfKey = new Int32Array(FIRST_CAPACITY);
  readonly #freeSlots: number[] = [];

  /** Indexes `key` under exactly `tags`, replacing what it was indexed under. */
  set(key: CacheKey, tags: Iterable<string>): void {
    this.remove(key);
    let slot: number | undefined;
    for (const tag of tags) {
      slot ??= this.#slotFor(key);
      this.#link(slot, tagHash(tag));
    }
  }

  /** Forgets every tag of `key`. */
  remove(key: CacheKey): void {
    const slot = this.#slots.get(key);
    if (slot === undefined) return;
    const nodes = this.#nodes;
    for (let node = this.#firstOfKey[slot] ?? NONE; node > NONE; ) {
      const next = nodes[node * STRIDE + NEXT_OF_KEY] ?? NONE;
      this.#unlink(node);
      node = next;
    }
    this.#slots.delete(key);
    this.#keys[slot] = undefined;
    this.#firstOfKey[slot] = NONE;
    this.#freeSlots.push(slot);
  }

  /** The keys indexed under any of `tags`, and maybe some under a tag of the same hash. */
  keys(tags: readonly string[]): Set<CacheKey> {
    const found = new Set<CacheKey>();
    const nodes = this.#nodes;
    for (const tag of tags) {
      const hash = tagHash(tag);
      for (let node = this.#heads[hash & (this.#heads.length - 1)] ?? NONE; node !== NONE; node = nodes[node * STRIDE + NEXT] ?? NONE) {
        if (nodes[node * STRIDE + HASH] !== hash) continue;
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

  #slotFor(key: CacheKey): number {
    const slot = this.#freeSlots.pop() ?? this.#keys.length;
    this.#slots.set(key, slot);
    this.#keys[slot] = key;
    this.#firstOfKey = grown(this.#firstOfKey, slot + 1);
    return slot;
  }

  /** The key slot of `node`, at the end of its key's list. */
  #slotOf(node: number): number {
    const nodes = this.#nodes;
    let next = nodes[node * STRIDE + NEXT_OF_KEY] ?? NONE;
    while (next > NONE) next = nodes[next * STRIDE + NEXT_OF_KEY] ?? NONE;
    return -next;
  }

  #link(slot: number, hash: number): void {
    if (this.#postings >= this.#heads.length * POSTINGS_PER_BUCKET) this.#rehash(this.#heads.length * 2);
    let node = this.#free;
    if (node !== NONE) this.#free = this.#nodes[node * STRIDE + NEXT_OF_KEY] ?? NONE;
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
  }

  #pushToBucket(node: number, hash: number): void {
    const nodes = this.#nodes;
    const bucket = hash & (this.#heads.length - 1);
    const head = this.#heads[bucket] ?? NONE;
    nodes[node * STRIDE + PREVIOUS] = NONE;
    nodes[node * STRIDE + NEXT] = head;
    if (head !== NONE) nodes[head * STRIDE + PREVIOUS] = node;
    this.#heads[bucket] = node;
  }

  #unlink(node: number): void {
    const nodes = this.#nodes;
    const at = node * STRIDE;
    const previous = nodes[at + PREVIOUS] ?? NONE;
    const next = nodes[at + NEXT] ?? NONE;
    if (previous === NONE) this.#heads[(nodes[at + HASH] ?? 0) & (this.#heads.length - 1)] = next;
    else nodes[previous * STRIDE + NEXT] = next;
    if (next !== NONE) nodes[next * STRIDE + PREVIOUS] = previous;
    nodes[at + PREVIOUS] = FREE;
    nodes[at + NEXT_OF_KEY] = this.#free;
    this.#free = node;
    this.#postings--;
  }

  /** More buckets, so that a bucket's list stays short: every live node is pushed again. */
  #rehash(buckets: number): void {
    this.#heads = new Int32Array(buckets);
    for (let node = 1; node < this.#used; node++) {
      if (this.#nodes[node * STRIDE + PREVIOUS] !== FREE) this.#pushToBucket(node, this.#nodes[node * STRIDE + HASH] ?? 0);
    }
  }
}
