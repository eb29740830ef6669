/**
 * A memory entry as one record of bytes: the stored responses of one cache key (its variants,
 * newest first) with their reuse facts, secondary keys, tags, the origin's own values of the
 * fields each representation has its own of, and each representation's coding, own field values
 * and body. What the representations of many entries share — field names and the values that
 * repeat — stays in the maker's shapes, which a record names by number (field-shapes.ts); so a
 * record is the process's own, and the disk and Redis tiers keep the portable form instead
 * (entry-codec.ts).
 *
 * Reading a record makes the StoredResponse the rules and the deliver step read, pointing at the
 * body where the record holds it: a few small objects and the strings of its own values, made
 * again on every read, against an entry's worth of objects kept for its whole life (the memory
 * bench and bench/entry-cost.ts measure both).
 *
 * Layout, little-endian: the shapes the record holds (a count, then a u32 number each), the
 * variant count, then per variant: its serial and the five times of its reuse facts (f64 each);
 * status (u16); flags (must-revalidate, no-cache); how the origin's values are kept; the offered
 * list's number; how many origin values, vary fields and representations it has; per vary field
 * whether the request had it; per representation, the kept first, its coding's number, the index
 * of its shape among the record's, the shape's bytes when it brought it, how many own values it
 * has and its body's length (u32); then all its strings as one latin1 text, each ended by a line
 * feed, which no header field holds (RFC 9110 §5.5): tags, origin values, vary names and values,
 * and per representation its coding when it has no number and its own values; then the bodies.
 * A read decodes the text once and slices it: one string made from the record, not one per value.
 */
import type { Coding } from '../../shared/encoding/negotiate.ts';
import { offeredList } from '../../shared/encoding/negotiate.ts';
import type { Terms } from './stored-response.ts';
import type { FieldShape } from './field-shapes.ts';
import { AS_SENT, NO_VALUES, Representation, StoredResponse, type EntryMaker, type SecondaryKey } from './stored-response.ts';

const MUST_REVALIDATE = 1;
const NO_CACHE = 2;

/** How a variant keeps the origin's own values of its representation fields (StoredResponse#originValues). */
const VALUES_NONE = 0;
const VALUES_AS_SENT = 1;
const VALUES_LISTED = 2;

/**
 * Fixed bytes of a variant: serial and five times (8 B each), status (2), flags, values kind,
 * offered list, and the counts of origin values, vary fields and representations (1 each).
 */
const VARIANT_FIXED = 6 * 8 + 2 + 6;

/** Per representation: coding, shape index (1 each), shape bytes (4), own values (1), body length (4). */
const REPRESENTATION_FIXED = 11;

/** A list longer than this is not kept in a record (its count is one byte). */
const LONGEST_LIST = 0xff;

/** What ends each string of a variant's text. */
const END = '\n';

/**
 * The codings a record names by number; any other (one the gateway keeps as it came) is
 * OTHER_CODING, its name in the text. A read so makes no string for the coding.
 */
const CODINGS: readonly string[] = ['identity', 'gzip', 'br', 'zstd', 'deflate'];
const OTHER_CODING = 0xff;

/**
 * The offered lists records name by number. Few exist (the codings the gateway may send, in the
 * orders that configuration and the shared tiers give), so the table is the process's and only grows.
 */
const offeredByNumber: (readonly Coding[])[] = [];
const offeredNumbers = new Map<string, number>();

function offeredNumber(offered: readonly Coding[]): number {
  const name = offered.join(',');
  let number = offeredNumbers.get(name);
  if (number === undefined) {
    number = offeredByNumber.length;
    if (number > 0xff) throw new RangeError('more offered lists than a record can name');
    offeredByNumber.push(offeredList(offered));
    offeredNumbers.set(name, number);
  }
  return number;
}

/**
 * The times are written and read as two u32 halves through these: Buffer's own f64 methods copy
 * the eight bytes one by one, a third of a read's time. A record never leaves the process, so the
 * platform's byte order is the record's.
 */
const double = new Float64Array(1);
const halves = new Uint32Array(double.buffer);

function writeDouble(into: Buffer, at: number, value: number): number {
  double[0] = value;
  into.writeUInt32LE(halves[0] ?? 0, at);
  return into.writeUInt32LE(halves[1] ?? 0, at + 4);
}

