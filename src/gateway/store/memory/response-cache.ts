/**
 * The store: an LRU of stored responses keyed by request target, bounded in bytes, counting what
 * each entry really costs in memory (entry-size.ts), key and bookkeeping included. Each entry is
 * one record of bytes in the cache's slabs (entry-record.ts, record-slabs.ts), and the policy's
 * slots (windowed-lru.ts, or slot-lru.ts with admission off) hold its handle, a small integer; a
 * lookup reads the record into the StoredResponse the rules read. A target whose responses vary
 * (RFC 9111 §4.1) holds its variants side by side in its one record, newest first.
 * Which responses go in and when they may be reused is decided by the rules (../../rules/); this
 * module only keeps them, finds the variant a request selects, and stays within the bound.
 *
 * It also indexes entries by their tags and applies purges to them: by tag, by key, by key prefix
 * or all, removing them (hard) or marking them stale (soft). Purges are recorded by the Purger in
 * the process's one purge log (../../purge/purge-log.ts), which this store asks before it keeps a
 * response, so a purge is never undone by a fill that was already under way.
 */
import type { LRUCache } from 'lru-cache';
import type { Codec } from '../../../shared/encoding/codec.ts';
import type { Coding } from '../../../shared/encoding/negotiate.ts';
import type { HeaderFields } from '../../rules/cache-control.ts';
import { entryBytes, heldBytes } from '../entry-size.ts';
import { prepare, RecordReader, RecordWriter, type Prepared, type WrittenVariants } from '../record/entry-record.ts';
import type { Purge, PurgeLog, PurgeSelector } from '../../purge/purge-log.ts';
import { RecordSlabs } from './record-slabs.ts';
import { EntryMaker, staleFrom, type Representation, type StoredResponse } from '../stored-response.ts';
import { carriesTag, TagIndex, tagCount } from '../tag-index.ts';
import { judged, selects, type CacheTier, type FillStamp, type NotKept, type TierSize } from '../tier.ts';
import { SlotLru } from './slot-lru.ts';
import { WindowedLru, type EntryLru } from './windowed-lru.ts';

declare const cacheKeyBrand: unique symbol;
/**
 * A request target (path and query) as a cache key. Only `cacheKey` makes one, and only routes
 * call it with a target they have parsed, so a raw URL or anything carrying a token cannot become
 * a key by accident.
 */
export type CacheKey = string & { readonly [cacheKeyBrand]: true };

export function cacheKey(target: string): CacheKey {
  return target as CacheKey;
}

export type Lookup =
  | {
      readonly kind: 'found';
      readonly response: StoredResponse;
      /**
       * From memory: the pin on the record's slab, which its reader gives back (`unpin`) once
       * nothing reads the response's bytes, or turns into `expose` when that cannot be told
       * (record-slabs.ts). Undefined from another tier.
       */
      readonly pin?: number;
    }
  /** Nothing is stored for the target (RFC 9211 `uri-miss`). */
  | { readonly kind: 'uri-miss' }
  /** Responses are stored for the target, but none that this request selects (`vary-miss`). */
  | { readonly kind: 'vary-miss' };

export interface ResponseCacheOptions {
  /** Total bound in bytes (`gateway.cache.maxBytes`). */
  readonly maxBytes: number;
  /** Largest single entry in bytes (`gateway.cache.maxEntryBytes`), all its variants together. */
  readonly maxEntryBytes: number;
  /** The process's purge log, by which a response whose fill a purge overtook is judged. */
  readonly purges: PurgeLog;
  /**
   * W-TinyLFU admission in front of the LRU (`gateway.cache.admission`, windowed-lru.ts): a new
   * entry pushes older ones out only if it is asked for more often. Off: plain LRU.
   */
  readonly admission: boolean;
  /** Makes the representations a stored response is first asked for in (`gateway.compression.levels`). */
  readonly codec: Codec;
}

/** Variants kept per target; the oldest go first, so a header that never repeats cannot grow one. */
const MAX_VARIANTS = 16;

/** An entry's record in the cache's slabs (record-slabs.ts). */
type Handle = number;

const URI_MISS: Lookup = { kind: 'uri-miss' };
const VARY_MISS: Lookup = { kind: 'vary-miss' };

