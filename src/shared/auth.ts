/**
 * Bearer-token verification (RFC 6750) with `jose`, shared by the origin and the gateway so both
 * answer a bad token the same way. Tokens are verified on every request; a verified token may be
 * remembered, bounded in number and never past its `exp`, so the gateway's hit path does not pay
 * for a signature check each time. A token never appears in a problem, a log line or a cache key.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { LRUCache } from 'lru-cache';
import { fromConfiguredFile } from '../config/load.ts';
import { growingLru } from './growing-lru.ts';
import { problem, type Problem } from './problem.ts';

export interface Principal {
  readonly subject: string;
  readonly scopes: readonly string[];
  /** Seconds since the epoch (`exp`). */
  readonly expiresAt: number;
}

export type AuthVerdict = { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly problem: Problem };

type Granted = Extract<AuthVerdict, { ok: true }>;

/** A verified token's verdict, with the whole field value it was given for. */
interface Remembered {
  readonly authorization: string;
  readonly granted: Granted;
}

/**
 * How many of a field value's last characters find it among the verified tokens: a JWS ends with
 * its signature, which differs from token to token, and the whole value is then compared. Looked
 * up by the whole value, the 200-odd characters hashed for every request (a header's string is new
 * each time) took about 3,000 instructions of a cache hit's 78,000 under callgrind.
 */
const FINGERPRINT_CHARS = 24;

function fingerprint(authorization: string): string {
  return authorization.length > FINGERPRINT_CHARS ? authorization.slice(-FINGERPRINT_CHARS) : authorization;
}

export type KeySource = { readonly kind: 'secret'; readonly secret: Uint8Array } | { readonly kind: 'jwks'; readonly jwks: string };

export interface VerifierOptions {
  readonly key: KeySource;
  readonly issuer: string | null;
  readonly audience: string | null;
  readonly requiredScope: string;
  /** How many verified tokens are remembered; 0 disables the memory. */
  readonly verifiedTokenCache: number;
  /** Milliseconds since the epoch; injectable so tests can move time. */
  readonly now?: () => number;
}

const REALM = 'Bearer realm="catalog"';
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const JWKS_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'];

function keyFunction(key: KeySource): Uint8Array | JWTVerifyGetKey {
  if (key.kind === 'secret') return key.secret;
  if (/^https?:\/\//.test(key.jwks)) return createRemoteJWKSet(new URL(key.jwks));
  const path = key.jwks;
  return fromConfiguredFile('auth.jwks', path, 'is not a JSON Web Key Set', () =>
    createLocalJWKSet(JSON.parse(readFileSync(path, 'utf8')) as Parameters<typeof createLocalJWKSet>[0]),
  );
}

/**
 * A signing secret's name, carried as `kid` by the tokens `catalog-gateway token` mints: the start
 * of its SHA-256, which tells two secrets apart and says nothing of either.
 */
export function secretKeyId(secret: Uint8Array): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 8);
}

/**
 * Why a signature does not verify, when the token says which secret signed it: a token minted on
 * another data directory (or `auth.secretFile`) is the usual cause, and the two key ids say so.
 */
function signatureMismatch(token: string, key: KeySource): string {
  const generic = 'the token signature does not verify';
  if (key.kind !== 'secret') return generic;
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return generic;
  }
  const own = secretKeyId(key.secret);
  if (typeof kid !== 'string' || !/^[\w-]{1,16}$/.test(kid) || kid === own) return generic;
  return `the token was signed with another signing secret (key id ${kid}) than this server's (key id ${own}): mint it with the data directory or auth.secretFile the server uses`;
}

function invalidToken(description: string): Problem {
  return problem('invalid-token', description, {
    'www-authenticate': `${REALM}, error="invalid_token", error_description="${description}"`,
  });
}

function describe(err: unknown, token: string, key: KeySource): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the token's ${err.claim} claim is not accepted`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return signatureMismatch(token, key);
  if (err instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not accepted";
  if (err instanceof errors.JWKSNoMatchingKey) return 'no key matches the token';
  return 'the token is malformed or cannot be verified';
}

