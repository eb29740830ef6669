/**
 * Where a cache keeps its bodies: copied into large shared slabs, each body a Buffer view of its
 * part of one, so that an entry pays for a view (104 B of heap) instead of a Buffer of its own
 * (a view, an ArrayBuffer and V8's native record for it: 475 B counted, more than most compressed
 * bodies). Space in a slab is never reused. The garbage collector frees a slab once no view of it
 * is left, so a socket still writing a body keeps the body's slab alive with no reference counts.
 *
 * What that leaves is holes: a body no stored entry holds any more stays in its slab until the
 * slab goes. The store is told what holds each body the cache keeps (`hold`, `drop`: a
 * representation), and when its slabs hold more than WASTE_ALLOWED beyond those bodies it lets go
 * of the slabs no held body is in and, if that is not enough, evacuates those with the most
 * holes: each holder's body is copied into the current slab and the holder pointed at the copy.
 * An evacuated slab is left to the collector. Each body is counted with its share of the waste
 * allowed and its place in its slab's list of holders (entry-size.ts).
 */

/** What holds a body the cache keeps (a Representation): the store moves the body by writing `body`. */
export interface BodyHolder {
  body: Buffer;
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
 * Bytes one `compact` copies at most: about a millisecond's work (copies, and a view each), so that
 * evacuating does not pause the requests waiting.
 */
const COPY_BUDGET = 4 * SLAB_BYTES;

/** Every empty body: one shared view costs nothing per entry. */
const EMPTY = Buffer.alloc(0);

interface Slab {
  readonly bytes: Buffer;
  /** Bytes of the bodies in it that are held. */
  live: number;
  /** What holds them, once per hold: a representation that two stored values share is in it twice. */
  readonly holders: BodyHolder[];
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
   * in one, or, when large, into a Buffer of its own unless it is one, and `holder.body` set to it.
   */
  hold(holder: BodyHolder): void {
    const body = holder.body;
    if (body.length === 0) {
      holder.body = EMPTY;
      return;
    }
    let slab = this.#slabs.get(body.buffer);
    if (slab === undefined) {
      if (body.length > LARGEST_SLABBED) {
        holder.body = ownBuffer(body);
        return;
      }
      slab = this.#current === undefined || this.#used + body.length > SLAB_BYTES ? this.#begin() : this.#current;
      const view = slab.bytes.subarray(this.#used, this.#used + body.length);
      body.copy(view);
      this.#used += body.length;
      holder.body = view;
    }
    slab.holders.push(holder);
    slab.live += body.length;
    this.#live += body.length;
  }

  /** `holder` keeps its body in the cache once less. */
  drop(holder: BodyHolder): void {
    const slab = this.#slabs.get(holder.body.buffer);
    if (slab === undefined) return;
    const at = slab.holders.indexOf(holder);
    if (at === -1) return;
    // Their order does not matter: the last takes its place.
    const last = slab.holders.pop();
    if (last !== undefined && at < slab.holders.length) slab.holders[at] = last;
    slab.live -= holder.body.length;
    this.#live -= holder.body.length;
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
        copied += holder.body.length;
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
