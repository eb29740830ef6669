/** Search behaviour over real HTTP: paging, ranking, filters, hostile text, validators. */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import type { Book, BooksPage, Branch } from '../../src/shared/api-types.ts';
import { json, sharedCatalog, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

async function walk(f: OriginFixture, first: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let target: string | null = first;
  let pages = 0;
  while (target !== null) {
    const reply = await f.get(target);
    assert.equal(reply.status, 200, reply.body);
    const page: BooksPage = json<BooksPage>(reply);
    pages++;
    ids.push(...page.results.map((b) => b.id));
    if (page.next === null) assert.equal(reply.headers.link, undefined);
    else assert.equal(reply.headers.link, `<${page.next}>; rel="next"`);
    target = page.next;
  }
  return { ids, pages };
}

describe('search', () => {
  let f: OriginFixture;
  before(async () => {
    f = await startOriginFixture();
  });
  after(() => f.stop());

  for (const q of ['the', 'silent river', 'letters from']) {
    test(`paging "${q}": every page walked equals one big page, no duplicate, no gap, same order twice`, async () => {
      const big = json<BooksPage>(await f.get(`/v1/books?q=${encodeURIComponent(q)}&limit=100`));
      const { ids, pages } = await walk(f, `/v1/books?q=${encodeURIComponent(q)}&limit=7`);
      assert.equal(new Set(ids).size, ids.length, 'no duplicates');
      if (big.next === null)
        assert.deepEqual(
          ids,
          big.results.map((b) => b.id),
          'no gaps',
        );
      else
        assert.deepEqual(
          ids.slice(0, 100),
          big.results.map((b) => b.id),
          'no gaps',
        );
      assert.equal(pages, Math.max(1, Math.ceil(ids.length / 7)), 'no empty trailing page');
      assert.deepEqual((await walk(f, `/v1/books?q=${encodeURIComponent(q)}&limit=7`)).ids, ids, 'stable across walks');
    });
  }

  test('a broad walk reaches every matching book exactly once, in bm25 order with ties by id', async () => {
    const db = new DatabaseSync(sharedCatalog(), { readOnly: true });
    try {
      for (const [q, match] of [
        ['the', '"the"'],
        ['candle OR ines', '"candle" "ines"'],
        ['Kraków', '"kraków"'],
      ] as const) {
        const expected = db
          .prepare('SELECT rowid AS id FROM book_fts WHERE book_fts MATCH ? ORDER BY rank, rowid')
          .all(match)
          .map((r) => `bk_${String(r.id)}`);
        assert.ok(expected.length > 0, `the test catalog has matches for ${q}`);
        const { ids } = await walk(f, `/v1/books?q=${encodeURIComponent(q)}&limit=100`);
        assert.deepEqual(ids, expected, q);
      }
    } finally {
      db.close();
    }
  });

  test('results match the text in title or authors, and the book endpoint agrees', async () => {
    const page = json<BooksPage>(await f.get('/v1/books?q=Garcia&limit=10'));
    assert.ok(page.results.length > 0);
    for (const book of page.results) {
      assert.ok(/garcia/i.test(`${book.title} ${book.authors.join(' ')}`), JSON.stringify(book));
      assert.deepEqual(json<Book>(await f.get(`/v1/books/${book.id}`)), book);
    }
  });

  test('common words are ignored beside other words', async () => {
    const plain = json<BooksPage>(await f.get('/v1/books?q=river&limit=100'));
    const withArticle = json<BooksPage>(await f.get('/v1/books?q=The%20river%20of&limit=100'));
    assert.deepEqual(withArticle.results, plain.results);
  });

  describe('filters', () => {
    let branches: Branch[];
    before(async () => {
      branches = json<{ results: Branch[] }>(await f.get('/v1/branches')).results;
    });

    test('branches: about a dozen, each with a name', () => {
      assert.ok(branches.length >= 10 && branches.length <= 14);
      for (const b of branches) assert.match(b.id, /^branch_[a-z0-9_]+$/);
    });

    const holds = (book: Book, branch: string, available?: boolean): boolean =>
      book.availability.some((a) => a.branch === branch && (available === undefined || a.available === available));

    test('branch, and branch with available=true/false: every result really qualifies (checked on /v1/books/{id})', async () => {
      const all = (await walk(f, '/v1/books?q=the&limit=100')).ids;
      const books = await Promise.all(all.map(async (id) => json<Book>(await f.get(`/v1/books/${id}`))));
      for (const branch of ['branch_central', 'branch_mobile']) {
        for (const available of [undefined, true, false]) {
          const filter = `&branch=${branch}${available === undefined ? '' : `&available=${available}`}`;
          const { ids } = await walk(f, `/v1/books?q=the&limit=100${filter}`);
          assert.ok(ids.length > 0, filter);
          for (const id of ids.slice(0, 25)) assert.ok(holds(json<Book>(await f.get(`/v1/books/${id}`)), branch, available), `${id} ${filter}`);
          assert.deepEqual(
            ids,
            books.filter((b) => holds(b, branch, available)).map((b) => b.id),
            `no qualifying book left out ${filter}`,
          );
        }
      }
    });

    test('available alone: available at some branch, or at none', async () => {
      const yes = json<BooksPage>(await f.get('/v1/books?q=the&limit=100&available=true')).results;
      const no = json<BooksPage>(await f.get('/v1/books?q=the&limit=100&available=false')).results;
      assert.ok(yes.length > 0 && no.length > 0);
      for (const b of yes) assert.ok(b.availability.some((a) => a.available));
      for (const b of no) assert.ok(b.availability.every((a) => !a.available));
    });

    test('an unknown but well-formed branch gives an empty page, not 404', async () => {
      const reply = await f.get('/v1/books?q=the&branch=branch_atlantis');
      assert.equal(reply.status, 200);
      assert.deepEqual(json(reply), { results: [], next: null });
    });
  });

  describe('hostile search text is searched as words or refused, never a 500', () => {
    const texts = [
      '"',
      '""',
      '"river',
      '*',
      'riv*',
      'NEAR(a b)',
      'NEAR(river garden, 2)',
      '-x',
      'river -garden',
      'OR',
      'AND',
      'NOT',
      'river OR',
      ')',
      '(river',
      'title:river',
      'authors:garcia',
      '^river',
      "'; DROP TABLE book; --",
      "O'Brien",
      '\\',
      '%',
      '_',
      '🙂',
      '🙂 river 🙂',
      'Grünewald',
      'ŞĞ',
      '\u0301',
      'a'.repeat(256),
      '🙂'.repeat(100),
      'x'.repeat(300),
      '\u0000',
    ];
    for (const text of texts) {
      test(JSON.stringify(text.length > 30 ? `${text.slice(0, 20)}…(${text.length})` : text), async () => {
        const reply = await f.get(`/v1/books?q=${encodeURIComponent(text)}`);
        assert.ok(reply.status === 200 || reply.status === 400, `${reply.status} ${reply.body}`);
        if (reply.status === 400) assert.equal(reply.headers['content-type'], 'application/problem+json');
        else assert.ok(Array.isArray(json<BooksPage>(reply).results));
      });
    }

    test('FTS syntax is not interpreted: NEAR/OR/quotes behave as plain words', async () => {
      const plain = json<BooksPage>(await f.get('/v1/books?q=river%20garden&limit=100')).results;
      const syntax = json<BooksPage>(await f.get(`/v1/books?q=${encodeURIComponent('"river" OR garden*')}&limit=100`)).results;
      assert.deepEqual(syntax, plain, 'OR is a common word, quotes and * are separators');
      const or = json<BooksPage>(await f.get('/v1/books?q=OR&limit=5'));
      assert.ok(Array.isArray(or.results), 'OR alone is searched as the word "or"');
      assert.equal((await f.get(`/v1/books?q=${'a'.repeat(257)}`)).status, 400, '257 characters');
      assert.equal((await f.get(`/v1/books?q=${encodeURIComponent('🙂'.repeat(100))}`)).status, 400, 'only emoji: no word');
    });
  });

  describe('validators', () => {
    test('strong ETag from the body, public max-age, 304 on If-None-Match (list, weak, *), HEAD alike', async () => {
      const target = '/v1/books?q=river&limit=3';
      const full = await f.get(target);
      assert.equal(full.headers['content-type'], 'application/json');
      assert.equal(full.headers['cache-control'], 'public, max-age=60');
      const etag = String(full.headers.etag);
      assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
      assert.equal((await f.get(target)).headers.etag, etag, 'same body, same tag');
      assert.notEqual((await f.get('/v1/books?q=river&limit=4')).headers.etag, etag);

      for (const inm of [etag, `"other", ${etag}`, `W/${etag}`, '*', `"x", , ${etag}`]) {
        for (const method of ['GET', 'HEAD']) {
          const reply = await f.get(target, { 'if-none-match': inm }, method);
          assert.equal(reply.status, 304, `${method} ${inm}`);
          assert.equal(reply.body, '');
          assert.equal(reply.headers.etag, etag);
          assert.equal(reply.headers['cache-control'], 'public, max-age=60');
        }
      }
      assert.equal((await f.get(target, { 'if-none-match': '"other"' })).status, 200);

      const head = await f.get(target, {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.body, '');
      for (const name of ['etag', 'cache-control', 'content-type', 'content-length', 'link']) assert.equal(head.headers[name], full.headers[name], name);
    });

    test('max-age follows origin.maxAgeSeconds', async () => {
      const g = await startOriginFixture({ 'origin.maxAgeSeconds': 5 });
      try {
        assert.equal((await g.get('/v1/branches/branch_central')).headers['cache-control'], 'public, max-age=5');
      } finally {
        await g.stop();
      }
    });
  });
});