export class TokenVerifier {
  readonly #key: Uint8Array | JWTVerifyGetKey;
  readonly #source: KeySource;
  readonly #options: JWTVerifyOptions;
  readonly #requiredScope: string;
  readonly #now: () => number;
  /** Verified tokens by their field value's last characters (`fingerprint`), each with the verdict it gave. */
  readonly #remembered: LRUCache<string, Remembered> | undefined;
  /** One problem per scope asked for, made once: routes name few scopes. */
  readonly #insufficient = new Map<string, Problem>();

  constructor(options: VerifierOptions) {
    this.#key = keyFunction(options.key);
    this.#source = options.key;
    this.#options = {
      algorithms: options.key.kind === 'secret' ? ['HS256'] : JWKS_ALGORITHMS,
      requiredClaims: ['exp', 'sub'],
      ...(options.issuer === null ? {} : { issuer: options.issuer }),
      ...(options.audience === null ? {} : { audience: options.audience }),
    };
    this.#requiredScope = options.requiredScope;
    this.#now = options.now ?? Date.now;
    this.#remembered = options.verifiedTokenCache > 0 ? growingLru<string, Remembered>(options.verifiedTokenCache) : undefined;
  }

  /**
   * Verifies the `Authorization` header value of one request. The answer is synchronous when no
   * signature has to be checked (no token, a malformed header, a remembered token), so the
   * gateway's hit path does not wait on a promise; only a full verification is asynchronous.
   * `scope` defaults to the configured `requiredScope`.
   */
  verify(authorization: string | undefined, scope: string = this.#requiredScope): AuthVerdict | Promise<AuthVerdict> {
    if (authorization === undefined || authorization === '') {
      return { ok: false, problem: problem('missing-token', 'send Authorization: Bearer <token>', { 'www-authenticate': REALM }) };
    }
    const nowMs = this.#now();
    // The whole field value must match, so a remembered token is not taken apart again either.
    const remembered = this.#remembered?.get(fingerprint(authorization));
    if (remembered?.authorization === authorization && remembered.granted.principal.expiresAt * 1000 > nowMs) return this.#authorize(remembered.granted, scope);
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return { ok: false, problem: invalidToken('the Authorization header is not a Bearer token') };
    return this.#verifySignature(authorization, token, nowMs, scope);
  }

  async #verifySignature(authorization: string, token: string, nowMs: number, scope: string): Promise<AuthVerdict> {
    let granted: Granted;
    try {
      const options = { ...this.#options, currentDate: new Date(nowMs) };
      const key = this.#key;
      const { payload } = typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
      // jose checks that `sub` is present, not that it is a string (RFC 7519 §4.1.2): an object
      // would be logged as "[object Object]" and, a new key at each verification, escape the rate limit.
      if (typeof payload.sub !== 'string') throw new errors.JWTClaimValidationFailed('"sub" claim must be a string', payload, 'sub', 'check_failed');
      const scopes = typeof payload.scope === 'string' ? payload.scope : '';
      granted = { ok: true, principal: { subject: payload.sub, scopes: scopes.split(' ').filter((s) => s !== ''), expiresAt: payload.exp ?? 0 } };
    } catch (err) {
      // Forgotten only when it is this value's: another sharing its last characters stays.
      const key = fingerprint(authorization);
      if (this.#remembered?.peek(key)?.authorization === authorization) this.#remembered.delete(key);
      return { ok: false, problem: invalidToken(describe(err, token, this.#source)) };
    }
    this.#remembered?.set(fingerprint(authorization), { authorization, granted });
    return this.#authorize(granted, scope);
  }

  #authorize(granted: Granted, scope: string): AuthVerdict {
    if (granted.principal.scopes.includes(scope)) return granted;
    let insufficient = this.#insufficient.get(scope);
    if (insufficient === undefined) {
      insufficient = problem('insufficient-scope', `the token lacks the ${scope} scope`, {
        'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`,
      });
      this.#insufficient.set(scope, insufficient);
    }
    return { ok: false, problem: insufficient };
  }
}
