/**
 * Where a cache keeps its bodies: copied into large shared slabs, each body known by its slab and
 * its place in it, so that an entry pays for two numbers instead of a Buffer of its own (a view,
 * an ArrayBuffer and V8's native record for it: 475 B counted, more than most compressed bodies)
 * or even a view of its part (104 B of heap, 146 B counted, kept by every entry for the moment it
 * is sent). A view is made when the body is sent. Space in a slab is never reused. The garbage
 * collector frees a slab once no view of it is left, so a socket still writing a body keeps the
 * body's slab alive with no reference counts.
 *
 * What that leaves is holes: a body no stored entry holds any more stays in its slab until the
 * slab goes. The store is told what holds each body the cache keeps (`hold`, `drop`: a
 * representation), and when its slabs hold more than WASTE_ALLOWED beyond those bodies it lets go
 * of the slabs no held body is in and, if that is not enough, evacuates those with the most
 * holes: each holder's body is copied into the current slab and the holder pointed at the copy.
 * An evacuated slab is left to the collector. Each body is counted with its share of the waste
 * allowed and its place in its slab's list of holders (entry-size.ts).
 */

/**
 * A body the cache may keep (a Representation is one). Its bytes are `bodyLength` bytes of
 * `bodyStore` from `bodyOffset`: the body as given until the cache holds it, then a slab (or, when
 * large, a Buffer of its own), set by BodySlabs when it copies the body into a slab and when it
 * moves it out of one it evacuates. The bytes stay the same.
 */
export class HeldBody {
  #store: Buffer;
  #offset = 0;
  readonly bodyLength: number;

  constructor(body: Buffer) {
    this.#store = body;
    this.bodyLength = body.length;
  }

