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
 * Each request goes through these at the end of the event loop's turn it arrived in, with the
 * others of that turn (end-of-turn.ts).
 *
 * Steps return values; only `deliver`, `relay`, `refuse` and `answerHere` write to the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RouteMode } from '../config/schema.ts';
import { ArrivalFields, CLIENT_CLOSED, clientGone, roundMs, type AccessLog } from '../shared/access-log.ts';
import type { ClientAddress } from '../shared/client-address.ts';
import type { Logger } from '../shared/logger.ts';
import { problem, sendProblem } from '../shared/problem.ts';
import { Framing } from '../shared/framing.ts';
import { originForm, problemInstance, UNMATCHED_ROUTE } from '../shared/request-target.ts';
import { refuse, type Answered, type Exchange, type GatewayAccessRecord, type Step, type TargetRules } from './exchange.ts';
import type { GatewayMetrics } from './metrics.ts';
import { catalogKey, serveCatalogRoute } from './routes/catalog.ts';
import { httpKey, httpRoute } from './routes/http.ts';
import { passRoute } from './routes/pass.ts';
import type { Route, RouteTable, StepDeps } from './routes/route-table.ts';
import type { TokenBuckets } from './steps/token-bucket.ts';
import type { CacheKey } from './store/response-cache.ts';
import { cacheLabel } from './cache-outcome.ts';
import type { TargetMemo } from './target-memo.ts';
import { servedAtEndOfTurn } from './end-of-turn.ts';
import { forgoDrain, forgoEndSignal } from './listeners/request-teardown.ts';

type Serve = (ex: Exchange, route: Route, steps: StepDeps) => Step;

/** What the edge checks use, before a route is chosen. */
export interface EdgeDeps {
  readonly targetRules: TargetRules;
  /** What is known of each target under these settings. */
  readonly targets: TargetMemo;
  /** Who the client is. */
  readonly clients: ClientAddress;
  /** The per-address rate limit (`gateway.rateLimit`). */
  readonly ipLimits: TokenBuckets;
  /** True once the gateway is shutting down: every answer then closes its connection. */
  readonly isDraining: () => boolean;
  /** Responses still to be sent when their step returned, so that a drain can tell each to close its connection. */
  readonly unfinished: Set<ServerResponse>;
}

/** What the log-and-count step uses, and `fail` for a request that threw. */
export interface LogDeps {
  readonly metrics: Pick<GatewayMetrics, 'request' | 'bodySent' | 'staleServed' | 'coalesced'>;
  readonly accessLog: AccessLog<GatewayAccessRecord>;
  readonly logger: Logger;
}

/** The key a GET of a target is stored under, by mode; undefined when the mode stores nothing for it. */
const KEYS: Readonly<Record<RouteMode, (target: string, maxTargetBytes: number) => CacheKey | undefined>> = {
  catalog: catalogKey,
  // The http route refuses a longer target with 414, so no entry has such a key.
  http: (target, maxTargetBytes) => (Buffer.byteLength(target) > maxTargetBytes ? undefined : httpKey(target)),
  pass: () => undefined,
};

/** The cache key a purge by URL names (a path and query, or an absolute URL), by the route it falls under. */
export function cacheKeyOf(routes: RouteTable, url: string, maxTargetBytes: number): CacheKey | undefined {
  const target = originForm(url);
  const route = routes.match(target);
  return route === undefined ? undefined : KEYS[route.mode](target, maxTargetBytes);
}

const NO_ROUTE = problem('not-found', 'no resource at this path');

function finish(ex: Exchange, log: LogDeps, answered: Answered): void {
  const { res } = ex;
  const durationMs = performance.now() - ex.started;
  // The client went away (or a drain cut it) before its answer was sent.
  const gone = clientGone(res);
  const status = gone ? CLIENT_CLOSED : answered.status;
  const { outcome } = answered;
  const cache = cacheLabel(outcome);
  log.metrics.request(answered.route, ex.method, status, cache, durationMs / 1000);
  // Counted from the outcome the client got: a waiter the fill could not serve was not coalesced.
  if (outcome.collapsed === true) log.metrics.coalesced();
  if (outcome.kind === 'stale') log.metrics.staleServed(outcome.detail);
  if (answered.encoding !== undefined && !gone) log.metrics.bodySent(answered.encoding, answered.bytes);
  log.accessLog({
    reqId: ex.reqId,
    method: ex.method,
    path: ex.facts.logged,
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

function fail(ex: Exchange, log: LogDeps, err: unknown): void {
  const { res, targetRules } = ex;
  log.logger.error({ reqId: ex.reqId, err }, 'request failed');
  if (res.headersSent) res.destroy();
  else sendProblem(res, { kind: 'internal-error', detail: 'the gateway failed to answer' }, problemInstance(ex.rawTarget, targetRules.maxBytes, targetRules.credentialNames), false);
}

/**
 * What a request is served with, each step's own part built once per configuration
 * (reload/live-parts.ts): read once as the request arrives, so a reload's swap never splits it.
 */
export interface PipelineSettings {
  readonly edge: EdgeDeps;
  readonly steps: StepDeps;
  readonly log: LogDeps;
}

const MODES: Readonly<Record<RouteMode, Serve>> = { catalog: serveCatalogRoute, http: httpRoute, pass: passRoute };

export function createPipeline(settings: () => PipelineSettings): (req: IncomingMessage, res: ServerResponse) => void {
  const framing = new Framing();
  const arrivals = new ArrivalFields();
  const served = servedAtEndOfTurn((req: IncomingMessage, res: ServerResponse, arrivedAt) => {
    const { edge, steps, log } = settings();
    forgoDrain(req);
    const method = req.method ?? 'GET';
    const rawTarget = req.url ?? '/';
    const facts = edge.targets.factsOf(rawTarget);
    const ex: Exchange = {
      targetRules: edge.targetRules,
      req,
      res,
      reqId: arrivals.requestId(req.headers['x-request-id']),
      method,
      rawTarget,
      facts,
      isHead: method === 'HEAD',
      started: arrivedAt,
      peer: arrivals.peer(req, edge.clients),
    };
    try {
      if (edge.isDraining()) res.shouldKeepAlive = false;
      const refused = framing.problem(req) ?? facts.refused ?? edge.ipLimits.take(ex.peer.remote ?? '');
      const { route } = facts;
      let step: Step;
      if (refused !== undefined) step = refuse(ex, UNMATCHED_ROUTE, refused);
      else step = route === undefined ? refuse(ex, UNMATCHED_ROUTE, NO_ROUTE) : MODES[route.mode](ex, route, steps);
      if (step instanceof Promise) {
        // Only an answer still to come can meet a drain. A hit's was sent before the step
        // returned; adding and deleting it anyway made the set's table reallocate, in the old
        // space, every few requests: a full collection every 3 s under load.
        edge.unfinished.add(res);
        step.then(
          (answered) => {
            edge.unfinished.delete(res);
            finish(ex, log, answered);
          },
          (err: unknown) => {
            edge.unfinished.delete(res);
            fail(ex, log, err);
          },
        );
      } else {
        finish(ex, log, step);
      }
    } catch (err) {
      fail(ex, log, err);
    }
  });
  return (req, res) => {
    forgoEndSignal(req);
    served(req, res);
  };
}
