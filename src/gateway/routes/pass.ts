/** `pass` routes: authenticated as configured, forwarded, never stored (Varnish's `return (pass)`). */
import type { Answered, Exchange } from '../exchange.ts';
import type { Route, RouteSteps } from './route-table.ts';

function admit(ex: Exchange, route: Route): Answered | undefined {
  ex.label = route.prefix;
  ex.then = 'pass';
  return undefined;
}

/** A pass route never fills, so it sends the origin no fill's fields. */
export const PASS: RouteSteps = { admit, originHeaders: () => ({}), relayServerErrors: true, compress: false, forward: 'bypass' };
