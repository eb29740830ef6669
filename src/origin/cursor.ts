/**
 * The paging cursor: opaque to clients, base64url (so it fits the `^[A-Za-z0-9_-]{1,512}$` that
 * request-target.ts accepts) of 17 bytes: a version, the (rank, id) of the last result of the
 * previous page, and a fingerprint of the search it belongs to, so that a cursor pasted onto a
 * different search is refused instead of silently skipping results.
 *
 * Each position has exactly one spelling (decoding re-encodes and compares), so the gateway never
 * stores two cache entries for one page.
 */
import { createHash } from 'node:crypto';
import type { RankedId } from './catalog-db.ts';

const VERSION = 1;
const BYTES = 17;
const MAX_ID = 0xffffffff;

export type Fingerprint = number;

/** A 32-bit digest of the search (plan and filter) a cursor may continue. */
export function fingerprint(search: string): Fingerprint {
  return createHash('sha256').update(search).digest().readUInt32BE(0);
}

export function encodeCursor(after: RankedId, search: Fingerprint): string {
  if (!Number.isInteger(after.id) || after.id < 0 || after.id > MAX_ID) throw new RangeError(`book id ${after.id} does not fit a cursor`);
  const bytes = Buffer.alloc(BYTES);
  bytes.writeUInt8(VERSION, 0);
  bytes.writeDoubleBE(after.score, 1);
  bytes.writeUInt32BE(after.id, 9);
  bytes.writeUInt32BE(search, 13);
  return bytes.toString('base64url');
}

/** `undefined` for anything this origin did not hand out for this search. */
export function decodeCursor(cursor: string, search: Fingerprint): RankedId | undefined {
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length !== BYTES || bytes.toString('base64url') !== cursor) return undefined;
  if (bytes.readUInt8(0) !== VERSION || bytes.readUInt32BE(13) !== search) return undefined;
  const score = bytes.readDoubleBE(1);
  if (!Number.isFinite(score)) return undefined;
  return { score, id: bytes.readUInt32BE(9) };
}
