import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseRequestTarget, type TargetVerdict } from '../../src/shared/request-target.ts';

function parse(target: string, method = 'GET', maxTargetBytes = 2048): TargetVerdict {
  return parseRequestTarget(method, target, maxTargetBytes);
}

function canonical(target: string): string {
  const verdict = parse(target);
  assert.ok(verdict.ok, `expected ${target} to be accepted`);
  return verdict.canonical;
}

function refusedAs(target: string, kind: string, method = 'GET'): void {
  const verdict = parse(target, method);
  assert.ok(!verdict.ok, `expected ${target} to be refused`);
  assert.equal(verdict.problem.kind, kind);
}

describe('request target', () => {
  test('parameter order, default limit, encoding and padding of q share one canonical target', () => {
    const expected = '/v1/books?q=left%20hand&limit=5';
    for (const target of ['/v1/books?q=left+hand&limit=5', '/v1/books?limit=5&q=left%20hand', '/v1/books?q=%20left%20hand%20&limit=5']) {
      assert.equal(canonical(target), expected);
    }
    assert.equal(canonical('/v1/books?q=dune&limit=20'), canonical('/v1/books?q=dune'));
    assert.equal(canonical('/v1/books?available=true&branch=branch_central&q=x'), '/v1/books?q=x&branch=branch_central&available=true');
  });

  test('different searches keep different targets', () => {
    assert.notEqual(canonical('/v1/books?q=dune'), canonical('/v1/books?q=Dune'));
    assert.notEqual(canonical('/v1/books?q=dune'), canonical('/v1/books?q=dune&limit=5'));
  });

  test('unknown, repeated and invalid parameters are refused', () => {
    refusedAs('/v1/books?q=x&nocache=1', 'unknown-parameter');
    refusedAs('/v1/books?q=a&q=b', 'invalid-parameter');
    refusedAs('/v1/books', 'invalid-parameter');
    refusedAs('/v1/books?q=%20%20', 'invalid-parameter');
    refusedAs(`/v1/books?q=${'a'.repeat(257)}`, 'invalid-parameter');
    for (const limit of ['0', '101', '-1', '1.5', '05', 'ten', '']) refusedAs(`/v1/books?q=x&limit=${limit}`, 'invalid-parameter');
    refusedAs('/v1/books?q=x&branch=Central', 'invalid-parameter');
    refusedAs('/v1/books?q=x&available=yes', 'invalid-parameter');
    refusedAs('/v1/books?q=x&cursor=a%2Bb', 'invalid-cursor');
    refusedAs('/v1/branches?x=1', 'unknown-parameter');
  });

  test('q is counted in characters, not UTF-16 units', () => {
    assert.ok(parse(`/v1/books?q=${encodeURIComponent('📚'.repeat(256))}`, 'GET', 8192).ok);
    const verdict = parse(`/v1/books?q=${encodeURIComponent('📚'.repeat(257))}`, 'GET', 8192);
    assert.ok(!verdict.ok && verdict.problem.kind === 'invalid-parameter');
  });

  test('the absolute-form names the same resource as the origin-form (RFC 9112 §3.2.2)', () => {
    assert.equal(canonical('http://catalog.example:8080/v1/books?limit=5&q=x'), '/v1/books?q=x&limit=5');
    assert.equal(canonical('HTTPS://catalog.example/v1/branches'), '/v1/branches');
    refusedAs('http://catalog.example', 'not-found');
    refusedAs('ftp://catalog.example/v1/books?q=x', 'not-found');
  });

  test('routes, methods and length', () => {
    refusedAs('/search', 'not-found', 'POST');
    refusedAs('/v1/book', 'not-found');
    refusedAs('/v1/books/', 'not-found');
    refusedAs('/v1/books?q=x', 'method-not-allowed', 'POST');
    const verdict = parse('/v1/books/bk_1', 'DELETE');
    assert.ok(!verdict.ok);
    assert.equal(verdict.problem.headers?.allow, 'GET, HEAD');
    refusedAs(`/v1/books?q=${'a'.repeat(2040)}`, 'uri-too-long');
    const head = parse('/v1/branches/branch_central', 'HEAD');
    assert.ok(head.ok && head.isHead && head.target.route === '/v1/branches/{id}' && head.target.id === 'branch_central');
  });
});
