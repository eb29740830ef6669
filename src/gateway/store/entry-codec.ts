/**
 * A stored response as bytes for every tier outside the process (the host's disk tier, the
 * fleet's Redis tier): the entry layout the memory tier keeps (entry-record.ts) in an envelope —
 * magic, codec version, a CRC-32 of all that follows, the purge mark of the fill that made it,
 * and the field shapes its representations name, spelled out, since another process's table
 * numbers them otherwise. Only the kept representation goes in: every process makes the other
 * codings it is asked for itself, from the compressed body the fill made.
 *
 * A value that does not decode — another version's, torn by a crash, damaged on disk, with a
 * count or length that runs past its end, or with a field that could not be sent — is treated as
 * absent, never served: the checksum is what makes a half-written value on a disk that lied about
 * a flush a miss rather than an answer, and the field check what keeps a value another process
 * wrote from splitting a hit's head.
 */
import { crc32 } from 'node:zlib';
import { isField } from '../rules/message.ts';
import { RecordReader, shapesOf, variantsEnd, variantsLength, writeVariants } from './entry-record.ts';
import type { FieldShape } from './field-shapes.ts';
import { StoredResponse, type EntryMaker } from './stored-response.ts';

/** Bumped whenever the layout changes: a tier holding another version's values finds them absent. */
export const CODEC_VERSION = 4;

/** `CGE` (catalog-gateway entry) and the version byte. */
const MAGIC = 0x43474500 | CODEC_VERSION;

/** Magic and version (4), CRC-32 (4). */
const PREAMBLE = 8;

/** What ends each name and value of a spelled-out shape; a shared value begins with SHARED, a gap for a representation's own with OWN. */
const END = '\n';
const SHARED = 's';
const OWN = 'o';

export interface EncodedEntry {
  readonly response: StoredResponse;
  /** The last fleet purge the storing process had applied when its fill began (../fleet/purge-stream.ts). */
  readonly mark: string;
}

/** A shape's names and values as one text: per field its name, then its shared value or a gap. */
function spelled(shape: FieldShape): string {
  let text = '';
  for (let i = 0; i < shape.names.length; i++) {
    const value = shape.values[i];
    text += `${shape.names[i] ?? ''}${END}${value === undefined ? OWN : SHARED + value}${END}`;
  }
  return text;
}

/** The response as its fill made it, without the representations made since, which each process makes for itself. */
function asKept(response: StoredResponse): StoredResponse {
  if (response.made.length === 0) return response;
  return new StoredResponse(response.status, response.kept, response.originValues, response.offered, response, response.terms, response, response.tagText);
}

export function encodeEntry(stored: StoredResponse, mark: string): Buffer {
  const variants = [asKept(stored)];
  const shapes = shapesOf(variants);
  const texts = shapes.map(spelled);
  let length = PREAMBLE + 2 + mark.length + 1 + variantsLength(variants);
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
  writeVariants(variants, shapes, out, p, undefined);
  out.writeUInt32BE(crc32(out.subarray(4 + 4)), 4);
  return out;
}

/** Whether `bytes` are a whole value of this codec version, as written. */
export function intact(bytes: Uint8Array): boolean {
  if (bytes.length < PREAMBLE) return false;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return view.readUInt32BE(0) === MAGIC && crc32(view.subarray(PREAMBLE)) === view.readUInt32BE(4);
}

/** The shape `text` spells, as the maker's table has it, and what it cost the table if this made it; undefined when a field could not be sent. */
function shapeOf(text: string, maker: EntryMaker): { shape: FieldShape; bytes: number } | undefined {
  const parts = text.split(END);
  // The text ends with END, so the last part is empty and the fields come in pairs before it.
  if (parts.length % 2 !== 1) return undefined;
  const names: string[] = [];
  const values: (string | undefined)[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const name = parts[i] ?? '';
    const value = parts[i + 1] ?? '';
    const shared = value.startsWith(SHARED) ? value.slice(1) : undefined;
    if ((shared === undefined && value !== OWN) || !isField(name, shared ?? '')) return undefined;
    names.push(name);
    values.push(shared);
  }
  return maker.shapes.shape(names, values);
}

/** Fields as they can be sent: the value came from outside the process, and a hit writes them as text (field-shapes.ts). */
function sendable(response: StoredResponse): boolean {
  for (const fields of [response.kept.headers, response.headers])
    for (let i = 0; i < fields.length; i += 2) if (!isField(fields[i] ?? '', fields[i + 1] ?? '')) return false;
  return response.tagText.split(' ').every((tag) => isField('surrogate-key', tag));
}

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
      const shape = shapeOf(bytes.toString('latin1', p + 4, p + 4 + length), maker);
      if (shape === undefined) return undefined;
      shapes.push(shape.shape);
      brought.push(shape.bytes);
      p += 4 + length;
    }
    if (variantsEnd(bytes, p, shapes.length) !== bytes.length) return undefined;
    const reader = new RecordReader(maker);
    if (reader.openVariants(bytes, p, shapes, brought) !== 1) return undefined;
    const response = reader.next();
    return sendable(response) ? { response, mark } : undefined;
  } catch {
    // A count or length that runs past the value: absent, as a torn one is.
    return undefined;
  }
}