/** Two responses with the same secondary key: the newer replaces the older (§4.1). */
function sameVariant(a: StoredResponse, b: StoredResponse): boolean {
  if (a.vary.length !== b.vary.length) return false;
  for (let i = 0; i < a.vary.length; i++) if (a.vary[i] !== b.vary[i] || a.selecting[i] !== b.selecting[i]) return false;
  return true;
}

/** The tags of every variant, each once, space-separated as one response's are (StoredResponse#tagText). */
function tagTextOf(variants: readonly StoredResponse[]): string {
  const [only] = variants;
  if (variants.length === 1 && only !== undefined) return only.tagText;
  const tags = new Set<string>();
  for (const response of variants) for (const tag of response.tags) tags.add(tag);
  return [...tags].join(' ');
}

/** Whether any stored response at a key carries one of `tags`: the index may name keys that share only a tag's hash. */
function carriesAny(variants: readonly StoredResponse[], tags: readonly string[]): boolean {
  return variants.some((response) => tags.some((tag) => carriesTag(response.tagText, tag)));
}

export class ResponseCache implements CacheTier {
  readonly name = 'memory';
  readonly #lru: EntryLru<CacheKey, Handle>;
  readonly #maxEntryBytes: number;
  readonly #tags = new TagIndex();
  readonly #records = new RecordSlabs();
  readonly #writer: RecordWriter;
  readonly #reader: RecordReader;
  /** The last number given to a stored answer (StoredResponse#serial). */
  #serial = 0;
  /** Numbers a stored answer. */
  readonly #number = (): number => ++this.#serial;
  readonly #purges: PurgeLog;
  #evictions = 0;
  #admitted = 0;
  #refused = 0;
  #shifts = 0;
  /** Makes the entries this cache keeps: fills and the shared tier go through it. */
  readonly maker: EntryMaker;

