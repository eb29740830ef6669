/**
 * Content codings (RFC 9110 §8.4) and proactive negotiation by `Accept-Encoding` (§12.5.3), as
 * pure functions of header values: which representation of a stored answer a request gets, the
 * entity tag each representation carries, and the `Vary` an answer with several carries. The
 * gateway and the origin both negotiate with these, so they agree on every tag; that is why they
 * live in src/shared.
 */

/** The codings Node's zlib encodes and decodes, and the absence of one. */
export type Coding = 'identity' | 'gzip' | 'br' | 'zstd';

/** §8.4.1.3: `x-gzip` is gzip. */
const ALIASES: Readonly<Record<string, Coding>> = { identity: 'identity', gzip: 'gzip', 'x-gzip': 'gzip', br: 'br', zstd: 'zstd' };

/** A `Content-Encoding` value as one of ours; undefined for a coding we cannot decode (or a chain of them). */
export function codingOf(contentEncoding: string | undefined): Coding | undefined {
  if (contentEncoding === undefined) return 'identity';
  const name = contentEncoding.trim().toLowerCase();
  return name === '' ? 'identity' : ALIASES[name];
}

/** What a request's `Accept-Encoding` says of each coding: its weight, or of `*`, the rest's. */
interface Preferences {
  readonly weights: ReadonlyMap<string, number>;
  readonly star: number | undefined;
}

/** §12.4.2: a qvalue; anything malformed counts as 0, so a bad field never forces a coding on anyone. */
function qvalue(parameters: string): number {
  const match = /(?:^|;)\s*q\s*=\s*([^;]*)/i.exec(parameters);
  if (match === null) return 1;
  const text = (match[1] ?? '').trim();
  return /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/.test(text) ? Number(text) : 0;
}

/**
 * The weight of identity when neither it nor `*` is named: acceptable (§12.5.3), but below any
 * coding the client named with a weight of its own, which is what such a client asks for.
 */
const UNNAMED_IDENTITY = 0.0005;

function preferences(accept: string): Preferences {
  const weights = new Map<string, number>();
  let star: number | undefined;
  for (const member of accept.split(',')) {
    const semicolon = member.indexOf(';');
    const raw = (semicolon === -1 ? member : member.slice(0, semicolon)).trim().toLowerCase();
    if (raw === '') continue;
    const q = semicolon === -1 ? 1 : qvalue(member.slice(semicolon));
    if (raw === '*') star = q;
    else weights.set(ALIASES[raw] ?? raw, q);
  }
  return { weights, star };
}

/**
 * §12.5.3: a coding's weight. One named has its own; one not named has the weight of `*`, or
 * none (0), except identity, which is acceptable unless `identity;q=0` or `*;q=0` exclude it.
 */
function weight(prefs: Preferences, coding: string): number {
  const own = prefs.weights.get(coding);
  if (own !== undefined) return own;
  if (prefs.star !== undefined) return prefs.star;
  return coding === 'identity' ? UNNAMED_IDENTITY : 0;
}

/**
 * The coding among `offered` (in the server's order of preference) that answers a request with
 * this `Accept-Encoding`: the one of greatest weight, the earlier of equals. Without the field any
 * coding would do (§12.5.3); identity is sent then, as nginx and Varnish do, since a client that
 * says nothing may decode nothing. An empty field asks for identity. When every coding offered
 * has weight 0, identity is sent anyway (§12.5.3: "without any content coding"), or, for an
 * answer that has no identity form, what there is.
 */
export function negotiate(accept: string | undefined, offered: readonly Coding[]): Coding {
  const fallback: Coding = offered.includes('identity') ? 'identity' : (offered[0] ?? 'identity');
  if (accept === undefined) return fallback;
  const prefs = preferences(accept);
  let best: Coding = fallback;
  let bestWeight = 0;
  for (const coding of offered) {
    const w = weight(prefs, coding);
    if (w > bestWeight) {
      best = coding;
      bestWeight = w;
    }
  }
  return best;
}

/**
 * Whether a request with this `Accept-Encoding` accepts a body sent with `contentEncoding` (one
 * coding, or several applied in turn, each of which it must accept): identity always (§12.5.3: it
 * is what is sent when nothing else is); another coding only with a weight above 0. Without the
 * field, only identity, as `negotiate` has it: a client that says nothing may decode nothing.
 */
export function accepts(accept: string | undefined, contentEncoding: string): boolean {
  const codings = contentEncoding
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'identity');
  if (codings.length === 0) return true;
  if (accept === undefined) return false;
  const prefs = preferences(accept);
  return codings.every((name) => weight(prefs, ALIASES[name] ?? name) > 0);
}

/** The canonical copy of each list of codings offered, so that memos can be keyed by the list. */
const OFFERED_LISTS = new Map<string, readonly Coding[]>();

/** `offered` as the one shared list with its members in its order (there are a few dozen at most). */
export function offeredList(offered: readonly Coding[]): readonly Coding[] {
  const name = offered.join(',');
  let list = OFFERED_LISTS.get(name);
  if (list === undefined) {
    list = Object.freeze([...offered]);
    OFFERED_LISTS.set(name, list);
  }
  return list;
}

/** A validator's opaque tag and whether it is weak (RFC 9110 §8.8.3). */
function splitTag(etag: string): { weak: boolean; opaque: string } {
  const trimmed = etag.trim();
  const weak = trimmed.startsWith('W/');
  return { weak, opaque: weak ? trimmed.slice(2) : trimmed };
}

/**
 * The entity tag of the `coding` representation of an answer whose tag, as sent in `sent`
 * coding, is `etag`: a representation in another coding is another representation (§8.8.3), so
 * it gets the tag of the identity form with `-<coding>` inside the quotes (and the identity form's
 * is got back by taking the suffix off). Weakness is kept. The tag of every form is derived from
 * one stored tag, so If-None-Match with any of them is recognised (unlike Apache's `-gzip`,
 * which its own conditional handling did not).
 */
export function representationTag(etag: string, sent: Coding, coding: Coding): string {
  if (coding === sent) return etag;
  const { weak, opaque } = splitTag(etag);
  if (!opaque.startsWith('"') || !opaque.endsWith('"')) return etag;
  let base = opaque.slice(1, -1);
  const suffixed = sent !== 'identity' && base.endsWith(`-${sent}`);
  if (suffixed) base = base.slice(0, -sent.length - 1);
  // An origin that sent a coded form under a tag of its own (no suffix) gave that tag to those
  // very bytes, so the decoded form cannot have it as a strong tag too: it gets it weak, a tag
  // for content equivalent to the coded form's (§8.8.1), as nginx's gunzip does.
  const weakened = weak || (sent !== 'identity' && !suffixed && coding === 'identity');
  // One join, not template literals: a cache keeps this string, and V8 would keep the pieces of a
  // concatenation (a cons string per `+`) with it, more than the tag itself.
  return [weakened ? 'W/"' : '"', base, coding === 'identity' ? '' : `-${coding}`, '"'].join('');
}

/** §12.5.5: `Vary` with `accept-encoding` added to what the origin named, unless it is there or `*`. */
export function varyWithEncoding(vary: string | undefined): string {
  if (vary === undefined || vary.trim() === '') return 'accept-encoding';
  const names = vary.split(',').map((name) => name.trim().toLowerCase());
  return names.includes('accept-encoding') || names.includes('*') ? vary : `${vary}, accept-encoding`;
}
