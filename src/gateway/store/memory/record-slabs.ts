/**
 * Where a cache keeps its entries: each entry one record of bytes (entry-record.ts) copied into
 * large shared slabs outside the V8 heap, and known by a handle, a small integer that lru-cache
 * holds as the entry's value. An entry so costs no JavaScript object of its own — no view, no
 * ArrayBuffer, no native record per body (475 B counted each), and no object per response that
 * the collector must trace and that leaves holes in V8's pages when it goes. Where each handle's
 * record is lives in three typed arrays.
 *
 * A record never changes once written. A slab whose records are all released, or evacuated, is
 * kept (up to SPARE_SLABS) and written again by the next records instead of a new allocation: a
 * slab outlives scavenges, so one let go of waits for a full collection, and a memory that churns
 * (a fill past the bound, disk hits promoted into a small one) would otherwise hold its dead slabs
 * until then. So a view of a record that leaves the store must be told to the slabs: one read
 * until a known moment (a body a socket writes) holds a pin (`pin`, `unpin`), and an emptied slab
 * is written again only once its last pin goes; one read for as long as it lives (a response whose
 * tags are read later, a body whose reader cannot be followed) marks its slab exposed (`exposed`,
 * `expose`), and that slab is never written again: the collector frees it once no view of it is
 * left, as every slab was before slabs were reused. What is left is
 * holes: a record released stays in its slab until the slab empties; when the slabs hold more than
 * WASTE_ALLOWED beyond the live records, `compact` evacuates those with the most holes, copying
 * each live record into the current slab and pointing its handle at the copy. Every record is
 * framed by its length and handle, so that an evacuated slab is walked record by record. Each
 * record is counted with its frame and its share of the waste allowed (entry-size.ts).
 */

/**
 * Bytes the slabs may hold beyond the records held, as a fraction of them. Smaller costs more
 * copying (a slab with live fraction f is evacuated to free 1 - f of it).
 */
export const WASTE_ALLOWED = 1 / 16;

/**
 * A slab's size: under glibc's threshold for serving an allocation by a mapping of its own
 * (128 KiB), so that slabs come from malloc's heap, which reuses a freed slab's space for the next
 * one without a system call each way. A 256 MiB cache holds about 4,000.
 */
export const SLAB_BYTES = 64 * 1024;

/**
 * The waste allowed is never less than this: in a memory of a few slabs (a 1 MiB one under a disk
 * tier) a sixteenth is less than one slab's tail, and every store evacuated a slab, 35–100 µs
 * each (about 4 KB copied a disk hit). The bound is exceeded by at most this, only while the
 * records hold less than 16 times it.
 */
export const LEAST_WASTE_ALLOWED = 2 * SLAB_BYTES;

/**
 * The largest framed record put in a shared slab. A slab's tail that the next record does not
 * fit in is waste, so records stay small against it; a larger one gets a slab of its own, exactly
 * its size.
 */
export const LARGEST_SLABBED = SLAB_BYTES / 8;

/** Each record's frame: its length and its handle (4 B each, little-endian). */
export const FRAME_BYTES = 8;

/** Bytes one `compact` copies at most: about a millisecond's work, so that evacuating does not pause the requests waiting. */
const COPY_BUDGET = 4 * SLAB_BYTES;

/**
 * Emptied slabs kept to be written again: enough for the slabs a store or a `compact` empties
 * between two that fill one (each evacuation frees one, each slab filled takes one), few enough to
 * cost at most 512 KiB beside the records. They are not counted in `bytes`.
 */
export const SPARE_SLABS = 8;

/**
 * Emptied slabs still pinned that are kept until their last pin goes; past this many the oldest is
 * left to the collector (a pin that is never dropped, by a request that failed half way, costs a
 * place here, not a slab for good).
 */
export const DRAINING_SLABS = 64;

/** A pin names its slab in the low 24 bits (a 64 GiB memory has at most 2^23 slabs)… */
const SLAB_NUMBERS = 2 ** 24;
/** …and, above them, the slab's generation, counted modulo this, so that a pin stays a safe integer. */
const GENERATIONS = 2 ** 29;

/** A handle's slab when it holds no record. */
const RELEASED = -1;

