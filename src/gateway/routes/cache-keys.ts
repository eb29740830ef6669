/**
 * The one maker of cache keys: what a GET of a target is stored under, by its route's mode. The
 * request path, a purge by URL and an invalidation (RFC 9111 §4.4) all ask here, so that what one
 * stores the others find.
 */
import type { RouteMode } from '../../config/schema.ts';
import { originForm, parseRequestTarget, type TargetVerdict } from '../../shared/request-target.ts';
import { cacheKey, type CacheKey } from '../store/memory/response-cache.ts';
import type { RouteTable } from './route-table.ts';

/** A catalog route's key: the canonical form of a target the contract accepts. */
export function catalogKey(verdict: TargetVerdict): CacheKey | undefined {
  return verdict.ok ? cacheKey(verdict.canonical) : undefined;
}

/** An http route's key: the origin-form target as sent; none past the bound, which the route refuses with 414. */
export function httpKey(target: string, maxTargetBytes: number): CacheKey | undefined {
  return Buffer.byteLength(target) > maxTargetBytes ? undefined : cacheKey(originForm(target));
}

const BY_MODE: Readonly<Record<RouteMode, (target: string, maxTargetBytes: number) => CacheKey | undefined>> = {
  catalog: (target, maxTargetBytes) => catalogKey(parseRequestTarget('GET', target, maxTargetBytes)),
  http: httpKey,
  pass: () => undefined,
};

/** The key a purge or an invalidation names (a path and query, or an absolute URL), by the route it falls under. */
export function cacheKeyOf(routes: RouteTable, url: string, maxTargetBytes: number): CacheKey | undefined {
  const target = originForm(url);
  const route = routes.match(target);
  return route === undefined ? undefined : BY_MODE[route.mode](target, maxTargetBytes);
}
