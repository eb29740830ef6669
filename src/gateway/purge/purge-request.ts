/**
 * Reads a purge request body (contract, "Purge"): exactly one selector of `{"tags":[…]}`,
 * `{"urls":[…]}`, `{"prefix":"/v1/books"}` or `{"all":true}`, and an optional `"soft":true`.
 * A URL is turned into the key its route stores it under, so `/v1/books?limit=5&q=a` purges the
 * entry of `/v1/books?q=a&limit=5`.
 */
import { problem, type Problem } from '../../shared/problem.ts';
import { unknownMember } from '../../shared/request-body.ts';
import type { PurgeSelector } from './purge-log.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';

export interface PurgeRequest {
  readonly selector: PurgeSelector;
  readonly soft: boolean;
}

/** Enough for every tag of a page of a hundred books many times over, bounded all the same. */
const MAX_ITEMS = 1000;
const TAG = /^[\x21-\x7e]{1,256}$/;
const SELECTORS = ['tags', 'urls', 'prefix', 'all'] as const;
const MEMBERS: ReadonlySet<string> = new Set([...SELECTORS, 'soft']);

/**
 * A path, or an absolute http(s) URL that parses: `http://` alone was read as the path `/`, so a
 * purge of a malformed URL removed the root's entry.
 */
function isPurgeUrl(url: string): boolean {
  return url.startsWith('/') || (/^https?:\/\//i.test(url) && URL.canParse(url) && new URL(url).host !== '');
}

function invalid(detail: string): { readonly ok: false; readonly problem: Problem } {
  return { ok: false, problem: problem('invalid-body', detail) };
}

function stringList(value: unknown, what: string, valid: (s: string) => boolean): readonly string[] | string {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ITEMS) return `${what} must be a list of 1 to ${MAX_ITEMS} items`;
  if (!value.every((v): v is string => typeof v === 'string' && valid(v))) return `${what} holds an item that is not valid`;
  return value;
}

export function parsePurgeRequest(
  body: Readonly<Record<string, unknown>>,
  keyOf: (url: string) => CacheKey | undefined,
): { readonly ok: true; readonly request: PurgeRequest } | { readonly ok: false; readonly problem: Problem } {
  // A misspelt member must not be dropped: `{"all":true,"sfot":true}` would purge everything hard.
  const unknown = unknownMember(body, MEMBERS);
  if (unknown !== undefined) return invalid(`unknown member ${unknown}: a purge has one of "tags", "urls", "prefix" or "all", and "soft"`);
  const given = SELECTORS.filter((s) => body[s] !== undefined);
  const [only] = given;
  if (given.length !== 1 || only === undefined) return invalid('give exactly one of "tags", "urls", "prefix" or "all"');
  const soft = body.soft ?? false;
  if (typeof soft !== 'boolean') return invalid('soft must be true or false');
  switch (only) {
    case 'tags': {
      const tags = stringList(body.tags, 'tags', (t) => TAG.test(t));
      return typeof tags === 'string' ? invalid(tags) : { ok: true, request: { selector: { kind: 'tags', tags }, soft } };
    }
    case 'urls': {
      const urls = stringList(body.urls, 'urls', isPurgeUrl);
      if (typeof urls === 'string') return invalid(urls);
      const keys = urls.map(keyOf).filter((k) => k !== undefined);
      return { ok: true, request: { selector: { kind: 'urls', keys }, soft } };
    }
    case 'prefix':
      if (typeof body.prefix !== 'string' || !body.prefix.startsWith('/')) return invalid('prefix must be a path starting with /');
      return { ok: true, request: { selector: { kind: 'prefix', prefix: body.prefix }, soft } };
    case 'all':
      if (body.all !== true) return invalid('all must be true');
      return { ok: true, request: { selector: { kind: 'all' }, soft } };
  }
}
