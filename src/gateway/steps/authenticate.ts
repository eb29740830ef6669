/**
 * The authenticate step: every request on a route with `auth: required`, cache hits included,
 * carries a valid token with the route's scope (401/403 otherwise). Synchronous when the token
 * was verified before, so a hit does not wait on a promise. The token's subject then takes its
 * turn from the per-token rate limit (429).
 */
import type { AuthVerdict, TokenVerifier } from '../../shared/auth.ts';
import { refuse, type Exchange, type Step } from '../exchange.ts';
import type { MetricRoute } from '../metrics.ts';
import type { Route } from '../routes/route-table.ts';
import type { TokenBuckets } from './token-bucket.ts';

/** What the authenticate step uses: the token verifier and the per-token rate limit (`gateway.rateLimit`). */
export interface AuthDeps {
  readonly verifier: TokenVerifier;
  readonly tokenLimits: TokenBuckets;
}

const ANONYMOUS: AuthVerdict = { ok: true, principal: { subject: '', scopes: [], expiresAt: 0 } };

function authenticate(ex: Exchange, deps: AuthDeps, route: Route): AuthVerdict | Promise<AuthVerdict> {
  if (route.scope === undefined) return ANONYMOUS;
  return deps.verifier.verify(ex.req.headers.authorization, route.scope);
}

/** The subject for the access log: none when the route asks for no token. */
function subjectOf(verdict: Extract<AuthVerdict, { ok: true }>): string | undefined {
  return verdict.principal.subject === '' ? undefined : verdict.principal.subject;
}

/** Authenticates, then goes on with `next`, or refuses with 401/403 under `label`. */
export function whenAuthenticated(ex: Exchange, deps: AuthDeps, route: Route, label: MetricRoute, next: (sub: string | undefined) => Step): Step {
  const verdict = authenticate(ex, deps, route);
  // A closure only for a verdict still to come: a hit's token was verified before.
  return verdict instanceof Promise ? verdict.then((v) => proceed(ex, deps, label, next, v)) : proceed(ex, deps, label, next, verdict);
}

function proceed(ex: Exchange, deps: AuthDeps, label: MetricRoute, next: (sub: string | undefined) => Step, verdict: AuthVerdict): Step {
  if (!verdict.ok) return refuse(ex, label, verdict.problem);
  const sub = subjectOf(verdict);
  // Before the cache, so that a flood of hits is limited like any other.
  const limited = sub === undefined ? undefined : deps.tokenLimits.take(sub);
  return limited === undefined ? next(sub) : refuse(ex, label, limited, undefined, sub);
}
