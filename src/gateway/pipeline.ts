/**
 * The gateway's request path, one step per line (after Varnish: recv → hash → hit/miss/pass →
 * fetch → deliver, then log and count):
 *
 *   pass?  a `gateway.passThrough` prefix: authenticate, stream to the origin, done
 *   parse  the contract's target rules: 414, 404, 405 (+ Allow) — before anything else
 *   auth   every request, cache hits included: 401/403 (+ WWW-Authenticate)
 *   params the remaining 400s, after authentication, in the same order as the origin
 *   key    the canonical target; the token is never part of it
 *   lookup fresh → deliver the hit
 *   fill   otherwise join (or start) the one fill in flight for the key → deliver, or 502/504
 *   log    one access-log line and the request metrics
 *
 * Steps return values; only `deliver` and `sendProblem` write to the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { requestId, type AccessLog, type AccessRecord } from '../shared/access-log.ts';
import type { AuthVerdict, TokenVerifier } from '../shared/auth.ts';
import type { Logger } from '../shared/logger.ts';
import { problemStatus, sendProblem, type Problem } from '../shared/problem.ts';
import { parseRequestTarget, problemInstance, type TargetVerdict } from '../shared/request-target.ts';
import { ttlSeconds } from './cache-policy.ts';
import { forwardStatus, hitStatus } from './cache-status.ts';
import type { Coalescer } from './coalescer.ts';
import { deliver, type DeliverContext, type Delivered } from './deliver.ts';
import type { FillOutcome, Filler } from './fill.ts';
import { PASS_THROUGH_ROUTE, type CacheResult, type GatewayMetrics, type MetricRoute } from './metrics.ts';
import type { PassThrough } from './pass-through.ts';
import { cacheKey, type CacheKey, type ResponseCache } from './response-cache.ts';

export interface PipelineDeps {
  readonly maxTargetBytes: number;
  readonly verifier: TokenVerifier;
  readonly cache: ResponseCache;
  readonly coalescer: Coalescer<FillOutcome>;
  readonly filler: Filler;
  readonly passThrough: PassThrough;
  readonly metrics: GatewayMetrics;
  readonly accessLog: AccessLog<GatewayAccessRecord>;
  readonly logger: Logger;
  readonly now: () => number;
}

/** The gateway's access-log line: the shared fields plus how the cache answered. */
export interface GatewayAccessRecord extends AccessRecord {
  readonly cache: CacheResult;
  /** How long the origin took, when this request waited for it. */
  readonly originMs: number | undefined;
}

/** How one request was answered: what the log and the metrics record. */
interface Answered extends Delivered {
  readonly route: MetricRoute;
  readonly cache: CacheResult;
  readonly originMs?: number;
  readonly sub?: string;
}

/** One request on its way through the steps. */
interface Exchange {
  readonly deps: PipelineDeps;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly reqId: string;
  readonly rawTarget: string;
  readonly isHead: boolean;
}

/** A step answers at once (hits, refusals) or, when it has to wait (signature, origin), later. */
type Step = Answered | Promise<Answered>;

export function createPipeline(deps: PipelineDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const rawTarget = req.url ?? '/';
    const ex: Exchange = { deps, req, res, reqId: requestId(req.headers['x-request-id']), rawTarget, isHead: method === 'HEAD' };
    const finish = (answered: Answered): void => {
      const durationMs = performance.now() - started;
      deps.metrics.request(answered.route, method, answered.status, answered.cache, durationMs / 1000);
      deps.accessLog({ reqId: ex.reqId, method, path: rawTarget, status: answered.status, bytes: answered.bytes, durationMs, cache: answered.cache, originMs: answered.originMs, sub: answered.sub });
    };
    const fail = (err: unknown): void => {
      deps.logger.error({ reqId: ex.reqId, err }, 'request failed');
      if (res.headersSent) res.destroy();
      else sendProblem(res, { kind: 'internal-error', detail: 'the gateway failed to answer' }, problemInstance(rawTarget, deps.maxTargetBytes), false);
    };
    try {
      const step = handle(ex);
      if (step instanceof Promise) step.then(finish, fail);
      else finish(step);
    } catch (err) {
      fail(err);
    }
  };
}

