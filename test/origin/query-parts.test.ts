/** The origin's pure parts: search plans, cursors and If-None-Match. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeCursor, encodeCursor, fingerprint } from '../../src/origin/cursor.ts';
import { ifNoneMatchMatches, strongEtag } from '../../src/origin/etag.ts';
import { planSearch } from '../../src/origin/fts-query.ts';

describe('planSearch', () => {
  test('one plain word uses the term index, lower-cased', () => {
    assert.deepEqual(planSearch('River'), { kind: 'term', term: 'river' });
    assert.deepEqual(planSearch('  "river"*  '), { kind: 'term', term: 'river' });
    assert.deepEqual(planSearch('the River of'), { kind: 'term', term: 'river' });
    assert.deepEqual(planSearch("Priya's"), { kind: 'term', term: 'priya' });
    assert.deepEqual(planSearch('C. Rossi'), { kind: 'term', term: 'rossi' });
  });

  test('several words, or non-ASCII ones, become quoted FTS5 strings joined by AND', () => {
    assert.deepEqual(planSearch('silent river'), { kind: 'match', match: '"silent" "river"' });
    assert.deepEqual(planSearch('NEAR(river garden, 2)'), { kind: 'match', match: '"near" "river" "garden"' });
    assert.deepEqual(planSearch('Grünewald'), { kind: 'match', match: '"grünewald"' });
    assert.deepEqual(planSearch('river -garden OR title:sea'), { kind: 'match', match: '"river" "garden" "title" "sea"' });
  });

  test('only common words are searched as typed; no word at all is undefined', () => {
    assert.deepEqual(planSearch('of the'), { kind: 'match', match: '"of" "the"' });
    assert.deepEqual(planSearch('OR'), { kind: 'term', term: 'or' });
    for (const text of ['"', '*', '-', '()', '🙂🙂', "'; --", '\u0000']) assert.equal(planSearch(text), undefined, text);
  });
});

describe('cursor', () => {
  const search = fingerprint('term:river|{"kind":"none"}');

  test('round-trips, fits the request-target charset, and is bound to its search', () => {
    const cursor = encodeCursor({ score: -8.718192569202305, id: 1030 }, search);
    assert.match(cursor, /^[A-Za-z0-9_-]{1,512}$/);
    assert.deepEqual(decodeCursor(cursor, search), { score: -8.718192569202305, id: 1030 });
    assert.equal(decodeCursor(cursor, fingerprint('term:sea|{"kind":"none"}')), undefined);
  });

  test('anything else is refused', () => {
    const cursor = encodeCursor({ score: -1.5, id: 7 }, search);
    for (const bad of ['', 'AAAA', `${cursor}A`, cursor.slice(1), `${cursor.slice(0, -1)}B`, encodeCursor({ score: Number.NaN, id: 1 }, search)]) {
      assert.equal(decodeCursor(bad, search), undefined, bad);
    }
  });
});

describe('If-None-Match', () => {
  const etag = strongEtag('{"a":1}');

  test('a strong tag of the body: same body, same tag', () => {
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
    assert.equal(strongEtag('{"a":1}'), etag);
    assert.notEqual(strongEtag('{"a":2}'), etag);
  });

  test('lists, weak comparison and * match (RFC 9110 §13.1.2); others do not', () => {
    for (const field of [etag, `"x", ${etag}`, `W/${etag}`, '*', ` ${etag} ,`]) assert.ok(ifNoneMatchMatches(field, etag), field);
    for (const field of [undefined, '', '"x"', etag.slice(1), `W/"x"`]) assert.ok(!ifNoneMatchMatches(field, etag), String(field));
  });
});
