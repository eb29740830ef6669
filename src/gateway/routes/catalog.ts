/**
 * `catalog` routes: the catalog API's contract. The target is parsed by the contract's rules
 * (414, 404, 405 + Allow before authentication; 400 after it, in the origin's order, so both
 * servers answer any request alike), the canonical target is the key and what the origin is asked
 * for, and an origin 5xx becomes the contract's 502 problem.
 */
import type { ClientAddress } from '../../shared/client-address.ts';
import { problemStatus } from '../../shared/problem.ts';
import { parseRequestTarget } from '../../shared/request-target.ts';
import { refuse, type Answered, type Exchange } from '../exchange.ts';
import { viaFor } from '../steps/forward.ts';
import { catalogKey } from './cache-keys.ts';
import type { RouteSteps } from './route-table.ts';

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

/**
 * A catalog request's target, parsed by the contract: a GET's as the edge remembered it
 * (../target-memo.ts), since a repeated query is what a cache serves and the parse was the largest
 * part of a hit after the log line and the socket write (docs/performance.md). Every request goes
 * to the cache steps; a parameter error waits for authentication.
 */
function admit(ex: Exchange): Answered | undefined {
  const remembered = ex.method === 'GET' ? ex.facts.get : undefined;
  const target = remembered ?? parseRequestTarget(ex.method, ex.rawTarget, ex.targetRules.maxBytes);
  if (!target.ok && problemStatus(target.problem) !== 400) return refuse(ex, target.route, target.problem);
  if (target.ok) {
    ex.label = target.target.route;
    ex.key = catalogKey(target);
    ex.originTarget = target.canonical;
  } else {
    ex.label = target.route;
    ex.refusal = target.problem;
  }
  return undefined;
}

export const CATALOG: RouteSteps = { admit, originHeaders, relayServerErrors: false, compress: true, forward: 'bypass' };
