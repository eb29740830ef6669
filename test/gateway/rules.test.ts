import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCacheControl } from '../../src/gateway/rules/cache-control.ts';
import { ageSeconds, isFresh, receivedAgeSeconds, ttlSeconds } from '../../src/gateway/rules/freshness.ts';
import { parseHttpDate } from '../../src/gateway/rules/http-date.ts';
import { ifRangeHolds, rangeAnswer } from '../../src/gateway/rules/ranges.ts';
import { parseDictionary, responseDirectives } from '../../src/gateway/rules/targeted.ts';
import { endToEndFields } from '../../src/gateway/rules/hop-by-hop.ts';
import { invalidatedTargets } from '../../src/gateway/rules/invalidation.ts';
import { isError, mayServeDisconnected, mayServeOnError, requestDirectives, reuse, NO_DIRECTIVES, type ReuseFacts } from '../../src/gateway/rules/reuse.ts';
import { retiresStored, storageVerdict, storedFields, type ResponseHead } from '../../src/gateway/rules/storage.ts';
import { freshens, preconditionStatus, updatedFields, validationHeaders, type Validators } from '../../src/gateway/rules/validation.ts';
import { selectingValues, varyMatches } from '../../src/gateway/rules/vary.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const request = { authorized: true, noStore: false, requestTime: T0, responseTime: T0 };
const policy = {
  staleWhileRevalidateMs: 0,
  staleIfErrorMs: 0,
  staleIfDisconnectedMs: 0,
  maxHeuristicMs: 86_400_000,
  targetedFields: ['catalog-gateway-cache-control', 'cdn-cache-control'],
};

function head(headers: ResponseHead['headers'], status = 200): ResponseHead {
  return { status, headers };
}

/** The verdict's lifetime in ms, or why it was not stored. */
function lifetime(headers: ResponseHead['headers'], status = 200, req = request): number | string {
  const verdict = storageVerdict(head(headers, status), req, policy);
  return verdict.store ? verdict.facts.lifetimeMs : verdict.reason;
}

function facts(overrides: Partial<ReuseFacts> = {}): ReuseFacts {
  return {
    lifetimeMs: 60_000,
    initialAgeMs: 0,
    storedAt: T0,
    staleWhileRevalidateMs: 0,
    staleIfErrorMs: 0,
    mustRevalidate: false,
    noCache: false,
    ...overrides,
  };
}

