/**
 * Secondary keys (RFC 9111 §4.1): a response that names request fields in `Vary` is reused only
 * for requests whose values of those fields match the request that caused it.
 */
import type { HeaderFields } from './cache-control.ts';

/**
 * §4.1: one field's value normalised so that values differing only in the whitespace around
 * commas, or in how lines were split, compare equal. `Accept-Language` is normalised further, as
 * §4.1 allows by the field's own syntax: language ranges are case-insensitive (RFC 9110 §12.5.4,
 * RFC 4647 §2.1) and no whitespace belongs inside one, so `en-US; q=0.5` selects what `en-us;q=0.5`
 * does. An absent field matches only an absent one.
 */
function normalised(name: string, value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : value.join(',');
  if (name === 'accept-language') return text.replace(/[ \t]+/g, '').toLowerCase();
  return text
    .split(',')
    .map((part) => part.trim())
    .join(',');
}

/** The values of the `vary` fields in a request, in the same order; the secondary key. */
export function selectingValues(vary: readonly string[], request: HeaderFields): readonly (string | undefined)[] {
  return vary.map((name) => normalised(name, request[name]));
}

/** §4.1: whether a request selects a stored response whose secondary key is `selecting`. */
export function varyMatches(vary: readonly string[], selecting: readonly (string | undefined)[], request: HeaderFields): boolean {
  for (let i = 0; i < vary.length; i++) {
    const name = vary[i] ?? '';
    if (normalised(name, request[name]) !== selecting[i]) return false;
  }
  return true;
}

/**
 * §4.1 keys a stored response by the request that caused it, and the origin answered that request
 * as the gateway forwarded it (`sent`), not as the client sent it (`received`). Whether every field
 * `vary` names reached the origin with the client's value. One the gateway dropped (hop-by-hop, named
 * in `Connection`, or not forwarded by the route) or set itself (`X-Forwarded-For`, `Via`) did not:
 * keyed by the client's value, the answer would be served to clients the origin never answered
 * (`X-Lang: fr` with `Connection: x-lang` stored the default answer for every `X-Lang: fr`). `Host`
 * is left out: every fill carries the origin's own, so no answer depends on the client's.
 */
export function variesOnSent(vary: readonly string[], received: HeaderFields, sent: HeaderFields): boolean {
  for (const name of vary) {
    if (name !== 'host' && normalised(name, received[name]) !== normalised(name, sent[name])) return false;
  }
  return true;
}
