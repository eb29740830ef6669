/**
 * Header-field grammar the cache rules read: `Cache-Control` (RFC 9111 §5.2), delta-seconds
 * (§1.2.2) and comma-separated field-name lists (`Vary`, `Connection`, qualified `no-cache`).
 * Pure functions of header values; nothing here decides anything.
 */

/** Header fields as Node and undici hand them over: lower-case names, repeated fields as arrays. */
export type HeaderFields = Readonly<Record<string, string | readonly string[] | undefined>>;

export type Directives = ReadonlyMap<string, string | true>;

const EMPTY: Directives = new Map();

/**
 * Parses `Cache-Control` (§5.2); names are case-insensitive, the first occurrence wins (§4.2.1).
 * The grammar has no whitespace around `=` (`token [ "=" ( token / quoted-string ) ]`), so in
 * `max-age = 60` the directive has no argument, which makes it invalid (stale, §4.2.1), as nginx
 * reads it and as the targeted fields' Dictionary does (RFC 8941).
 */
export function parseCacheControl(value: string | readonly string[] | undefined): Directives {
  if (value === undefined) return EMPTY;
  const directives = new Map<string, string | true>();
  const text = typeof value === 'string' ? value : value.join(',');
  for (const match of text.matchAll(/([^=,\s]+)(?:=("(?:[^"\\]|\\.)*"|[^,\s]*))?/g)) {
    const name = (match[1] ?? '').toLowerCase();
    if (directives.has(name)) continue;
    const raw = match[2];
    directives.set(name, raw === undefined ? true : raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw);
  }
  return directives;
}

/** Largest delta-seconds a cache must represent; larger values are taken as this (§1.2.2). */
export const DELTA_SECONDS_CAP = 2 ** 31;

/**
 * delta-seconds (§1.2.2). `undefined` when absent; `null` when present but not a non-negative
 * integer, so each caller applies the rule its section gives for an invalid value.
 */
export function deltaSeconds(value: string | true | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === true || !/^[0-9]+$/.test(value)) return null;
  return Math.min(Number(value), DELTA_SECONDS_CAP);
}

/** The one value of a field that may appear once; the first line when it was repeated. */
export function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}

/** A comma-separated list of field names (`Vary`, `Connection`, `no-cache="a, b"`), lower case. */
export function fieldNames(value: string | readonly string[] | true | undefined): string[] {
  if (value === undefined || value === true) return [];
  const text = typeof value === 'string' ? value : value.join(',');
  const names: string[] = [];
  for (const part of text.split(',')) {
    const name = part.trim().toLowerCase();
    if (name !== '') names.push(name);
  }
  return names;
}

/** A flat `[name, value, …]` list as header fields, repeated names as arrays. */
export function asHeaderFields(flat: readonly string[]): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i] ?? '';
    const value = flat[i + 1] ?? '';
    const seen = fields[name];
    fields[name] = seen === undefined ? value : [...(typeof seen === 'string' ? [seen] : seen), value];
  }
  return fields;
}
