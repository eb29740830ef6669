/**
 * What one cache entry costs the process, so that the cache bound counts real bytes: its record in
 * a slab outside the V8 heap with its frame and its share of the slabs' holes (record-slabs.ts),
 * its handle's place in the slabs' typed arrays, its place in the policy's slots (its key on the
 * heap; the value is the handle, a small integer stored in place), and the tag index's postings
 * outside the heap (tag-index.ts). Measured, not guessed, with
 * `node --expose-gc bench/entry-cost.ts`: it fills a cache with 100,000 tiny-origin answers
 * through the real fill path and reports, after full collections, heap used and malloc's resident
 * bytes per entry, next to what the cache counts. With `--bound` it measures a full cache that
 * evictions churn, as a production cache runs.
 */
import { FRAME_BYTES, WASTE_ALLOWED } from './memory/record-slabs.ts';
import { POSTING_BYTES } from './tag-index.ts';

/**
 * Per entry, whatever its size, in the policy's slots (windowed-lru.ts or slot-lru.ts): on the
 * heap, its key's and its value's places in two arrays (8 B each, with growth slack 12).
 */
const ENTRY_HEAP_BYTES = 24;

/**
 * Per entry, outside the heap: its bucket in the index (4 B at a load between a half and a
 * quarter: 8–16 B, slot-index.ts), its hash (4 B) and its links, list and size in the LRU lists
 * (17 B, slot-lists.ts), the last two in arrays that double as they grow (up to twice).
 */
const ENTRY_TYPED_BYTES = 16 + 2 * (4 + 17);

/**
 * What the process holds for each byte of the heap objects that stay with an entry, in a full
 * cache that churns: an evicted entry's key stays in the old generation until the next full
 * collection, the holes it leaves in V8's pages are not compacted away each time, and V8 keeps
 * pages it has emptied for the next ones. Measured with
 * `npm run bench -- --memory --client identity --books 6 --disk-mib 0` (~2 KB answers) when
 * every entry kept its objects on the heap: V8's anonymous mappings stood 2.85 B per byte of the
 * entries' live objects. An entry's heap part is now its key and its places in two arrays.
 */
export const HEAP_RESERVE = 2.8;

/** `bytes` of heap objects as the process pays for them. */
export function heapBytes(bytes: number): number {
  return Math.ceil(bytes * HEAP_RESERVE);
}

/** A sequential one-byte string's header; header fields are latin1, keys percent-encoded ASCII. */
const STRING_HEADER_BYTES = 16;

/** A JS array object (32 B) plus the header of its elements store (16 B). */
const LIST_FIXED_BYTES = 48;

export function stringBytes(text: string): number {
  return heapBytes(STRING_HEADER_BYTES + Math.ceil(text.length / 8) * 8);
}

/** An exact-size list of `length` pointers. */
export function headerListBytes(length: number): number {
  return heapBytes(LIST_FIXED_BYTES + 8 * length);
}

/**
 * A handle's place in the slabs' three Int32Arrays (12 B), which double as they grow and keep the
 * handles released for reuse (its slot in that list, 8 B at most): up to twice that in all.
 */
const HANDLE_BYTES = 24;

/**
 * What malloc holds for each byte of the slabs: their chunk headers, and the space of freed slabs
 * it keeps for the next ones (glibc serves 64 KiB from its heap, not by a mapping of its own).
 * Measured by the memory bench above: 1.2 B of malloc's resident bytes per byte of slab.
 */
const MALLOC_RESERVE = 1.2;

/**
 * What the tag index holds for a key with tags, besides its postings: its slot in the list of keys
 * (8 B, with slack 12 B), in the typed arrays of first nodes and of key hashes (4 B each), and its
 * place in the table of slots by key (4 B at a load between a half and a quarter: 8–16 B).
 */
const TAGGED_KEY_BYTES = heapBytes(12) + 4 + 4 + 16;

/**
 * What an entry holds besides its key: a record of `recordLength` bytes (entry-record.ts) in a
 * slab, its handle, its `tags` in the tag index, and `shapeBytes` of field shapes it brought to
 * its maker's table (field-shapes.ts).
 */
export function heldBytes(recordLength: number, tags: number, shapeBytes: number): number {
  const record = Math.ceil((recordLength + FRAME_BYTES) * (1 + WASTE_ALLOWED) * MALLOC_RESERVE);
  const tagged = tags === 0 ? 0 : TAGGED_KEY_BYTES + Math.ceil(tags * POSTING_BYTES);
  return record + HANDLE_BYTES + tagged + shapeBytes;
}

/** An entry's place in the policy's slots, as counted: its array places with the heap's reserve, and its typed-array share. */
export const SLOT_BYTES = heapBytes(ENTRY_HEAP_BYTES) + ENTRY_TYPED_BYTES;

/** One entry: its place in the policy's slots, its key, and what it holds (`heldBytes`). */
export function entryBytes(key: string, held: number): number {
  return SLOT_BYTES + stringBytes(key) + held;
}
