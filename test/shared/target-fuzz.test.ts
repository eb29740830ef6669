/**
 * Property-based checks (fast-check) of the target parser and the cache key it yields: the parser
 * never throws, and any two targets that get the same key are answered the same by the real
 * origin, so a key can never hand one query's answer to another.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { parseRequestTarget } from '../../src/shared/request-target.ts';
import { startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

test('the parser answers every target, however hostile, with a verdict and never throws', () => {
  const target = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc
      .tuple(
        fc.constantFrom('/v1/books', '/v1/books/', '/v1/branches', '/v1/books/bk_1', 'http://h/v1/books', '*', ''),
        fc.string({ unit: 'binary', maxLength: 200 }),
      )
      .map(([a, b]) => `${a}?${b}`),
  );
  fc.assert(
    fc.property(target, fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE'), (raw, method) => {
      const verdict = parseRequestTarget(method, raw, 2048);
      assert.equal(typeof verdict.ok, 'boolean');
      if (verdict.ok) assert.ok(verdict.canonical.startsWith('/v1/'));
    }),
    { numRuns: 2000 },
  );
});

interface Query {
  readonly q: string;
  readonly limit: number | undefined;
  readonly branch: string | undefined;
  readonly available: boolean | undefined;
}

/** Spells a query one of several equivalent ways: order, encoding of `q`, an explicit default limit, padding. */
function spell(query: Query, order: readonly number[], plusForSpace: boolean, explicitDefault: boolean, pad: boolean): string {
  const q = pad ? ` ${query.q} ` : query.q;
  const encodedQ = plusForSpace ? encodeURIComponent(q).replaceAll('%20', '+') : encodeURIComponent(q).replaceAll('-', '%2D');
  const parts = [`q=${encodedQ}`];
  if (query.limit !== undefined) parts.push(`limit=${query.limit}`);
  else if (explicitDefault) parts.push('limit=20');
  if (query.branch !== undefined) parts.push(`branch=${query.branch}`);
  if (query.available !== undefined) parts.push(`available=${query.available}`);
  const ordered = order.slice(0, parts.length).map((i) => parts[i % parts.length] ?? '');
  return `/v1/books?${[...new Set([...ordered, ...parts])].join('&')}`;
}

let origin: OriginFixture;
before(async () => {
  origin = await startOriginFixture();
});
after(() => origin.stop());

test('two spellings with the same key get the same answer from the origin', async () => {
  const word = fc.constantFrom('river', 'silent', 'the', 'winter', 'garden', 'Ünïcode', 'déjà vu', 'a-b', 'x+y', '50%', "O'Brien", '日本');
  const query = fc.record({
    q: fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
    limit: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
    branch: fc.option(fc.constantFrom('branch_central', 'branch_harbor', 'branch_nowhere'), { nil: undefined }),
    available: fc.option(fc.boolean(), { nil: undefined }),
  });
  const permutation = fc.shuffledSubarray([0, 1, 2, 3], { minLength: 4, maxLength: 4 });
  await fc.assert(
    fc.asyncProperty(query, permutation, permutation, fc.boolean(), fc.boolean(), async (qy, orderA, orderB, plus, pad) => {
      const a = spell(qy, orderA, plus, false, false);
      const b = spell(qy, orderB, !plus, true, pad);
      const keyA = parseRequestTarget('GET', a, 2048);
      const keyB = parseRequestTarget('GET', b, 2048);
      assert.ok(keyA.ok && keyB.ok, `${a} / ${b}`);
      assert.equal(keyA.canonical, keyB.canonical, `${a} and ${b} share no key`);
      const [ra, rb] = await Promise.all([origin.get(a), origin.get(b)]);
      assert.equal(ra.status, rb.status);
      assert.equal(ra.body, rb.body, `${a} and ${b} have one key but different answers`);
    }),
    { numRuns: 150 },
  );
});
