/**
 * The gateway's request path (after Varnish: recv → hash → hit/miss/pass → fetch → deliver, then
 * log and count). The route table picks, once, which steps a request goes through:
 *
 *   edge    strict framing (400), credentials in the target (400), per-address rate limit (429)
 *   route   the first `gateway.routes` prefix that matches the path (404 when none does)
 *   catalog parse by the contract (414/404/405) → authenticate (401/403) → parameters (400)
 *           → cache steps with the canonical target as key
 *   http    authenticate as configured → GET/HEAD: cache steps with the target as key;
 *           other methods: forward, relay, invalidate (RFC 9111 §4.4)
 *   pass    authenticate as configured → forward and relay, never stored
 *   cache   look up the variant → fresh: deliver; stale-while-revalidate: deliver and refresh in
 *           the background; otherwise fill (one per key, validating what is stored) → deliver,
 *           stale-if-error, or 502/504
 *   log     one access-log line and the request metrics, whatever happened
 *
 * Steps return values; only `deliver`, `relay` and `refuse` write to the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RouteMode } from '../config/schema.ts';
import { peerFields, requestId, roundMs } from '../shared/access-log.ts';
import { problem, sendProblem } from '../shared/problem.ts';
import { credentialsInTarget } from '../shared/credentials.ts';
import { framingProblem } from '../shared/framing.ts';
import { originForm, problemInstance, UNMATCHED_ROUTE } from '../shared/request-target.ts';
import { refuse, type Answered, type Exchange, type PipelineDeps, type Step } from './exchange.ts';
import { catalogKey, catalogRoute } from './routes/catalog.ts';
import { httpKey, httpRoute } from './routes/http.ts';
import { passRoute } from './routes/pass.ts';
import type { Route, RouteTable } from './routes/route-table.ts';
import type { CacheKey } from './store/response-cache.ts';
import { cacheLabel } from './cache-outcome.ts';

type Serve = (ex: Exchange, route: Route) => Step;

/** The key a GET of a target is stored under, by mode; undefined when the mode stores nothing for it. */
const KEYS: Readonly<Record<RouteMode, (target: string, maxTargetBytes: number) => CacheKey | undefined>> = {
  catalog: catalogKey,
  http: httpKey,
  pass: () => undefined,
};

/** The cache key a purge by URL names (a path and query, or an absolute URL), by the route it falls under. */
export function cacheKeyOf(routes: RouteTable, url: string, maxTargetBytes: number): CacheKey | undefined {
  const target = originForm(url);
  const route = routes.match(target);
  return route === undefined ? undefined : KEYS[route.mode](target, maxTargetBytes);
}

const NO_ROUTE = problem('not-found', 'no resource at this path');
const CLIENT_CLOSED = 499;

function finish(ex: Exchange, answered: Answered): void {
  const { deps, res } = ex;
  deps.unfinished.delete(res);
  const durationMs = performance.now() - ex.started;
  // nginx's 499: the client went away (or a drain cut it) before its answer was sent.
  const gone = res.destroyed && !res.writableFinished;
  const status = gone ? CLIENT_CLOSED : answered.status;
  const cache = cacheLabel(answered.outcome);
  deps.metrics.request(answered.route, ex.method, status, cache, durationMs / 1000);
  if (answered.encoding !== undefined && !gone) deps.metrics.bodySent(answered.encoding, answered.bytes);
  deps.accessLog({
    reqId: ex.reqId,
    method: ex.method,
    path: ex.rawTarget,
    status,
    bytes: gone ? 0 : answered.bytes,
    durationMs: roundMs(durationMs),
    cache,
    originMs: answered.originMs === undefined ? undefined : roundMs(answered.originMs),
    encoding: answered.encoding,
    sub: answered.sub,
    remote: ex.peer.remote,
    ua: ex.peer.ua,
    proto: ex.peer.proto,
  });
}

function fail(ex: Exchange, err: unknown): void {
  const { deps, res } = ex;
  deps.unfinished.delete(res);
  deps.logger.error({ reqId: ex.reqId, err }, 'request failed');
  if (res.headersSent) res.destroy();
  else sendProblem(res, { kind: 'internal-error', detail: 'the gateway failed to answer' }, problemInstance(ex.rawTarget, deps.maxTargetBytes, deps.credentialNames), false);
}

/** What a request is served with: read once as it arrives, so a reload's swap never splits a request. */
export interface PipelineSettings {
  readonly deps: PipelineDeps;
  readonly routes: RouteTable;
}

export function createPipeline(settings: () => PipelineSettings): (req: IncomingMessage, res: ServerResponse) => void {
  // Made per pipeline: the catalog route keeps a memo of its own.
  const modes: Readonly<Record<RouteMode, Serve>> = { catalog: catalogRoute(), http: httpRoute, pass: passRoute };
  return (req, res) => {
    const { deps, routes } = settings();
    const method = req.method ?? 'GET';
    const rawTarget = req.url ?? '/';
    const ex: Exchange = {
      deps,
      req,
      res,
      reqId: requestId(req.headers['x-request-id']),
      method,
      rawTarget,
      isHead: method === 'HEAD',
      started: performance.now(),
      peer: peerFields(req, deps.clients),
    };
    try {
      if (deps.isDraining()) res.shouldKeepAlive = false;
      deps.unfinished.add(res);
      const refused = framingProblem(req) ?? credentialsInTarget(rawTarget, deps.credentialNames) ?? deps.ipLimits.take(ex.peer.remote ?? '');
      const route = refused === undefined ? routes.match(originForm(rawTarget)) : undefined;
      let step: Step;
      if (refused !== undefined) step = refuse(ex, UNMATCHED_ROUTE, refused);
      else step = route === undefined ? refuse(ex, UNMATCHED_ROUTE, NO_ROUTE) : modes[route.mode](ex, route);
      if (step instanceof Promise) {
        step.then(
          (answered) => { finish(ex, answered); },
          (err: unknown) => { fail(ex, err); },
        );
      } else {
        finish(ex, step);
      }
    } catch (err) {
      fail(ex, err);
    }
  };
}
