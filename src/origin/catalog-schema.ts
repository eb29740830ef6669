/**
 * The catalog's tables. `book.authors` is a JSON array of names; `holding` says how many copies
 * of a book a branch holds, how many are on loan, and whether one is available there, for the
 * search filters. `book.availability` repeats the book's holdings as the API's JSON array,
 * rewritten in the same transaction as every loan that flips one: searches are far more frequent
 * than loans, and a page of books is then one row per book, with no per-book subquery (which
 * doubled the cost of a search).
 *
 * `loan` holds the loans made through the API (the seeded `on_loan` counts are copies already out
 * when the catalog was built). `webhook` is the event registrations, and `outbox` the events not
 * yet delivered, one row per registration, written in the transaction of the loan that caused
 * them, so an event exists exactly when its change committed, whatever crashes afterwards. Its
 * `message_id` (the `webhook-id` receivers dedupe by) is a UUID, not the row id: SQLite hands a
 * deleted row's id out again, and a receiver would take the new event for a retry of the old.
 * `event_log` keeps every event, registrations or not, under the same message id and body, in
 * the order of its `seq` (AUTOINCREMENT: never handed out twice, so a gateway's cursor names one
 * event for good): a gateway replays what it missed from it (`GET /v1/events`). `book_fts` is an FTS5 index over title and
 * authors whose text lives in `book` (external content), so the text is stored once; a title
 * match weighs twice an author match in its bm25 rank.
 *
 * `term_rank` is the remedy for broad one-word searches. FTS5 must compute bm25 for every match
 * before it can sort (about a microsecond each: 0.5 ms for a word in 500 books, 60 ms for "the"),
 * so for every plain word the seeder stores each matching book's rank of the one-word query, as
 * FTS5 itself computed it. A one-word search is then an index range scan that stops after one
 * page, at any depth, with exactly the order FTS5 would give.
 */
import type { DatabaseSync } from 'node:sqlite';

export const CATALOG_SCHEMA_VERSION = 4;

export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** Closes `db` and throws when the file is not a catalog of this schema version. */
export function assertSchemaVersion(db: DatabaseSync, path: string): void {
  const version = db.prepare('PRAGMA user_version').get()?.user_version;
  if (version === CATALOG_SCHEMA_VERSION) return;
  db.close();
  throw new CatalogError(`${path} is not a catalog of schema version ${CATALOG_SCHEMA_VERSION} (found ${String(version)}); rebuild it with the seed command`);
}

/** Also run on every open, so a catalog built before the log existed gains it (empty: nothing to replay). */
export const EVENT_LOG_TABLE = `
CREATE TABLE IF NOT EXISTS event_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) STRICT;
`;

export const CATALOG_SCHEMA = `
CREATE TABLE branch (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE book (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  authors TEXT NOT NULL,
  availability TEXT NOT NULL
) STRICT;

CREATE TABLE holding (
  book_id INTEGER NOT NULL REFERENCES book (id),
  branch_id TEXT NOT NULL REFERENCES branch (id),
  copies INTEGER NOT NULL CHECK (copies >= 1),
  on_loan INTEGER NOT NULL CHECK (on_loan BETWEEN 0 AND copies),
  available INTEGER NOT NULL CHECK (available = (on_loan < copies)),
  PRIMARY KEY (book_id, branch_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX holding_by_branch ON holding (branch_id, available, book_id);

CREATE VIRTUAL TABLE book_fts USING fts5 (
  title, authors,
  content = 'book', content_rowid = 'id',
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE term_rank (
  term TEXT NOT NULL,
  score REAL NOT NULL,
  book_id INTEGER NOT NULL,
  PRIMARY KEY (term, score, book_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE loan (
  id INTEGER PRIMARY KEY,
  book_id INTEGER NOT NULL,
  branch_id TEXT NOT NULL,
  since TEXT NOT NULL,
  returned TEXT,
  FOREIGN KEY (book_id, branch_id) REFERENCES holding (book_id, branch_id)
) STRICT;

CREATE TABLE webhook (
  id INTEGER PRIMARY KEY,
  url TEXT NOT NULL,
  types TEXT NOT NULL,
  secret TEXT NOT NULL,
  failing_since_ms INTEGER,
  disabled_ms INTEGER
) STRICT;

CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY,
  message_id TEXT NOT NULL,
  webhook_id INTEGER NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
  book_id INTEGER NOT NULL,
  payload TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  due_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX outbox_by_book ON outbox (webhook_id, book_id, seq);
CREATE INDEX outbox_by_due ON outbox (due_ms);
${EVENT_LOG_TABLE}
`;

/** Column weights of bm25: title, authors. */
export const RANK_FUNCTION = 'bm25(2.0, 1.0)';
