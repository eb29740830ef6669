import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createServer } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { drain, listen } from '../../src/shared/lifecycle.ts';
import { TokenVerifier, type AuthVerdict } from '../../src/shared/auth.ts';
import { mintToken } from '../../src/shared/signing-key.ts';

const secret = randomBytes(32);

function verifier(now: () => number, remembered = 100): TokenVerifier {
  return new TokenVerifier({
    key: { kind: 'secret', secret },
    issuer: null,
    audience: null,
    requiredScope: 'catalog:read',
    verifiedTokenCache: remembered,
    now,
  });
}

function refusal(verdict: AuthVerdict): { kind: string; challenge: string | undefined; detail: string } {
  assert.ok(!verdict.ok);
  return { kind: verdict.problem.kind, challenge: verdict.problem.headers?.['www-authenticate'], detail: verdict.problem.detail };
}

describe('token verifier', () => {
  test('a remembered token is still refused once its exp has passed', async () => {
    let now = Date.now();
    const v = verifier(() => now);
    const jwt = await mintToken(secret, { subject: 'ada', scope: 'catalog:read', ttlSeconds: 60 });
    const first = await v.verify(`Bearer ${jwt}`);
    assert.ok(first.ok && first.principal.subject === 'ada');
    now += 61_000;
    const later = refusal(await v.verify(`Bearer ${jwt}`));
    assert.equal(later.kind, 'invalid-token');
    assert.match(later.challenge ?? '', /^Bearer realm="catalog", error="invalid_token"/);
    assert.match(later.detail, /expired/);
  });

  test('a remembered token is answered at once with its verdict, whichever token came between, until its exp', async () => {
    let now = Date.now();
    const v = verifier(() => now);
    const ada = `Bearer ${await mintToken(secret, { subject: 'ada', scope: 'catalog:read', ttlSeconds: 60 })}`;
    const bob = `Bearer ${await mintToken(secret, { subject: 'bob', scope: 'catalog:read', ttlSeconds: 600 })}`;
    const first = await v.verify(ada);
    assert.ok(first.ok);
    // The same field value as a new string each time, as a request's header arrives.
    const again = (field: string): AuthVerdict | Promise<AuthVerdict> => v.verify(field.split('').join(''));
    assert.equal(again(ada), first);
    assert.equal(again(ada), first);
    const other = await v.verify(bob);
    assert.ok(other.ok && other.principal.subject === 'bob');
    assert.equal(again(ada), first, 'still remembered after another token');
    assert.equal(again(bob), other);
    assert.equal(refusal(v.verify(ada, 'catalog:write') as AuthVerdict).kind, 'insufficient-scope');
    now += 61_000;
    assert.equal(refusal(await again(ada)).kind, 'invalid-token');
    assert.equal(again(bob), other);
  });

  test('a token that ends as a remembered one does (its signature copied onto another payload) is verified as itself and refused, and the remembered one stays', async () => {
    const v = verifier(Date.now);
    const ada = `Bearer ${await mintToken(secret, { subject: 'ada', scope: 'catalog:read', ttlSeconds: 60 })}`;
    const eve = `Bearer ${await mintToken(secret, { subject: 'eve', scope: 'catalog:read', ttlSeconds: 60 })}`;
    const first = await v.verify(ada);
    assert.ok(first.ok);
    const [header, , signature] = ada.slice('Bearer '.length).split('.');
    const forged = `Bearer ${header ?? ''}.${eve.split('.')[1] ?? ''}.${signature ?? ''}`;
    assert.equal(forged.slice(-40), ada.slice(-40));
    const verdict = v.verify(forged);
    assert.ok(verdict instanceof Promise, 'not answered from what was remembered for another value');
    assert.equal(refusal(await verdict).kind, 'invalid-token');
    assert.equal(v.verify(ada.split('').join('')), first, 'the remembered token is still answered at once');
  });

  test('missing, malformed, forged and under-scoped tokens get RFC 6750 challenges without the token', async () => {
    const v = verifier(Date.now);
    assert.deepEqual(refusal(await v.verify(undefined)).challenge, 'Bearer realm="catalog"');
    assert.equal(refusal(await v.verify('Basic dXNlcjpwYXNz')).kind, 'invalid-token');
    const forged = await mintToken(randomBytes(32), { subject: 'eve', scope: 'catalog:read', ttlSeconds: 60 });
    const bad = refusal(await v.verify(`Bearer ${forged}`));
    assert.equal(bad.kind, 'invalid-token');
    assert.ok(!JSON.stringify(bad).includes(forged.split('.')[2] ?? forged));
    const narrow = await mintToken(secret, { subject: 'bob', scope: 'catalog:write', ttlSeconds: 60 });
    const scoped = refusal(await v.verify(`Bearer ${narrow}`));
    assert.equal(scoped.kind, 'insufficient-scope');
    assert.equal(scoped.challenge, 'Bearer realm="catalog", error="insufficient_scope", scope="catalog:read"');
  });

  test('alg=none and tokens without exp are refused', async () => {
    const v = verifier(Date.now);
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ sub: 'eve', scope: 'catalog:read', exp: 9_999_999_999 })).toString('base64url');
    assert.equal(refusal(await v.verify(`Bearer ${header}.${body}.`)).kind, 'invalid-token');
    const noExp = await new SignJWT({ scope: 'catalog:read' }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').sign(secret);
    assert.equal(refusal(await v.verify(`Bearer ${noExp}`)).kind, 'invalid-token');
  });

  test('a JWKS served over HTTP verifies tokens signed with its key and refuses others', async (t) => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const stranger = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    let fetched = 0;
    const server = createServer((_req, res) => {
      fetched++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    const { port } = await listen(server, '127.0.0.1', 0);
    t.after(() => drain(server, 100));
    const v = new TokenVerifier({
      key: { kind: 'jwks', jwks: `http://127.0.0.1:${port}/jwks.json` },
      issuer: null,
      audience: null,
      requiredScope: 'catalog:read',
      verifiedTokenCache: 0,
    });
    const sign = (key: (typeof stranger)['privateKey'], kid: string): Promise<string> =>
      new SignJWT({ scope: 'catalog:read' }).setProtectedHeader({ alg: 'ES256', kid }).setSubject('idp-user').setExpirationTime('1m').sign(key);
    const good = await v.verify(`Bearer ${await sign(privateKey, 'k1')}`);
    assert.ok(good.ok && good.principal.subject === 'idp-user');
    assert.ok(fetched >= 1, 'the key set was fetched from the URL');
    assert.equal(refusal(await v.verify(`Bearer ${await sign(stranger.privateKey, 'k1')}`)).kind, 'invalid-token');
  });

  test('without a memory every request is verified in full', async () => {
    let now = Date.now();
    const v = verifier(() => now, 0);
    const jwt = await mintToken(secret, { subject: 'ada', scope: 'catalog:read', ttlSeconds: 10 });
    assert.ok((await v.verify(`bearer ${jwt}`)).ok);
    now += 11_000;
    assert.equal(refusal(await v.verify(`Bearer ${jwt}`)).kind, 'invalid-token');
  });
});
