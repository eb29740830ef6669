/** The encoding rules without a server: negotiation case by case (RFC 9110 §12.5.3), tags, Vary, the plan. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodingPlan } from '../../src/gateway/encoding/plan.ts';
import { accepts, codingOf, negotiate, representationTag, varyWithEncoding, type Coding } from '../../src/shared/encoding/negotiate.ts';
import type { CompressionPolicy } from '../../src/shared/encoding/policy.ts';

const ALL: readonly Coding[] = ['gzip', 'br', 'zstd', 'identity'];
const POLICY: CompressionPolicy = {
  encodings: ['gzip', 'br', 'zstd'],
  minBytes: 1024,
  types: ['application/json', 'text/*'],
  levels: { gzip: 6, br: 5, zstd: 3 },
};

describe('RFC 9110 §12.5.3 Accept-Encoding', () => {
  test('no field: identity, since a client that says nothing may decode nothing', () => {
    assert.equal(negotiate(undefined, ALL), 'identity');
  });

  test('an empty field asks for no coding', () => {
    assert.equal(negotiate('', ALL), 'identity');
  });

  test('the greatest qvalue wins; equals go by the server order; names and q are case-insensitive', () => {
    assert.equal(negotiate('gzip;q=0.5, br;q=0.8, zstd;q=0.1', ALL), 'br');
    assert.equal(negotiate('zstd, br, gzip', ALL), 'gzip', 'equal weights: the gateway prefers its first');
    assert.equal(negotiate('ZSTD;Q=1, gzip;q=0.9', ALL), 'zstd');
    assert.equal(negotiate('gzip, deflate', ALL), 'gzip', 'a browser over plain HTTP');
    assert.equal(negotiate('x-gzip', ALL), 'gzip', '§8.4.1.3');
  });

  test('q=0 means not acceptable', () => {
    assert.equal(negotiate('gzip;q=0, br', ALL), 'br');
    assert.equal(negotiate('gzip;q=0', ALL), 'identity');
  });

  test('* stands for every coding not named, identity included', () => {
    assert.equal(negotiate('*', ALL), 'gzip');
    assert.equal(negotiate('br;q=0.5, *;q=0.1', ALL), 'br');
    assert.equal(negotiate('*;q=0, identity', ALL), 'identity');
    assert.equal(negotiate('gzip;q=0, *', ALL), 'br');
  });

  test('identity is acceptable unless excluded; when nothing offered is acceptable identity is sent anyway', () => {
    assert.equal(negotiate('deflate', ALL), 'identity', 'unsupported codings only');
    assert.equal(negotiate('deflate, identity;q=0', ALL), 'identity', 'nothing acceptable: without a coding (§12.5.3)');
    assert.equal(negotiate('identity;q=0, gzip;q=0.1', ALL), 'gzip');
    assert.equal(negotiate('*;q=0', ALL), 'identity');
  });

  test('malformed qvalues count as 0, never as a preference', () => {
    assert.equal(negotiate('gzip;q=2, br;q=abc', ALL), 'identity');
  });

  test('an answer without an identity form falls back to what it has', () => {
    assert.equal(negotiate('br', ['gzip']), 'gzip');
  });
});

describe('whether a request accepts a body in a coding (accepts)', () => {
  test('identity always; another coding only with a weight above 0; no field: only identity', () => {
    assert.equal(accepts('identity;q=0', 'identity'), true, '§12.5.3: identity is sent when nothing else is');
    assert.equal(accepts(undefined, 'gzip'), false);
    assert.equal(accepts('', 'gzip'), false);
    assert.equal(accepts('identity', 'gzip'), false);
    assert.equal(accepts('gzip;q=0, br', 'gzip'), false);
    assert.equal(accepts('br', 'gzip'), false);
    assert.equal(accepts('x-gzip;q=0.1', 'gzip'), true);
    assert.equal(accepts('*', 'gzip'), true);
    assert.equal(accepts('*, gzip;q=0', 'gzip'), false);
  });

  test('a coding the gateway cannot decode, and codings applied in turn, each of which must be accepted', () => {
    assert.equal(accepts('deflate', 'deflate'), true);
    assert.equal(accepts('gzip', 'deflate'), false);
    assert.equal(accepts('gzip, br', 'gzip, br'), true);
    assert.equal(accepts('gzip', 'gzip, br'), false);
  });
});

describe('representations', () => {
  test('each coding has its own strong tag, derived both ways, weakness kept', () => {
    assert.equal(representationTag('"abc"', 'identity', 'gzip'), '"abc-gzip"');
    assert.equal(representationTag('"abc"', 'identity', 'identity'), '"abc"');
    assert.equal(representationTag('"abc-gzip"', 'gzip', 'identity'), '"abc"');
    assert.equal(representationTag('"abc-gzip"', 'gzip', 'br'), '"abc-br"');
    assert.equal(representationTag('W/"abc"', 'identity', 'zstd'), 'W/"abc-zstd"');
    // RFC 9110 §8.8.3: an origin's coded form tagged without the suffix owns its tag; the form
    // decoded from it may not carry the same strong tag, so it carries it weak.
    assert.equal(representationTag('"x"', 'gzip', 'identity'), 'W/"x"', "a tag without the suffix is the coded bytes' own");
    assert.equal(representationTag('"x"', 'gzip', 'br'), '"x-br"');
  });

  test('Vary gains accept-encoding once', () => {
    assert.equal(varyWithEncoding(undefined), 'accept-encoding');
    assert.equal(varyWithEncoding('Accept'), 'Accept, accept-encoding');
    assert.equal(varyWithEncoding('accept, Accept-Encoding'), 'accept, Accept-Encoding');
    assert.equal(varyWithEncoding('*'), '*');
  });

  test('codingOf knows ours and their aliases only', () => {
    assert.equal(codingOf(undefined), 'identity');
    assert.equal(codingOf(' GZIP '), 'gzip');
    assert.equal(codingOf('deflate'), undefined);
    assert.equal(codingOf('gzip, br'), undefined, 'a chain of codings is not decoded');
  });
});

describe('the encoding plan', () => {
  const json = { 'content-type': 'application/json; charset=utf-8' };

  test('a listed 200 of at least minBytes is kept compressed in the first coding, offered in all', () => {
    assert.deepEqual(encodingPlan(200, json, 5000, POLICY, true), { keep: 'gzip', offered: ['gzip', 'br', 'zstd', 'identity'] });
    assert.deepEqual(encodingPlan(200, { 'content-type': 'text/html' }, 5000, POLICY, true).keep, 'gzip', 'type/* lists a family');
  });

  test('too small, not listed, not 200, a route that does not compress, no encodings: kept as it came', () => {
    const asCame = { keep: 'identity', offered: [] };
    assert.deepEqual(encodingPlan(200, json, 1000, POLICY, true), asCame);
    assert.deepEqual(encodingPlan(200, { 'content-type': 'image/png' }, 5000, POLICY, true), asCame);
    assert.deepEqual(encodingPlan(404, json, 5000, POLICY, true), asCame);
    assert.deepEqual(encodingPlan(200, json, 5000, POLICY, false), asCame);
    assert.deepEqual(encodingPlan(200, json, 5000, { ...POLICY, encodings: [] }, true), asCame);
  });

  test('§7.7 no-transform: never compressed, never decoded', () => {
    assert.deepEqual(encodingPlan(200, { ...json, 'cache-control': 'public, no-transform' }, 5000, POLICY, true), { keep: 'identity', offered: [] });
    assert.deepEqual(encodingPlan(200, { ...json, 'content-encoding': 'gzip', 'cache-control': 'no-transform' }, 5000, POLICY, true), {
      keep: 'gzip',
      offered: [],
    });
  });

  test('an origin-encoded answer is kept as it came and may be sent decoded (and, when listed, re-encoded)', () => {
    assert.deepEqual(encodingPlan(200, { ...json, 'content-encoding': 'br' }, 500, POLICY, true), { keep: 'br', offered: ['gzip', 'br', 'zstd', 'identity'] });
    assert.deepEqual(encodingPlan(200, { 'content-type': 'image/svg', 'content-encoding': 'gzip' }, 500, POLICY, true), {
      keep: 'gzip',
      offered: ['gzip', 'identity'],
    });
    assert.deepEqual(
      encodingPlan(200, { ...json, 'content-encoding': 'deflate' }, 500, POLICY, true),
      { keep: undefined, offered: [] },
      'a coding we cannot decode',
    );
  });
});
