/**
 * The catalog's resources: maps a parsed, authorised request target to the JSON document it
 * names, or to the problem that says why there is none.
 */
import { BOOK_ID, BRANCH_ID, type Book, type BooksPage, type Branch, type BranchList } from '../shared/api-types.ts';
import { problem, type Problem } from '../shared/problem.ts';
import type { BooksQuery, Target } from '../shared/request-target.ts';
import type { CatalogDb } from './catalog-db.ts';
import { searchBooks, type SearchTimer } from './search.ts';

/** Every document the API serves; the OpenAPI document describes each. */
export type ApiDocument = BooksPage | Book | BranchList | Branch;

export type Resolution =
  /** `tags`: the `Surrogate-Key` of the document, the ids of what it shows (contract, "Tags"). */
  | { readonly ok: true; readonly document: ApiDocument; readonly tags: string; readonly next?: string | null }
  | { readonly ok: false; readonly problem: Problem };

/**
 * Every book shown, and for a search filtered by availability the tag of the branch it filters
 * on (`avail_any` without one): a loan or return there can add a book to the page or remove one.
 */
function searchTags(query: BooksQuery, page: BooksPage): string {
  const tags = page.results.map((book) => book.id);
  if (query.available !== undefined) tags.push(`avail_${query.branch ?? 'any'}`);
  return tags.join(' ');
}

function notFound(what: string): Resolution {
  return { ok: false, problem: problem('not-found', `no ${what} with this id`) };
}

export function resolve(db: CatalogDb, target: Target, timer: SearchTimer): Resolution {
  switch (target.route) {
    case '/v1/books': {
      const outcome = searchBooks(db, target.query, timer);
      return outcome.ok ? { ok: true, document: outcome.page, tags: searchTags(target.query, outcome.page), next: outcome.page.next } : outcome;
    }
    case '/v1/books/{id}': {
      const digits = BOOK_ID.exec(target.id)?.[1];
      const book = digits === undefined ? undefined : db.book(Number(digits));
      return book === undefined ? notFound('book') : { ok: true, document: book, tags: book.id };
    }
    case '/v1/branches': {
      const list: BranchList = { results: db.branches() };
      return { ok: true, document: list, tags: '' };
    }
    case '/v1/branches/{id}': {
      const branch = BRANCH_ID.test(target.id) ? db.branch(target.id) : undefined;
      return branch === undefined ? notFound('branch') : { ok: true, document: branch, tags: '' };
    }
  }
}
