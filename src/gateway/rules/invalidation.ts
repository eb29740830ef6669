/**
 * Invalidation (RFC 9111 §4.4): a non-error response to an unsafe request invalidates the stored
 * responses of its target URI, and of the URIs in its `Location` and `Content-Location` when they
 * are on the same origin (a cache must not let one origin invalidate another's entries).
 */
import { originForm } from '../../shared/request-target.ts';
import { single, type HeaderFields } from './cache-control.ts';

/** RFC 9110 §9.2.1: the methods defined as safe; every other method is unsafe. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function isSafe(method: string): boolean {
  return SAFE_METHODS.has(method);
}

/**
 * `reference` as a client would send it as a target (RFC 9112 §3.2: its path and query as
 * written, an absolute URI's scheme and authority dropped as originForm drops them), without a
 * fragment; undefined for a relative path, which has no such spelling before it is resolved, and
 * for one that starts with `//`, which names an authority.
 */
function asWritten(reference: string): string | undefined {
  const form = originForm(reference.split('#')[0] ?? '');
  return form.startsWith('/') && !form.startsWith('//') ? form : undefined;
}

/**
 * The origin-form targets (path and query) whose stored responses a response to `method` on
 * `target` invalidates; empty for safe methods and for error responses (§4.4: 2xx and 3xx only).
 * `authorities` are the names this cache's one origin goes by: the request's `Host` first (relative
 * references resolve against it), then the origin's own, which is the one it hears in every
 * forwarded request and so writes into an absolute `Location`. A URI on any other authority
 * belongs to another origin. The scheme is not compared: keys hold no scheme, and the gateway's
 * listener may speak TLS while the origin does not.
 *
 * Entries are keyed by the target as the client wrote it, so each URI is named as written (the
 * request's own target exactly) and also as a URL parser resolves it (dot segments removed, `'`
 * and `{` percent-encoded), the spelling another client may have used for the same resource.
 */
export function invalidatedTargets(
  method: string,
  status: number,
  target: string,
  authorities: readonly (string | undefined)[],
  headers: HeaderFields,
): string[] {
  if (isSafe(method) || status < 200 || status >= 400) return [];
  const known = authorities.filter((a): a is string => a !== undefined && URL.canParse(`http://${a}`)).map((a) => new URL(`http://${a}`).host);
  // Relative references resolve against the first usable name; with none, against one that no
  // URI of another origin can carry.
  const origin = new URL(`http://${known[0] ?? 'origin.invalid'}`);
  const targets = [target];
  // A target that a parser reads as naming another authority (`//other.example/x`) is only itself.
  const base = URL.canParse(target, origin.href) ? new URL(target, origin.href) : undefined;
  if (base?.host === origin.host) targets.push(base.pathname + base.search);
  for (const field of ['location', 'content-location'] as const) {
    const value = single(headers[field]);
    if (value === undefined || !URL.canParse(value, base?.href ?? origin.href)) continue;
    const uri = new URL(value, base?.href ?? origin.href);
    if (uri.host !== origin.host && !known.includes(uri.host)) continue;
    const written = asWritten(value);
    if (written !== undefined) targets.push(written);
    targets.push(uri.pathname + uri.search);
  }
  return [...new Set(targets)];
}
