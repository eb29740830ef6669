import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { loadOrCreateSecret, secretPath } from '../../src/shared/signing-key.ts';
import { startFaultOrigin, type FaultOrigin } from '../support/fault-origin.ts';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get } from '../support/harness.ts';
import { PROTOCOLS, protocolOverrides } from '../support/protocols.ts';

for (const protocol of PROTOCOLS)
  describe(`gateway authentication on cached URLs, over ${protocol}`, () => {
    let origin: FaultOrigin;
    let fx: GatewayFixture;
    const target = '/v1/books?q=guarded';
    let cachedBody = '';
    before(async () => {
      origin = await startFaultOrigin();
      fx = await startGatewayFixture(origin.url, protocolOverrides(protocol));
      cachedBody = (await fx.get(target)).body;
      assert.match(String((await fx.get(target)).headers['cache-status']), /; hit;/);
    });
    after(async () => {
      await fx.stop();
      await origin.close();
    });

    const signed = async (claims: { scope: string; exp: number }, secret = loadOrCreateSecret(secretPath(fx.config))): Promise<string> =>
      new SignJWT({ scope: claims.scope }).setProtectedHeader({ alg: 'HS256' }).setSubject('mallory').setIssuedAt().setExpirationTime(claims.exp).sign(secret);

    const cases: [string, () => Promise<Record<string, string>>, number, RegExp][] = [
      ['no token', () => Promise.resolve({}), 401, /^Bearer realm="catalog"$/],
      ['not a bearer header', () => Promise.resolve({ authorization: 'Basic dXNlcjpwYXNz' }), 401, /error="invalid_token"/],
      ['a malformed token', () => Promise.resolve({ authorization: 'Bearer not.a.jwt' }), 401, /error="invalid_token"/],
      [
        'a token signed with another key',
        async () => ({
          authorization: `Bearer ${await signed({ scope: 'catalog:read', exp: Math.floor(fx.clock.now() / 1000) + 600 }, new Uint8Array(32).fill(7))}`,
        }),
        401,
        /error="invalid_token"/,
      ],
      [
        'an expired token',
        async () => ({ authorization: `Bearer ${await signed({ scope: 'catalog:read', exp: Math.floor(fx.clock.now() / 1000) - 60 })}` }),
        401,
        /error="invalid_token", error_description="the token has expired"/,
      ],
      [
        'a token without the catalog:read scope',
        async () => ({ authorization: `Bearer ${await signed({ scope: 'catalog:write', exp: Math.floor(fx.clock.now() / 1000) + 600 })}` }),
        403,
        /error="insufficient_scope", scope="catalog:read"/,
      ],
    ];

    for (const [name, headers, status, challenge] of cases) {
      test(`${name}: ${status}, and the cached body does not leak`, async () => {
        const before = origin.count();
        for (const method of ['GET', 'HEAD']) {
          const reply = await get(`${fx.gateway.url}${target}`, await headers(), method, undefined, fx.dispatcher);
          assert.equal(reply.status, status);
          assert.match(String(reply.headers['www-authenticate']), challenge);
          assert.equal(reply.headers['cache-status'], undefined);
          assert.equal(reply.headers.etag, undefined);
          if (method === 'GET') {
            assert.equal(reply.headers['content-type'], 'application/problem+json');
            assert.ok(!reply.body.includes('Echoes of'), 'no part of the cached body');
            assert.notEqual(reply.body, cachedBody);
          }
        }
        assert.equal(origin.count(), before);
      });
    }

    test('authentication comes before parameter errors, as at the origin', async () => {
      const unauthenticated = await get(`${fx.gateway.url}/v1/books?q=x&bogus=1`, {}, 'GET', undefined, fx.dispatcher);
      assert.equal(unauthenticated.status, 401);
      const authenticated = await fx.get('/v1/books?q=x&bogus=1');
      assert.equal(authenticated.status, 400);
      assert.equal((await get(`${fx.gateway.url}/v1/nope`, {}, 'GET', undefined, fx.dispatcher)).status, 404, 'unknown paths are 404 before authentication');
    });
  });