  /**
   * The body: a view made for the caller when it is part of a slab. A view kept by every entry
   * cost it 146 B counted; making one to send costs about 30 ns.
   */
  get body(): Buffer {
    const store = this.#store;
    if (this.#offset === 0 && store.length === this.bodyLength) return store;
    return Buffer.from(store.buffer, store.byteOffset + this.#offset, this.bodyLength);
  }

  get bodyStore(): Buffer {
    return this.#store;
  }

  get bodyOffset(): number {
    return this.#offset;
  }

  /** Where the body is now; only the slabs that hold it say so. */
  placeBody(store: Buffer, offset: number): void {
    this.#store = store;
    this.#offset = offset;
  }
}

/**
 * Bytes the slabs may hold beyond the bodies held, as a fraction of them. Smaller costs more
 * copying (a slab with live fraction f is evacuated to free 1 - f of it); this is what each body
 * is counted with beyond its own bytes.
 */
export const WASTE_ALLOWED = 1 / 16;

/**
 * A slab's size: under glibc's threshold for serving an allocation by a mapping of its own
 * (128 KiB), so that slabs come from malloc's heap, which reuses a freed slab's space for the next
 * one without a system call each way. A 256 MiB cache holds about 4,000.
 */
export const SLAB_BYTES = 64 * 1024;

/**
 * The largest body put in a slab. A slab's tail that the next body does not fit in is waste, so
 * bodies stay small against it; a larger one keeps a Buffer of its own, whose record (475 B
 * counted) is under 6 % of it.
 */
export const LARGEST_SLABBED = SLAB_BYTES / 8;

/**
 * Bytes one `compact` copies at most: about a millisecond's work, so that
 * evacuating does not pause the requests waiting.
 */
const COPY_BUDGET = 4 * SLAB_BYTES;

/** Every empty body: one shared Buffer. */
const EMPTY = Buffer.alloc(0);

interface Slab {
  readonly bytes: Buffer;
  /** Bytes of the bodies in it that are held. */
  live: number;
  /** What holds them, once per hold: a representation that two stored values share is in it twice. */
  readonly holders: HeldBody[];
}

/**
 * `body` in a Buffer that owns exactly its bytes: a slice of a pooled or larger buffer would keep
 * the whole of it alive (8 KiB for Node's pool) for as long as the entry lives.
 */
function ownBuffer(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  const copy = Buffer.allocUnsafeSlow(body.length);
  body.copy(copy);
  return copy;
}

export class BodySlabs {
  /** Every slab counted, by its memory, so that a body's slab is found from the body. */
  readonly #slabs = new Map<ArrayBufferLike, Slab>();
  #current: Slab | undefined;
  /** Bytes of the current slab used. */
  #used = 0;
  /** Bytes of the slabs no longer written to, tails included. */
  #sealed = 0;
  #live = 0;

  /**
   * `holder` keeps its body in the cache (once more). The body is copied into a slab unless it is
   * in one (a representation made again from a stored one's body), or, when large, into a Buffer of
   * its own unless it is one, and the holder pointed at it.
   */
  hold(holder: HeldBody): void {
    const length = holder.bodyLength;
    if (length === 0) {
      holder.placeBody(EMPTY, 0);
      return;
    }
    const store = holder.bodyStore;
    let slab = this.#slabs.get(store.buffer);
    if (slab === undefined) {
      if (length > LARGEST_SLABBED) {
        holder.placeBody(ownBuffer(holder.body), 0);
        return;
      }
      slab = this.#current === undefined || this.#used + length > SLAB_BYTES ? this.#begin() : this.#current;
      store.copy(slab.bytes, this.#used, holder.bodyOffset, holder.bodyOffset + length);
      holder.placeBody(slab.bytes, this.#used);
      this.#used += length;
    } else if (store !== slab.bytes) {
      // A view of a slab (a body sent or decoded from a stored one): held as the slab and its place.
      holder.placeBody(slab.bytes, store.byteOffset - slab.bytes.byteOffset + holder.bodyOffset);
    }
    slab.holders.push(holder);
    slab.live += length;
    this.#live += length;
  }

  /** `holder` keeps its body in the cache once less. */
  drop(holder: HeldBody): void {
    const slab = this.#slabs.get(holder.bodyStore.buffer);
    if (slab === undefined) return;
    const at = slab.holders.indexOf(holder);
    if (at === -1) return;
    // Their order does not matter: the last takes its place.
    const last = slab.holders.pop();
    if (last !== undefined && at < slab.holders.length) slab.holders[at] = last;
    slab.live -= holder.bodyLength;
    this.#live -= holder.bodyLength;
  }

  /** Bytes of the slabs counted: what they cost the process, besides those evacuated until the collector frees them. */
  get bytes(): number {
    return this.#sealed + this.#used;
  }

  /** Bytes of the bodies held in them. */
  get live(): number {
    return this.#live;
  }

  /** Whether the slabs hold more than allowed beyond the bodies held, so that `compact` is due. */
  get wasteful(): boolean {
    return this.bytes - this.#live > WASTE_ALLOWED * this.#live;
  }

  /**
   * Lets go of the slabs no held body is in, and when that is not enough evacuates the slabs with
   * the most holes, one by one, until the waste is half what is allowed (so that the next
   * evacuation is some evictions away) or COPY_BUDGET bytes were copied (so that no call holds
   * the event loop for long; the next store goes on). A cache evicts mostly in the order it
   * filled, so mostly slabs just empty out.
   */
  compact(): void {
    for (const slab of [...this.#slabs.values()]) if (slab.live === 0) this.#forget(slab);
    let copied = 0;
    while (copied < COPY_BUDGET && this.bytes - this.#live > (WASTE_ALLOWED / 2) * this.#live) {
      const slab = this.#sparest();
      if (slab === undefined) return;
      this.#forget(slab);
      for (const holder of slab.holders) {
        copied += holder.bodyLength;
        this.hold(holder);
      }
    }
  }

  /** The slab with the smallest share of its bytes held, if any has holes. */
  #sparest(): Slab | undefined {
    let sparest: Slab | undefined;
    let least = 1;
    for (const slab of this.#slabs.values()) {
      const share = slab.live / (slab === this.#current ? this.#used : SLAB_BYTES);
      if (share < least) {
        sparest = slab;
        least = share;
      }
    }
    return sparest;
  }

  #begin(): Slab {
    if (this.#current !== undefined) this.#sealed += SLAB_BYTES;
    const slab: Slab = { bytes: Buffer.allocUnsafeSlow(SLAB_BYTES), live: 0, holders: [] };
    this.#slabs.set(slab.bytes.buffer, slab);
    this.#current = slab;
    this.#used = 0;
    return slab;
  }

  /**
   * Stops counting a slab, whose holders the caller holds again elsewhere: the views of it still
   * in use keep it alive, and the collector frees it after them.
   */
  #forget(slab: Slab): void {
    this.#slabs.delete(slab.bytes.buffer);
    this.#live -= slab.live;
    if (slab === this.#current) {
      this.#current = undefined;
      this.#used = 0;
    } else {
      this.#sealed -= SLAB_BYTES;
    }
  }
}
