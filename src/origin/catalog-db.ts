/**
 * Read access to the catalog database. Every statement is prepared once when the catalog is
 * opened; requests only bind parameters, so user text never becomes SQL.
 *
 * Searches page by keyset: results are ordered by (bm25 rank, id) and a page starts strictly
 * after the (rank, id) of the previous page's last result, which the cursor carries. Ranks are
 * a pure function of the static catalog, so the order is the same on every walk.
 *
 * A page is one statement: the ranked ids joined to their books, so a search costs one call into
 * SQLite rather than one per book (each call costs several microseconds).
 */
import { DatabaseSync, type SQLOutputValue, type StatementSync } from 'node:sqlite';
import type { Book, Branch, BranchAvailability } from '../shared/api-types.ts';
import { assertSchemaVersion } from './catalog-schema.ts';
import type { SearchPlan } from './fts-query.ts';

/** Which books a search keeps, besides matching the text. */
export type SearchFilter =
  | { readonly kind: 'none' }
  | { readonly kind: 'branch'; readonly branch: string }
  | { readonly kind: 'branch-availability'; readonly branch: string; readonly available: boolean }
  | { readonly kind: 'available-anywhere' }
  | { readonly kind: 'available-nowhere' };

export interface RankedId {
  readonly id: number;
  readonly score: number;
}

export interface RankedBook extends RankedId {
  readonly book: Book;
}

/** The position a page starts after; `FIRST_PAGE` sorts before every result. */
export const FIRST_PAGE: RankedId = { id: 0, score: -Infinity };

/** `{id}` stands for the column holding the book id in the statement the filter joins. */
const FILTER_SQL: Readonly<Record<SearchFilter['kind'], string>> = {
  none: '',
  branch: 'AND EXISTS (SELECT 1 FROM holding h WHERE h.book_id = {id} AND h.branch_id = :branch)',
  'branch-availability': 'AND EXISTS (SELECT 1 FROM holding h WHERE h.book_id = {id} AND h.branch_id = :branch AND h.available = :available)',
  'available-anywhere': 'AND EXISTS (SELECT 1 FROM holding h WHERE h.book_id = {id} AND h.available = 1)',
  'available-nowhere': 'AND NOT EXISTS (SELECT 1 FROM holding h WHERE h.book_id = {id} AND h.available = 1)',
};

function filterParams(filter: SearchFilter): Record<string, string | number> {
  switch (filter.kind) {
    case 'branch':
      return { branch: filter.branch };
    case 'branch-availability':
      return { branch: filter.branch, available: filter.available ? 1 : 0 };
    default:
      return {};
  }
}

const BOOK_COLUMNS = 'b.id AS id, b.title AS title, b.authors AS authors, b.availability AS availability';

function withBooks(ranked: string): string {
  return `WITH page AS (${ranked}) SELECT page.score AS score, ${BOOK_COLUMNS} FROM page JOIN book b ON b.id = page.id ORDER BY page.score, page.id`;
}

function termSql(filter: string): string {
  return withBooks(`SELECT book_id AS id, score FROM term_rank
    WHERE term = :term AND (score, book_id) > (:score, :id) ${filter.replaceAll('{id}', 'term_rank.book_id')}
    ORDER BY score, book_id LIMIT :count`);
}

function matchSql(filter: string): string {
  return withBooks(`SELECT rowid AS id, rank AS score FROM book_fts
    WHERE book_fts MATCH :match AND (rank, rowid) > (:score, :id) ${filter.replaceAll('{id}', 'book_fts.rowid')}
    ORDER BY rank, rowid LIMIT :count`);
}

function toBook(row: Record<string, SQLOutputValue>): Book {
  return {
    id: `bk_${row.id as number}`,
    title: row.title as string,
    authors: JSON.parse(row.authors as string) as string[],
    availability: JSON.parse(row.availability as string) as BranchAvailability[],
  };
}

const CACHE_KIB = 64 * 1024;

export class CatalogDb {
  readonly #db: DatabaseSync;
  readonly #search: Readonly<Record<SearchPlan['kind'], Readonly<Record<SearchFilter['kind'], StatementSync>>>>;
  readonly #book: StatementSync;
  readonly #branches: StatementSync;
  readonly #branch: StatementSync;

  constructor(path: string) {
    this.#db = new DatabaseSync(path, { readOnly: true });
    assertSchemaVersion(this.#db, path);
    // The whole catalog (about 33 MiB at 100,000 books) fits in the page cache, so hot pages are
    // not re-read through system calls on every search. The value is a ceiling, not an allocation.
    this.#db.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
    const statements = (sql: (filter: string) => string): Record<SearchFilter['kind'], StatementSync> => ({
      none: this.#db.prepare(sql(FILTER_SQL.none)),
      branch: this.#db.prepare(sql(FILTER_SQL.branch)),
      'branch-availability': this.#db.prepare(sql(FILTER_SQL['branch-availability'])),
      'available-anywhere': this.#db.prepare(sql(FILTER_SQL['available-anywhere'])),
      'available-nowhere': this.#db.prepare(sql(FILTER_SQL['available-nowhere'])),
    });
    this.#search = { term: statements(termSql), match: statements(matchSql) };
    this.#book = this.#db.prepare(`SELECT ${BOOK_COLUMNS} FROM book b WHERE b.id = ?`);
    this.#branches = this.#db.prepare('SELECT id, name FROM branch ORDER BY id');
    this.#branch = this.#db.prepare('SELECT id, name FROM branch WHERE id = ?');
  }

  /** Up to `count` books that follow `after` in (rank, id) order. */
  search(plan: SearchPlan, filter: SearchFilter, after: RankedId, count: number): RankedBook[] {
    const text = plan.kind === 'term' ? { term: plan.term } : { match: plan.match };
    const rows = this.#search[plan.kind][filter.kind].all({ ...text, ...filterParams(filter), score: after.score, id: after.id, count });
    return rows.map((row) => ({ id: row.id as number, score: row.score as number, book: toBook(row) }));
  }

  book(id: number): Book | undefined {
    const row = this.#book.get(id);
    return row === undefined ? undefined : toBook(row);
  }

  /** Books in the catalog, at start: ids are 1..N, so the last id is the count, read without a scan. */
  bookCount(): number {
    return Number(this.#db.prepare('SELECT max(id) AS n FROM book').get()?.n ?? 0);
  }

  branches(): Branch[] {
    return this.#branches.all().map((row) => ({ id: row.id as string, name: row.name as string }));
  }

  branch(id: string): Branch | undefined {
    const row = this.#branch.get(id);
    return row === undefined ? undefined : { id: row.id as string, name: row.name as string };
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
