/**
 * An entry as bytes: the stored responses of one cache key (its variants, newest first) with
 * their reuse facts, secondary keys, tags, the origin's own values of the fields each
 * representation has its own of, and each representation's coding, own field values and body.
 * Every tier keeps this layout: the memory tier as a record in its slabs (response-cache.ts), the
 * disk and Redis tiers inside the codec's envelope (entry-codec.ts). What the representations of
 * many entries share — field names and the values that repeat — is a field shape
 * (field-shapes.ts), which a variant names by its index among the entry's shapes; the memory
 * tier's record lists those shapes by their number in the cache's table, the envelope spells them out.
 *
 * Reading a record makes the StoredResponse the rules and the deliver step read, pointing at the
 * body where the record holds it: a few small objects and the strings of its own values, made
 * again on every read, against an entry's worth of objects kept for its whole life (the memory
 * bench and bench/entry-cost.ts measure both).
 *
 * Layout, little-endian: the memory record begins with its shapes (a count, then a u32 number
 * each); then the variant count, then per variant: its serial and the five times of its reuse
 * facts (f64 each); status (u16); flags (must-revalidate, no-cache); how the origin's values are
 * kept; the offered codings (a coding's number + 1 a byte, 0 past the last); how many origin
 * values, vary fields and representations it has; per vary field whether the request had it; per
 * representation, the kept first, its coding's number, the index of its shape among the entry's,
 * the shape's bytes when it brought it, how many own values it has and its body's length (u32);
 * then all its strings as one latin1 text, with its length and the length of its head (u32 each):
 * first, its head, what a hit sends or selects by — vary names and values, and per representation
 * its coding when it has no number and its own values — each after its length (one character
 * below 0x80, else two: 0x80 and the high byte, then the low one); then the tags and the origin
 * values, each ended by a line feed, which no header field holds (RFC 9110 §5.5); then the
 * bodies. A read decodes the head once and slices it where the lengths say: one string made from
 * the record, not one per value, and no search for the ends. The rest waits until a purge or a
 * revalidation asks for it (RecordRest): a search page's tags are most of its text, and a hit
 * never reads them.
 */
import type { Coding } from '../../../shared/encoding/negotiate.ts';
import { offeredList } from '../../../shared/encoding/negotiate.ts';
import type { FieldShape } from '../field-shapes.ts';
import {
  AS_SENT,
  NO_VALUES,
  NONE_MADE,
  Representation,
  StoredResponse,
  type EntryMaker,
  type Rest,
  type SecondaryKey,
  type Terms,
} from '../stored-response.ts';

const MUST_REVALIDATE = 1;
const NO_CACHE = 2;

/** How a variant keeps the origin's own values of its representation fields (StoredResponse#originValues). */
const VALUES_NONE = 0;
const VALUES_AS_SENT = 1;
const VALUES_LISTED = 2;

/**
 * Fixed bytes of a variant: serial and five times (8 B each), status (2), flags and values kind
 * (1 each), offered codings (4), and the counts of origin values, vary fields and representations (1 each).
 */
const VARIANT_FIXED = 6 * 8 + 2 + 2 + 4 + 3;
/** Before a variant's text: its length and its head's (u32 each). */
const TEXT_FIXED = 8;
const OFFERED_AT = 52;
const COUNTS_AT = 56;

/** Per representation: coding, shape index (1 each), shape bytes (4), own values (1), body length (4). */
const REPRESENTATION_FIXED = 11;

/** A list longer than this is not kept in a record (its count is one byte). */
const LONGEST_LIST = 0xff;

/** What ends each string of the rest of a variant's text. */
const END = '\n';
const NOT_ONE_LINE_OF_LATIN1 = /[\n\u0100-\uffff]/;

/** A head string's length in one character below this, else in two (a first one at or above it). */
const SHORT = 0x80;
/** A head string longer than this is not kept in a record (its length is two characters at most). */
const LONGEST_STRING = 0x7fff;

/**
 * The codings a record names by number; any other (one the gateway keeps as it came) is
 * OTHER_CODING, its name in the text. A read so makes no string for the coding.
 */
const CODINGS: readonly string[] = ['identity', 'gzip', 'br', 'zstd', 'deflate'];
const OTHER_CODING = 0xff;

