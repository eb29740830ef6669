/**
 * `http` routes: a generic RFC 9111 shared cache in front of any origin. GET and HEAD go through
 * the cache keyed by the target as sent; every other method is forwarded with its body, and its
 * answer relayed unchanged (and, when it is unsafe, invalidates what it touched).
 */
import type { ClientAddress } from '../../shared/client-address.ts';
import { problem } from '../../shared/problem.ts';
import { originForm } from '../../shared/request-target.ts';
import { refuse, type Answered, type Exchange } from '../exchange.ts';
import { CLIENT_CONDITIONS } from '../rules/validation.ts';
import { forwardedHeaders } from '../steps/forward.ts';
import { httpKey } from './cache-keys.ts';
import type { Route, RouteSteps } from './route-table.ts';

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

function admit(ex: Exchange, route: Route): Answered | undefined {
  const { maxBytes } = ex.targetRules;
  ex.label = route.prefix;
  const key = httpKey(ex.rawTarget, maxBytes);
  if (key === undefined) return refuse(ex, route.prefix, problem('uri-too-long', `the request target is longer than ${maxBytes} bytes`));
  if (ex.method === 'GET' || ex.method === 'HEAD') {
    ex.key = key;
    ex.originTarget = originForm(ex.rawTarget);
  } else ex.then = 'pass';
  return undefined;
}

export const HTTP: RouteSteps = { admit, originHeaders, relayServerErrors: true, compress: false, forward: 'method' };
