/** `pass` routes: authenticated as configured, forwarded, never stored (Varnish's `return (pass)`). */
import type { Exchange, Step } from '../exchange.ts';
import { whenAuthenticated } from '../steps/authenticate.ts';
import { forward } from '../steps/forward.ts';
import type { Route, StepDeps } from './route-table.ts';

export function passRoute(ex: Exchange, route: Route, steps: Pick<StepDeps, 'authenticate' | 'forward'>): Step {
  return whenAuthenticated(ex, steps.authenticate, route, route.prefix, (sub) => forward(ex, steps.forward, route.prefix, sub, 'bypass'));
}