/** The offered lists read, by their four bytes: few exist (the codings the gateway may send, in the orders configuration gives). */
const offeredLists = new Map<number, readonly Coding[]>();

function offeredBytes(offered: readonly Coding[]): number {
  if (offered.length > 4) throw new RangeError('more codings offered than a record names');
  let bytes = 0;
  for (let i = 0; i < offered.length; i++) bytes |= (CODINGS.indexOf(offered[i] ?? 'identity') + 1) << (8 * i);
  return bytes >>> 0;
}

function offeredOf(bytes: number): readonly Coding[] {
  let list = offeredLists.get(bytes);
  if (list === undefined) {
    const offered: Coding[] = [];
    for (let at = 0; at < 4 && ((bytes >>> (8 * at)) & 0xff) !== 0; at++) {
      const coding = CODINGS[((bytes >>> (8 * at)) & 0xff) - 1];
      if (coding === undefined || coding === 'deflate') throw new RangeError('an offered coding the gateway does not make');
      offered.push(coding as Coding);
    }
    list = offeredList(offered);
    offeredLists.set(bytes, list);
  }
  return list;
}

/** Writes a time through `view`: Buffer's own f64 methods copy the eight bytes one by one. */
function writeDouble(view: DataView, at: number, value: number): number {
  view.setFloat64(at, value, true);
  return at + 8;
}

function representationsOf(response: StoredResponse): readonly Representation[] {
  return response.made.length === 0 ? [response.kept] : [response.kept, ...response.made];
}

/** The variant's origin values, as kept. */
function valuesKind(values: readonly string[] | undefined): number {
  if (values === undefined) return VALUES_NONE;
  return values === AS_SENT ? VALUES_AS_SENT : VALUES_LISTED;
}

function listed(values: readonly string[] | undefined): readonly string[] {
  return values === undefined || values === AS_SENT ? NO_VALUES : values;
}

/** A variant's text, head then rest, and the head's length. */
interface Text {
  readonly text: string;
  readonly head: number;
}

/** A RangeError for a string a record cannot keep. */
function check(text: string): void {
  // Header fields are latin1 (one byte a character) and hold no line feed; a string that is not
  // one could not come back as it went in.
  if (NOT_ONE_LINE_OF_LATIN1.test(text)) throw new RangeError('a field a record cannot keep');
}

function lines(strings: readonly string[]): string {
  for (const text of strings) check(text);
  return strings.length === 0 ? '' : strings.join(END) + END;
}

/** `strings`, each after its length. */
function counted(strings: readonly string[]): string {
  let text = '';
  for (const string of strings) {
    check(string);
    const { length } = string;
    if (length > LONGEST_STRING) throw new RangeError('a field too long for a record');
    text += length < SHORT ? String.fromCharCode(length) : String.fromCharCode(SHORT | (length >> 8), length & 0xff);
    text += string;
  }
  return text;
}

/** A RangeError when a string or list cannot be kept. */
function textOf(response: StoredResponse): Text {
  const strings: string[] = [];
  for (let i = 0; i < response.vary.length; i++) strings.push(response.vary[i] ?? '', response.selecting[i] ?? '');
  for (const representation of representationsOf(response)) {
    if (!CODINGS.includes(representation.coding)) strings.push(representation.coding);
    strings.push(...representation.own);
    if (representation.own.length > LONGEST_LIST) throw new RangeError('a list too long for a record');
  }
  if (listed(response.originValues).length > LONGEST_LIST || response.vary.length > LONGEST_LIST) throw new RangeError('a list too long for a record');
  const head = counted(strings);
  return { text: head + lines([response.tagText, ...listed(response.originValues)]), head: head.length };
}

/** Variants made ready to write: the shapes they name, each one's text, and the bytes they take. */
export interface Prepared {
  readonly variants: readonly StoredResponse[];
  /** The shapes their representations are sent with, each once, in the order an entry lists them. */
  readonly shapes: readonly FieldShape[];
  readonly texts: readonly Text[];
  /** Bytes of the variants as `writeVariants` writes them, without the shapes. */
  readonly length: number;
  /** The bytes of the shapes their representations brought to the maker's table (entry-size.ts counts them with the entry). */
  readonly shapeBytes: number;
}

