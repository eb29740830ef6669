/**
 * A stored response as bytes, for the shared tier: a length-prefixed JSON head (status, fields,
 * reuse facts, secondary key, tags, the coding of the body kept and those it may be sent in, and
 * the purge mark of the fill that made it) followed by the body as kept, so a body is never
 * base64'd or copied into a string, and every process shares the compressed body its fill made
 * (each makes the other codings it is asked for itself). A value that does not decode
 * (another version's, or damaged, or with a field that could not be sent) is treated as absent,
 * never served.
 */
import { codingOf, offeredList, type Coding } from '../../shared/encoding/negotiate.ts';
import { isField } from '../rules/message.ts';
import type { ReuseFacts } from '../rules/reuse.ts';
import { reuseFacts, type EntryMaker, type StoredResponse } from './stored-response.ts';

const VERSION = 2;

interface Head {
  readonly v: number;
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

export interface SharedEntry {
  readonly response: StoredResponse;
  /** The last fleet purge the storing process had applied when its fill began (purge-stream.ts). */
  readonly mark: string;
}

export function encodeEntry(response: StoredResponse, mark: string): Buffer {
  const head: Head = {
    v: VERSION,
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
  const out = Buffer.allocUnsafe(4 + json.length + response.body.length);
  out.writeUInt32BE(json.length, 0);
  json.copy(out, 4);
  response.body.copy(out, 4 + json.length);
  return out;
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Fields as they can be sent: the shared tier is outside the process, and a hit writes them as text (field-shapes.ts). */
function isFieldList(fields: readonly string[]): boolean {
  if (fields.length % 2 !== 0) return false;
  for (let i = 0; i < fields.length; i += 2) if (!isField(fields[i] ?? '', fields[i + 1] ?? '')) return false;
  return true;
}

function isFacts(value: unknown): value is ReuseFacts {
  if (typeof value !== 'object' || value === null) return false;
  const f = value as Record<string, unknown>;
  return ['lifetimeMs', 'initialAgeMs', 'storedAt', 'staleWhileRevalidateMs', 'staleIfErrorMs'].every((k) => typeof f[k] === 'number') && typeof f.mustRevalidate === 'boolean' && typeof f.noCache === 'boolean';
}

function isCoding(value: unknown): value is Coding {
  return typeof value === 'string' && codingOf(value) === value;
}

export function decodeEntry(bytes: Buffer, maker: EntryMaker): SharedEntry | undefined {
  if (bytes.length < 4) return undefined;
  const headLength = bytes.readUInt32BE(0);
  if (4 + headLength > bytes.length) return undefined;
  let head: Partial<Head>;
  try {
    head = JSON.parse(bytes.toString('utf8', 4, 4 + headLength)) as Partial<Head>;
  } catch {
    return undefined;
  }
  const { status, fields, facts, vary, selecting, tags, keep, offered, mark } = head;
  if (head.v !== VERSION || typeof status !== 'number' || !isStrings(fields) || !isFieldList(fields) || !isFacts(facts)) return undefined;
  if (!isStrings(vary) || !Array.isArray(selecting) || selecting.length !== vary.length || !isStrings(tags) || typeof mark !== 'string') return undefined;
  if (!(keep === null || isCoding(keep)) || !Array.isArray(offered) || !offered.every(isCoding)) return undefined;
  const key = { vary, selecting: selecting.map((s) => (typeof s === 'string' ? s : undefined)) };
  return { response: maker.restore(status, fields, bytes.subarray(4 + headLength), { keep: keep ?? undefined, offered: offeredList(offered) }, facts, key, tags), mark };
}
