/**
 * `GET /v1/books`: a parsed query in, one page of books (or the problem with it) out. Fetching
 * one result more than the page holds tells whether a next page exists without counting matches.
 */
import type { BooksPage } from '../shared/api-types.ts';
import { problem, type Problem } from '../shared/problem.ts';
import { canonicalBooksTarget, type BooksQuery } from '../shared/request-target.ts';
import { FIRST_PAGE, type CatalogDb, type SearchFilter } from './catalog-db.ts';
import { decodeCursor, encodeCursor, fingerprint } from './cursor.ts';
import { planKey, planSearch, type SearchPlan } from './fts-query.ts';

export type SearchOutcome = { readonly ok: true; readonly page: BooksPage } | { readonly ok: false; readonly problem: Problem };

/** Called with the database time of each search, by plan kind. */
export type SearchTimer = (plan: SearchPlan['kind'], seconds: number) => void;

export function searchFilter(query: BooksQuery): SearchFilter {
  const { branch, available } = query;
  if (branch !== undefined) return available === undefined ? { kind: 'branch', branch } : { kind: 'branch-availability', branch, available };
  if (available === undefined) return { kind: 'none' };
  return { kind: available ? 'available-anywhere' : 'available-nowhere' };
}

export function searchBooks(db: CatalogDb, query: BooksQuery, timer: SearchTimer): SearchOutcome {
  const plan = planSearch(query.q);
  if (plan === undefined) return { ok: false, problem: problem('invalid-parameter', 'q must contain at least one letter or digit') };
  const filter = searchFilter(query);
  const search = fingerprint(`${planKey(plan)}|${JSON.stringify(filter)}`);
  let after = FIRST_PAGE;
  if (query.cursor !== undefined) {
    const decoded = decodeCursor(query.cursor, search);
    if (decoded === undefined) return { ok: false, problem: problem('invalid-cursor', 'cursor must be the next link of a previous page of this search') };
    after = decoded;
  }
  const started = performance.now();
  const hits = db.search(plan, filter, after, query.limit + 1);
  timer(plan.kind, (performance.now() - started) / 1000);
  const page = hits.slice(0, query.limit);
  const results = page.map((hit) => hit.book);
  const last = page.at(-1);
  const next = hits.length > query.limit && last !== undefined ? canonicalBooksTarget({ ...query, cursor: encodeCursor(last, search) }) : null;
  return { ok: true, page: { results, next } };
}
