/** Message facts (RFC 9110) that storing, relaying and filling all depend on. */
import type { HeaderFields } from './cache-control.ts';

/** §6.4.1: answers without content, whatever their Content-Length says (§8.6). */
export function hasNoContent(status: number, method: string): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || status < 200;
}

/**
 * §6.6.1: a recipient with a clock that caches or forwards a response received without `Date`
 * appends one, the time it was received; otherwise each send from the cache would be dated anew
 * (Node dates an answer that has none) and a hit would look as young as a miss. The same object
 * when it has one.
 */
export function dated<R extends { readonly headers: HeaderFields }>(response: R, receivedAt: number): R {
  if (response.headers.date !== undefined) return response;
  return { ...response, headers: { ...response.headers, date: new Date(receivedAt).toUTCString() } };
}
