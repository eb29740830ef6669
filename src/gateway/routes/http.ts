/**
 * `http` routes: a generic RFC 9111 shared cache in front of any origin. GET and HEAD go through
 * the cache keyed by the target as sent; every other method is forwarded with its body, and its
 * answer relayed unchanged (and, when it is unsafe, invalidates what it touched).
 */
import type { ClientAddress } from '../../shared/client-address.ts';
import { problem } from '../../shared/problem.ts';
import { originForm } from '../../shared/request-target.ts';
import { refuse, type Exchange, type Step } from '../exchange.ts';
import { CLIENT_CONDITIONS } from '../rules/validation.ts';
import { whenAuthenticated } from '../steps/authenticate.ts';
import { serveCached } from '../steps/cached.ts';
import { forward, forwardedHeaders } from '../steps/forward.ts';
import { cacheKey, type CacheKey } from '../store/response-cache.ts';
import type { Route, StepDeps } from './route-table.ts';

/**
 * Fields by which some frameworks let a request name another target or method than its own (IIS
 * and Symfony's `X-Original-URL` and `X-Rewrite-URL`, the `X-HTTP-Method-Override` family). A
 * fill's answer is stored as the GET of the target sent, so `GET /` with `X-Original-URL: /admin`
 * would store /admin's answer as /'s, for everyone.
 */
const OVERRIDES = ['x-original-url', 'x-rewrite-url', 'x-http-method-override', 'x-http-method', 'x-method-override'];

const NOT_FILLED_WITH = [...CLIENT_CONDITIONS, ...OVERRIDES];

/** What a fill sends: the client's fields less its conditions, so that it asks for the whole, and less the overrides. */
function originHeaders(ex: Exchange, clients: ClientAddress): Record<string, string | string[]> {
  return forwardedHeaders(ex, clients, NOT_FILLED_WITH);
}

/** The key a GET of `target` is stored under: the origin-form target as sent. */
export function httpKey(target: string): CacheKey {
  return cacheKey(originForm(target));
}

export function httpRoute(ex: Exchange, route: Route, steps: StepDeps): Step {
  const { maxBytes } = ex.targetRules;
  if (Buffer.byteLength(ex.rawTarget) > maxBytes) return refuse(ex, route.prefix, problem('uri-too-long', `the request target is longer than ${maxBytes} bytes`));
  return whenAuthenticated(ex, steps.authenticate, route, route.prefix, (sub) => {
    if (ex.method !== 'GET' && ex.method !== 'HEAD') return forward(ex, steps.forward, route.prefix, sub, 'method');
    const target = originForm(ex.rawTarget);
    return serveCached(ex, steps.cached, { key: httpKey(target), label: route.prefix, route, originTarget: target, originHeaders, relayServerErrors: true, compress: false, sub });
  });
}
