/**
 * A stored response as bytes for every tier outside the process (the host's disk tier, the
 * fleet's Redis tier): the entry layout the memory tier keeps (entry-record.ts) in an envelope —
 * magic, codec version, a CRC-32 of all that follows, the purge mark of the fill that made it,
 * and the field shapes its representations name, spelled out, since another process's table
 * numbers them otherwise. Only the kept representation goes in as a rule: every process makes the
 * other codings it is asked for itself, from the compressed body the fill made. The host's disk
 * tier may keep the ones its hits were asked for too (`encodeEntry`'s `made`, disk-store.ts).
 *
 * A value that does not decode — another version's, torn by a crash, damaged on disk, with a
 * count or length that runs past its end, or with a field that could not be sent — is treated as
 * absent, never served: the checksum is what makes a half-written value on a disk that lied about
 * a flush a miss rather than an answer, and the field check what keeps a value another process
 * wrote from splitting a hit's head.
 */
import { crc32 } from 'node:zlib';
import { isField, isFieldValue } from '../rules/message.ts';
import { prepare, RecordReader, variantsEnd, writeVariants, type WrittenVariants } from './entry-record.ts';
import { spell, type FieldShape } from './field-shapes.ts';
import { StoredResponse, type EntryMaker, type Representation } from './stored-response.ts';

/** Bumped whenever the layout changes: a tier holding another version's values finds them absent. */
export const CODEC_VERSION = 6;

/** `CGE` (catalog-gateway entry) and the version byte. */
const MAGIC = 0x43474500 | CODEC_VERSION;

/** Magic and version (4), CRC-32 (4). */
const PREAMBLE = 8;

export interface EncodedEntry {
  readonly response: StoredResponse;
  /** The last fleet purge the storing process had applied when its fill began (../fleet/purge-stream.ts). */
  readonly mark: string;
  /** The value's variants, which a cache may copy into a record of its own. */
  readonly variants: WrittenVariants;
}

/** The response as its fill made it, without the representations made since, which each process makes for itself. */
function asKept(response: StoredResponse): StoredResponse {
  if (response.made.length === 0) return response;
  return new StoredResponse(response.status, response.kept, response.originValues, response.offered, response, response.terms, response, response.tagText);
}

/** `stored` as a value; with `made`, the representations made from the kept one since go in too. */
export function encodeEntry(stored: StoredResponse, mark: string, made = false): Buffer {
  const prepared = prepare([made ? stored : asKept(stored)]);
  const texts = prepared.shapes.map(spell);
  let length = PREAMBLE + 2 + mark.length + 1 + prepared.length;
  for (const text of texts) length += 4 + text.length;
  const out = Buffer.allocUnsafe(length);
  out.writeUInt32BE(MAGIC, 0);
  let p = out.writeUInt16LE(mark.length, PREAMBLE);
  p += out.write(mark, p, 'latin1');
  p = out.writeUInt8(texts.length, p);
  for (const text of texts) {
    p = out.writeUInt32LE(text.length, p);
    p += out.write(text, p, 'latin1');
  }
  writeVariants(prepared, out, p, undefined);
  out.writeUInt32BE(crc32(out.subarray(4 + 4)), 4);
  return out;
}

/** Whether `bytes` are a whole value of this codec version, as written. */
function intact(bytes: Buffer): boolean {
  return bytes.length >= PREAMBLE && bytes.readUInt32BE(0) === MAGIC && crc32(bytes.subarray(PREAMBLE)) === bytes.readUInt32BE(4);
}

/** Fields as they can be sent: the value came from outside the process, and a hit writes them as text (field-shapes.ts). */
function sendable(response: StoredResponse): boolean {
  // The names, and the values the shapes share, were checked when the shapes were read.
  if (!isFieldValue(response.tagText) || !ownSendable(response.kept) || !response.made.every(ownSendable)) return false;
  for (const value of response.selecting) if (value !== undefined && !isFieldValue(value)) return false;
  const origin = response.originValues ?? [];
  for (let i = 0; i < origin.length; i += 2) if (!isField(origin[i] ?? '', origin[i + 1] ?? '')) return false;
  return response.vary.every((name) => isField(name, ''));
}

function ownSendable(representation: Representation): boolean {
  return representation.own.every(isFieldValue);
}

/** One reader per maker, reused by every decode (reads are synchronous). */
const readers = new WeakMap<EntryMaker, RecordReader>();

export function decodeEntry(bytes: Buffer, maker: EntryMaker): EncodedEntry | undefined {
  if (!intact(bytes)) return undefined;
  try {
    let p = PREAMBLE;
    const markLength = bytes.readUInt16LE(p);
    const mark = bytes.toString('latin1', p + 2, p + 2 + markLength);
    p += 2 + markLength;
    const shapes: FieldShape[] = [];
    const brought: number[] = [];
    for (let count = bytes.readUInt8(p++); count > 0; count--) {
      const length = bytes.readUInt32LE(p);
      const shape = maker.shapes.spelled(bytes.toString('latin1', p + 4, p + 4 + length));
      if (shape === undefined) return undefined;
      shapes.push(shape.shape);
      brought.push(shape.bytes);
      p += 4 + length;
    }
    if (variantsEnd(bytes, p, shapes.length) !== bytes.length) return undefined;
    const variants = { bytes, at: p, shapes, brought: [...brought] };
    let reader = readers.get(maker);
    if (reader === undefined) readers.set(maker, (reader = new RecordReader(maker)));
    if (reader.openVariants(bytes, p, shapes, brought) !== 1) return undefined;
    const response = reader.next();
    return sendable(response) ? { response, mark, variants } : undefined;
  } catch {
    // A count or length that runs past the value: absent, as a torn one is.
    return undefined;
  }
}
