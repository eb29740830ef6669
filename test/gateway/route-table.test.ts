import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouteConfig } from '../../src/config/schema.ts';
import { cacheKeyOf, catalogKey, httpKey } from '../../src/gateway/routes/cache-keys.ts';
import { RouteTable } from '../../src/gateway/routes/route-table.ts';
import { parseRequestTarget } from '../../src/shared/request-target.ts';

function route(prefix: string): RouteConfig {
  return {
    prefix,
    mode: 'http',
    auth: 'off',
    scope: null,
    staleWhileRevalidateSeconds: 0,
    staleIfErrorSeconds: 0,
    staleIfDisconnectedSeconds: 0,
    requestCacheControl: 'honour',
  };
}

test('a route matches its prefix at segment boundaries only, the query aside, first match first', () => {
  const table = new RouteTable([route('/pass'), route('/v1/'), route('/')], 'catalog:read', null);
  const prefixOf = (target: string): string | undefined => table.match(target)?.prefix;
  assert.equal(prefixOf('/pass'), '/pass');
  assert.equal(prefixOf('/pass/x'), '/pass');
  assert.equal(prefixOf('/pass?q=1'), '/pass');
  assert.equal(prefixOf('/passive'), '/');
  assert.equal(prefixOf('/pas'), '/');
  assert.equal(prefixOf('/x?next=/pass/y'), '/');
  assert.equal(prefixOf('/v1/books?q=a'), '/v1/');
  assert.equal(prefixOf('/v1'), '/');
  const narrow = new RouteTable([route('/pass')], 'catalog:read', null);
  assert.equal(narrow.match('/other'), undefined);
  assert.equal(narrow.match('/pa?pass'), undefined);
});

test('one maker of cache keys: a catalog target by its canonical form, an http target as sent, a pass target none', () => {
  const table = new RouteTable([{ ...route('/v1/loans'), mode: 'pass' }, { ...route('/v1/'), mode: 'catalog' }, route('/')], 'catalog:read', null);
  const requested = parseRequestTarget('GET', '/v1/books?limit=5&q=winter', 2048);
  assert.ok(requested.ok);
  const stored = catalogKey(requested);
  assert.equal(cacheKeyOf(table, '/v1/books?q=winter&limit=5', 2048), stored, 'another order of the parameters, the same entry');
  assert.equal(cacheKeyOf(table, 'http://catalog.example/v1/books?limit=5&q=winter', 2048), stored, 'an absolute URL, as a Location names one');
  assert.equal(cacheKeyOf(table, '/v1/books?q=', 2048), undefined, 'a target the contract refuses is never stored');
  assert.equal(cacheKeyOf(table, '/v1/loans/7', 2048), undefined);
  assert.equal(cacheKeyOf(table, '/docs?b=2&a=1', 2048), httpKey('/docs?b=2&a=1', 2048));
  assert.equal(cacheKeyOf(table, `/docs?${'x'.repeat(2048)}`, 2048), undefined, 'past the bound an http route answers 414');
});