/** `variants` made ready to write (a RangeError when a string or list cannot be kept). */
export function prepare(variants: readonly StoredResponse[]): Prepared {
  if (variants.length > LONGEST_LIST) throw new RangeError('more variants than a record keeps');
  const shapes: FieldShape[] = [];
  const texts: Text[] = [];
  let length = 1;
  let shapeBytes = 0;
  for (const response of variants) {
    const text = textOf(response);
    texts.push(text);
    length += VARIANT_FIXED + response.vary.length + TEXT_FIXED + text.text.length;
    for (const representation of representationsOf(response)) {
      if (!shapes.includes(representation.shape)) shapes.push(representation.shape);
      length += REPRESENTATION_FIXED + representation.bodyLength;
      shapeBytes += representation.shapeBytes;
    }
  }
  if (shapes.length > LONGEST_LIST) throw new RangeError('more shapes than a record names');
  return { variants, shapes, texts, length, shapeBytes };
}

/**
 * Writes the `prepared` variants at `at` of `into`, their representations naming its shapes by
 * index, each numbered by `serial` unless it has a number already, or 0 without it (a value other
 * processes read, which number what they keep themselves); returns where the writing ended.
 */
export function writeVariants(
  prepared: Prepared,
  into: Buffer,
  at: number,
  serial: (() => number) | undefined,
  view = new DataView(into.buffer, into.byteOffset, into.length),
): number {
  const { variants, shapes, texts } = prepared;
  let p = into.writeUInt8(variants.length, at);
  variants.forEach((response, v) => {
    const representations = representationsOf(response);
    const number = serial === undefined ? 0 : response.serial === 0 ? serial() : response.serial;
    p = writeDouble(view, p, number);
    p = writeDouble(view, p, response.lifetimeMs);
    p = writeDouble(view, p, response.initialAgeMs);
    p = writeDouble(view, p, response.storedAt);
    p = writeDouble(view, p, response.staleWhileRevalidateMs);
    p = writeDouble(view, p, response.staleIfErrorMs);
    p = into.writeUInt16LE(response.status, p);
    p = into.writeUInt8((response.mustRevalidate ? MUST_REVALIDATE : 0) | (response.noCache ? NO_CACHE : 0), p);
    p = into.writeUInt8(valuesKind(response.originValues), p);
    p = into.writeUInt32LE(offeredBytes(response.offered), p);
    p = into.writeUInt8(listed(response.originValues).length, p);
    p = into.writeUInt8(response.vary.length, p);
    p = into.writeUInt8(representations.length, p);
    for (const value of response.selecting) p = into.writeUInt8(value === undefined ? 0 : 1, p);
    for (const representation of representations) {
      const coding = CODINGS.indexOf(representation.coding);
      p = into.writeUInt8(coding === -1 ? OTHER_CODING : coding, p);
      p = into.writeUInt8(shapes.indexOf(representation.shape), p);
      // What a shape cost is the table's of the process keeping the entry: another counts its own.
      p = into.writeUInt32LE(serial === undefined ? 0 : representation.shapeBytes, p);
      p = into.writeUInt8(representation.own.length, p);
      p = into.writeUInt32LE(representation.bodyLength, p);
    }
    const text = texts[v] ?? { text: '', head: 0 };
    p = into.writeUInt32LE(text.text.length, p);
    p = into.writeUInt32LE(text.head, p);
    p += into.write(text.text, p, 'latin1');
    for (const representation of representations)
      p += representation.bodyStore.copy(into, p, representation.bodyOffset, representation.bodyOffset + representation.bodyLength);
  });
  return p;
}

/**
 * Where variants written at `at` of `from` end, when every count, index and length in them stays
 * within `from` and names one of `shapes` shapes; undefined otherwise. A value from another
 * process is walked so before it is read, so that a reader never reads past it.
 */
export function variantsEnd(from: Buffer, view: DataView, at: number, shapes: number): number | undefined {
  if (at >= from.length) return undefined;
  let p = at + 1;
  for (let v = from[at] ?? 0; v > 0; v--) {
    if (p + VARIANT_FIXED > from.length) return undefined;
    const { representations, textAt } = partsOf(from, p);
    if (representations === textAt || textAt + TEXT_FIXED > from.length || view.getUint32(textAt + 4, true) > view.getUint32(textAt, true)) return undefined;
    for (let r = representations; r < textAt; r += REPRESENTATION_FIXED) if ((from[r + 1] ?? 0) >= shapes) return undefined;
    const end = variantEnd(view, representations, textAt);
    if (end > from.length) return undefined;
    p = end;
  }
  return p;
}