function readDouble(from: Buffer, at: number): number {
  halves[0] = from.readUInt32LE(at);
  halves[1] = from.readUInt32LE(at + 4);
  return double[0] ?? 0;
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

/** A variant's strings in the order its text holds them (a RangeError when one cannot be kept). */
function textOf(response: StoredResponse): string {
  const strings: string[] = [response.tagText, ...listed(response.originValues)];
  for (let i = 0; i < response.vary.length; i++) strings.push(response.vary[i] ?? '', response.selecting[i] ?? '');
  for (const representation of representationsOf(response)) {
    if (!CODINGS.includes(representation.coding)) strings.push(representation.coding);
    strings.push(...representation.own);
    if (representation.own.length > LONGEST_LIST) throw new RangeError('a list too long for a record');
  }
  if (listed(response.originValues).length > LONGEST_LIST || response.vary.length > LONGEST_LIST) throw new RangeError('a list too long for a record');
  for (const text of strings) if (text.includes(END)) throw new RangeError('a line feed in a field');
  return strings.join(END) + END;
}

/** Writes records; one per cache, so that the shapes it holds are that cache's maker's. */
export class RecordWriter {
  readonly #maker: EntryMaker;

  constructor(maker: EntryMaker) {
    this.#maker = maker;
  }

  /** The bytes `variants`' record takes (a RangeError when it cannot keep one of their strings or lists). */
  length(variants: readonly StoredResponse[]): number {
    let length = 1 + 1;
    const shapes = new Set<unknown>();
    for (const response of variants) {
      length += VARIANT_FIXED + response.vary.length + 4 + textOf(response).length;
      for (const representation of representationsOf(response)) {
        shapes.add(representation.shape);
        length += REPRESENTATION_FIXED + representation.bodyLength;
      }
    }
    return length + 4 * shapes.size;
  }

  /**
   * Writes `variants`' record, `length` bytes, into `into` at `at`, numbering with `serial` each
   * that has no number yet, and holds the shapes it names.
   */
  write(variants: readonly StoredResponse[], into: Buffer, at: number, serial: () => number): void {
    const shapes: FieldShape[] = [];
    for (const response of variants)
      for (const representation of representationsOf(response)) if (!shapes.includes(representation.shape)) shapes.push(representation.shape);
    let p = into.writeUInt8(shapes.length, at);
    for (const shape of shapes) p = into.writeUInt32LE(this.#maker.shapes.hold(shape), p);
    p = into.writeUInt8(variants.length, p);
    for (const response of variants) {
      const representations = representationsOf(response);
      p = writeDouble(into, p, response.serial === 0 ? serial() : response.serial);
      p = writeDouble(into, p, response.lifetimeMs);
      p = writeDouble(into, p, response.initialAgeMs);
      p = writeDouble(into, p, response.storedAt);
      p = writeDouble(into, p, response.staleWhileRevalidateMs);
      p = writeDouble(into, p, response.staleIfErrorMs);
      p = into.writeUInt16LE(response.status, p);
      p = into.writeUInt8((response.mustRevalidate ? MUST_REVALIDATE : 0) | (response.noCache ? NO_CACHE : 0), p);
      p = into.writeUInt8(valuesKind(response.originValues), p);
      p = into.writeUInt8(offeredNumber(response.offered), p);
      p = into.writeUInt8(listed(response.originValues).length, p);
      p = into.writeUInt8(response.vary.length, p);
      p = into.writeUInt8(representations.length, p);
      for (const value of response.selecting) p = into.writeUInt8(value === undefined ? 0 : 1, p);
      for (const representation of representations) {
        const coding = CODINGS.indexOf(representation.coding);
        p = into.writeUInt8(coding === -1 ? OTHER_CODING : coding, p);
        p = into.writeUInt8(shapes.indexOf(representation.shape), p);
        p = into.writeUInt32LE(representation.shapeBytes, p);
        p = into.writeUInt8(representation.own.length, p);
        p = into.writeUInt32LE(representation.bodyLength, p);
      }
      const text = textOf(response);
      p = into.writeUInt32LE(text.length, p);
      p += into.write(text, p, 'latin1');
      for (const representation of representations)
        p += representation.bodyStore.copy(into, p, representation.bodyOffset, representation.bodyOffset + representation.bodyLength);
    }
  }

  /** Lets go of the shapes the record at `at` of `from` holds, when the record is released. */
  release(from: Buffer, at: number): void {
    const count = from.readUInt8(at);
    for (let i = 0; i < count; i++) this.#maker.shapes.release(from.readUInt32LE(at + 1 + 4 * i));
  }

  /** The bytes of the shapes the record brought to the maker's table (entry-size.ts counts them with it). */
  static shapeBytes(variants: readonly StoredResponse[]): number {
    let bytes = 0;
    for (const response of variants) for (const representation of representationsOf(response)) bytes += representation.shapeBytes;
    return bytes;
  }
}

/** The secondary key of a response that does not vary; the StoredResponse shares its own instead. */
const NOT_VARYING: SecondaryKey = { vary: [], selecting: [] };

const NONE_MADE: readonly Representation[] = [];

/** Reads records into StoredResponses; one per cache, reused by every read (reads are synchronous). */
export class RecordReader {
  readonly #maker: EntryMaker;
  #from: Buffer = Buffer.alloc(0);
  #at = 0;
  #shapesAt = 0;
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

  /** Begins reading the record at `at` of `from`; returns how many variants it holds. */
  open(from: Buffer, at: number): number {
    this.#from = from;
    this.#shapesAt = at + 1;
    this.#at = this.#shapesAt + 4 * from.readUInt8(at);
    this.#left = from.readUInt8(this.#at++);
    return this.#left;
  }

  /** The next variant of the record opened, newest first. */
  next(): StoredResponse {
    if (this.#left-- <= 0) throw new RangeError('no variant left in the record');
    const from = this.#from;
    const at = this.#at;
    const serial = readDouble(from, at);
    this.#facts.lifetimeMs = readDouble(from, at + 8);
    this.#facts.initialAgeMs = readDouble(from, at + 16);
    this.#facts.storedAt = readDouble(from, at + 24);
    this.#terms.staleWhileRevalidateMs = readDouble(from, at + 32);
    this.#terms.staleIfErrorMs = readDouble(from, at + 40);
    const status = from.readUInt16LE(at + 48);
    const flags = from[at + 50] ?? 0;
    this.#terms.mustRevalidate = (flags & MUST_REVALIDATE) !== 0;
    this.#terms.noCache = (flags & NO_CACHE) !== 0;
    const kind = from[at + 51];
    const offered = offeredByNumber[from[at + 52] ?? 0] ?? NO_VALUES;
    const values = from[at + 53] ?? 0;
    const varies = from[at + 54] ?? 0;
    const count = from[at + 55] ?? 1;
    const present = at + VARIANT_FIXED;
    const representations = present + varies;
    const textAt = representations + count * REPRESENTATION_FIXED;
    const textLength = from.readUInt32LE(textAt);
    this.#text = from.toString('latin1', textAt + 4, textAt + 4 + textLength);
    this.#textAt = 0;
    let bodyAt = textAt + 4 + textLength;
    const tagText = this.#string();
    const originValues = kind === VALUES_NONE ? undefined : kind === VALUES_AS_SENT ? AS_SENT : this.#strings(values);
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
      const shape = this.#maker.shapes.numbered(from.readUInt32LE(this.#shapesAt + 4 * (from[r + 1] ?? 0)));
      const own = this.#strings(from[r + 6] ?? 0);
      const bodyLength = from.readUInt32LE(r + 7);
      const representation = new Representation(coding, shape, own, from, bodyAt, bodyLength, from.readUInt32LE(r + 2));
      bodyAt += bodyLength;
      if (kept === undefined) kept = representation;
      else (made ??= []).push(representation);
    }
    this.#at = bodyAt;
    if (kept === undefined) throw new RangeError('a variant without a representation');
    return new StoredResponse(
      status,
      kept,
      originValues,
      offered as readonly Coding[],
      this.#facts,
      this.#maker.terms(this.#terms),
      key,
      tagText,
      made ?? NONE_MADE,
      serial,
    );
  }

  #string(): string {
    const end = this.#text.indexOf(END, this.#textAt);
    const text = this.#text.slice(this.#textAt, end);
    this.#textAt = end + 1;
    return text;
  }

  #strings(count: number): readonly string[] {
    if (count === 0) return NO_VALUES;
    const texts = new Array<string>(count);
    for (let i = 0; i < count; i++) texts[i] = this.#string();
    return texts;
  }
}
