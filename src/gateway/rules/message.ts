/** Message facts (RFC 9110) that storing, relaying and filling all depend on. */
import type { HeaderFields } from './cache-control.ts';

/** §6.4.1: answers without content, whatever their Content-Length says (§8.6). */
export function hasNoContent(status: number, method: string): boolean {
  return method === 'HEAD' || status === 204 || status === 304 || status < 200;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * §5.1 and §5.5: a field name is a token, and a value holds no control character but HTAB, so
 * neither can end a line of the head it is written into (Node's `writeHead` refuses the same).
 */
export function isField(name: string, value: string): boolean {
  return TOKEN.test(name) && FIELD_VALUE.test(value);
}

/** §5.5: a value alone, where its name is known to be a token. */
export function isFieldValue(value: string): boolean {
  return FIELD_VALUE.test(value);
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
