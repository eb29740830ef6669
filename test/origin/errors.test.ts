/** Every row of the contract's error table that the origin answers, each with a real request. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { PROBLEM_BASE } from '../../src/shared/problem.ts';
import { loadOrCreateSecret, secretPath } from '../../src/shared/signing-key.ts';
import { rawExchange, type Reply } from '../support/harness.ts';
import { json, startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

function assertProblem(reply: Reply, status: number, kind: string): Record<string, unknown> {
  assert.equal(reply.status, status, reply.body);
  assert.equal(reply.headers['content-type'], 'application/problem+json');
  assert.equal(reply.headers['cache-control'], 'no-store');
  const body = json(reply);
  assert.equal(body.type, `${PROBLEM_BASE}${kind}`);
  assert.equal(body.status, status);
  return body;
}

describe('origin errors', () => {
  let f: OriginFixture;
  before(async () => {
    f = await startOriginFixture();
  });
  after(() => f.stop());

  describe('400', () => {
    const cases: [string, string, string][] = [
      ['missing q', '/v1/books', 'invalid-parameter'],
      ['blank q', '/v1/books?q=%20%20', 'invalid-parameter'],
      ['q of 257 characters', `/v1/books?q=${'a'.repeat(257)}`, 'invalid-parameter'],
      ['unknown parameter', '/v1/books?q=river&sort=title', 'unknown-parameter'],
      ['unknown parameter on a book', '/v1/books/bk_1?fields=title', 'unknown-parameter'],
      ['limit 0', '/v1/books?q=river&limit=0', 'invalid-parameter'],
      ['limit 101', '/v1/books?q=river&limit=101', 'invalid-parameter'],
      ['limit not a number', '/v1/books?q=river&limit=ten', 'invalid-parameter'],
      ['duplicate parameter', '/v1/books?q=river&q=sea', 'invalid-parameter'],
      ['cursor outside the charset', '/v1/books?q=river&cursor=a%2Bb', 'invalid-cursor'],
      ['cursor of the right charset but not ours', '/v1/books?q=river&cursor=AAAAAAAAAAAAAAAAAAAAAAA', 'invalid-cursor'],
      ['malformed branch', '/v1/books?q=river&branch=Central', 'invalid-parameter'],
      ['available not a boolean', '/v1/books?q=river&available=yes', 'invalid-parameter'],
      ['q without a searchable word', '/v1/books?q=%22*%22%20-%20()', 'invalid-parameter'],
    ];
    for (const [name, target, kind] of cases) {
      test(name, async () => {
        const body = assertProblem(await f.get(target), 400, kind);
        assert.equal(body.instance, target);
      });
    }

    test('a cursor of one search is refused on another', async () => {
      const first = json<{ next: string }>(await f.get('/v1/books?q=the&limit=2'));
      const cursor = new URL(first.next, f.origin.url).searchParams.get('cursor') ?? '';
      assertProblem(await f.get(`/v1/books?q=river&limit=2&cursor=${cursor}`), 400, 'invalid-cursor');
      assertProblem(await f.get(`/v1/books?q=the&limit=2&branch=branch_central&cursor=${cursor}`), 400, 'invalid-cursor');
      assert.equal((await f.get(`/v1/books?q=the&limit=5&cursor=${cursor}`)).status, 200, 'another page size continues the same search');
    });

    test('parameter errors are reported only to an authenticated client', async () => {
      assertProblem(await f.anonymous('/v1/books?q=river&limit=0'), 401, 'missing-token');
    });
  });

  describe('401 and 403', () => {
    const challenge = (description: string): string => `Bearer realm="catalog", error="invalid_token", error_description="${description}"`;

    test('no token', async () => {
      const reply = await f.anonymous('/v1/books?q=river');
      assertProblem(reply, 401, 'missing-token');
      assert.equal(reply.headers['www-authenticate'], 'Bearer realm="catalog"');
    });

    test('malformed Authorization header', async () => {
      const reply = await f.get('/v1/books?q=river', { authorization: 'Basic dXNlcjpwYXNz' });
      assertProblem(reply, 401, 'invalid-token');
      assert.equal(reply.headers['www-authenticate'], challenge('the Authorization header is not a Bearer token'));
    });

    test('a bearer value that is not a JWT', async () => {
      const reply = await f.get('/v1/books?q=river', { authorization: 'Bearer not-a-jwt' });
      assertProblem(reply, 401, 'invalid-token');
      assert.equal(reply.headers['www-authenticate'], challenge('the token is malformed or cannot be verified'));
    });

    test('bad signature', async () => {
      const forged = await new SignJWT({ scope: 'catalog:read' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('mallory')
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode('not the origin secret, but 32+ bytes long'));
      const reply = await f.get('/v1/books?q=river', { authorization: `Bearer ${forged}` });
      const body = assertProblem(reply, 401, 'invalid-token');
      assert.equal(reply.headers['www-authenticate'], challenge('the token signature does not verify'));
      assert.ok(!JSON.stringify(body).includes(forged), 'the token is never echoed');
    });

    test('expired token', async () => {
      const token = await f.token({ ttlSeconds: 60 });
      assert.equal((await f.get('/v1/branches', { authorization: `Bearer ${token}` })).status, 200);
      f.clock.advance(120_000);
      try {
        const reply = await f.get('/v1/branches', { authorization: `Bearer ${token}` });
        assertProblem(reply, 401, 'invalid-token');
        assert.equal(reply.headers['www-authenticate'], challenge('the token has expired'));
      } finally {
        f.clock.advance(-120_000);
      }
    });

    test('valid token without the catalog:read scope', async () => {
      const token = await f.token({ scope: 'catalog:write profile' });
      const reply = await f.get('/v1/books?q=river', { authorization: `Bearer ${token}` });
      assertProblem(reply, 403, 'insufficient-scope');
      assert.equal(reply.headers['www-authenticate'], 'Bearer realm="catalog", error="insufficient_scope", scope="catalog:read"');
    });

    test('tokens never reach the access log', async () => {
      const token = await f.token({ subject: 'log-check' });
      await f.get('/v1/books?q=river', { authorization: `Bearer ${token}` });
      await f.get('/v1/books?q=river', { authorization: `Bearer ${token}x` });
      assert.ok(f.logs.text().includes('"sub":"log-check"'));
      assert.ok(!f.logs.text().includes(token));
    });

    test('a token or password anywhere in the target is neither echoed in the problem nor logged', async () => {
      const token = await f.token({ subject: 'misplaced' });
      const inParameter = assertProblem(await f.get(`/v1/books?q=river&jwt=${token}`), 400, 'unknown-parameter');
      assert.equal(inParameter.instance, '/v1/books?q=river&jwt=REDACTED');
      const inPath = assertProblem(await f.get(`/v1/books/${token}`), 404, 'not-found');
      assert.equal(inPath.instance, '/v1/books/REDACTED');
      const overLong = await rawExchange(
        f.origin.url,
        `GET http://reader:hunter2@catalog/v1/books?q=${'a'.repeat(3000)} HTTP/1.1\r\nHost: catalog\r\nConnection: close\r\n\r\n`,
      );
      assert.match(overLong, /^HTTP\/1.1 400 /);
      assert.match(overLong, /"instance":"http:\/\/REDACTED@catalog\/v1\/books"/);
      assert.ok(!f.logs.text().includes(token));
      assert.ok(!f.logs.text().includes('hunter2'));
    });

    test('a signed token whose sub is not a string is refused', async () => {
      const secret = loadOrCreateSecret(secretPath(f.config));
      const exp = Math.floor(f.clock.now() / 1000) + 600;
      for (const sub of [{ id: 7 }, 7, ['a']]) {
        const token = await new SignJWT({ scope: 'catalog:read', sub, exp } as unknown as Record<string, unknown>)
          .setProtectedHeader({ alg: 'HS256' })
          .sign(secret);
        const reply = await f.anonymous('/v1/branches', { authorization: `Bearer ${token}` });
        assertProblem(reply, 401, 'invalid-token');
        assert.equal(reply.headers['www-authenticate'], challenge("the token's sub claim is not accepted"));
      }
    });

    test('an unsigned token (alg: none) is refused', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const claims = Buffer.from(JSON.stringify({ sub: 'mallory', scope: 'catalog:read', exp: Math.floor(f.clock.now() / 1000) + 600 })).toString('base64url');
      for (const unsigned of [`${header}.${claims}.`, `${header}.${claims}`]) {
        const reply = await f.anonymous('/v1/books?q=river', { authorization: `Bearer ${unsigned}` });
        assertProblem(reply, 401, 'invalid-token');
        assert.match(String(reply.headers['www-authenticate']), /error="invalid_token"/);
      }
    });
  });

  describe('404', () => {
    const cases: [string, string, string][] = [
      ['unknown path', 'GET', '/v2/books?q=river'],
      ['POST /search', 'POST', '/search'],
      ['GET /search', 'GET', '/search?q=river'],
      ['unknown book', 'GET', '/v1/books/bk_999999'],
      ['malformed book id', 'GET', '/v1/books/1042'],
      ['book id with leading zeros', 'GET', '/v1/books/bk_0001'],
      ['unknown branch', 'GET', '/v1/branches/branch_atlantis'],
      ['malformed branch id', 'GET', '/v1/branches/Central'],
      ['a path below a book', 'GET', '/v1/books/bk_1/reviews'],
    ];
    for (const [name, method, target] of cases) {
      test(name, async () => {
        assertProblem(await f.get(target, {}, method), 404, 'not-found');
      });
    }

    test('unknown paths answer 404 without a token', async () => {
      assertProblem(await f.anonymous('/search', {}, 'POST'), 404, 'not-found');
    });
  });

  test('405 with Allow on every known path', async () => {
    for (const target of ['/v1/books?q=river', '/v1/books/bk_1', '/v1/branches', '/v1/branches/branch_central']) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const reply = await f.anonymous(target, {}, method);
        assertProblem(reply, 405, 'method-not-allowed');
        assert.equal(reply.headers.allow, 'GET, HEAD');
      }
    }
  });

  test('414 for a target longer than http.maxTargetBytes', async () => {
    const target = `/v1/books?q=${'a'.repeat(2048)}`;
    const body = assertProblem(await f.anonymous(target), 414, 'uri-too-long');
    assert.equal(body.instance, '/v1/books');
    assert.equal((await f.get(`/v1/books?q=river&x=${'a'.repeat(2048 - 22)}`)).status, 400, 'exactly the limit is not too long');
  });
});

describe('origin rate limit', () => {
  let f: OriginFixture;
  before(async () => {
    f = await startOriginFixture({ 'origin.rateLimitPerMinute': 3 });
  });
  after(() => f.stop());

  test('429 with Retry-After and RateLimit fields past the per-subject limit, reset after the window', async () => {
    const alice = await f.token({ subject: 'alice' });
    const bob = await f.token({ subject: 'bob' });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    for (let i = 0; i < 3; i++) assert.equal((await f.get('/v1/branches', as(alice))).status, 200);
    f.clock.advance(15_000);
    const limited = await f.get('/v1/books?q=river', as(alice));
    assertProblem(limited, 429, 'rate-limited');
    assert.equal(limited.headers['retry-after'], '45');
    assert.equal(limited.headers['ratelimit-policy'], '"default";q=3;w=60');
    assert.equal(limited.headers.ratelimit, '"default";r=0;t=45');
    assert.equal((await f.get('/v1/branches', as(bob))).status, 200, 'another subject has its own budget');
    f.clock.advance(45_000);
    assert.equal((await f.get('/v1/branches', as(alice))).status, 200, 'a new window');
  });
});
