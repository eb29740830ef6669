import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RouteConfig } from '../../src/config/schema.ts';
import { RouteTable } from '../../src/gateway/routes/route-table.ts';

function route(prefix: string): RouteConfig {
  return { prefix, mode: 'http', auth: 'off', scope: null, staleWhileRevalidateSeconds: 0, staleIfErrorSeconds: 0, staleIfDisconnectedSeconds: 0, requestCacheControl: 'honour' };
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
