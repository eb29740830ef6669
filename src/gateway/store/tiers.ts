/**
 * The process's view of its cache tiers: memory first, then the host's disk (when
 * `gateway.cache.disk` is on). A memory miss looks on disk before the fill asks the fleet or the
 * origin; a disk hit is offered to memory, where admission decides whether it stays. A fill is
 * kept in both; the disk's write is committed with the turn's others and the request does not
 * wait for it. The fleet's Redis tier is consulted by the single flight (../fill/flight.ts), since
 * it takes a lock and a wait that the local tiers do not; so is the disk tier once more when the
 * host's workers take turns at a fill (../workers/host-fill.ts).
 */
import type { ServerResponse } from 'node:http';
import type { Purge, PurgeLog } from '../purge/purge-log.ts';
import { isStream, type Reply } from '../../shared/message-seam.ts';
import type { HeaderFields } from '../rules/cache-control.ts';
import type { DiskStore } from './disk/disk-store.ts';
import type { CacheKey, Lookup, ResponseCache } from './memory/response-cache.ts';
import type { Representation, StoredResponse } from './stored-response.ts';
import type { Coding } from '../../shared/encoding/negotiate.ts';
import type { FillStamp, NotKept } from './tier.ts';

/** A lookup across the local tiers; `disk` when the answer came from the disk tier. */
export type TieredLookup = Lookup & { readonly fromDisk?: boolean };

/** Where a node:http answer keeps the pin on the memory record its body is a view of (`Tiers#lend`). */
const PIN = Symbol('record pin');

type PinnedResponse = ServerResponse & { [PIN]?: number };

export class Tiers {
  readonly memory: ResponseCache;
  readonly disk: DiskStore | undefined;
  readonly #purges: PurgeLog;

  /** One listener for every answer `lend` follows: it reads the pin from the answer, so a hit makes no closure. */
  readonly #unpinOnClose: (this: PinnedResponse) => void;

  constructor(memory: ResponseCache, disk: DiskStore | undefined, purges: PurgeLog) {
    this.#unpinOnClose = function unpinOnClose(this: PinnedResponse): void {
      const pin = this[PIN];
      if (pin !== undefined) memory.unpin(pin);
    };
    this.memory = memory;
    this.disk = disk;
    this.#purges = purges;
  }

  /** Where a fill that begins now stands in the purge log's two orders. */
  stamp(): FillStamp {
    return { generation: this.#purges.generation, mark: this.#purges.mark };
  }

  lookup(key: CacheKey, request: HeaderFields): TieredLookup {
    const found = this.memory.lookup(key, request);
    if (found.kind === 'found' || this.disk === undefined) return found;
    const response = this.disk.get(key, request);
    if (response === undefined) return found;
    this.promote(key, response, this.stamp());
    return { kind: 'found', response, fromDisk: true };
  }

  /**
   * Tells memory how long the response `found` (this request's lookup) is read, once the answer
   * was written. With `reply`, it was sent whole in it and is read by nothing else: when node:http
   * handed all of it to the kernel as it was written (nothing left in the answer or its socket),
   * nothing reads the record any more, and the pin is given back at once. Otherwise, over HTTP/1.1
   * node:http's response emits 'close' once, after its last write completed ('finish') or once its
   * socket closed (libuv's pending writes are cancelled as the handle closes, before the socket's
   * 'close'), and for an answer queued behind others on a pipelined connection too (it never
   * reached the socket); so the pin is given back then. Anything else (no `reply`: a revalidation
   * or a background refresh keeps the response; an HTTP/2 stream, whose DATA nghttp2 hands to the
   * session's socket writes without a copy, which can outlast the stream's 'close'; an answer
   * already closed) exposes the record's slab for good. A found response from disk holds no pin.
   */
  lend(found: TieredLookup, reply: Reply | undefined): void {
    if (found.kind !== 'found' || found.pin === undefined) return;
    if (reply === undefined || isStream(reply) || reply.destroyed) {
      this.memory.expose(found.pin);
      return;
    }
    // Most hits, written at once: a listener added to each answer costs a hit several megamorphic
    // property accesses in node:events.
    if (reply.writableEnded && reply.writableLength === 0) {
      this.memory.unpin(found.pin);
      return;
    }
    (reply as PinnedResponse)[PIN] = found.pin;
    reply.on('close', this.#unpinOnClose);
  }

  /**
   * Offers an entry found on disk to memory, where admission decides whether it stays: the bytes
   * read are copied when they are the entry as stored (ResponseCache#adopt), else it is put.
   */
  promote(key: CacheKey, response: StoredResponse, stamp: FillStamp): void {
    const variants = this.disk?.variantsOf(response);
    if (variants === undefined) this.memory.put(key, response, stamp);
    else this.memory.adopt(key, response, variants, stamp);
  }

  /**
   * `response`'s representation in `coding` (ResponseCache#represent). One made for a hit from the
   * disk tier is added to the value there too (DiskStore#add): memory may evict the entry before its
   * next ask, and the disk would otherwise make it again on every hit.
   */
  represent(key: CacheKey, response: StoredResponse, coding: Coding, keep: boolean): Representation {
    const known = response.representation(coding);
    if (known !== undefined) return known;
    const made = this.memory.represent(key, response, coding, keep);
    this.disk?.add(response, made);
    return made;
  }

  /**
   * Keeps a fill in every local tier. Not kept when memory says it is too large or purged; one
   * that memory's admission turned away is kept all the same when the disk tier took it.
   */
  keep(key: CacheKey, response: StoredResponse, stamp: FillStamp): NotKept | undefined {
    const memory = this.memory.put(key, response, stamp);
    if (memory === 'too-large' || memory === 'purged' || this.disk === undefined) return memory;
    void this.disk.put(key, response, stamp);
    return undefined;
  }

  /** RFC 9111 §4.3.4: `updated`, freshened by a 304, takes the place of `stored`. */
  replace(key: CacheKey, stored: StoredResponse, updated: StoredResponse, stamp: FillStamp): void {
    this.memory.replace(key, stored, updated);
    void this.disk?.put(key, updated, stamp);
  }

  /** Applies a purge to every local tier; the entries memory held that it named. */
  purge(purge: Purge): number {
    this.disk?.purge(purge);
    return this.memory.purge(purge);
  }
}
