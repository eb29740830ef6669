/** The seeder: deterministic, believable, and the term index agrees with FTS5. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { seedCatalog } from '../../src/origin/seed.ts';
import { tempDir } from '../support/config.ts';

function dump(path: string): string {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return JSON.stringify([
      db.prepare('SELECT * FROM branch ORDER BY id').all(),
      db.prepare('SELECT * FROM book ORDER BY id').all(),
      db.prepare('SELECT * FROM holding ORDER BY book_id, branch_id').all(),
      db.prepare('SELECT * FROM term_rank ORDER BY term, score, book_id').all(),
    ]);
  } finally {
    db.close();
  }
}

test('the same number of books twice gives the same rows; a smaller catalog is a prefix of a larger one', () => {
  const dir = tempDir();
  const [a, b, c] = ['a.db', 'b.db', 'c.db'].map((n) => join(dir, n)) as [string, string, string];
  seedCatalog(a, 500);
  seedCatalog(b, 500);
  seedCatalog(c, 800);
  assert.equal(dump(a), dump(b));
  const big = new DatabaseSync(c, { readOnly: true });
  const small = new DatabaseSync(a, { readOnly: true });
  try {
    assert.deepEqual(big.prepare('SELECT * FROM book WHERE id <= 500 ORDER BY id').all(), small.prepare('SELECT * FROM book ORDER BY id').all());
  } finally {
    big.close();
    small.close();
  }
});

test('a believable catalog: a dozen branches, every book held somewhere, a realistic share available', () => {
  const path = join(tempDir(), 'catalog.db');
  seedCatalog(path, 3000);
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const one = (sql: string): number => Number(Object.values(db.prepare(sql).get() ?? {})[0]);
    assert.equal(one('SELECT count(*) FROM book'), 3000);
    assert.equal(one('SELECT count(*) FROM branch'), 12);
    assert.equal(one('SELECT count(*) FROM book WHERE id NOT IN (SELECT book_id FROM holding)'), 0);
    const share = one('SELECT avg(available) FROM holding');
    assert.ok(share > 0.5 && share < 0.85, `available share ${share}`);
    assert.ok(one('SELECT count(DISTINCT title) FROM book') > 2500, 'titles are varied');
    const perBranch = db
      .prepare('SELECT count(*) AS n FROM holding GROUP BY branch_id ORDER BY n')
      .all()
      .map((r) => Number(r.n));
    assert.ok((perBranch.at(-1) ?? 0) > 10 * (perBranch[0] ?? 0), 'the central library holds far more than the mobile library');
    for (const row of db.prepare('SELECT title, authors FROM book LIMIT 50').all()) {
      assert.match(String(row.title), /^[A-Z]/);
      for (const author of JSON.parse(String(row.authors)) as string[]) assert.match(author, /^\S+( [A-Z]\.)? \S+$/u);
    }
    const sample = db
      .prepare('SELECT term FROM term_rank GROUP BY term HAVING count(*) > 20 LIMIT 5')
      .all()
      .map((r) => String(r.term));
    for (const term of sample) {
      const indexed = db.prepare('SELECT book_id AS id, score FROM term_rank WHERE term = ? ORDER BY score, book_id').all(term);
      const fts = db.prepare('SELECT rowid AS id, rank AS score FROM book_fts WHERE book_fts MATCH ? ORDER BY rank, rowid').all(`"${term}"`);
      assert.deepEqual(indexed, fts, `term_rank agrees with FTS5 bm25 for "${term}"`);
    }
  } finally {
    db.close();
  }
  assert.equal(readFileSync(path).subarray(0, 15).toString(), 'SQLite format 3');
});