/** Where the variant at `at` of `from` has its representations' fixed bytes, and where its text's length is. */
function partsOf(from: Buffer, at: number): { readonly representations: number; readonly textAt: number } {
  const representations = at + VARIANT_FIXED + (from[at + COUNTS_AT + 1] ?? 0);
  return { representations, textAt: representations + (from[at + COUNTS_AT + 2] ?? 0) * REPRESENTATION_FIXED };
}

/** Where a variant ends, past its text and its bodies, from its parts (`partsOf`), read through `view`. */
function variantEnd(view: DataView, representations: number, textAt: number): number {
  let end = textAt + TEXT_FIXED + view.getUint32(textAt, true);
  for (let r = representations; r < textAt; r += REPRESENTATION_FIXED) end += view.getUint32(r + 7, true);
  return end;
}

/**
 * Variants another process wrote (entry-codec.ts), as read: `bytes` from `at` to its end, checked
 * by `variantsEnd`, naming `shapes`, with what each shape cost the maker's table when the read
 * brought it there (`brought`), and the hashes of their tags (tag-index.ts `tagHash`), `tagCount`
 * u32s (little-endian) at `tagsAt` of `bytes`. A cache copies them into a record
 * (`RecordWriter#copy`) and indexes the hashes, rather than writing the response they were read
 * into anew and hashing its tags from their text.
 */
export interface WrittenVariants {
  readonly bytes: Buffer;
  readonly at: number;
  readonly shapes: readonly FieldShape[];
  readonly brought: readonly number[];
  readonly tagsAt: number;
  readonly tagCount: number;
}

/** Writes the memory tier's records; one per cache, so that the shapes it holds are that cache's maker's. */
export class RecordWriter {
  readonly #maker: EntryMaker;

  constructor(maker: EntryMaker) {
    this.#maker = maker;
  }

  /** The bytes the record of `prepared` variants takes. */
  static length(prepared: Prepared): number {
    return 1 + 4 * prepared.shapes.length + prepared.length;
  }

