/**
 * What one cache entry costs in memory, so that the cache bound counts real bytes: V8 heap objects
 * (64-bit, no pointer compression, as Node ships) with the room V8 keeps around them, plus the
 * body's bytes in a slab with its share of the slabs' holes (body-slabs.ts) and the tag index's
 * postings outside the heap (tag-index.ts). Measured, not guessed, with
 * `node --expose-gc bench/entry-cost.ts`: it fills a cache with 100,000 tiny-origin answers
 * through the real fill path and reports, after full collections, heap used, Buffer memory and
 * malloc's resident bytes per entry, next to what the cache counts; a heap snapshot diff of the
 * same run gave the per-object sizes below. With `--bound` it measures a full cache that evictions
 * churn, as a production cache runs. The reserve around the heap objects comes from the memory
 * bench instead (HEAP_RESERVE).
 */
import { LARGEST_SLABBED, WASTE_ALLOWED } from './body-slabs.ts';
import { POSTING_BYTES } from './tag-index.ts';

/**
 * Per entry, whatever its size: lru-cache's bookkeeping, its Map entry and hash table share, and
 * the slots of its key, value, size, next and previous lists with their growth slack. The Map's
 * share is the part that grows with the cache: V8 doubles a hash table and keeps the slots of
 * deleted keys until it rehashes, so in a full cache that churns it runs at about 85 B per entry
 * (`bench/entry-cost.ts 400000 --bound 256`: 166,000 entries held, 770 B of heap each against
 * 729 B counted while this and RESPONSE_FIXED_BYTES were 72 B less, the figure measured without
 * evictions).
 */
const ENTRY_FIXED_BYTES = 88;

/**
 * What the process holds for each byte of an entry's heap objects in a full cache that churns.
 * An evicted entry's objects stay in the old generation until the next full collection (which
 * `--heap-growing-percent=10` lets come at 10 % growth), the holes they leave in V8's pages are
 * not compacted away each time, and V8 keeps pages it has emptied for the next ones, so a heap of
 * cache entries costs more resident memory than its live objects. Measured with
 * `npm run bench -- --memory --client identity --books 6 --disk-mib 0` (~2 KB answers, each entry
 * holding a gzip and an identity body) while this was 1.4: at the 256 MiB bound, 85,200 entries
 * held, V8's anonymous mappings stood 182 MiB above the process at rest for 64 MiB of the entries'
 * live objects (2.85 B per byte), and RSS passed the bound + 150 MiB (453 MiB and rising halfway
 * through the fill); malloc held its slabs at 1.2 B per byte. The figure of 1.4 came from ~1 KiB
 * answers with one body each, where an identity client's entries, and ~2 KB ones, went past it
 * (docs/benchmarks.md, "What RSS to plan for"). Counting it is what makes the bound bound the
 * process, not only the objects (docs/performance.md).
 */
export const HEAP_RESERVE = 2.8;

/** `bytes` of heap objects as the process pays for them. */
export function heapBytes(bytes: number): number {
  return Math.ceil(bytes * HEAP_RESERVE);
}

/**
 * A large body's Buffer owning its bytes: the Uint8Array view (104 B) and its ArrayBuffer (96 B) on the heap,
 * and outside it, besides the bytes themselves, 195 B: V8's BackingStore record, its shared
 * pointer and extension, and malloc's block headers (measured as malloc's resident bytes per
 * Buffer.allocUnsafeSlow block, 100 B to 2 KiB bodies, 189–201 B each).
 */
const BUFFER_HEAP_BYTES = 200;
const BUFFER_NATIVE_BYTES = 195;

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
 * A slabbed body's holder's place in its slab's list of holders (8 B, and up to half again of the
 * room an array grown by `push` keeps). The body is known by its slab and offset, two fields of
 * the Representation (REPRESENTATION_FIXED_BYTES), not by a view of its own.
 */
const SLAB_HOLDER_BYTES = 12;

/**
 * A body of `length` bytes as the cache keeps it (body-slabs.ts): part of a slab, with its share
 * of the waste its slabs may hold, or, when large, a Buffer owning its bytes.
 */
