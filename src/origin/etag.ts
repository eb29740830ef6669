/**
 * Entity tags (RFC 9110 §8.8.3) and the If-None-Match precondition (RFC 9110 §13.1.2).
 */
import { createHash } from 'node:crypto';

/**
 * A strong validator: a digest of the exact body bytes, so two bodies share a tag only when they
 * are byte-for-byte equal (§8.8.1), whichever process or restart produced them.
 */
export function strongEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * True when the condition is false, i.e. the client's copy is current and the answer is 304.
 * `*` matches any current representation; list members are compared with the weak comparison
 * (§8.8.3.2), as §13.1.2 prescribes for If-None-Match, and empty list elements are allowed
 * (§5.6.1). Our tags hold no comma, so splitting on commas cannot produce a false match.
 */
export function ifNoneMatchMatches(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false;
  return field.split(',').some((member) => {
    const tag = member.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}
