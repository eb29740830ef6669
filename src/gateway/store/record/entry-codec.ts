/**
 * A stored response as bytes for every tier outside the process (the host's disk tier, the
 * fleet's Redis tier): the entry layout the memory tier keeps (entry-record.ts) in an envelope —
 * magic, codec version, a CRC-32 of all that follows, the purge mark of the fill that made it,
 * and the field shapes its representations name, spelled out, since another process's table
 * numbers them otherwise, each followed by its CRC-32, by which a read finds the shape it spells
 * without making a string of it; then the hashes of the tags (tag-index.ts `tagHash`), which a
 * cache that keeps the entry indexes without hashing the tags' text again. Only the kept
 * representation goes in as a rule: every process makes the other codings it is asked for
 * itself, from the compressed body the fill made. The host's disk tier may keep the ones its hits
 * were asked for too (`encodeEntry`'s `made`, disk-store.ts).
 *
 * A value that does not decode — another version's, torn by a crash, damaged on disk, with a
 * count or length that runs past its end, or with a field that could not be sent — is treated as
 * absent, never served: the checksum is what makes a half-written value on a disk that lied about
 * a flush a miss rather than an answer, and the field check what keeps a value another process
 * wrote from splitting a hit's head.
 */
import { crc32 } from 'node:zlib';
import { isField, isFieldValue } from '../../rules/message.ts';
import { prepare, RecordReader, variantsEnd, writeVariants, type WrittenVariants } from './entry-record.ts';
import { BoundedMemo } from '../../../shared/bounded-memo.ts';
import { spell, type FieldShape } from '../field-shapes.ts';
import { tagHash } from '../tag-index.ts';
import { StoredResponse, type EntryMaker, type Representation } from '../stored-response.ts';

/** Bumped whenever the layout changes: a tier holding another version's values finds them absent. */
export const CODEC_VERSION = 6;

/** `CGE` (catalog-gateway entry) and the version byte. */
const MAGIC = 0x43474500 | CODEC_VERSION;

/** Magic and version (4), CRC-32 (4). */
const PREAMBLE = 8;

export interface EncodedEntry {
  readonly response: StoredResponse;
  /** The last fleet purge the storing process had applied when its fill began (../../fleet/purge-stream.ts). */
  readonly mark: string;
  /** The value's variants, which a cache may copy into a record of its own. */
  readonly variants: WrittenVariants;
}

/** The response as its fill made it, without the representations made since, which each process makes for itself. */
function asKept(response: StoredResponse): StoredResponse {
  if (response.made.length === 0) return response;
  return new StoredResponse(response.status, response.kept, response.rest, response.offered, response, response.terms, response);
}

/** `stored` as a value; with `made`, the representations made from the kept one since go in too. */
export function encodeEntry(stored: StoredResponse, mark: string, made = false): Buffer {
  const prepared = prepare([made ? stored : asKept(stored)]);
  const texts = prepared.shapes.map(spell);
  const tags = stored.tags;
  let length = PREAMBLE + 2 + mark.length + 1 + 4 + 4 * tags.length + prepared.length;
  for (const text of texts) length += 8 + text.length;
  const out = Buffer.allocUnsafe(length);
  out.writeUInt32BE(MAGIC, 0);
  let p = out.writeUInt16LE(mark.length, PREAMBLE);
  p += out.write(mark, p, 'latin1');
  p = out.writeUInt8(texts.length, p);
  for (const text of texts) {
    const at = out.writeUInt32LE(text.length, p);
    p = at + out.write(text, at, 'latin1');
    p = out.writeUInt32LE(crc32(out.subarray(at, p)), p);
  }
  p = out.writeUInt32LE(tags.length, p);
  for (const tag of tags) p = out.writeUInt32LE(tagHash(tag) >>> 0, p);
  writeVariants(prepared, out, p, undefined);
  out.writeUInt32BE(crc32(out.subarray(4 + 4)), 4);
  return out;
}

/** Whether `bytes` are a whole value of this codec version, as written; `whole`: the caller knows they are whole. */
function intact(bytes: Buffer, whole: boolean): boolean {
  return bytes.length >= PREAMBLE && bytes.readUInt32BE(0) === MAGIC && (whole || crc32(bytes.subarray(PREAMBLE)) === bytes.readUInt32BE(4));
}