  /**
   * Writes the record of `prepared` variants, `length` bytes, into `into` (whose numbers `view`
   * writes) at `at`, numbering with `serial` each that has no number yet, and holds the shapes it names.
   */
  write(prepared: Prepared, into: Buffer, view: DataView, at: number, serial: () => number): void {
    let p = into.writeUInt8(prepared.shapes.length, at);
    for (const shape of prepared.shapes) p = into.writeUInt32LE(this.#maker.shapes.hold(shape), p);
    writeVariants(prepared, into, p, serial, view);
  }

  /** The bytes the record of `variants` takes (`copy`). */
  static copiedLength(variants: WrittenVariants): number {
    return 1 + 4 * variants.shapes.length + variants.bytes.length - variants.at;
  }

  /**
   * Writes the record of `variants`, `copiedLength` bytes, into `into` (whose numbers `view`
   * writes) at `at` by copying them: the same bytes `write` would write for the responses they
   * were read into, but for the numbers this process gives, each variant's by `serial` and the
   * cost each shape brought by its first representation naming it; and holds the shapes it names.
   */
  copy(variants: WrittenVariants, into: Buffer, view: DataView, at: number, serial: () => number): void {
    into[at] = variants.shapes.length;
    let p = at + 1;
    for (const shape of variants.shapes) {
      view.setUint32(p, this.#maker.shapes.hold(shape), true);
      p += 4;
    }
    variants.bytes.copy(into, p, variants.at);
    const brought = [...variants.brought];
    let v = p + 1;
    for (let count = into[p] ?? 0; count > 0; count--) {
      writeDouble(view, v, serial());
      const { representations, textAt } = partsOf(into, v);
      for (let r = representations; r < textAt; r += REPRESENTATION_FIXED) {
        const shape = into[r + 1] ?? 0;
        view.setUint32(r + 2, brought[shape] ?? 0, true);
        brought[shape] = 0;
      }
      v = variantEnd(view, representations, textAt);
    }
  }

  /** Lets go of the shapes the record at `at` of `from` (whose numbers `view` reads) holds, when the record is released. */
  release(from: Buffer, view: DataView, at: number): void {
    const count = from[at] ?? 0;
    for (let i = 0; i < count; i++) this.#maker.shapes.release(view.getUint32(at + 1 + 4 * i, true));
  }
}

/** The secondary key of a response that does not vary; the StoredResponse shares its own instead. */
const NOT_VARYING: SecondaryKey = { vary: [], selecting: [] };

/** Reads records into StoredResponses; one per cache, reused by every read (reads are synchronous). */
export class RecordReader {
  readonly #maker: EntryMaker;
  #from: Buffer = Buffer.alloc(0);
  /**
   * A view of `#from` for its numbers: the optimizer makes a DataView's read one load, where
   * Buffer's read methods were a fifth of a read's time (bounds checks, bytes put together one by one).
   */
  #view: DataView = new DataView(new ArrayBuffer(0));
  #at = 0;
  #shapesAt = 0;
  /** The shapes of a value from another process, spelled out in it, instead of numbers in the cache's table. */
  #shapes: readonly FieldShape[] | undefined;
  #brought: number[] = [];
  #left = 0;
  /** The text of the variant being read, and where its next string begins. */
  #text = '';
  #textAt = 0;
  /** Handed to the StoredResponse constructor, which copies them. */
  readonly #facts = { lifetimeMs: 0, initialAgeMs: 0, storedAt: 0 };
  readonly #terms: { -readonly [K in keyof Terms]: Terms[K] } = { staleWhileRevalidateMs: 0, staleIfErrorMs: 0, mustRevalidate: false, noCache: false };

  constructor(maker: EntryMaker) {
    this.#maker = maker;
  }

  /** Begins reading the memory record at `at` of `from` (whose numbers `view` reads); returns how many variants it holds. */
  open(from: Buffer, view: DataView, at: number): number {
    this.#shapes = undefined;
    this.#shapesAt = at + 1;
    return this.#begin(from, view, this.#shapesAt + 4 * view.getUint8(at));
  }

  /**
   * Begins reading variants that another process wrote at `at` of `from` (entry-codec.ts),
   * checked by `variantsEnd`, with the `shapes` they name and what each cost the maker's table
   * when this read brought it there (`brought`, which the first representation naming it
   * carries); returns how many there are. They are read unnumbered: what this process keeps, it
   * numbers itself.
   */
  openVariants(from: Buffer, view: DataView, at: number, shapes: readonly FieldShape[], brought: number[]): number {
    this.#shapes = shapes;
    this.#brought = brought;
    return this.#begin(from, view, at);
  }

  #begin(from: Buffer, view: DataView, at: number): number {
    this.#from = from;
    this.#view = view;
    this.#at = at + 1;
    this.#left = from[at] ?? 0;
    return this.#left;
  }

  /** The next variant of the record opened, newest first. */
  next(): StoredResponse {
    if (this.#left-- <= 0) throw new RangeError('no variant left in the record');
    const from = this.#from;
    const view = this.#view;
    const at = this.#at;
    const serial = this.#shapes === undefined ? view.getFloat64(at, true) : 0;
    this.#facts.lifetimeMs = view.getFloat64(at + 8, true);
    this.#facts.initialAgeMs = view.getFloat64(at + 16, true);
    this.#facts.storedAt = view.getFloat64(at + 24, true);
    this.#terms.staleWhileRevalidateMs = view.getFloat64(at + 32, true);
    this.#terms.staleIfErrorMs = view.getFloat64(at + 40, true);
    const status = view.getUint16(at + 48, true);
    const flags = from[at + 50] ?? 0;
    this.#terms.mustRevalidate = (flags & MUST_REVALIDATE) !== 0;
    this.#terms.noCache = (flags & NO_CACHE) !== 0;
    const kind = from[at + 51];
    const offered = offeredOf(view.getUint32(at + OFFERED_AT, true));
    const values = from[at + COUNTS_AT] ?? 0;
    const varies = from[at + COUNTS_AT + 1] ?? 0;
    const count = from[at + COUNTS_AT + 2] ?? 1;
    const present = at + VARIANT_FIXED;
    const representations = present + varies;
    const textAt = representations + count * REPRESENTATION_FIXED;
    const textLength = view.getUint32(textAt, true);
    const head = textAt + TEXT_FIXED;
    const rest = head + view.getUint32(textAt + 4, true);
    this.#text = from.toString('latin1', head, rest);
    this.#textAt = 0;
    let bodyAt = head + textLength;
    let key = NOT_VARYING;
    if (varies > 0) {
      const vary = new Array<string>(varies);
      const selecting = new Array<string | undefined>(varies);
      for (let i = 0; i < varies; i++) {
        vary[i] = this.#string();
        const value = this.#string();
        selecting[i] = from[present + i] === 1 ? value : undefined;
      }
      key = { vary, selecting };
    }
    let kept: Representation | undefined;
    let made: Representation[] | undefined;
    for (let i = 0; i < count; i++) {
      const r = representations + i * REPRESENTATION_FIXED;
      const coding = CODINGS[from[r] ?? OTHER_CODING] ?? this.#string();
      const shape = this.#shape(from[r + 1] ?? 0);
      const own = this.#strings(from[r + 6] ?? 0);
      const bodyLength = view.getUint32(r + 7, true);
      const representation = new Representation(coding, shape, own, from, bodyAt, bodyLength, this.#shapeBytes(from[r + 1] ?? 0, r));
      bodyAt += bodyLength;
      if (kept === undefined) kept = representation;
      else (made ??= new Array<Representation>(count - 1))[i - 1] = representation;
    }
    this.#at = bodyAt;
    if (kept === undefined) throw new RangeError('a variant without a representation');
    const terms = this.#maker.terms(this.#terms);
    const tail = new RecordRest(from, rest, head + textLength, kind ?? VALUES_NONE, values);
    return new StoredResponse(status, kept, tail, offered, this.#facts, terms, key, made ?? NONE_MADE, serial);
  }

  /** The shape bytes a representation carries: as recorded, or for another process's value what this read brought. */
  #shapeBytes(index: number, at: number): number {
    if (this.#shapes === undefined) return this.#view.getUint32(at + 2, true);
    const brought = this.#brought[index] ?? 0;
    this.#brought[index] = 0;
    return brought;
  }

  #shape(index: number): FieldShape {
    if (this.#shapes !== undefined) {
      const shape = this.#shapes[index];
      if (shape === undefined) throw new RangeError(`no shape ${index} in the value`);
      return shape;
    }
    return this.#maker.shapes.numbered(this.#view.getUint32(this.#shapesAt + 4 * index, true));
  }

  #string(): string {
    const text = this.#text;
    let at = this.#textAt;
    let length = text.charCodeAt(at++);
    if (length >= SHORT) length = ((length & ~SHORT) << 8) | text.charCodeAt(at++);
    this.#textAt = at + length;
    return text.slice(at, at + length);
  }

  /**
   * The next `count` strings, in a list of their own, which the Representation keeps: a list reused
   * from read to read, copied by the constructor, cost more than making one.
   */
  #strings(count: number): readonly string[] {
    if (count === 0) return NO_VALUES;
    const texts = new Array<string>(count);
    for (let i = 0; i < count; i++) texts[i] = this.#string();
    return texts;
  }
}

/**
 * The tags and origin values of a response read from a record, read from it when first asked
 * for: a record never changes once written, its slab is not written again while a lookup's pin or
 * exposure holds it (record-slabs.ts), and a value from another process is a Buffer of its own, so
 * the bytes are still there however late that is. Not a subclass of StoredResponse: a read then
 * went through V8's generic construct stub twice, for the subclass and for its base.
 */
class RecordRest implements Rest {
  readonly #from: Buffer;
  readonly #restAt: number;
  readonly #restEnd: number;
  readonly #kind: number;
  readonly #values: number;
  #rest: readonly string[] | undefined;

  constructor(from: Buffer, restAt: number, restEnd: number, kind: number, values: number) {
    this.#from = from;
    this.#restAt = restAt;
    this.#restEnd = restEnd;
    this.#kind = kind;
    this.#values = values;
  }

  /** The tags, then the origin values when listed, one line each. */
  #lines(): readonly string[] {
    return (this.#rest ??= this.#from.toString('latin1', this.#restAt, this.#restEnd).split(END));
  }

  get tagText(): string {
    return this.#lines()[0] ?? '';
  }

  get originValues(): readonly string[] | undefined {
    if (this.#kind === VALUES_NONE) return undefined;
    return this.#kind === VALUES_AS_SENT ? AS_SENT : this.#lines().slice(1, 1 + this.#values);
  }
}