export class RecordSlabs {
  readonly #slabs: (Buffer | undefined)[] = [];
  /** Each slab's numbers are read through a view of it made once (entry-record.ts). */
  readonly #views: (DataView | undefined)[] = [];
  /** Per slab: bytes of its live records, frames included… */
  readonly #slabLive: number[] = [];
  /** …and bytes written to it. */
  readonly #slabUsed: number[] = [];
  readonly #freeSlabs: number[] = [];
  /** Per slab: 1 once a view of it has left the store for good (`exposed`), so that it is never written again… */
  #exposed = new Uint8Array(64);
  /** …the pins on it (views read until a known moment)… */
  #pins = new Int32Array(64);
  /** …and how many times its number was given to a slab, so that a pin outliving its slab's number is told apart. */
  #generations = new Int32Array(64);
  /** Emptied slabs still pinned, oldest first, and their bytes and views, by number. */
  readonly #draining: number[] = [];
  readonly #drainingBytes: (Buffer | undefined)[] = [];
  readonly #drainingViews: (DataView | undefined)[] = [];
  /** Emptied slabs of SLAB_BYTES that no view outside the store reads, and their views, to be written again. */
  readonly #spares: Buffer[] = [];
  readonly #spareViews: DataView[] = [];
  #current = -1;
  /** Bytes of the slabs counted, the current one but for its unwritten tail. */
  #bytes = 0;
  /** Bytes of the live records, frames included. */
  #live = 0;
  #slabOf = new Int32Array(1024).fill(RELEASED);
  #offsetOf = new Int32Array(1024);
  #lengthOf = new Int32Array(1024);
  #handles = 0;
  readonly #freeHandles: number[] = [];

  /**
   * Room for a record of `length` bytes, and its handle. The caller writes the record at
   * `offset(handle)` of `store(handle)` before the handle is handed to anyone else.
   */
  reserve(length: number): number {
    const handle = this.#freeHandles.pop() ?? this.#newHandle();
    this.#place(handle, length);
    return handle;
  }

  /** The Buffer that holds the record… */
  store(handle: number): Buffer {
    const slab = this.#slabs[this.#slabOf[handle] ?? RELEASED];
    if (slab === undefined) throw new Error(`record ${handle} is not held`);
    return slab;
  }

  /** …a view of that Buffer, for the numbers in the record… */
  view(handle: number): DataView {
    const view = this.#views[this.#slabOf[handle] ?? RELEASED];
    if (view === undefined) throw new Error(`record ${handle} is not held`);
    return view;
  }

  /** …where in it the record begins… */
  offset(handle: number): number {
    return this.#offsetOf[handle] ?? 0;
  }

  /** …and its length. */
  length(handle: number): number {
    return this.#lengthOf[handle] ?? 0;
  }

  /**
   * A view of the record leaves the store: a body handed to a socket, a compressor or a write
   * queued for later, a response whose tags are read later. Its slab is then never written again
   * (the collector frees it once those views are gone); until this is called, the store assumes
   * nothing outside it reads the slab once the record is released.
   */
  exposed(handle: number): void {
    const slab = this.#slabOf[handle] ?? RELEASED;
    if (slab !== RELEASED) this.#exposed[slab] = 1;
  }