  constructor(options: ResponseCacheOptions) {
    this.maker = new EntryMaker(options.codec);
    this.#writer = new RecordWriter(this.maker);
    this.#reader = new RecordReader(this.maker);
    this.#purges = options.purges;
    this.#maxEntryBytes = Math.min(options.maxEntryBytes, options.maxBytes);
    const disposeAfter = (old: Handle, key: CacheKey, reason: LRUCache.DisposeReason): void => {
      // Runs after the operation, so what is at `key` now is known: a replacement is indexed by #set.
      if (this.#lru.peek(key) === undefined) this.#tags.remove(key);
      // A record is never changed once written (a representation made goes in a new one), so this
      // releases exactly what #set wrote for it.
      this.#writer.release(this.#records.store(old), this.#records.view(old), this.#records.offset(old));
      this.#records.release(old);
      if (reason === 'evict') this.#evictions++;
    };
    const onAdmission = (admitted: boolean): void => {
      if (admitted) this.#admitted++;
      else this.#refused++;
    };
    this.#lru = options.admission
      ? new WindowedLru<CacheKey, Handle>({ maxSize: options.maxBytes, disposeAfter, onAdmission, onShift: () => this.#shifts++ })
      : new SlotLru<CacheKey, Handle>({ maxSize: options.maxBytes, disposeAfter });
  }

  /** The stored response this request selects (§4.1: the newest that matches). */
  lookup(key: CacheKey, request: HeaderFields): Lookup {
    const handle = this.#lru.get(key);
    if (handle === undefined) return URI_MISS;
    const count = this.#reader.open(this.#records.store(handle), this.#records.view(handle), this.#records.offset(handle));
    for (let i = 0; i < count; i++) {
      const response = this.#reader.next();
      if (selects(response, request)) return { kind: 'found', response, pin: this.#records.pin(handle) };
    }
    return VARY_MISS;
  }

  /** The variants stored at `key`, newest first, without touching its place in the LRU. */
  #variants(key: CacheKey): readonly StoredResponse[] {
    const handle = this.#lru.peek(key);
    if (handle === undefined) return [];
    const count = this.#reader.open(this.#records.store(handle), this.#records.view(handle), this.#records.offset(handle));
    const variants: StoredResponse[] = [];
    for (let i = 0; i < count; i++) variants.push(this.#reader.next());
    return variants;
  }

  /** The stored response this request selects, read for as long as the caller likes (`expose`). */
  get(key: CacheKey, request: HeaderFields): StoredResponse | undefined {
    const found = this.lookup(key, request);
    if (found.kind !== 'found') return undefined;
    if (found.pin !== undefined) this.expose(found.pin);
    return found.response;
  }

  /** Nothing reads the bytes of the response a lookup returned with `pin` any more. */
  unpin(pin: number): void {
    this.#records.unpin(pin);
  }

  /** The bytes of the response a lookup returned with `pin` may be read at any time from now on. */
  expose(pin: number): void {
    this.#records.expose(pin);
  }

  /**
   * Stores a response beside the target's other variants, replacing the one with its secondary
   * key; a response that does not vary replaces them all. Not kept when it is larger than the
   * largest entry allowed, or when a hard purge since its fill began names it; a soft one keeps it
   * stale from the purge on.
   */
  put(key: CacheKey, filled: StoredResponse, stamp: FillStamp): NotKept | undefined {
    const response = judged(this.#purges.sinceGeneration(stamp.generation, key, filled.tags), filled);
    if (response === undefined) return 'purged';
    const others = response.vary.length === 0 ? [] : this.#variants(key).filter((v) => !sameVariant(v, response));
    return this.#set(key, [response, ...others].slice(0, MAX_VARIANTS));
  }

  /**
   * Keeps `response`, read from `variants` another process wrote (a disk hit, promoted), as `put`
   * does, by copying those bytes into its record rather than writing the response anew. A response
   * that varies, or that a purge since `stamp` names, is `put`.
   */
  adopt(key: CacheKey, response: StoredResponse, variants: WrittenVariants, stamp: FillStamp): NotKept | undefined {
    // A promotion's stamp is mostly the current generation: then no purge is since, and no tags are split to ask.
    const purgedSince = stamp.generation !== this.#purges.generation && this.#purges.sinceGeneration(stamp.generation, key, response.tags).kind !== 'intact';
    if (response.vary.length !== 0 || purgedSince) return this.put(key, response, stamp);
    const shapeBytes = variants.brought.reduce((sum, bytes) => sum + bytes, 0);
    const kept = this.#keep(key, RecordWriter.copiedLength(variants), variants, shapeBytes, (into, view, at) => {
      this.#writer.copy(variants, into, view, at, this.#number);
    });
    if (kept === 'too-large') this.#lru.delete(key);
    return kept;
  }

  delete(keys: readonly CacheKey[]): void {
    for (const key of keys) this.#lru.delete(key);
    this.#tidy();
  }

  size(): TierSize {
    return { entries: this.entries, bytes: this.bytes };
  }

  /** Puts `updated` where `stored` was after a 304 (RFC 9111 §4.3.4); nothing when `stored` has gone meanwhile. */
  replace(key: CacheKey, stored: StoredResponse, updated: StoredResponse): void {
    const list = this.#variants(key);
    if (stored.serial === 0 || !list.some((v) => v.serial === stored.serial)) return;
    this.#set(key, [updated, ...list.filter((v) => v.serial !== stored.serial)]);
  }

  /**
   * `response`'s representation in `coding`, made from its kept body when none is kept for it yet
   * (lazily, docs/performance.md "Compression"). With `keep` (the entry was asked for before this
   * request) it is stored with the entry and counted against the bound, whether it still fits or
   * not; the request that filled an entry gets one made for it alone, so that an answer asked for
   * once holds one body, not two. A response no longer stored at `key` (replaced, evicted, or
   * never stored) gets one all the same.
   */
  represent(key: CacheKey, response: StoredResponse, coding: Coding, keep: boolean): Representation {
    const known = response.representation(coding);
    if (known !== undefined) return known;
    const list = this.#variants(key);
    // The same answer as stored now, which may have been given representations since `response` was read.
    const stored = response.serial === 0 ? undefined : list.find((r) => r.serial === response.serial);
    const storedMade = stored?.representation(coding);
    if (storedMade !== undefined) {
      // Read from the record, and read after this returns by whoever the caller hands it to.
      this.#records.exposed(this.#lru.peek(key) ?? -1);
      return storedMade;
    }
    const made = this.maker.derive(stored ?? response, coding);
    if (keep && stored !== undefined)
      this.#set(
        key,
        list.map((r) => (r === stored ? stored.with(made) : r)),
      );
    return made;
  }

  /** Removes (hard) or marks stale from its time (soft) every entry the purge names; returns how many. */
  purge(purge: Purge): number {
    const { soft, at } = purge;
    const keys = this.#select(purge.selector);
    let purged = 0;
    for (const key of keys) {
      const list = this.#variants(key);
      if (list.length === 0) continue;
      purged++;
      if (soft)
        this.#set(
          key,
          list.map((response) => staleFrom(response, at)),
        );
      else this.#lru.delete(key);
    }
    this.#tidy();
    return purged;
  }

  #select(selector: PurgeSelector): Iterable<CacheKey> {
    switch (selector.kind) {
      case 'tags':
        return [...this.#tags.keys(selector.tags)].filter((key) => carriesAny(this.#variants(key), selector.tags));
      case 'urls':
        return selector.keys;
      case 'prefix':
        return [...this.#lru.keys()].filter((key) => key.startsWith(selector.prefix));
      case 'all':
        return [...this.#lru.keys()];
    }
  }

  /**
   * Stores `list` at `key` as one record (a list replacing the one there stays where the entry
   * stands: a delete and a set would send it back through admission).
   */
  #set(key: CacheKey, list: readonly StoredResponse[]): NotKept | undefined {
    let prepared: Prepared;
    try {
      prepared = prepare(list);
    } catch {
      // A field longer than a record keeps: no answer the gateway passes on has one.
      this.#lru.delete(key);
      return 'too-large';
    }
    const kept = this.#keep(key, RecordWriter.length(prepared), tagTextOf(list), prepared.shapeBytes, (into, view, at) => {
      this.#writer.write(prepared, into, view, at, this.#number);
    });
    if (kept !== 'too-large') return kept;
    // The newest alone may still fit; the older variants make way for it.
    const [newest] = list;
    if (list.length > 1 && newest !== undefined) return this.#set(key, [newest]);
    this.#lru.delete(key);
    return 'too-large';
  }

