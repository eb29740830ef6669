/**
 * The gateway's request path, as a list of states run by one loop (after Varnish's
 * `cache_req_fsm.c`: recv → hash → hit/miss/pass → fetch → deliver, then log and count). Each
 * state is a small function of the request's exchange that returns the next state, or how the
 * request was answered; the loop runs them until one answers, waiting only where a state returns
 * a promise (a signature to check, the origin), so a hit runs through without one.
 *
 *   receive       the exchange made as Node hands the request over (`createPipeline`)
 *   edge          strict framing (400), credentials in the target (400), per-address rate limit (429)
 *   route         the first `gateway.routes` prefix that matches the path (404 when none does),
 *                 whose mode admits the request: catalog parses it by the contract (414/404/405;
 *                 its 400 waits for the token) and keys it by the canonical target; http refuses
 *                 a target past the bound (414) and sends GET/HEAD to the cache, other methods
 *                 to the origin; pass sends everything to the origin
 *   authenticate  the route's scope (401/403), then the token's rate limit (429)
 *   lookup        the cache steps (steps/cached.ts): look up the variant → fresh: deliver;
 *                 stale-while-revalidate: deliver and refresh in the background; otherwise fill
 *                 (one per key, validating what is stored) → deliver, stale-if-error, or 502/504
 *   pass          forward and relay, never stored; invalidate what an unsafe method changed
 *   log and count one access-log line and the request metrics, whatever happened (`finish`)
 *
 * Each request goes through these at the end of the event loop's turn it arrived in, with the
 * others of that turn (end-of-turn.ts). Only `deliver`, `relay`, `refuse` and `answerHere` write
 * to the response.
 */
import { performance } from 'node:perf_hooks';
import type { RouteMode } from '../config/schema.ts';
import { ArrivalFields, CLIENT_CLOSED, clientGone, roundMs, type AccessLog } from '../shared/access-log.ts';
import type { ClientAddress } from '../shared/client-address.ts';
import type { Logger } from '../shared/logger.ts';
import { isStream, type Reply, type RequestHead } from '../shared/message-seam.ts';
import { problem, sendProblem } from '../shared/problem.ts';
import { Framing } from '../shared/framing.ts';
import { problemInstance, UNMATCHED_ROUTE } from '../shared/request-target.ts';
import { refuse, type Answered, type Exchange, type GatewayAccessRecord, type TargetRules } from './exchange.ts';
import type { GatewayMetrics } from './metrics.ts';
import { CATALOG } from './routes/catalog.ts';
import { HTTP } from './routes/http.ts';
import { PASS } from './routes/pass.ts';
import type { RouteSteps, StepDeps } from './routes/route-table.ts';
import { admitted, verdictFor } from './steps/authenticate.ts';
import { serveCached } from './steps/cached.ts';
import { forward } from './steps/forward.ts';
import type { TokenBuckets } from './steps/token-bucket.ts';
import { cacheLabel } from './cache-outcome.ts';
import type { TargetMemo } from './target-memo.ts';
import { servedAtEndOfTurn } from './end-of-turn.ts';
import { forgoDrain, forgoEndSignal } from './listeners/request-teardown.ts';
import type { AuthVerdict } from '../shared/auth.ts';

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
  readonly unfinished: Set<Reply>;
}