  /**
   * A view of the record leaves the store and is read until `unpin` (a body handed to a socket,
   * until the answer closes): its slab, if it empties meanwhile, is written again only after. The
   * pin returned names the slab and its generation.
   */
  pin(handle: number): number {
    const slab = this.#slabOf[handle] ?? RELEASED;
    if (slab === RELEASED) throw new Error(`record ${handle} is not held`);
    this.#pins[slab] = (this.#pins[slab] ?? 0) + 1;
    return (this.#generations[slab] ?? 0) * SLAB_NUMBERS + slab;
  }

  /** Nothing reads the view `pin` was taken for any more. */
  unpin(pin: number): void {
    const slab = pin % SLAB_NUMBERS;
    if (this.#generations[slab] !== (pin - slab) / SLAB_NUMBERS) return;
    const pins = (this.#pins[slab] ?? 0) - 1;
    this.#pins[slab] = pins;
    const bytes = this.#drainingBytes[slab];
    if (pins > 0 || bytes === undefined) return;
    const view = this.#drainingViews[slab];
    this.#drainingBytes[slab] = undefined;
    this.#drainingViews[slab] = undefined;
    this.#draining.splice(this.#draining.indexOf(slab), 1);
    this.#spare(slab, bytes, view);
    this.#freeSlabs.push(slab);
  }

  /** The view `pin` was taken for is read for as long as it lives, after all (`exposed`). */
  expose(pin: number): void {
    const slab = pin % SLAB_NUMBERS;
    if (this.#generations[slab] === (pin - slab) / SLAB_NUMBERS) this.#exposed[slab] = 1;
    this.unpin(pin);
  }

  /** Emptied slabs kept until their last pin goes. */
  get draining(): number {
    return this.#draining.length;
  }

  /** Emptied slabs kept to be written again. */
  get spares(): number {
    return this.#spares.length;
  }

  /** The record is no longer kept; its handle may name another. */
  release(handle: number): void {
    const slab = this.#slabOf[handle] ?? RELEASED;
    if (slab === RELEASED) return;
    const framed = (this.#lengthOf[handle] ?? 0) + FRAME_BYTES;
    this.#slabLive[slab] = (this.#slabLive[slab] ?? 0) - framed;
    this.#live -= framed;
    this.#slabOf[handle] = RELEASED;
    this.#freeHandles.push(handle);
    if (this.#slabLive[slab] === 0 && slab !== this.#current) {
      const bytes = this.#slabs[slab];
      const view = this.#views[slab];
      this.#forget(slab);
      this.#retire(slab, bytes, view);
    }
  }

  /** Bytes of the slabs counted: what they cost the process, besides those evacuated until the collector frees them. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Bytes of the records held, frames included. */
  get live(): number {
    return this.#live;
  }

  /** Records held. */
  get records(): number {
    return this.#handles - this.#freeHandles.length;
  }

  /** Whether the slabs hold more than allowed beyond the records held, so that `compact` is due. */
  get wasteful(): boolean {
    return this.#bytes - this.#live > this.#wasteAllowed;
  }

  /**
   * Evacuates the slabs with the most holes, one by one, until the waste is half what is allowed
   * (so that the next evacuation is some releases away) or COPY_BUDGET bytes were copied (so that
   * no call holds the event loop for long; the next store goes on). A cache evicts mostly in the
   * order it filled, so mostly slabs just empty out, and go without a copy.
   */
  compact(): void {
    let copied = 0;
    while (copied < COPY_BUDGET && this.#bytes - this.#live > this.#wasteAllowed / 2) {
      const slab = this.#sparest();
      if (slab === undefined) return;
      copied += this.#evacuate(slab);
    }
  }

  get #wasteAllowed(): number {
    return Math.max(WASTE_ALLOWED * this.#live, LEAST_WASTE_ALLOWED);
  }

  #newHandle(): number {
    if (this.#handles === this.#slabOf.length) {
      const grown = 2 * this.#handles;
      const slabOf = new Int32Array(grown).fill(RELEASED);
      slabOf.set(this.#slabOf);
      const offsetOf = new Int32Array(grown);
      offsetOf.set(this.#offsetOf);
      const lengthOf = new Int32Array(grown);
      lengthOf.set(this.#lengthOf);
      this.#slabOf = slabOf;
      this.#offsetOf = offsetOf;
      this.#lengthOf = lengthOf;
    }
    return this.#handles++;
  }

  /** Frames room for `handle`'s record of `length` bytes at the end of the current slab, or in a slab of its own. */
  #place(handle: number, length: number): void {
    const framed = length + FRAME_BYTES;
    let slab: number;
    if (framed > LARGEST_SLABBED) {
      slab = this.#begin(framed, false);
    } else {
      if (this.#current === -1 || (this.#slabUsed[this.#current] ?? 0) + framed > SLAB_BYTES) this.#current = this.#begin(SLAB_BYTES, true);
      slab = this.#current;
    }
    const bytes = this.#slabs[slab] as Buffer;
    const at = this.#slabUsed[slab] ?? 0;
    bytes.writeUInt32LE(length, at);
    bytes.writeUInt32LE(handle, at + 4);
    this.#slabUsed[slab] = at + framed;
    if (slab === this.#current) this.#bytes += framed;
    this.#slabLive[slab] = (this.#slabLive[slab] ?? 0) + framed;
    this.#live += framed;
    this.#slabOf[handle] = slab;
    this.#offsetOf[handle] = at + FRAME_BYTES;
    this.#lengthOf[handle] = length;
  }

  /** A new slab of `size` bytes; a shared one is counted as it is written, one of a record's own whole. */
  #begin(size: number, shared: boolean): number {
    if (shared && this.#current !== -1) this.#bytes += SLAB_BYTES - (this.#slabUsed[this.#current] ?? 0);
    const slab = this.#freeSlabs.pop() ?? this.#slabs.length;
    if (slab === this.#exposed.length) this.#growSlabNumbers();
    this.#exposed[slab] = 0;
    this.#pins[slab] = 0;
    this.#generations[slab] = ((this.#generations[slab] ?? 0) + 1) % GENERATIONS;
    const spare = shared ? this.#spares.pop() : undefined;
    const bytes = spare ?? Buffer.allocUnsafeSlow(size);
    this.#slabs[slab] = bytes;
    this.#views[slab] = spare === undefined ? new DataView(bytes.buffer, bytes.byteOffset, bytes.length) : this.#spareViews.pop();
    this.#slabLive[slab] = 0;
    this.#slabUsed[slab] = 0;
    if (!shared) this.#bytes += size;
    return slab;
  }

  /** The slab with the smallest share of its bytes live, if any has holes. */
  #sparest(): number | undefined {
    let sparest: number | undefined;
    let least = 1;
    for (let slab = 0; slab < this.#slabs.length; slab++) {
      const bytes = this.#slabs[slab];
      if (bytes === undefined) continue;
      const share = (this.#slabLive[slab] ?? 0) / (slab === this.#current ? (this.#slabUsed[slab] ?? 1) : bytes.length);
      if (share < least) {
        sparest = slab;
        least = share;
      }
    }
    return sparest;
  }

  /** Copies the live records of `slab` elsewhere and stops counting it; the bytes copied. */
  #evacuate(slab: number): number {
    const bytes = this.#slabs[slab] as Buffer;
    const view = this.#views[slab];
    const used = this.#slabUsed[slab] ?? 0;
    this.#forget(slab);
    let copied = 0;
    for (let at = 0; at < used;) {
      const length = bytes.readUInt32LE(at);
      const handle = bytes.readUInt32LE(at + 4);
      const start = at + FRAME_BYTES;
      at = start + length;
      if (this.#slabOf[handle] !== slab || this.#offsetOf[handle] !== start) continue;
      this.#place(handle, length);
      bytes.copy(this.store(handle), this.offset(handle), start, start + length);
      copied += length;
    }
    // Its number and its bytes are given to another only now, so that no record placed above lands in them.
    this.#retire(slab, bytes, view);
    return copied;
  }

  #growSlabNumbers(): void {
    const exposed = new Uint8Array(2 * this.#exposed.length);
    exposed.set(this.#exposed);
    this.#exposed = exposed;
    const pins = new Int32Array(exposed.length);
    pins.set(this.#pins);
    this.#pins = pins;
    const generations = new Int32Array(exposed.length);
    generations.set(this.#generations);
    this.#generations = generations;
  }

  /**
   * Gives the number of `slab`, just emptied, to the next slab, and its bytes too (`#spare`); or,
   * while views of it are pinned, keeps both until the last pin goes (`unpin`).
   */
  #retire(slab: number, bytes: Buffer | undefined, view: DataView | undefined): void {
    if ((this.#pins[slab] ?? 0) === 0) {
      this.#spare(slab, bytes, view);
      this.#freeSlabs.push(slab);
      return;
    }
    this.#drainingBytes[slab] = bytes;
    this.#drainingViews[slab] = view;
    this.#draining.push(slab);
    if (this.#draining.length <= DRAINING_SLABS) return;
    // The oldest goes to the collector, its pins with it: its number's next slab is of another generation.
    const oldest = this.#draining.shift() ?? slab;
    this.#drainingBytes[oldest] = undefined;
    this.#drainingViews[oldest] = undefined;
    this.#freeSlabs.push(oldest);
  }

  /**
   * Keeps the bytes of `slab`, just emptied, to be written again, unless a view of them left the
   * store, they are not of a shared slab's size, or enough are kept: those the collector frees.
   */
  #spare(slab: number, bytes: Buffer | undefined, view: DataView | undefined): void {
    if (bytes === undefined || view === undefined || this.#exposed[slab] === 1 || bytes.length !== SLAB_BYTES || this.#spares.length >= SPARE_SLABS) return;
    this.#spares.push(bytes);
    this.#spareViews.push(view);
  }

  /**
   * Stops counting a slab, whose live records the caller places again: the views of it still in
   * use keep it alive, and the collector frees it after them. The caller frees its number.
   */
  #forget(slab: number): void {
    const bytes = this.#slabs[slab];
    if (bytes === undefined) return;
    this.#live -= this.#slabLive[slab] ?? 0;
    this.#bytes -= slab === this.#current ? (this.#slabUsed[slab] ?? 0) : bytes.length;
    if (slab === this.#current) this.#current = -1;
    this.#slabs[slab] = undefined;
    this.#views[slab] = undefined;
    this.#slabLive[slab] = 0;
    this.#slabUsed[slab] = 0;
  }
}
