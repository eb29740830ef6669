/** Tokens verified against a JWKS file instead of the embedded HMAC secret. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { tempDir } from '../support/config.ts';
import { startOriginFixture, type OriginFixture } from '../support/origin-fixture.ts';

let f: OriginFixture;
let signing: CryptoKey;
let stranger: CryptoKey;

function sign(key: CryptoKey, scope: string, kid = 'test-key'): Promise<string> {
  return new SignJWT({ scope }).setProtectedHeader({ alg: 'RS256', kid }).setSubject('jwks-user').setIssuedAt().setExpirationTime('10m').sign(key);
}

before(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  signing = pair.privateKey;
  stranger = (await generateKeyPair('RS256')).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const file = join(tempDir(), 'jwks.json');
  writeFileSync(file, JSON.stringify({ keys: [jwk] }));
  f = await startOriginFixture({ 'auth.jwks': file });
});
after(() => f.stop());

test('a token signed with a key of the JWKS is accepted', async () => {
  const reply = await f.get('/v1/books?q=river', { authorization: `Bearer ${await sign(signing, 'catalog:read other')}` });
  assert.equal(reply.status, 200, reply.body);
  assert.ok(f.logs.text().includes('"sub":"jwks-user"'));
});

test('a token signed with a key outside the JWKS is refused', async () => {
  for (const token of [await sign(stranger, 'catalog:read'), await sign(stranger, 'catalog:read', 'unknown-kid')]) {
    const reply = await f.get('/v1/books?q=river', { authorization: `Bearer ${token}` });
    assert.equal(reply.status, 401, reply.body);
    assert.match(String(reply.headers['www-authenticate']), /^Bearer realm="catalog", error="invalid_token"/);
  }
});

test('an HS256 token is refused when a JWKS is configured', async () => {
  const hmac = await new SignJWT({ scope: 'catalog:read' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('x')
    .setExpirationTime('10m')
    .sign(new Uint8Array(32));
  assert.equal((await f.get('/v1/branches', { authorization: `Bearer ${hmac}` })).status, 401);
});

test('a JWKS token without the scope gets 403', async () => {
  const reply = await f.get('/v1/branches', { authorization: `Bearer ${await sign(signing, 'profile')}` });
  assert.equal(reply.status, 403);
  assert.equal(reply.headers['www-authenticate'], 'Bearer realm="catalog", error="insufficient_scope", scope="catalog:read"');
});
