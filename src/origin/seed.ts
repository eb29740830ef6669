/**
 * Builds the catalog database. The file is built under a temporary name and renamed into place,
 * so a crash mid-build or a second process starting at the same time never leaves a half-built
 * catalog where the origin would open it. An existing catalog is replaced only while no other
 * process has it open: a running origin would go on serving the old file, unlinked, and every loan
 * it took meanwhile would be gone at its next start.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Config } from '../config/schema.ts';
import { generateBooks } from './book-generator.ts';
import { CATALOG_SCHEMA, CATALOG_SCHEMA_VERSION, RANK_FUNCTION } from './catalog-schema.ts';
import { SeededRandom } from './random.ts';
import { BRANCHES } from './seed-words.ts';

export function catalogPath(config: Config): string {
  return config['origin.db'] ?? join(config.dataDir, 'catalog.db');
}

/** An existing catalog that another process (a running origin, say) has open. */
export class CatalogInUseError extends Error {
  override name = 'CatalogInUseError';
}

const SQLITE_BUSY = 5;

/**
 * Holds the existing catalog at `path` alone until released, so no origin opens it while it is
 * replaced; throws CatalogInUseError when another process has it open. SQLite grants an exclusive
 * lock on a WAL database only when no other connection holds it, readers included. A file that is
 * not a catalog at all is there to be replaced.
 */
function holdAlone(path: string): () => void {
  if (!existsSync(path)) return () => undefined;
  const db = new DatabaseSync(path);
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;');
  } catch (err) {
    db.close();
    if ((err as { errcode?: unknown }).errcode === SQLITE_BUSY)
      throw new CatalogInUseError(
        `${path} is open in another process (a running origin, say): stop it first, or seed another file with --db and start the origin on that`,
      );
    return () => undefined;
  }
  return () => {
    db.exec('COMMIT');
    db.close();
  };
}

/** Deterministic: the same `books` always yields the same rows. */
export function seedCatalog(path: string, books: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const release = holdAlone(path);
  const building = `${path}.building-${process.pid}`;
  rmSync(building, { force: true });
  const db = new DatabaseSync(building);
  try {
    // A file that is renamed into place only when complete needs no rollback journal.
    db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
    db.exec(CATALOG_SCHEMA);
    fill(db, books);
    db.exec(`PRAGMA user_version = ${CATALOG_SCHEMA_VERSION}; VACUUM;`);
  } catch (err) {
    db.close();
    rmSync(building, { force: true });
    release();
    throw err;
  }
  db.close();
  release();
  // What is left of the old file's write-ahead log and its index, before the new file takes its
  // name: SQLite would read them as the new file's.
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
  renameSync(building, path);
}

function fill(db: DatabaseSync, books: number): void {
  const insertBranch = db.prepare('INSERT INTO branch (id, name) VALUES (?, ?)');
  const insertBook = db.prepare('INSERT INTO book (id, title, authors, availability) VALUES (?, ?, ?, ?)');
  const insertHolding = db.prepare('INSERT INTO holding (book_id, branch_id, copies, on_loan, available) VALUES (?, ?, ?, ?, ?)');
  // Its own stream, so that adding copies left every title and holding of the catalog as it was.
  const copiesRandom = new SeededRandom(COPIES_SEED);
  db.exec('BEGIN');
  for (const [id, name] of BRANCHES) insertBranch.run(id, name);
  let id = 0;
  for (const book of generateBooks(books)) {
    id++;
    const holdings = book.holdings.toSorted((a, b) => (a.branch < b.branch ? -1 : 1));
    insertBook.run(id, book.title, JSON.stringify(book.authors), JSON.stringify(holdings));
    for (const { branch, available } of holdings) {
      const { copies, onLoan } = copiesOf(copiesRandom, available);
      insertHolding.run(id, branch, copies, onLoan, available ? 1 : 0);
    }
  }
  // One bulk build of the external-content index is much faster than indexing row by row.
  db.exec(`INSERT INTO book_fts (book_fts) VALUES ('rebuild');
    INSERT INTO book_fts (book_fts) VALUES ('optimize');
    INSERT INTO book_fts (book_fts, rank) VALUES ('rank', '${RANK_FUNCTION}');`);
  fillTermRank(db);
  db.exec('COMMIT');
}

const COPIES_SEED = 20261123;

/** One to three copies at a branch; all of them out when the book is not available there. */
function copiesOf(r: SeededRandom, available: boolean): { copies: number; onLoan: number } {
  const copies = 1 + r.below(3);
  return { copies, onLoan: available ? r.below(copies) : copies };
}

/** Only plain ASCII terms: fts-query.ts sends every other word through FTS5 itself. */
function fillTermRank(db: DatabaseSync): void {
  db.exec('CREATE VIRTUAL TABLE temp.book_terms USING fts5vocab(main, book_fts, row)');
  const terms = db.prepare("SELECT term FROM temp.book_terms WHERE term NOT GLOB '*[^a-z0-9]*'").all();
  const rankTerm = db.prepare('INSERT INTO term_rank (term, score, book_id) SELECT ?, rank, rowid FROM book_fts WHERE book_fts MATCH ?');
  for (const { term } of terms) rankTerm.run(term as string, `"${term as string}"`);
  db.exec('DROP TABLE temp.book_terms');
}
