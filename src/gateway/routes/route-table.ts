/**
 * The route table (`gateway.routes`): ordered path prefixes, the first that matches wins. A
 * route's mode picks which steps a request goes through (Varnish's `return (hash)` or
 * `return (pass)`), once, here; the steps themselves never ask which mode they are in.
 */
import type { RouteConfig, RouteMode } from '../../config/schema.ts';
import { fieldNames } from '../rules/cache-control.ts';
import type { StoragePolicy } from '../rules/storage.ts';
import type { AuthDeps } from '../steps/authenticate.ts';
import type { Forward } from '../cache-outcome.ts';
import type { Answered, Exchange } from '../exchange.ts';
import type { CacheDeps, Cacheable } from '../steps/cached.ts';
import type { ForwardDeps } from '../steps/forward.ts';

export interface Route {
  readonly prefix: string;
  readonly mode: RouteMode;
  /** The scope a token must carry; undefined when the route asks for no token. */
  readonly scope: string | undefined;
  /** What the route adds to the origin's caching directives. */
  readonly policy: StoragePolicy;
  readonly honoursRequestCacheControl: boolean;
}

/** What each step a route may choose is given, by step; a route hands each step its own. */
export interface StepDeps {
  readonly authenticate: AuthDeps;
  readonly cached: CacheDeps;
  readonly forward: ForwardDeps;
}

/** What a route's mode brings to the request's states (pipeline.ts). */
export interface RouteSteps {
  /**
   * Before authentication: the answer when the route refuses the request at once; otherwise it
   * says on the exchange where the request goes (`label`, `then`, `key` and `originTarget`, or a
   * `refusal` for after authentication).
   */
  admit(ex: Exchange, route: Route): Answered | undefined;
  /** The request fields a fill sends the origin. */
  readonly originHeaders: Cacheable['originHeaders'];
  /** Whether an origin 5xx is relayed (http routes) or becomes a 502 problem (catalog). */
  readonly relayServerErrors: boolean;
  /** Whether answers are compressed for clients that accept it (`gateway.compression`). */
  readonly compress: boolean;
  /** Why a request forwarded from this route went to the origin (RFC 9211 `fwd`). */
  readonly forward: Forward;
}

/** §4.2.2 leaves the ceiling of a heuristic lifetime to the cache; a day, as RFC 7234 warned past. */
const MAX_HEURISTIC_MS = 24 * 3600 * 1000;

/** Whether the path (the first `pathEnd` characters of `target`) is `prefix` or under it, read in place: every request asks. */
function underPrefix(target: string, pathEnd: number, prefix: string): boolean {
  if (prefix === '/') return true;
  if (prefix.length > pathEnd || !target.startsWith(prefix)) return false;
  return prefix.length === pathEnd || prefix.endsWith('/') || target.charCodeAt(prefix.length) === SLASH;
}

const SLASH = 0x2f;

export class RouteTable {
  readonly #routes: readonly Route[];

  /** `targeted`: `gateway.cache.targetedFields`, a comma-separated list (RFC 9213). */
  constructor(routes: readonly RouteConfig[], defaultScope: string, targeted: string | null) {
    const targetedFields = fieldNames(targeted ?? undefined);
    this.#routes = routes.map((r) => ({
      prefix: r.prefix,
      mode: r.mode,
      scope: r.auth === 'off' ? undefined : (r.scope ?? defaultScope),
      policy: {
        staleWhileRevalidateMs: r.staleWhileRevalidateSeconds * 1000,
        staleIfErrorMs: r.staleIfErrorSeconds * 1000,
        staleIfDisconnectedMs: r.staleIfDisconnectedSeconds * 1000,
        maxHeuristicMs: MAX_HEURISTIC_MS,
        targetedFields,
      },
      honoursRequestCacheControl: r.requestCacheControl === 'honour',
    }));
  }

  /** The route for an origin-form target's path; undefined when no prefix matches. */
  match(target: string): Route | undefined {
    const qmark = target.indexOf('?');
    const pathEnd = qmark === -1 ? target.length : qmark;
    const routes = this.#routes;
    for (let i = 0; i < routes.length; i++) {
      const route = routes[i];
      if (route !== undefined && underPrefix(target, pathEnd, route.prefix)) return route;
    }
    return undefined;
  }
}
