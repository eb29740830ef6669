import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRequestTarget } from '../../src/shared/request-target.ts';
import type { CatalogVocabulary } from '../../src/loadtest/catalog-vocabulary.ts';
import { buildWorkload, crawlTarget, crawlWords, CRAWL, resolvePaging, type WorkloadOptions } from '../../src/loadtest/workload.ts';

const ADJECTIVES = ['Silent', 'Hidden', 'Golden', 'Broken', 'Distant', 'Quiet', 'Crimson', 'Hollow', 'Frozen', 'Secret'];
const NOUNS = ['River', 'Garden', 'House', 'Kingdom', 'Shadow', 'Harbor', 'Mountain', 'Letter', 'Mirror', 'Winter'];
const PLACES = ['Avalon', 'Lisbon', 'Kyoto', 'Tangier', 'Oslo', 'Quito', 'Dakar', 'Hanoi', 'Lima', 'Perth'];
const GIVEN = ['Ursula K.', 'Amara', 'Jonas', 'Mei', 'Seán', 'Lucía', 'Tomasz', 'Priya', 'Kwame', 'Ingrid'];
const FAMILY = ['Le Guin', 'Okafor', 'Lindqvist', 'Tanaka', "O'Brien", 'Fernández', 'Nowak', 'Raman', 'Mensah', 'Berg'];
const VOCABULARY: CatalogVocabulary = {
  titles: ADJECTIVES.flatMap((a) => NOUNS.flatMap((n) => PLACES.map((p) => `The ${a} ${n} of ${p}: A Novel`))),
  authors: GIVEN.flatMap((g) => FAMILY.map((f) => `${g} ${f}`)),
  branches: ['branch_central', 'branch_riverside', 'branch_hillcrest'],
};
const OPTIONS: WorkloadOptions = { seed: 1, distinct: 300, zipfExponent: 1, pagingShare: 0.1, filterShare: 0.2, subjects: 5, length: 5000 };

test('the same seed plans the same requests; another seed plans different ones', () => {
  const a = buildWorkload(VOCABULARY, OPTIONS);
  const b = buildWorkload(VOCABULARY, OPTIONS);
  assert.deepEqual(a.queries, b.queries);
  assert.deepEqual(a.order, b.order);
  assert.deepEqual(a.subjectOf, b.subjectOf);
  const c = buildWorkload(VOCABULARY, { ...OPTIONS, seed: 2 });
  assert.notDeepEqual(c.queries, a.queries);
  assert.notDeepEqual(c.order, a.order);
});

test('a longer plan starts with the shorter one', () => {
  const short = buildWorkload(VOCABULARY, OPTIONS);
  const long = buildWorkload(VOCABULARY, { ...OPTIONS, length: 20_000 });
  assert.deepEqual(long.queries, short.queries);
  assert.deepEqual(long.order.subarray(0, short.order.length), short.order);
});

test('queries are distinct, valid by the contract, and drawn from the catalog', () => {
  const { queries, subjectOf } = buildWorkload(VOCABULARY, OPTIONS);
  assert.equal(queries.length, OPTIONS.distinct);
  assert.equal(new Set(queries.map((q) => `${q.kind} ${q.target}`)).size, OPTIONS.distinct);
  const words = new Set([...VOCABULARY.titles, ...VOCABULARY.authors].flatMap((t) => t.toLowerCase().split(/[^\p{L}\p{N}]+/u)));
  for (const { target } of queries) {
    const verdict = parseRequestTarget('GET', target, 2048);
    assert.ok(verdict.ok, target);
    assert.equal(verdict.canonical, target, 'targets are sent in canonical form');
    assert.equal(verdict.target.route, '/v1/books');
    for (const word of verdict.target.query.q.toLowerCase().split(' ')) assert.ok(words.has(word), `"${word}" of ${target} is not from the catalog`);
    if (verdict.target.query.branch !== undefined) assert.ok(VOCABULARY.branches.includes(verdict.target.query.branch));
  }
  assert.ok(subjectOf.every((s) => s < OPTIONS.subjects));
});

test('the shares of paging and filter queries are close to the requested ones', () => {
  const { queries } = buildWorkload(VOCABULARY, { ...OPTIONS, distinct: 1000, pagingShare: 0.2, filterShare: 0.3 });
  const share = (kind: string): number => queries.filter((q) => q.kind === kind).length / queries.length;
  assert.ok(Math.abs(share('paging') - 0.2) < 0.05, `paging ${share('paging')}`);
  assert.ok(Math.abs(share('filter') - 0.3) < 0.05, `filter ${share('filter')}`);
  const none = buildWorkload(VOCABULARY, { ...OPTIONS, pagingShare: 0, filterShare: 0 });
  assert.ok(none.queries.every((q) => q.kind === 'search'));
});

test('popularity follows the ranks: the top query is asked most', () => {
  const { order } = buildWorkload(VOCABULARY, { ...OPTIONS, length: 50_000 });
  const counts = new Map<number, number>();
  for (const q of order) counts.set(q, (counts.get(q) ?? 0) + 1);
  const top = counts.get(0) ?? 0;
  assert.ok([...counts.values()].every((c) => c <= top));
  assert.ok((counts.get(0) ?? 0) > (counts.get(9) ?? 0) * 5);
});

test('asking for more distinct queries than the catalog yields is refused', () => {
  const tiny: CatalogVocabulary = { titles: ['Dune'], authors: ['Frank Herbert'], branches: ['branch_central'] };
  assert.throws(() => buildWorkload(tiny, { ...OPTIONS, distinct: 10_000 }), /yields only \d+ distinct queries/);
});

test('paging queries become the second page their first page links to', async () => {
  const workload = buildWorkload(VOCABULARY, { ...OPTIONS, pagingShare: 0.5 });
  const asked: string[] = [];
  const targets = await resolvePaging(workload, (first) => {
    asked.push(first);
    return Promise.resolve(asked.length % 2 === 0 ? null : `${first}&cursor=c${asked.length}`);
  });
  assert.equal(asked.length, workload.queries.filter((q) => q.kind === 'paging').length);
  workload.queries.forEach((q, i) => {
    const resolved = targets[i] ?? '';
    if (q.kind !== 'paging') assert.equal(resolved, q.target);
    else assert.ok(resolved === q.target || resolved.startsWith(`${q.target}&cursor=`));
  });
  assert.ok(targets.some((t) => t.includes('&cursor=')));
});

test('a crawler takes its share of requests, each a valid search that no other request asks', () => {
  const plain = buildWorkload(VOCABULARY, OPTIONS);
  assert.deepEqual(buildWorkload(VOCABULARY, { ...OPTIONS, crawlerShare: 0 }).order, plain.order, 'no crawler: the plan it always was');
  const crawled = buildWorkload(VOCABULARY, { ...OPTIONS, crawlerShare: 0.3 });
  const share = crawled.order.filter((q) => q === CRAWL).length / crawled.order.length;
  assert.ok(share > 0.27 && share < 0.33, `crawler share ${share}`);
  const words = crawlWords(VOCABULARY);
  const targets = Array.from({ length: words.length * 100 }, (_, n) => crawlTarget(words, n));
  assert.equal(new Set(targets).size, targets.length, 'never the same search twice');
  for (const target of targets.slice(0, 50)) assert.ok(parseRequestTarget('GET', target, 8192).ok, target);
  const planned = new Set(crawled.queries.map((q) => q.target));
  assert.ok(targets.filter((t) => planned.has(t)).length < targets.length / 100, 'rarely one of the popular searches');
});