function refuse(ex: Exchange, route: MetricRoute, p: Problem, cache: CacheResult = 'none', sub?: string): Answered {
  ex.res.setHeader('x-request-id', ex.reqId);
  const bytes = sendProblem(ex.res, p, problemInstance(ex.rawTarget, ex.deps.maxTargetBytes), ex.isHead);
  return { route, status: problemStatus(p), bytes: ex.isHead ? 0 : bytes, cache, ...(sub === undefined ? {} : { sub }) };
}

function handle(ex: Exchange): Step {
  const { deps, req } = ex;
  if (deps.passThrough.matches(ex.rawTarget)) return passThrough(ex);
  const target = parseRequestTarget(req.method ?? 'GET', ex.rawTarget, deps.maxTargetBytes);
  // The origin's order: target length, route and method are refused before authentication,
  // parameter errors after it, so both servers answer any request identically.
  if (!target.ok && problemStatus(target.problem) !== 400) return refuse(ex, target.route, target.problem);
  const auth = deps.verifier.verify(req.headers.authorization);
  return auth instanceof Promise ? auth.then((verdict) => authorized(ex, target, verdict)) : authorized(ex, target, auth);
}

async function passThrough(ex: Exchange): Promise<Answered> {
  const auth = await ex.deps.verifier.verify(ex.req.headers.authorization);
  if (!auth.ok) return refuse(ex, PASS_THROUGH_ROUTE, auth.problem);
  const sent = await ex.deps.passThrough.forward(ex.req, ex.res, ex.reqId);
  return { route: PASS_THROUGH_ROUTE, ...sent, cache: 'pass', sub: auth.principal.subject };
}

function authorized(ex: Exchange, target: TargetVerdict, auth: AuthVerdict): Step {
  const route = target.ok ? target.target.route : target.route;
  if (!auth.ok) return refuse(ex, route, auth.problem);
  const sub = auth.principal.subject;
  if (!target.ok) return refuse(ex, route, target.problem, 'none', sub);
  const key = cacheKey(target);
  const now = ex.deps.now();
  const found = ex.deps.cache.lookup(key, now);
  if (found.kind !== 'fresh') return fill(ex, route, sub, key, found.kind === 'stale' ? 'stale' : 'miss');
  const sent = deliver(ex.res, found.response, deliveryContext(ex, now, hitStatus(ttlSeconds(found.response, now))));
  return { route, ...sent, cache: 'hit', sub };
}

function deliveryContext(ex: Exchange, now: number, cacheStatus: string): DeliverContext {
  return { isHead: ex.isHead, ifNoneMatch: ex.req.headers['if-none-match'], requestId: ex.reqId, now, cacheStatus };
}

async function fill(ex: Exchange, route: MetricRoute, sub: string, key: CacheKey, fwd: 'miss' | 'stale'): Promise<Answered> {
  const { deps, req } = ex;
  const forwarded = { authorization: req.headers.authorization, accept: req.headers.accept, requestId: ex.reqId };
  const joined = deps.coalescer.join(key, () => deps.filler.fill(key, forwarded));
  if (!joined.leader) deps.metrics.coalesced();
  let outcome = await joined.outcome;
  let collapsed = !joined.leader;
  // RFC 9111 §4: a collapsed request may reuse only a response that could have been stored for
  // it. A private, cookie-setting or otherwise unstorable answer was meant for the request that
  // caused it, so each waiter asks the origin for its own (Varnish's hit-for-miss).
  if (collapsed && !reusableByWaiters(outcome)) {
    outcome = await deps.filler.fill(key, forwarded);
    collapsed = false;
  }
  const cache: CacheResult = collapsed ? 'collapsed' : 'miss';
  if (outcome.kind === 'failed') {
    ex.res.setHeader('cache-status', forwardStatus({ fwd, collapsed, fwdStatus: outcome.fwdStatus, detail: outcome.failure.code }));
    return { ...refuse(ex, route, outcome.failure.problem, cache, sub), originMs: outcome.originMs };
  }
  const cacheStatus = forwardStatus({ fwd, stored: outcome.stored, collapsed, fwdStatus: outcome.response.status, detail: outcome.notStored });
  const sent = deliver(ex.res, outcome.response, deliveryContext(ex, deps.now(), cacheStatus));
  return { route, ...sent, cache, originMs: outcome.originMs, sub };
}

/** A failed fill is shared (every waiter gets the same 502/504); an answer only if it was storable. */
function reusableByWaiters(outcome: FillOutcome): boolean {
  return outcome.kind === 'failed' || outcome.stored || outcome.notStored === 'too-large';
}