/** Fields as they can be sent: the value came from outside the process, and a hit writes them as text (field-shapes.ts). */
function sendable(response: StoredResponse): boolean {
  // The names, and the values the shapes share, were checked when the shapes were read. The tags
  // are never sent, and hold no line feed: the record's text ends each string with one.
  if (!ownSendable(response.kept) || !response.made.every(ownSendable)) return false;
  for (const value of response.selecting) if (value !== undefined && !isFieldValue(value)) return false;
  const origin = response.originValues ?? [];
  for (let i = 0; i < origin.length; i += 2) if (!isField(origin[i] ?? '', origin[i + 1] ?? '')) return false;
  return response.vary.every((name) => isField(name, ''));
}

function ownSendable(representation: Representation): boolean {
  return representation.own.every(isFieldValue);
}

/** A shape as values spell it (`spell`), kept as bytes to compare a value's spelling with. */
interface Spelling {
  readonly text: Buffer;
  readonly shape: FieldShape;
}

/** Spellings remembered per maker; a route's answers share a few shapes, so few are ever held. */
const SPELLINGS_LIMIT = 1024;

/**
 * What decoding for a maker reuses: one reader (reads are synchronous), and the shapes read
 * before by their CRC-32. A spelling as a string was made and hashed by V8 on every read (about
 * 2,500 instructions a disk hit for two shapes, under callgrind), to find a shape the maker knew.
 */
interface Decoder {
  readonly reader: RecordReader;
  readonly spellings: BoundedMemo<number, Spelling>;
}

const decoders = new WeakMap<EntryMaker, Decoder>();

function decoderFor(maker: EntryMaker): Decoder {
  let decoder = decoders.get(maker);
  if (decoder === undefined) decoders.set(maker, (decoder = { reader: new RecordReader(maker), spellings: new BoundedMemo(SPELLINGS_LIMIT) }));
  return decoder;
}

/**
 * The shape spelled by the `length` bytes of `bytes` at `at`, whose CRC-32 is `crc`, and what it
 * cost the maker's table if this read made it; undefined when it could not be sent.
 */
function spelledAt(
  decoder: Decoder,
  maker: EntryMaker,
  bytes: Buffer,
  at: number,
  length: number,
  crc: number,
): { shape: FieldShape; bytes: number } | undefined {
  const known = decoder.spellings.get(crc);
  if (known !== undefined && known.text.length === length && known.text.compare(bytes, at, at + length) === 0) return { shape: known.shape, bytes: 0 };
  const made = maker.shapes.spelled(bytes.toString('latin1', at, at + length));
  if (made !== undefined) decoder.spellings.keep(crc, { text: Buffer.from(bytes.subarray(at, at + length)), shape: made.shape });
  return made;
}

/**
 * The entry `bytes` hold, or undefined. With `whole`, the caller vouches that the bytes are as
 * they were written (the disk tier, for a value written since the machine started: disk-store.ts),
 * and the CRC, about 3.8 instructions a byte of the value, is not computed: the value is still
 * walked and its fields checked.
 */
export function decodeEntry(bytes: Buffer, maker: EntryMaker, whole = false): EncodedEntry | undefined {
  if (!intact(bytes, whole)) return undefined;
  try {
    let p = PREAMBLE;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const markLength = view.getUint16(p, true);
    const mark = bytes.toString('latin1', p + 2, p + 2 + markLength);
    p += 2 + markLength;
    const shapes: FieldShape[] = [];
    const brought: number[] = [];
    const decoder = decoderFor(maker);
    for (let count = view.getUint8(p++); count > 0; count--) {
      const length = view.getUint32(p, true);
      const shape = spelledAt(decoder, maker, bytes, p + 4, length, view.getUint32(p + 4 + length, true));
      if (shape === undefined) return undefined;
      shapes.push(shape.shape);
      brought.push(shape.bytes);
      p += 8 + length;
    }
    const tagCount = view.getUint32(p, true);
    const tagsAt = p + 4;
    p = tagsAt + 4 * tagCount;
    if (variantsEnd(bytes, view, p, shapes.length) !== bytes.length) return undefined;
    const variants = { bytes, at: p, shapes, brought: [...brought], tagsAt, tagCount };
    if (decoder.reader.openVariants(bytes, view, p, shapes, brought) !== 1) return undefined;
    const response = decoder.reader.next();
    return sendable(response) ? { response, mark, variants } : undefined;
  } catch {
    // A count or length that runs past the value: absent, as a torn one is.
    return undefined;
  }
}