/** What the log-and-count step uses, and `fail` for a request that threw. */
export interface LogDeps {
  readonly metrics: Pick<GatewayMetrics, 'request' | 'bodySent' | 'staleServed' | 'coalesced'>;
  readonly accessLog: AccessLog<GatewayAccessRecord>;
  readonly logger: Logger;
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
  else
    sendProblem(
      res,
      { kind: 'internal-error', detail: 'the gateway failed to answer' },
      problemInstance(ex.rawTarget, targetRules.maxBytes, targetRules.credentialNames),
      false,
    );
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

const MODES: Readonly<Record<RouteMode, RouteSteps>> = { catalog: CATALOG, http: HTTP, pass: PASS };

/** A request's states, in the order a hit goes through them; `receive` and `log and count` are the loop's ends. */
type State = 'edge' | 'route' | 'authenticate' | 'lookup' | 'pass';

/** What a state returns: the next state, or how the request was answered; a promise when it has to wait. */
type Next = State | Answered | Promise<State | Answered>;

function edge(ex: Exchange, { edge }: PipelineSettings, framing: Framing): Next {
  const refused = framing.problem(ex.req) ?? ex.facts.refused ?? edge.ipLimits.take(ex.peer.remote ?? '');
  return refused === undefined ? 'route' : refuse(ex, UNMATCHED_ROUTE, refused);
}

function route(ex: Exchange): Next {
  const { route } = ex.facts;
  if (route === undefined) return refuse(ex, UNMATCHED_ROUTE, NO_ROUTE);
  return MODES[route.mode].admit(ex, route) ?? 'authenticate';
}

function authenticate(ex: Exchange, { steps }: PipelineSettings): Next {
  const verdict = verdictFor(ex, steps.authenticate, routeOf(ex));
  // A closure only for a verdict still to come: a hit's token was verified before.
  return verdict instanceof Promise ? verdict.then((v) => afterAuthentication(ex, steps, v)) : afterAuthentication(ex, steps, verdict);
}

function afterAuthentication(ex: Exchange, steps: StepDeps, verdict: AuthVerdict): State | Answered {
  const refused = admitted(ex, steps.authenticate, verdict) ?? ex.refusal;
  return refused === undefined ? ex.then : refuse(ex, ex.label, refused, undefined, ex.sub);
}

function lookup(ex: Exchange, { steps }: PipelineSettings): Next {
  const route = routeOf(ex);
  const { key } = ex;
  if (key === undefined) return 'pass';
  const mode = MODES[route.mode];
  return serveCached(ex, steps.cached, {
    key,
    label: ex.label,
    route,
    originTarget: ex.originTarget,
    originHeaders: mode.originHeaders,
    relayServerErrors: mode.relayServerErrors,
    compress: mode.compress,
    sub: ex.sub,
  });
}

function pass(ex: Exchange, { steps }: PipelineSettings): Next {
  return forward(ex, steps.forward, ex.label, ex.sub, MODES[routeOf(ex).mode].forward);
}

/** The route the `route` state found: every later state runs only once it has. */
function routeOf(ex: Exchange): NonNullable<Exchange['facts']['route']> {
  const { route } = ex.facts;
  if (route === undefined) throw new Error('a request went past the route state without a route');
  return route;
}

/**
 * Runs the states from `next` until one answers. Every state but `edge` takes the same two
 * arguments; `edge` also takes the pipeline's framing check.
 */
function advance(ex: Exchange, settings: PipelineSettings, framing: Framing, next: Next): Answered | Promise<Answered> {
  let at = next;
  for (;;) {
    switch (at) {
      case 'edge':
        at = edge(ex, settings, framing);
        break;
      case 'route':
        at = route(ex);
        break;
      case 'authenticate':
        at = authenticate(ex, settings);
        break;
      case 'lookup':
        at = lookup(ex, settings);
        break;
      case 'pass':
        at = pass(ex, settings);
        break;
      default:
        return at instanceof Promise ? at.then((later) => advance(ex, settings, framing, later)) : at;
    }
  }
}

export function createPipeline(settings: () => PipelineSettings): (req: RequestHead, res: Reply) => void {
  const framing = new Framing();
  const arrivals = new ArrivalFields();
  const served = servedAtEndOfTurn((req: RequestHead, res: Reply, arrivedAt) => {
    const current = settings();
    const { edge, log } = current;
    forgoDrain(req);
    const method = req.method ?? 'GET';
    const rawTarget = req.url ?? '/';
    const ex: Exchange = {
      targetRules: edge.targetRules,
      req,
      res,
      reqId: arrivals.requestId(req.headers['x-request-id']),
      method,
      rawTarget,
      facts: edge.targets.factsOf(rawTarget),
      isHead: method === 'HEAD',
      started: arrivedAt,
      peer: arrivals.peer(req, edge.clients),
      label: UNMATCHED_ROUTE,
      then: 'lookup',
      refusal: undefined,
      key: undefined,
      originTarget: rawTarget,
      sub: undefined,
    };
    try {
      // An HTTP/2 connection is told by the drain's GOAWAY instead.
      if (edge.isDraining() && !isStream(res)) res.shouldKeepAlive = false;
      const answered = advance(ex, current, framing, 'edge');
      if (answered instanceof Promise) {
        // Only an answer still to come can meet a drain. A hit's was sent before the states
        // returned; adding and deleting it anyway made the set's table reallocate, in the old
        // space, every few requests: a full collection every 3 s under load.
        edge.unfinished.add(res);
        answered.then(
          (later) => {
            edge.unfinished.delete(res);
            finish(ex, log, later);
          },
          (err: unknown) => {
            edge.unfinished.delete(res);
            fail(ex, log, err);
          },
        );
      } else {
        finish(ex, log, answered);
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
