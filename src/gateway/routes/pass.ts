/** `pass` routes: authenticated as configured, forwarded, never stored (Varnish's `return (pass)`). */
import type { Exchange, Step } from '../exchange.ts';
import { whenAuthenticated } from '../steps/authenticate.ts';
import { forward } from '../steps/forward.ts';
import type { Route } from './route-table.ts';

export function passRoute(ex: Exchange, route: Route): Step {
  return whenAuthenticated(ex, route, route.prefix, (sub) => forward(ex, route.prefix, sub, 'bypass'));
}
