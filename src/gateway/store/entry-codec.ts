/**
 * A stored response as bytes: the one form every tier outside the process's heap keeps (the
 * host's disk tier, the fleet's Redis tier). A fixed preamble — magic, codec version, a CRC-32 of
 * all that follows, the head's length — then a JSON head (status, fields, reuse facts, secondary
 * key, tags, the coding of the body kept and those it may be sent in, and the purge mark of the
 * fill that made it), then the body as kept, so a body is never base64'd or copied into a string
 * and every process shares the compressed body its fill made (each makes the other codings it is
 * asked for itself).
 *
 * A value that does not decode — another version's, torn by a crash, damaged on disk, or with a
 * field that could not be sent — is treated as absent, never served: the checksum is what makes
 * a half-written value on a disk that lied about a flush a miss rather than an answer.
 */
import { crc32 } from 'node:zlib';
import { codingOf, offeredList, type Coding } from '../../shared/encoding/negotiate.ts';
import { isField } from '../rules/message.ts';
import type { ReuseFacts } from '../rules/reuse.ts';
import { reuseFacts, type EntryMaker, type StoredResponse } from './stored-response.ts';

/** Bumped whenever the layout changes: a tier holding another version's values finds them absent. */
export const CODEC_VERSION = 3;

/** `CGE` (catalog-gateway entry) and the version byte. */
const MAGIC = 0x43474500 | CODEC_VERSION;

/** Magic and version (4), CRC-32 (4), head length (4). */
const PREAMBLE = 12;

interface Head {
  readonly status: number;
  readonly fields: readonly string[];
  readonly facts: ReuseFacts;
  readonly vary: readonly string[];
  readonly selecting: readonly (string | null)[];
  readonly tags: readonly string[];
  /** The coding of the body kept; null for one the gateway cannot decode (kept as it came). */
  readonly keep: Coding | null;
  readonly offered: readonly Coding[];
  readonly mark: string;
}

export interface EncodedEntry {
  readonly response: StoredResponse;
  /** The last fleet purge the storing process had applied when its fill began (../fleet/purge-stream.ts). */
  readonly mark: string;
}

export function encodeEntry(response: StoredResponse, mark: string): Buffer {
  const head: Head = {
    status: response.status,
    fields: response.headers,
    facts: reuseFacts(response),
    vary: response.vary,
    selecting: response.selecting.map((s) => s ?? null),
    tags: response.tags,
    keep: codingOf(response.kept.coding) ?? null,
    offered: response.offered,
    mark,
  };
  const json = Buffer.from(JSON.stringify(head));
  const out = Buffer.allocUnsafe(PREAMBLE + json.length + response.body.length);
  out.writeUInt32BE(MAGIC, 0);
  out.writeUInt32BE(json.length, 8);
  json.copy(out, PREAMBLE);
  response.body.copy(out, PREAMBLE + json.length);
  out.writeUInt32BE(crc32(out.subarray(8)), 4);
  return out;
}

/** Whether `bytes` are a whole value of this codec version, as written. */
export function intact(bytes: Uint8Array): boolean {
  if (bytes.length < PREAMBLE) return false;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (view.readUInt32BE(0) !== MAGIC || PREAMBLE + view.readUInt32BE(8) > view.length) return false;
  return crc32(view.subarray(8)) === view.readUInt32BE(4);
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Fields as they can be sent: the value came from outside the process, and a hit writes them as text (field-shapes.ts). */
function isFieldList(fields: readonly string[]): boolean {
  if (fields.length % 2 !== 0) return false;
  for (let i = 0; i < fields.length; i += 2) if (!isField(fields[i] ?? '', fields[i + 1] ?? '')) return false;
  return true;
}

function isFacts(value: unknown): value is ReuseFacts {
  if (typeof value !== 'object' || value === null) return false;
  const f = value as Record<string, unknown>;
  return (
    ['lifetimeMs', 'initialAgeMs', 'storedAt', 'staleWhileRevalidateMs', 'staleIfErrorMs'].every((k) => typeof f[k] === 'number') &&
    typeof f.mustRevalidate === 'boolean' &&
    typeof f.noCache === 'boolean'
  );
}

function isCoding(value: unknown): value is Coding {
  return typeof value === 'string' && codingOf(value) === value;
}

export function decodeEntry(bytes: Buffer, maker: EntryMaker): EncodedEntry | undefined {
  if (!intact(bytes)) return undefined;
  const headLength = bytes.readUInt32BE(8);
  let head: Partial<Head>;
  try {
    head = JSON.parse(bytes.toString('utf8', PREAMBLE, PREAMBLE + headLength)) as Partial<Head>;
  } catch {
    return undefined;
  }
  const { status, fields, facts, vary, selecting, tags, keep, offered, mark } = head;
  if (typeof status !== 'number' || !isStrings(fields) || !isFieldList(fields) || !isFacts(facts)) return undefined;
  if (!isStrings(vary) || !Array.isArray(selecting) || selecting.length !== vary.length || !isStrings(tags) || typeof mark !== 'string') return undefined;
  if (!(keep === null || isCoding(keep)) || !Array.isArray(offered) || !offered.every(isCoding)) return undefined;
  const key = { vary, selecting: selecting.map((s) => (typeof s === 'string' ? s : undefined)) };
  const body = bytes.subarray(PREAMBLE + headLength);
  return { response: maker.restore(status, fields, body, { keep: keep ?? undefined, offered: offeredList(offered) }, facts, key, tags), mark };
}
