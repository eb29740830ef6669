/**
 * The authenticate step: every request on a route with `auth: required`, cache hits included,
 * carries a valid token with the route's scope (401/403 otherwise). Synchronous when the token
 * was verified before, so a hit does not wait on a promise. The token's subject then takes its
 * turn from the per-token rate limit (429).
 */
import type { AuthVerdict, TokenVerifier } from '../../shared/auth.ts';
import type { Problem } from '../../shared/problem.ts';
import type { Exchange } from '../exchange.ts';
import type { Route } from '../routes/route-table.ts';
import type { TokenBuckets } from './token-bucket.ts';

/** What the authenticate step uses: the token verifier and the per-token rate limit (`gateway.rateLimit`). */
export interface AuthDeps {
  readonly verifier: TokenVerifier;
  readonly tokenLimits: TokenBuckets;
}

const ANONYMOUS: AuthVerdict = { ok: true, principal: { subject: '', scopes: [], expiresAt: 0 } };

/** The token's verdict for `route`; a promise only when its signature is still to be checked. */
export function verdictFor(ex: Exchange, deps: AuthDeps, route: Route): AuthVerdict | Promise<AuthVerdict> {
  if (route.scope === undefined) return ANONYMOUS;
  return deps.verifier.verify(ex.req.headers.authorization, route.scope);
}

/**
 * The problem that ends the request (401/403 for the token, 429 for its subject's rate), or none;
 * the subject, for the access log, goes on the exchange (none when the route asks for no token).
 */
export function admitted(ex: Exchange, deps: AuthDeps, verdict: AuthVerdict): Problem | undefined {
  if (!verdict.ok) return verdict.problem;
  const { subject } = verdict.principal;
  if (subject === '') return undefined;
  ex.sub = subject;
  // Before the cache, so that a flood of hits is limited like any other.
  return deps.tokenLimits.take(subject);
}