  /**
   * Stores at `key` the record `write` writes, `length` bytes, carrying the tags of `tags` (their
   * text, or the hashes of copied variants) and holding shapes that cost `shapeBytes`;
   * 'too-large' (nothing done) when it would take more than an entry may.
   */
  #keep(
    key: CacheKey,
    length: number,
    tags: string | WrittenVariants,
    shapeBytes: number,
    write: (into: Buffer, view: DataView, at: number) => void,
  ): NotKept | undefined {
    const size = entryBytes(key, heldBytes(length, typeof tags === 'string' ? tagCount(tags) : tags.tagCount, shapeBytes));
    if (size > this.#maxEntryBytes) return 'too-large';
    const handle = this.#records.reserve(length);
    write(this.#records.store(handle), this.#records.view(handle), this.#records.offset(handle));
    // A record the filter turns away is released by disposeAfter, like one evicted.
    this.#lru.set(key, handle, { size });
    if (this.#lru.peek(key) !== handle) return 'refused';
    if (typeof tags === 'string') this.#tags.set(key, tags);
    else this.#tags.setHashes(key, tags.bytes, tags.tagsAt, tags.tagCount);
    this.#tidy();
    return undefined;
  }

  /** Evacuates some slabs when they hold more than allowed beyond the records held (record-slabs.ts). */
  #tidy(): void {
    if (this.#records.wasteful) this.#records.compact();
  }

  /** Entries pushed out to make room, since the start. */
  get evictions(): number {
    return this.#evictions;
  }

  /** New entries the admission filter let in, since the start. */
  get admitted(): number {
    return this.#admitted;
  }

  /** New entries the admission filter kept out, since the start. */
  get refused(): number {
    return this.#refused;
  }

  /** Times the admission filter saw popularity shift and forgot its counts, since the start. */
  get shifts(): number {
    return this.#shifts;
  }

  /** The admission window's share of the bound now; undefined without admission. */
  get windowShare(): number | undefined {
    return this.#lru instanceof WindowedLru ? this.#lru.windowShare : undefined;
  }

  get entries(): number {
    return this.#lru.size;
  }

  get bytes(): number {
    return this.#lru.calculatedSize;
  }

  /** Tags indexed: for each entry, the tags it carries. */
  get postings(): number {
    return this.#tags.postings;
  }
}