describe('RFC 9111 rules', () => {
  test('§5.2 Cache-Control parsing: case, quoted values with commas and escapes, first occurrence wins', () => {
    const cc = parseCacheControl(['Public, MAX-AGE=10', 'max-age=99, private="set-cookie, x", no-cache="a\\"b"']);
    assert.equal(cc.get('public'), true);
    assert.equal(cc.get('max-age'), '10');
    assert.equal(cc.get('private'), 'set-cookie, x');
    assert.equal(cc.get('no-cache'), 'a"b');
    assert.equal(parseCacheControl('max-age = 60').get('max-age'), true, '§5.2: no whitespace around =, so no argument');
    assert.equal(parseCacheControl('max-age= 60, public').get('max-age'), '');
    assert.equal(lifetime({ 'cache-control': 'public, max-age = 60' }), 'already-stale');
  });

  test('§4.2.1 freshness lifetime: s-maxage over max-age, then Expires minus Date; invalid values are stale', () => {
    assert.equal(lifetime({ 'cache-control': 'public, max-age=5, s-maxage=30' }), 30_000);
    assert.equal(lifetime({ 'cache-control': 'public, max-age=5' }), 5_000);
    assert.equal(lifetime({ 'cache-control': 'public', date: 'Thu, 01 Jan 2026 00:00:00 GMT', expires: 'Thu, 01 Jan 2026 00:02:00 GMT' }), 120_000);
    assert.equal(lifetime({ 'cache-control': 'public', expires: 'Thu, 01 Jan 2026 00:02:00 GMT' }), 120_000, 'no Date: the time of receipt');
    assert.equal(lifetime({ 'cache-control': 'public', date: 'Thu, 01 Jan 2026 00:00:00 GMT', expires: '0' }), 'already-stale');
    assert.equal(lifetime({ 'cache-control': 'public, max-age=ten' }), 'already-stale');
    assert.equal(lifetime({ 'cache-control': 'public, max-age=ten', etag: '"v"' }), 0, 'stale on arrival, kept for validation');
    assert.equal(lifetime({ 'cache-control': 'public, max-age=0, stale-while-revalidate=30' }), 0, 'RFC 5861: stale on arrival, kept for its window');
    assert.equal(lifetime({ 'cache-control': 'public, max-age=0, stale-if-error=30' }), 0);
    assert.equal(
      lifetime({ 'cache-control': 'public, max-age=0, stale-while-revalidate=30, proxy-revalidate' }),
      'already-stale',
      'no window past proxy-revalidate',
    );
    assert.equal(lifetime({ 'cache-control': 'public, max-age=0, stale-while-revalidate=30, no-cache' }), 'already-stale', 'nothing unvalidated past no-cache');
    assert.equal(lifetime({ 'cache-control': 'public, max-age=99999999999' }), 2 ** 31 * 1000, '§1.2.2: capped at 2^31 s');
  });

  test('§4.2.2 heuristic freshness: 10% of the time since Last-Modified, capped, only where allowed', () => {
    const lastModified = { date: 'Thu, 01 Jan 2026 00:00:00 GMT', 'last-modified': 'Wed, 31 Dec 2025 00:00:00 GMT' };
    assert.equal(lifetime({ ...lastModified }, 200, { ...request, authorized: false }), 8_640_000);
    assert.equal(lifetime({ ...lastModified, 'cache-control': 'public' }, 201), 8_640_000, 'public allows it for any status');
    assert.equal(
      lifetime({ ...lastModified }, 201, { ...request, authorized: false }),
      'no-freshness',
      '§3: a status that is not heuristically cacheable is not stored without explicit freshness, validator or not',
    );
    assert.equal(lifetime({ etag: '"v"' }, 500, { ...request, authorized: false }), 'no-freshness');
    assert.equal(lifetime({ etag: '"v"' }, 404, { ...request, authorized: false }), 0, 'heuristically cacheable: kept for validation');
    assert.equal(lifetime({ date: 'Thu, 01 Jan 2026 00:00:00 GMT' }, 200, { ...request, authorized: false }), 'no-freshness');
  });

  test('§3 storing: statuses, no-store (response and request), private, §3.5 Authorization, Set-Cookie, Vary', () => {
    const pub = { 'cache-control': 'public, max-age=60' };
    for (const status of [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 500, 501, 503]) assert.equal(lifetime(pub, status), 60_000, String(status));
    for (const status of [206, 304]) assert.equal(lifetime(pub, status), 'status', String(status));
    assert.equal(lifetime({ 'cache-control': 'public, max-age=60, no-store' }), 'no-store');
    assert.equal(lifetime(pub, 200, { ...request, noStore: true }), 'no-store');
    assert.equal(lifetime({ 'cache-control': 'private, max-age=60' }), 'private');
    assert.equal(lifetime({ 'cache-control': 'max-age=60' }), 'authorization');
    assert.equal(lifetime({ 'cache-control': 's-maxage=60' }), 60_000);
    assert.equal(lifetime({ 'cache-control': 'must-revalidate, max-age=60' }), 60_000);
    assert.equal(lifetime({ 'cache-control': 'max-age=60' }, 200, { ...request, authorized: false }), 60_000);
    assert.equal(lifetime({ ...pub, 'set-cookie': 'a=b' }), 'set-cookie');
    assert.equal(lifetime({ ...pub, vary: '*' }), 'vary');
    assert.equal(lifetime({ ...pub, vary: 'Accept, Authorization' }), 'vary', 'never a credential in a secondary key');
    assert.equal(lifetime({ ...pub, vary: 'Accept-Language' }), 60_000);
  });

  test('§5.2.2.4 and §5.2.2.7 qualified no-cache and private: the named fields are not stored, the rest is', () => {
    const verdict = storageVerdict(
      head({ 'cache-control': 'public, max-age=60, no-cache="Set-Cookie", private="x-secret"', 'set-cookie': 'a=b', 'x-secret': 's', etag: '"v"' }),
      request,
      policy,
    );
    assert.ok(verdict.store);
    assert.equal(verdict.facts.noCache, false);
    assert.deepEqual(storedFields({ 'set-cookie': 'a=b', 'x-secret': 's', etag: '"v"' }, verdict.omit), ['etag', '"v"']);
  });

  test('§3.1 stored fields: hop-by-hop, Connection-named, Age and Content-Length are not stored', () => {
    const flat = storedFields({
      connection: 'x-hop',
      'x-hop': '1',
      'keep-alive': 'timeout=5',
      age: '3',
      'content-length': '2',
      etag: '"a"',
      link: ['<a>; rel="next"', '<b>; rel="prev"'],
    });
    assert.deepEqual(flat, ['etag', '"a"', 'link', '<a>; rel="next"', 'link', '<b>; rel="prev"']);
    assert.deepEqual(endToEndFields({ te: 'trailers', 'proxy-authorization': 'x', accept: 'a' }), ['accept', 'a']);
  });

  test('§4.2.3 age: the Age received (invalid counts as 0) plus the round trip plus residence; ttl and Age follow the clock', () => {
    const verdict = storageVerdict(head({ 'cache-control': 'public, max-age=60', age: '5' }), { ...request, requestTime: T0 - 1000 }, policy);
    assert.ok(verdict.store);
    assert.equal(verdict.facts.initialAgeMs, 6000);
    const bad = storageVerdict(head({ 'cache-control': 'public, max-age=60', age: '-3' }), request, policy);
    assert.ok(bad.store && bad.facts.initialAgeMs === 0);
    const f = facts({ initialAgeMs: 5000, storedAt: 1_000_000 });
    assert.equal(ageSeconds(f, 1_000_000), 5);
    assert.equal(ttlSeconds(f, 1_000_000), 55);
    assert.equal(ageSeconds(f, 1_030_999), 35);
    assert.equal(isFresh(f, 1_054_999), true);
    assert.equal(isFresh(f, 1_055_000), false);
    assert.equal(ttlSeconds(f, 1_065_000), -10, 'negative once stale');
    assert.equal(ageSeconds(f, 999_000), 5, 'a clock that goes back never makes a response younger than it arrived');
  });

  test('§5.2.1 request directives, and §5.4 Pragma only without Cache-Control', () => {
    assert.deepEqual(requestDirectives({ 'cache-control': 'max-age=5, min-fresh=2, max-stale, no-store, only-if-cached' }), {
      maxAge: 5,
      minFresh: 2,
      maxStale: Number.POSITIVE_INFINITY,
      noCache: false,
      noStore: true,
      onlyIfCached: true,
    });
    assert.equal(requestDirectives({ pragma: 'no-cache' }).noCache, true);
    assert.equal(requestDirectives({ pragma: 'no-cache', 'cache-control': 'max-stale=5' }).noCache, false);
    assert.equal(requestDirectives({ 'cache-control': 'max-age=abc' }).maxAge, undefined);
  });

  test('§4 reuse: fresh, request limits, §4.2.4 stale only where allowed, RFC 5861 windows', () => {
    const at = (s: number): number => T0 + s * 1000;
    assert.equal(reuse(facts(), NO_DIRECTIVES, at(10)), 'fresh');
    assert.equal(reuse(facts({ noCache: true }), NO_DIRECTIVES, at(10)), 'validate');
    assert.equal(reuse(facts(), { ...NO_DIRECTIVES, noCache: true }, at(10)), 'validate');
    assert.equal(reuse(facts(), { ...NO_DIRECTIVES, maxAge: 5 }, at(10)), 'validate');
    assert.equal(reuse(facts(), { ...NO_DIRECTIVES, maxAge: 0 }, at(0)), 'validate', 'max-age=0 asks for validation at any age');
    assert.equal(reuse(facts(), { ...NO_DIRECTIVES, minFresh: 55 }, at(10)), 'validate');
    assert.equal(reuse(facts(), NO_DIRECTIVES, at(61)), 'validate');
    assert.equal(reuse(facts(), { ...NO_DIRECTIVES, maxStale: 5 }, at(63)), 'stale-accepted');
    assert.equal(reuse(facts(), { ...NO_DIRECTIVES, maxStale: 5 }, at(70)), 'validate');
    assert.equal(reuse(facts({ mustRevalidate: true }), { ...NO_DIRECTIVES, maxStale: 5 }, at(63)), 'validate');
    assert.equal(reuse(facts({ staleWhileRevalidateMs: 30_000 }), NO_DIRECTIVES, at(80)), 'stale-while-revalidate');
    assert.equal(
      reuse(facts({ staleWhileRevalidateMs: 30_000 }), { ...NO_DIRECTIVES, maxAge: 100 }, at(80)),
      'validate',
      '§5.2.1.1: max-age without max-stale wants nothing stale',
    );
    assert.equal(reuse(facts({ staleWhileRevalidateMs: 30_000 }), NO_DIRECTIVES, at(91)), 'validate');
    assert.equal(reuse(facts({ staleWhileRevalidateMs: 30_000, mustRevalidate: true }), NO_DIRECTIVES, at(80)), 'validate');
    assert.equal(mayServeOnError(facts({ staleIfErrorMs: 30_000 }), at(89)), true);
    assert.equal(mayServeOnError(facts({ staleIfErrorMs: 30_000 }), at(91)), false);
    assert.equal(mayServeOnError(facts({ staleIfErrorMs: 30_000, mustRevalidate: true }), at(61)), false);
    assert.equal(mayServeOnError(facts(), at(10)), true, 'a fresh one may always stand in');
  });

  test('RFC 5861 §4: an error is what would have the client get a 500, 502, 503 or 504', () => {
    for (const status of [500, 502, 503, 504]) assert.equal(isError(status, true), true, String(status));
    for (const status of [501, 505, 511]) assert.equal(isError(status, true), false, `${status} relayed as it is`);
    assert.equal(isError(501, false), true, 'a route that answers 5xx with its own 502');
    assert.equal(isError(404, false), false);
  });

  test('§4.3.3 a full answer to a validation retires the stored response unless the request kept it out, or it is a server error', () => {
    const plain = { ...request, authorized: false };
    assert.equal(retiresStored(200, plain), true);
    assert.equal(retiresStored(404, plain), true);
    assert.equal(retiresStored(503, plain), false);
    assert.equal(retiresStored(200, request), false, 'Authorization');
    assert.equal(retiresStored(200, { ...plain, noStore: true }), false, "the request's no-store");
  });

  test('§4.3.1 validation request; §4.3.4 which stored response a 304 freshens; §3.2 what it updates', () => {
    assert.deepEqual(validationHeaders({ etag: '"v1"', lastModified: 'Wed, 31 Dec 2025 00:00:00 GMT' }), {
      'if-none-match': '"v1"',
      'if-modified-since': 'Wed, 31 Dec 2025 00:00:00 GMT',
    });
    assert.equal(freshens({ etag: '"v1"', lastModified: undefined }, { etag: '"v1"' }), true);
    assert.equal(
      freshens({ etag: 'W/"v1"', lastModified: undefined }, { etag: '"v1"' }),
      false,
      'a strong tag identifies only a response stored with that strong tag',
    );
    assert.equal(freshens({ etag: '"v1"', lastModified: undefined }, { etag: 'W/"v1"' }), true, 'a weak tag, by the weak comparison');
    assert.equal(freshens({ etag: 'W/"v1"', lastModified: undefined }, { etag: 'W/"v1"' }), true);
    assert.equal(freshens({ etag: '"v1"', lastModified: undefined }, { etag: '"v2"' }), false);
    assert.equal(freshens({ etag: undefined, lastModified: 'x' }, { 'last-modified': 'x' }), true);
    assert.equal(freshens({ etag: undefined, lastModified: undefined }, {}), true);
    assert.equal(freshens({ etag: undefined, lastModified: 'x' }, {}), true, 'a bare 304 answers the one validation asked');
    assert.equal(freshens({ etag: undefined, lastModified: 'x' }, { 'last-modified': 'y' }), false);
    assert.deepEqual(
      updatedFields(
        ['cache-control', 'max-age=1', 'content-length', '10', 'x-kept', 'a', 'link', '<a>', 'link', '<b>'],
        ['cache-control', 'max-age=60', 'content-length', '0', 'link', '<c>'],
      ),
      ['content-length', '10', 'x-kept', 'a', 'cache-control', 'max-age=60', 'link', '<c>'],
    );
  });

  test('§4.3.2 client conditionals answered from storage (RFC 9110 §13.2.2): If-Match, If-Unmodified-Since, If-None-Match (weak), If-Modified-Since', () => {
    const stored = { etag: '"v1"', lastModified: 'Wed, 31 Dec 2025 00:00:00 GMT' };
    const none = { ifMatch: undefined, ifUnmodifiedSince: undefined, ifNoneMatch: undefined, ifModifiedSince: undefined };
    assert.equal(preconditionStatus({ ...none, ifNoneMatch: 'W/"v1"' }, stored, undefined), 304);
    assert.equal(
      preconditionStatus({ ...none, ifNoneMatch: '"v2"', ifModifiedSince: 'Thu, 01 Jan 2026 00:00:00 GMT' }, stored, undefined),
      200,
      'If-None-Match decides',
    );
    assert.equal(preconditionStatus({ ...none, ifNoneMatch: '*' }, { etag: undefined, lastModified: undefined }, undefined), 304);
    assert.equal(preconditionStatus({ ...none, ifModifiedSince: 'Thu, 01 Jan 2026 00:00:00 GMT' }, stored, undefined), 304);
    assert.equal(preconditionStatus({ ...none, ifModifiedSince: 'Tue, 30 Dec 2025 00:00:00 GMT' }, stored, undefined), 200);
    assert.equal(preconditionStatus({ ...none, ifModifiedSince: 'Thu, 01 Jan 2026 00:00:00 UTC' }, stored, undefined), 200, 'not an HTTP-date: ignored');
    assert.equal(
      preconditionStatus(
        { ...none, ifModifiedSince: 'Thu, 01 Jan 2026 00:00:00 GMT' },
        { etag: undefined, lastModified: undefined },
        'Wed, 31 Dec 2025 00:00:00 GMT',
      ),
      304,
      'Date when no Last-Modified',
    );
    assert.equal(preconditionStatus({ ...none, ifMatch: '"v1"' }, stored, undefined), 200);
    assert.equal(preconditionStatus({ ...none, ifMatch: '"v2", "v3"' }, stored, undefined), 412);
    const comma = { etag: '"a,b"', lastModified: undefined };
    assert.equal(preconditionStatus({ ...none, ifNoneMatch: '"x", "a,b"' }, comma, undefined), 304, 'RFC 9110 §8.8.3: an opaque tag may hold a comma');
    assert.equal(preconditionStatus({ ...none, ifNoneMatch: '"a", "b"' }, comma, undefined), 200);
    assert.equal(preconditionStatus({ ...none, ifMatch: 'W/"x",  "a,b"' }, comma, undefined), 200);
    assert.equal(
      preconditionStatus({ ...none, ifNoneMatch: 'v1, "v2"' }, { etag: 'v1', lastModified: undefined }, undefined),
      304,
      'an unquoted tag an origin sent is still compared as sent',
    );
    assert.equal(preconditionStatus({ ...none, ifMatch: 'W/"v1"' }, stored, undefined), 412, '§13.1.1 the strong comparison');
    assert.equal(preconditionStatus({ ...none, ifMatch: '*', ifNoneMatch: '"v1"' }, stored, undefined), 304);
    assert.equal(preconditionStatus({ ...none, ifUnmodifiedSince: 'Tue, 30 Dec 2025 00:00:00 GMT' }, stored, undefined), 412);
    assert.equal(preconditionStatus({ ...none, ifUnmodifiedSince: 'Wed, 31 Dec 2025 00:00:00 GMT' }, stored, undefined), 200);
    assert.equal(
      preconditionStatus(
        { ...none, ifUnmodifiedSince: 'Tue, 30 Dec 2025 00:00:00 GMT' },
        { etag: undefined, lastModified: undefined },
        'Thu, 01 Jan 2026 00:00:00 GMT',
      ),
      200,
      '§13.1.4 no modification date: ignored',
    );
    const codings = ['"v1"', '"v1-gzip"'];
    assert.equal(
      preconditionStatus({ ...none, ifNoneMatch: '"v1"' }, { ...stored, etag: '"v1-gzip"' }, undefined, codings),
      304,
      'a tag of another representation of the same answer (§13.1.2)',
    );
    assert.equal(
      preconditionStatus({ ...none, ifMatch: '"v1"' }, { ...stored, etag: '"v1-gzip"' }, undefined, codings),
      412,
      'If-Match names the representation sent',
    );
  });

  test('§4.1 secondary keys: values normalised, absent only matches absent', () => {
    const vary = ['accept-language', 'x-absent'];
    const selecting = selectingValues(vary, { 'accept-language': 'en, fr' });
    assert.equal(varyMatches(vary, selecting, { 'accept-language': 'en,fr' }), true);
    assert.equal(varyMatches(vary, selecting, { 'accept-language': 'de' }), false);
    assert.equal(varyMatches(vary, selecting, { 'accept-language': 'en, fr', 'x-absent': '' }), false);
  });

  test('§4.4 invalidation: unsafe methods with 2xx/3xx, the target plus same-origin Location and Content-Location', () => {
    const names = ['gw.example', '127.0.0.1:8000'];
    const headers = { location: '/items/7', 'content-location': 'http://other.example/items/7' };
    assert.deepEqual(invalidatedTargets('POST', 201, '/items?x=1', names, headers), ['/items?x=1', '/items/7']);
    assert.deepEqual(invalidatedTargets('PUT', 204, '/items/7', names, { 'content-location': 'http://gw.example/items/7?v=2' }), ['/items/7', '/items/7?v=2']);
    assert.deepEqual(
      invalidatedTargets('PUT', 204, '/items/7', names, { location: 'http://127.0.0.1:8000/items/8', 'content-location': 'https://gw.example:443/items/9' }),
      ['/items/7', '/items/8', '/items/9'],
      "the origin's own authority, and any scheme",
    );
    assert.deepEqual(
      invalidatedTargets('POST', 201, '/items', [undefined, '127.0.0.1:8000'], { location: 'http://127.0.0.1:8000/items/8' }),
      ['/items', '/items/8'],
      'no Host: the origin still names itself',
    );
    assert.deepEqual(
      invalidatedTargets('POST', 201, '/items', names, { location: 'http://127.0.0.1:9999/items/8' }),
      ['/items'],
      'another port is another origin',
    );
    assert.deepEqual(invalidatedTargets('DELETE', 404, '/items/7', names, {}), []);
    assert.deepEqual(invalidatedTargets('GET', 200, '/items/7', names, {}), []);
  });

  test('§4.4 invalidation names each URI as it is written, the spelling its entry is keyed by, and as a URL parser resolves it', () => {
    const names = ['gw.example'];
    assert.deepEqual(invalidatedTargets('POST', 200, "/a?q='x'", names, {}), ["/a?q='x'", '/a?q=%27x%27']);
    assert.deepEqual(invalidatedTargets('POST', 200, '/c/./d', names, {}), ['/c/./d', '/c/d']);
    assert.deepEqual(invalidatedTargets('POST', 200, '/e/{id}', names, {}), ['/e/{id}', '/e/%7Bid%7D']);
    assert.deepEqual(invalidatedTargets('POST', 201, '/loans', names, { location: "/loc?q='x'#frag" }), ['/loans', "/loc?q='x'", '/loc?q=%27x%27']);
    assert.deepEqual(invalidatedTargets('POST', 201, '/loans', names, { location: "http://gw.example/loc?q='x'" }), ['/loans', "/loc?q='x'", '/loc?q=%27x%27']);
    assert.deepEqual(
      invalidatedTargets('POST', 200, '//evil.example/victim', names, {}),
      ['//evil.example/victim'],
      'a target a parser reads as another authority invalidates only itself',
    );
  });
});

