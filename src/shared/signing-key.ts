/**
 * The embedded default key: an HS256 secret generated on first start into the data directory
 * (git-ignored), so no secret is ever committed, and a development token minted with it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SignJWT } from 'jose';
import { fromConfiguredFile } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { TokenVerifier, secretKeyId, type KeySource } from './auth.ts';

export function secretPath(config: Config): string {
  return config['auth.secretFile'] ?? join(config.dataDir, 'signing-secret');
}

/** Reads the secret, creating it first if it does not exist; safe when two processes race. */
export function loadOrCreateSecret(path: string): Uint8Array {
  try {
    return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(path), { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
}

function keySource(config: Config): KeySource {
  const jwks = config['auth.jwks'];
  if (jwks !== null) return { kind: 'jwks', jwks };
  const path = secretPath(config);
  return {
    kind: 'secret',
    secret: fromConfiguredFile(config['auth.secretFile'] === null ? 'dataDir' : 'auth.secretFile', path, 'cannot hold the signing secret', () =>
      loadOrCreateSecret(path),
    ),
  };
}

/** The verifier both servers build from their `auth.*` keys. */
export function createVerifier(config: Config, now: () => number): TokenVerifier {
  return new TokenVerifier({
    key: keySource(config),
    issuer: config['auth.issuer'],
    audience: config['auth.audience'],
    requiredScope: config['auth.requiredScope'],
    verifiedTokenCache: config['auth.verifiedTokenCache'],
    now,
  });
}

export interface TokenClaims {
  readonly subject: string;
  readonly scope: string;
  readonly ttlSeconds: number;
  readonly issuer?: string | null;
  readonly audience?: string | null;
}

export async function mintToken(secret: Uint8Array, claims: TokenClaims): Promise<string> {
  let jwt = new SignJWT({ scope: claims.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: secretKeyId(secret) })
    .setSubject(claims.subject)
    .setIssuedAt()
    .setExpirationTime(`${claims.ttlSeconds}s`);
  if (claims.issuer != null) jwt = jwt.setIssuer(claims.issuer);
  if (claims.audience != null) jwt = jwt.setAudience(claims.audience);
  return jwt.sign(secret);
}
