/**
 * Invalidation (RFC 9111 §4.4): a non-error response to an unsafe request invalidates the stored
 * responses of its target URI, and of the URIs in its `Location` and `Content-Location` when they
 * are on the same origin (a cache must not let one origin invalidate another's entries).
 */
import { single, type HeaderFields } from './cache-control.ts';

/** RFC 9110 §9.2.1: the methods defined as safe; every other method is unsafe. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export function isSafe(method: string): boolean {
  return SAFE_METHODS.has(method);
}

/**
 * The origin-form targets (path and query) whose stored responses a response to `method` on
 * `target` (received with `host`) invalidates; empty for safe methods and for error responses (§4.4: 2xx and 3xx only).
 */
export function invalidatedTargets(method: string, status: number, target: string, host: string | undefined, headers: HeaderFields): string[] {
  if (isSafe(method) || status < 200 || status >= 400) return [];
  // The request's own authority is the origin a Location must stay on; without a usable Host any
  // fixed one serves, and then only relative references can stay on it.
  const authority = host !== undefined && URL.canParse(`http://${host}`) ? host : 'origin.invalid';
  const base = new URL(target, `http://${authority}`);
  const targets = [base.pathname + base.search];
  for (const field of ['location', 'content-location'] as const) {
    const value = single(headers[field]);
    if (value === undefined || !URL.canParse(value, base.href)) continue;
    const uri = new URL(value, base);
    if (uri.origin === base.origin) targets.push(uri.pathname + uri.search);
  }
  return [...new Set(targets)];
}