describe('RFC 9110 dates and ranges, RFC 9213 targeted fields, RFC 9111 §4.2.4 disconnected', () => {
  test('§5.6.7 HTTP-date: IMF-fixdate, rfc850-date and asctime-date, exactly; anything else is no date', () => {
    const at = Date.UTC(1994, 10, 6, 8, 49, 37);
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), at);
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', T0), at);
    assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), at);
    assert.equal(parseHttpDate('Tuesday, 01-Jan-80 00:00:00 GMT', T0), Date.UTC(1980, 0, 1), 'a two-digit year more than 50 years ahead is in the past');
    assert.equal(parseHttpDate('Friday, 01-Jan-50 00:00:00 GMT', T0), Date.UTC(2050, 0, 1), 'within 50 years ahead it is ahead');
    for (const invalid of [
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sun 06 Nov 1994 08:49:37 GMT',
      'Sun,  06 Nov 1994 08:49:37 GMT',
      'Sun, 06-Nov-1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 8:49:37 GMT',
      'sun, 06 nov 1994 08:49:37 GMT',
      'Sun, 31 Apr 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 24:00:00 GMT',
      '1994-11-06T08:49:37Z',
      '0',
    ]) {
      assert.equal(parseHttpDate(invalid), undefined, invalid);
    }
    assert.equal(
      lifetime({ 'cache-control': 'public', date: 'Thu, 01 Jan 2026 00:00:00 GMT', expires: 'Thu, 01 Jan 2026 00:02:00 UTC', etag: '"v"' }),
      0,
      'RFC 9111 §5.3: already expired',
    );
    assert.equal(lifetime({ 'cache-control': 'public', date: 'Thu, 01 Jan 2026 00:00:00 GMT', expires: 'Thu Jan  1 00:02:00 2026' }), 120_000);
  });

  test('RFC 9111 §5.1 Age: the first member of a list; a value with anything but digits is ignored', () => {
    assert.equal(receivedAgeSeconds({ age: '7200a' }), 0);
    assert.equal(receivedAgeSeconds({ age: 'a7200' }), 0);
    assert.equal(receivedAgeSeconds({ age: '7200.0' }), 0);
    assert.equal(receivedAgeSeconds({ age: '7200, 0' }), 7200);
    assert.equal(receivedAgeSeconds({ age: ['30', '0'] }), 30);
  });

  test('RFC 9213 targeted fields: a valid Dictionary first on the list decides, Expires is ignored then; an invalid one falls back', () => {
    const cc = { 'cache-control': 'max-age=10' };
    const targeted = (headers: ResponseHead['headers']): number | string => lifetime(headers, 200, { ...request, authorized: false });
    assert.equal(targeted({ ...cc, 'cdn-cache-control': 'max-age=300' }), 300_000);
    assert.equal(
      targeted({ ...cc, 'cdn-cache-control': 'max-age=300', 'catalog-gateway-cache-control': 'max-age=900' }),
      900_000,
      'the list order, not the message order',
    );
    assert.equal(targeted({ 'cache-control': 'no-store', 'cdn-cache-control': 'max-age=300' }), 300_000, 'Cache-Control does not apply');
    assert.equal(targeted({ 'cdn-cache-control': 'max-age=300', expires: 'Thu, 01 Jan 1970 00:00:00 GMT' }), 300_000, 'nor does Expires');
    assert.equal(targeted({ ...cc, 'cdn-cache-control': 'no-store' }), 'no-store');
    assert.equal(targeted({ ...cc, 'cdn-cache-control': 'private' }), 'private');
    assert.equal(lifetime({ ...cc, 'cdn-cache-control': 'max-age=60' }), 'authorization', '§3.5 applies to the targeted field');
    assert.equal(lifetime({ ...cc, 'cdn-cache-control': 'public, no-cache, max-age=60', etag: '"v"' }), 60_000);
    for (const invalid of ['MAX-AGE=300', 'max-age = 300', 'max-age=300,', 'max-age=300 ,, public', 'max-age="', '']) {
      assert.equal(targeted({ ...cc, 'cdn-cache-control': invalid }), 10_000, JSON.stringify(invalid));
    }
    assert.deepEqual(
      [...(parseDictionary('max-age=60;x=1, private="set-cookie", public, s-maxage=?0, a=(1 2), max-age=30') ?? [])],
      [
        ['private', 'set-cookie'],
        ['public', true],
        ['max-age', '30'],
      ],
    );
    assert.equal(responseDirectives({ 'cdn-cache-control': 'max-age=60' }, []).targeted, false, 'not on the list: Cache-Control decides');
  });

  test('§14.2 ranges from a stored 200: one range, suffix, several (whole), unsatisfiable, §13.1.5 If-Range', () => {
    const strong = { etag: '"v"', lastModified: 'Wed, 31 Dec 2025 00:00:00 GMT' };
    const date = 'Thu, 01 Jan 2026 00:00:00 GMT';
    const answer = (range: string, ifRange?: string, stored: Validators = strong): ReturnType<typeof rangeAnswer> =>
      rangeAnswer({ range, ifRange }, 100, stored, date);
    assert.deepEqual(answer('bytes=0-9'), { kind: 'part', start: 0, end: 9 });
    assert.deepEqual(answer('Bytes = 90-'), { kind: 'part', start: 90, end: 99 }, '§14.1 the unit is case-insensitive');
    assert.deepEqual(answer('bytes=-10'), { kind: 'part', start: 90, end: 99 });
    assert.deepEqual(answer('bytes=-1000'), { kind: 'part', start: 0, end: 99 });
    assert.deepEqual(answer('bytes=0-9, 500-600'), { kind: 'part', start: 0, end: 9 }, 'unsatisfiable ranges beside one are left out');
    assert.deepEqual(answer('bytes=0-9, 20-29'), { kind: 'whole' });
    assert.deepEqual(answer('bytes=100-'), { kind: 'unsatisfiable' });
    assert.deepEqual(answer('bytes=-0'), { kind: 'unsatisfiable' });
    for (const ignored of ['bytes=9-0', 'bytes=a-b', 'bytes=', 'lines=0-9', 'bytes 0-9']) assert.deepEqual(answer(ignored), { kind: 'whole' }, ignored);
    assert.deepEqual(answer('bytes=0-9', '"v"'), { kind: 'part', start: 0, end: 9 });
    assert.deepEqual(answer('bytes=0-9', 'W/"v"'), { kind: 'whole' });
    assert.deepEqual(answer('bytes=0-9', '"v"', { etag: 'W/"v"', lastModified: undefined }), { kind: 'whole' }, 'a weak stored tag never matches');
    assert.deepEqual(answer('bytes=0-9', 'Wed, 31 Dec 2025 00:00:00 GMT'), { kind: 'part', start: 0, end: 9 });
    assert.deepEqual(answer('bytes=0-9', 'Wed, 31 Dec 2025 00:00:01 GMT'), { kind: 'whole' });
    assert.equal(
      ifRangeHolds('Wed, 31 Dec 2025 00:00:00 GMT', strong, 'Wed, 31 Dec 2025 00:00:00 GMT'),
      false,
      '§8.8.2.2 a Last-Modified as late as Date is weak',
    );
  });

  test('§4.2.4 disconnected: stale within the route bound, never with must-revalidate or no-cache; §5.2.2.3 must-understand', () => {
    const stale = facts({ lifetimeMs: 1000 });
    assert.equal(mayServeDisconnected(stale, T0 + 31_000, 30_000), true);
    assert.equal(mayServeDisconnected(stale, T0 + 32_000, 30_000), false);
    assert.equal(mayServeDisconnected(facts({ lifetimeMs: 1000, mustRevalidate: true }), T0 + 2000, 30_000), false);
    assert.equal(mayServeDisconnected(facts({ lifetimeMs: 0, noCache: true }), T0 + 2000, 30_000), false);
    assert.equal(lifetime({ 'cache-control': 'public, max-age=60, must-understand, no-store' }), 60_000);
    assert.equal(
      lifetime({ 'cache-control': 'public, max-age=60, must-understand, no-store' }, 299),
      'status',
      'a status whose rules this cache does not know',
    );
  });

  test('§4.1 Accept-Language is normalised for Vary: case and whitespace do not select another variant', () => {
    const vary = ['accept-language'];
    const selecting = selectingValues(vary, { 'accept-language': 'en-US, fr;q=0.5' });
    assert.equal(varyMatches(vary, selecting, { 'accept-language': 'EN-us,fr; q=0.5' }), true);
    assert.equal(varyMatches(vary, selecting, { 'accept-language': 'fr;q=0.5, en-US' }), false, 'order is a preference');
  });
});
