import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ageSeconds, isFresh, parseCacheControl, replayableHeaders, storageVerdict, ttlSeconds, type UpstreamResponse } from '../../src/gateway/cache-policy.ts';

const request = { authorized: true, forwardedHeaders: new Set(['authorization', 'accept']) };

function response(headers: UpstreamResponse['headers'], status = 200): UpstreamResponse {
  return { status, headers, body: Buffer.from('{}') };
}

describe('cache policy (RFC 9111)', () => {
  test('Cache-Control parsing: case, quoted values, first occurrence wins', () => {
    const cc = parseCacheControl(['Public, MAX-AGE=10', 'max-age=99, private="set-cookie, x", no-cache']);
    assert.equal(cc.get('public'), true);
    assert.equal(cc.get('max-age'), '10');
    assert.equal(cc.get('private'), 'set-cookie, x');
    assert.equal(cc.get('no-cache'), true);
  });

  test('freshness lifetime: s-maxage over max-age, then Expires minus Date; invalid values are stale', () => {
    const lifetime = (headers: UpstreamResponse['headers']): number | string => {
      const verdict = storageVerdict(response(headers), request);
      return verdict.store ? verdict.freshness.lifetimeMs : verdict.reason;
    };
    assert.equal(lifetime({ 'cache-control': 'public, max-age=5, s-maxage=30' }), 30_000);
    assert.equal(lifetime({ 'cache-control': 'public, max-age=5' }), 5_000);
    assert.equal(lifetime({ 'cache-control': 'public', date: 'Sun, 01 Jan 2026 00:00:00 GMT', expires: 'Sun, 01 Jan 2026 00:02:00 GMT' }), 120_000);
    assert.equal(lifetime({ 'cache-control': 'public', date: 'Sun, 01 Jan 2026 00:00:00 GMT', expires: '0' }), 'already-stale');
    assert.equal(lifetime({ 'cache-control': 'public, max-age=ten' }), 'already-stale');
    assert.equal(lifetime({ 'cache-control': 'public' }), 'no-freshness');
  });

  test('Authorization needs public, s-maxage or must-revalidate (§3.5)', () => {
    assert.equal(storageVerdict(response({ 'cache-control': 'max-age=60' }), request).store, false);
    assert.equal(storageVerdict(response({ 'cache-control': 's-maxage=60' }), request).store, true);
    assert.equal(storageVerdict(response({ 'cache-control': 'must-revalidate, max-age=60' }), request).store, true);
    assert.equal(storageVerdict(response({ 'cache-control': 'max-age=60' }), { ...request, authorized: false }).store, true);
  });

  test('Vary on a header the gateway never forwards does not prevent storing', () => {
    assert.equal(storageVerdict(response({ 'cache-control': 'public, max-age=60', vary: 'Accept-Encoding' }), request).store, true);
    assert.equal(storageVerdict(response({ 'cache-control': 'public, max-age=60', vary: 'accept-encoding, Accept' }), request).store, false);
  });

  test('cacheable statuses only', () => {
    for (const status of [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]) {
      assert.equal(storageVerdict(response({ 'cache-control': 'public, max-age=60' }, status), request).store, true, String(status));
    }
    for (const status of [201, 202, 302, 307, 400, 401, 403, 429]) {
      assert.equal(storageVerdict(response({ 'cache-control': 'public, max-age=60' }, status), request).store, false, String(status));
    }
  });

  test('age, ttl and freshness follow the clock from the moment of storing (§4.2.3)', () => {
    const freshness = { lifetimeMs: 60_000, initialAgeSeconds: 5, storedAt: 1_000_000 };
    assert.equal(ageSeconds(freshness, 1_000_000), 5);
    assert.equal(ttlSeconds(freshness, 1_000_000), 55);
    assert.equal(ageSeconds(freshness, 1_030_999), 35);
    assert.equal(isFresh(freshness, 1_054_999), true);
    assert.equal(isFresh(freshness, 1_055_000), false);
    assert.equal(ageSeconds(freshness, 999_000), 5, 'a clock that goes back never makes a response younger than it arrived');
  });

  test('hop-by-hop fields, Connection-named fields, Age and Content-Length are not replayed', () => {
    const flat = replayableHeaders({ connection: 'x-hop', 'x-hop': '1', 'keep-alive': 'timeout=5', age: '3', 'content-length': '2', etag: '"a"', link: ['<a>; rel="next"', '<b>; rel="prev"'] });
    assert.deepEqual(flat, ['etag', '"a"', 'link', '<a>; rel="next"', 'link', '<b>; rel="prev"']);
  });
});
