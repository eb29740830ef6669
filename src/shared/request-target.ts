/**
 * The API's request-target rules, shared by the origin and the gateway so both refuse the same
 * requests with the same problem: target length (414), route (404), method (405 + Allow), and the
 * query parameters (400). A refused target never reaches the gateway's cache or the origin.
 *
 * It also produces the canonical target: the known parameters in one fixed order, each value
 * percent-encoded one way, `q` trimmed. Requests that the origin would answer identically then
 * share one cache entry (`?q=a&limit=5` and `?limit=5&q=a`), and the gateway forwards exactly the
 * canonical target, so a stored response always matches its key.
 */
import { BRANCH_ID } from './api-types.ts';
import { redactTarget, type CredentialNames } from './credentials.ts';
import { problem, type Problem } from './problem.ts';

export const ROUTE_TEMPLATES = ['/v1/books', '/v1/books/{id}', '/v1/branches', '/v1/branches/{id}'] as const;
export type RouteTemplate = (typeof ROUTE_TEMPLATES)[number];
/** Metric label for requests that matched no route: bounded cardinality, never the raw path. */
export const UNMATCHED_ROUTE = 'unmatched';
export type RouteLabel = RouteTemplate | typeof UNMATCHED_ROUTE;

export const ALLOWED_METHODS = 'GET, HEAD';
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
export const MAX_QUERY_CHARS = 256;
const LIMIT = /^[1-9][0-9]{0,2}$/;
const CURSOR = /^[A-Za-z0-9_-]{1,512}$/;

export interface BooksQuery {
  readonly q: string;
  readonly limit: number;
  readonly cursor?: string;
  readonly branch?: string;
  readonly available?: boolean;
}

export type Target =
  | { readonly route: '/v1/books'; readonly query: BooksQuery }
  | { readonly route: '/v1/books/{id}' | '/v1/branches/{id}'; readonly id: string }
  | { readonly route: '/v1/branches' };

export type TargetVerdict =
  | { readonly ok: true; readonly target: Target; readonly canonical: string; readonly isHead: boolean }
  | { readonly ok: false; readonly route: RouteLabel; readonly problem: Problem };

const BOOKS_PARAMS = ['q', 'limit', 'cursor', 'branch', 'available'] as const;
type BooksParam = (typeof BOOKS_PARAMS)[number];

function matchRoute(path: string): { route: RouteTemplate; id?: string } | undefined {
  switch (path) {
    case '/v1/books':
      return { route: '/v1/books' };
    case '/v1/branches':
      return { route: '/v1/branches' };
  }
  const slash = path.lastIndexOf('/');
  const id = path.slice(slash + 1);
  if (id === '') return undefined;
  const parent = path.slice(0, slash);
  if (parent === '/v1/books') return { route: '/v1/books/{id}', id };
  if (parent === '/v1/branches') return { route: '/v1/branches/{id}', id };
  return undefined;
}

/** Parses the raw request target of a request; `maxTargetBytes` is the 414 threshold. */
export function parseRequestTarget(method: string, rawTarget: string, maxTargetBytes: number): TargetVerdict {
  if (Buffer.byteLength(rawTarget) > maxTargetBytes) {
    return refuse(UNMATCHED_ROUTE, problem('uri-too-long', `the request target is longer than ${maxTargetBytes} bytes`));
  }
  const target = originForm(rawTarget);
  const qmark = target.indexOf('?');
  const path = qmark === -1 ? target : target.slice(0, qmark);
  const rawQuery = qmark === -1 ? '' : target.slice(qmark + 1);
  const matched = matchRoute(path);
  if (matched === undefined) return refuse(UNMATCHED_ROUTE, problem('not-found', 'no resource at this path'));
  const { route } = matched;
  if (method !== 'GET' && method !== 'HEAD') {
    return refuse(route, problem('method-not-allowed', `${route} supports GET and HEAD`, { allow: ALLOWED_METHODS }));
  }
  const isHead = method === 'HEAD';
  if (route === '/v1/books') {
    const parsed = parseBooksQuery(rawQuery);
    if ('problem' in parsed) return refuse(route, parsed.problem);
    return { ok: true, isHead, target: { route, query: parsed.query }, canonical: canonicalBooksTarget(parsed.query) };
  }
  const stray = strayParameter(rawQuery, route);
  if (stray !== undefined) return refuse(route, stray);
  if (route === '/v1/branches') return { ok: true, isHead, target: { route }, canonical: path };
  const id = decodeSegment(matched.id ?? '');
  if (id === undefined) return refuse(route, problem('not-found', 'no resource at this path'));
  return { ok: true, isHead, target: { route, id }, canonical: `${path.slice(0, path.lastIndexOf('/') + 1)}${encodeURIComponent(id)}` };
}

