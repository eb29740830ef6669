/**
 * Where a cache keeps its bodies: copied into large shared slabs, each body a Buffer view of its
 * part of one, so that an entry pays for a view (104 B of heap) instead of a Buffer of its own
 * (a view, an ArrayBuffer and V8's native record for it: 475 B counted, more than most compressed
 * bodies). Space in a slab is never reused. The garbage collector frees a slab once no view of it
 * is left, so a socket still writing a body keeps the body's slab alive with no reference counts.
 *
 * What that leaves is holes: a body its entry no longer holds stays in its slab until the slab
 * goes. The store is told which bodies the cache holds (`hold`, `drop`), and when its slabs hold
 * more than WASTE_ALLOWED beyond them it evacuates the slabs with the most holes: the cache walks
 * its bodies through `compact`, which copies those in an evacuated slab into the current one and
 * hands back the copy to hold instead; the slab is left to the collector. Each body is therefore
 * counted with its share of the waste allowed (entry-size.ts).
 */

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

/** Every empty body: one shared view costs nothing per entry. */
const EMPTY = Buffer.alloc(0);

interface Slab {
  readonly bytes: Buffer;
  /** Bytes of the bodies in it that the cache holds. */
  live: number;
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
  /** Every slab held, by its memory, so that a body's slab is found from the body. */
  readonly #slabs = new Map<ArrayBufferLike, Slab>();
  #current: Slab | undefined;
  /** Bytes of the current slab used. */
  #used = 0;
  /** Bytes of the slabs no longer written to, tails included. */
  #sealed = 0;
  #live = 0;

  /** `body` as the cache keeps it: a view of a slab (a copy, unless it is one), or a Buffer of its own when large. */
  place(body: Buffer): Buffer {
    if (body.length === 0) return EMPTY;
    if (this.#slabs.has(body.buffer)) return body;
    if (body.length > LARGEST_SLABBED) return ownBuffer(body);
    let current = this.#current;
    if (current === undefined || this.#used + body.length > SLAB_BYTES) current = this.#begin();
    const view = current.bytes.subarray(this.#used, this.#used + body.length);
    body.copy(view);
    this.#used += body.length;
    return view;
  }

  /** The cache holds `body` (placed) in one more entry. */
  hold(body: Buffer): void {
    const slab = this.#slabs.get(body.buffer);
    if (slab === undefined) return;
    slab.live += body.length;
    this.#live += body.length;
  }

  /** An entry holding `body` left the cache. */
  drop(body: Buffer): void {
    const slab = this.#slabs.get(body.buffer);
    if (slab === undefined) return;
    slab.live -= body.length;
    this.#live -= body.length;
  }

  /** Bytes of the slabs held: what they cost the process until the collector frees those evacuated. */
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
   * Evacuates the slabs with the most holes until the waste is half what is allowed, so that
   * the next evacuation is some evictions away. `walk` must pass every body the cache holds to
   * `move` and hold the body it returns in its place (a copy when the body's slab is evacuated).
   */
  compact(walk: (move: (body: Buffer) => Buffer) => void): void {
    const capacity = (slab: Slab): number => (slab === this.#current ? this.#used : SLAB_BYTES);
    const bySpareness = [...this.#slabs.values()].sort((a, b) => a.live / capacity(a) - b.live / capacity(b));
    const evacuated = new Set<ArrayBufferLike>();
    let waste = this.bytes - this.#live;
    for (const slab of bySpareness) {
      if (waste <= (WASTE_ALLOWED / 2) * this.#live) break;
      waste -= capacity(slab) - slab.live;
      evacuated.add(slab.bytes.buffer);
    }
    for (const memory of evacuated) this.#forget(memory);
    walk((body) => {
      if (!evacuated.has(body.buffer)) return body;
      const copy = this.place(body);
      this.hold(copy);
      return copy;
    });
  }

  #begin(): Slab {
    if (this.#current !== undefined) this.#sealed += SLAB_BYTES;
    const slab: Slab = { bytes: Buffer.allocUnsafeSlow(SLAB_BYTES), live: 0 };
    this.#slabs.set(slab.bytes.buffer, slab);
    this.#current = slab;
    this.#used = 0;
    return slab;
  }

  /** Stops counting a slab: the views of it still in use keep it alive, and the collector frees it after them. */
  #forget(memory: ArrayBufferLike): void {
    const slab = this.#slabs.get(memory);
    if (slab === undefined) return;
    this.#slabs.delete(memory);
    this.#live -= slab.live;
    if (slab === this.#current) {
      this.#current = undefined;
      this.#used = 0;
    } else {
      this.#sealed -= SLAB_BYTES;
    }
  }
}
