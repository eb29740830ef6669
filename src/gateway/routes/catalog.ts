/**
 * `catalog` routes: the catalog API's contract. The target is parsed by the contract's rules
 * (414, 404, 405 + Allow before authentication; 400 after it, in the origin's order, so both
 * servers answer any request alike), the canonical target is the key and what the origin is asked
 * for, and an origin 5xx becomes the contract's 502 problem.
 */
import type { ClientAddress } from '../../shared/client-address.ts';
import { problemStatus } from '../../shared/problem.ts';
import { parseRequestTarget, type TargetVerdict } from '../../shared/request-target.ts';
import { refuse, type Exchange, type Step } from '../exchange.ts';
import { whenAuthenticated } from '../steps/authenticate.ts';
import { serveCached } from '../steps/cached.ts';
import { viaFor } from '../steps/forward.ts';
import { cacheKey, type CacheKey } from '../store/response-cache.ts';
import type { Route, StepDeps } from './route-table.ts';

/**
 * What the origin needs of the client's request: it authenticates too, and logs the id and the
 * client (of the request that caused the fill, as nginx does); and the gateway's `Via`.
 */
function originHeaders(ex: Exchange, clients: ClientAddress): Record<string, string> {
  const { authorization, accept } = ex.req.headers;
  const headers: Record<string, string> = { 'x-request-id': ex.reqId, 'x-forwarded-for': clients.forwardFor(ex.req), via: viaFor(ex.req) };
  if (authorization !== undefined) headers.authorization = authorization;
  if (accept !== undefined) headers.accept = accept;
  return headers;
}

/** The key a GET of `target` is stored under: its canonical form; none for a target the contract refuses. */
export function catalogKey(target: string, maxTargetBytes: number): CacheKey | undefined {
  const parsed = parseRequestTarget('GET', target, maxTargetBytes);
  return parsed.ok ? cacheKey(parsed.canonical) : undefined;
}

/** A catalog request is only ever authenticated and served from the cache. */
type CatalogSteps = Pick<StepDeps, 'authenticate' | 'cached'>;

/**
 * A catalog request's target, parsed by the contract: a GET's as the edge remembered it
 * (../target-memo.ts), since a repeated query is what a cache serves and the parse was the largest
 * part of a hit after the log line and the socket write (docs/performance.md).
 */
export function serveCatalogRoute(ex: Exchange, route: Route, steps: CatalogSteps): Step {
  const remembered = ex.method === 'GET' ? ex.facts.get : undefined;
  return serveCatalog(ex, route, steps, remembered ?? parseRequestTarget(ex.method, ex.rawTarget, ex.targetRules.maxBytes));
}

function serveCatalog(ex: Exchange, route: Route, steps: CatalogSteps, target: TargetVerdict): Step {
  if (!target.ok && problemStatus(target.problem) !== 400) return refuse(ex, target.route, target.problem);
  const label = target.ok ? target.target.route : target.route;
  return whenAuthenticated(ex, steps.authenticate, route, label, (sub) => {
    if (!target.ok) return refuse(ex, label, target.problem, undefined, sub);
    return serveCached(ex, steps.cached, { key: cacheKey(target.canonical), label, route, originTarget: target.canonical, originHeaders, relayServerErrors: false, compress: true, sub });
  });
}