const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * RFC 9112 §3.2.2: a server must accept the absolute-form (`GET http://host/v1/books?q=x`) as
 * well; the resource is the same as the origin-form's, so the scheme and authority are dropped.
 */
export function originForm(rawTarget: string): string {
  if (rawTarget.startsWith('/')) return rawTarget;
  const authority = ABSOLUTE_FORM.exec(rawTarget)?.[0];
  if (authority === undefined) return rawTarget;
  const rest = rawTarget.slice(authority.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

function refuse(route: RouteLabel, p: Problem): TargetVerdict {
  return { ok: false, route, problem: p };
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function firstParameter(rawQuery: string): string | undefined {
  for (const [name] of new URLSearchParams(rawQuery)) return name;
  return undefined;
}

/** The 400 for a query on `route`, which takes no parameters; `rawQuery` is what follows the `?`. */
export function strayParameter(rawQuery: string, route: string): Problem | undefined {
  const stray = firstParameter(rawQuery);
  return stray === undefined ? undefined : unknownParameter(stray, route);
}

export function unknownParameter(name: string, route: string): Problem {
  const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
  return problem('unknown-parameter', `unknown parameter "${shown}" for ${route}`);
}

function invalid(detail: string): { problem: Problem } {
  return { problem: problem('invalid-parameter', detail) };
}

function parseBooksQuery(rawQuery: string): { query: BooksQuery } | { problem: Problem } {
  const values = new Map<BooksParam, string>();
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!(BOOKS_PARAMS as readonly string[]).includes(name)) return { problem: unknownParameter(name, '/v1/books') };
    const known = name as BooksParam;
    if (values.has(known)) return invalid(`${known} must be given at most once`);
    values.set(known, value);
  }
  const q = values.get('q')?.trim();
  if (q === undefined || q === '') return invalid('q is required and must not be blank');
  if (codePoints(q) > MAX_QUERY_CHARS) return invalid(`q must be at most ${MAX_QUERY_CHARS} characters`);
  const query: { -readonly [K in keyof BooksQuery]: BooksQuery[K] } = { q, limit: DEFAULT_LIMIT };
  const limit = values.get('limit');
  if (limit !== undefined) {
    if (!LIMIT.test(limit) || Number(limit) > MAX_LIMIT) return invalid(`limit must be an integer from 1 to ${MAX_LIMIT}`);
    query.limit = Number(limit);
  }
  const cursor = values.get('cursor');
  if (cursor !== undefined) {
    if (!CURSOR.test(cursor)) return { problem: problem('invalid-cursor', 'cursor must be a value taken from a previous response') };
    query.cursor = cursor;
  }
  const branch = values.get('branch');
  if (branch !== undefined) {
    if (!BRANCH_ID.test(branch)) return invalid('branch must be a branch id such as branch_central');
    query.branch = branch;
  }
  const available = values.get('available');
  if (available !== undefined) {
    if (available !== 'true' && available !== 'false') return invalid('available must be true or false');
    query.available = available === 'true';
  }
  return { query };
}

/** The contract counts characters, not UTF-16 units: an emoji is one character. */
function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) n++;
  }
  return n;
}

/**
 * The one spelling of a search: parameters in a fixed order, the default `limit` left out, values
 * percent-encoded by `encodeURIComponent`. The origin builds its `next` links with it too.
 */
export function canonicalBooksTarget(query: BooksQuery): string {
  let target = `/v1/books?q=${encodeURIComponent(query.q)}`;
  if (query.limit !== DEFAULT_LIMIT) target += `&limit=${query.limit}`;
  if (query.cursor !== undefined) target += `&cursor=${query.cursor}`;
  if (query.branch !== undefined) target += `&branch=${query.branch}`;
  if (query.available !== undefined) target += `&available=${query.available}`;
  return target;
}

/**
 * A problem's `instance`: the target as sent, with credentials redacted (credentials.ts); of an
 * over-long one, only its path, redacted too (an absolute-form target's user information).
 */
export function problemInstance(rawTarget: string, maxTargetBytes: number, credentialNames: CredentialNames): string {
  if (Buffer.byteLength(rawTarget) <= maxTargetBytes) return redactTarget(rawTarget, credentialNames);
  const path = rawTarget.split('?', 1)[0] ?? '/';
  return Buffer.byteLength(path) <= maxTargetBytes ? redactTarget(path, credentialNames) : '/';
}
