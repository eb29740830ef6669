/**
 * The words real users would type: titles, author names and branch ids read from the catalog
 * database itself, opened read-only so a load test can never change what the origin serves.
 */
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

export interface CatalogVocabulary {
  readonly titles: readonly string[];
  readonly authors: readonly string[];
  readonly branches: readonly string[];
}

export class CatalogUnavailableError extends Error {
  override name = 'CatalogUnavailableError';
}

export function readCatalogVocabulary(path: string): CatalogVocabulary {
  if (!existsSync(path)) throw new CatalogUnavailableError(`catalog database ${path} does not exist (start the origin once, or pass --db)`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch (err) {
    throw new CatalogUnavailableError(`catalog database ${path} cannot be opened: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const titles: string[] = [];
    const authors = new Set<string>();
    for (const row of db.prepare('SELECT title, authors FROM book ORDER BY id').iterate()) {
      titles.push(String(row.title));
      for (const name of JSON.parse(String(row.authors)) as unknown[]) if (typeof name === 'string') authors.add(name);
    }
    const branches = db
      .prepare('SELECT id FROM branch ORDER BY id')
      .all()
      .map((row) => String(row.id));
    if (titles.length === 0 || branches.length === 0) throw new CatalogUnavailableError(`catalog database ${path} holds no books or no branches`);
    return { titles, authors: [...authors].sort(), branches };
  } catch (err) {
    if (err instanceof CatalogUnavailableError) throw err;
    throw new CatalogUnavailableError(`catalog database ${path} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    db.close();
  }
}