function bodyBytes(length: number): number {
  if (length === 0) return 0;
  if (length <= LARGEST_SLABBED) return heapBytes(SLAB_HOLDER_BYTES) + Math.ceil(length * (1 + WASTE_ALLOWED));
  return heapBytes(BUFFER_HEAP_BYTES) + BUFFER_NATIVE_BYTES + length;
}

/**
 * One entry: the fixed part, its key, what its responses hold (`StoredResponse#bytes`), for a
 * target holding several variants side by side their list, and its place in the tag index.
 */
export function entryBytes(key: string, responses: readonly { readonly bytes: number; readonly tagText: string }[]): number {
  let held = responses.length > 1 ? headerListBytes(responses.length) : 0;
  let tagged = false;
  for (const response of responses) {
    held += response.bytes;
    tagged ||= response.tagText !== '';
  }
  return heapBytes(ENTRY_FIXED_BYTES) + stringBytes(key) + held + (tagged ? TAGGED_KEY_BYTES : 0);
}

/**
 * The StoredResponse object with its boxed `storedAt`: 168 B each, measured over 200,000 (it was
 * 200 B with the four reuse terms and the secondary key's two lists as fields of its own). A
 * representation made after the fill adds a list of them.
 */
const RESPONSE_FIXED_BYTES = 168;

/** A secondary key's object: 24 B of header and its two lists' pointers. */
const SECONDARY_KEY_BYTES = 40;

/**
 * One response besides its representations: its list of `fields` names and values of its own
 * (the origin's values of the fields each representation has its own of, when it has any),
 * `ownStrings` bytes of the strings only it holds (stringBytes), its secondary key (the object and
 * its two lists) when it varies on `varyLength` fields, and its tags (`tagText`, space-separated).
 */
export function responseBytes(fields: number, ownStrings: number, varyLength: number, tagText: string): number {
  const key = varyLength === 0 ? 0 : heapBytes(SECONDARY_KEY_BYTES) + 2 * headerListBytes(varyLength);
  return heapBytes(RESPONSE_FIXED_BYTES) + (fields === 0 ? 0 : headerListBytes(fields)) + ownStrings + key + tagBytes(tagText);
}

/**
 * How many of a representation's own values are fields of it rather than a list: the usual three
 * or four (a date, a length, an entity tag, a link) then cost no list of their own (101 B counted).
 */
export const OWN_INLINE = 4;

/**
 * A Representation object: 24 B of header and 11 fields of 8 B (the body's store, offset and
 * length, and up to OWN_INLINE of its own values among them).
 */
const REPRESENTATION_FIXED_BYTES = 112;

/**
 * One representation: the object, the list of the `ownFields` values of its own when they are
 * more than its fields hold (field-shapes.ts), `ownStrings` bytes of the strings only it holds,
 * `shapeBytes` of a shape it brought, and its body.
 */
export function representationBytes(ownFields: number, ownStrings: number, shapeBytes: number, bodyLength: number): number {
  return heapBytes(REPRESENTATION_FIXED_BYTES) + (ownFields <= OWN_INLINE ? 0 : headerListBytes(ownFields)) + ownStrings + shapeBytes + bodyBytes(bodyLength);
}

/**
 * A response's tags: their text (one string) and, once stored, a posting in the tag index for
 * each, which lives outside the heap (tag-index.ts).
 */
function tagBytes(tagText: string): number {
  if (tagText === '') return 0;
  let tags = 1;
  for (let at = tagText.indexOf(' '); at !== -1; at = tagText.indexOf(' ', at + 1)) tags++;
  return stringBytes(tagText) + Math.ceil(tags * POSTING_BYTES);
}

/**
 * What the tag index holds for a key with tags, besides its postings: its slot in the list of keys
 * (8 B, with slack 12 B), in the typed arrays of first nodes and of key hashes (4 B each), and its
 * place in the table of slots by key (4 B at a load between a half and a quarter: 8–16 B).
 */
const TAGGED_KEY_BYTES = heapBytes(12) + 4 + 4 + 16;
