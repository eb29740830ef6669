/**
 * The route table (`gateway.routes`): ordered path prefixes, the first that matches wins. A
 * route's mode picks which steps a request goes through (Varnish's `return (hash)` or
 * `return (pass)`), once, here; the steps themselves never ask which mode they are in.
 */
import type { RouteConfig, RouteMode } from '../../config/schema.ts';
import { fieldNames } from '../rules/cache-control.ts';
import type { StoragePolicy } from '../rules/storage.ts';
import type { AuthDeps } from '../steps/authenticate.ts';
import type { CacheDeps } from '../steps/cached.ts';
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
