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
import type { TokenVerifier } from '../shared/auth.ts';
import type { Logger } from '../shared/logger.ts';
import { problemStatus, sendProblem, type Problem } from '../shared/problem.ts';
import { parseRequestTarget, problemInstance } from '../shared/request-target.ts';
import { ttlSeconds } from './cache-policy.ts';
import { forwardStatus, hitStatus } from './cache-status.ts';
import type { Coalescer } from './coalescer.ts';
import { deliver, type Delivered } from './deliver.ts';
import type { FillOutcome, Filler } from './fill.ts';
import { PASS_THROUGH_ROUTE, type CacheResult, type GatewayMetrics, type MetricRoute } from './metrics.ts';
import type { PassThrough } from './pass-through.ts';
import { cacheKey, type ResponseCache } from './response-cache.ts';

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

export function createPipeline(deps: PipelineDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    const reqId = requestId(req.headers['x-request-id']);
    handle(deps, req, res, reqId).then(
      (answered) => {
        const durationMs = performance.now() - started;
        const method = req.method ?? 'GET';
        deps.metrics.request(answered.route, method, answered.status, answered.cache, durationMs / 1000);
        deps.accessLog({ reqId, method, path: req.url ?? '/', status: answered.status, bytes: answered.bytes, durationMs, cache: answered.cache, originMs: answered.originMs, sub: answered.sub });
      },
      (err: unknown) => {
        deps.logger.error({ reqId, err }, 'request failed');
        if (res.headersSent) res.destroy();
        else sendProblem(res, { kind: 'internal-error', detail: 'the gateway failed to answer' }, problemInstance(req.url ?? '/', deps.maxTargetBytes), false);
      },
    );
  };
}

async function handle(deps: PipelineDeps, req: IncomingMessage, res: ServerResponse, reqId: string): Promise<Answered> {
  const method = req.method ?? 'GET';
  const rawTarget = req.url ?? '/';
  const isHead = method === 'HEAD';
  const refuse = (route: MetricRoute, p: Problem, cache: CacheResult = 'none', sub?: string): Answered => {
    res.setHeader('x-request-id', reqId);
    const bytes = sendProblem(res, p, problemInstance(rawTarget, deps.maxTargetBytes), isHead);
    return { route, status: problemStatus(p), bytes: isHead ? 0 : bytes, cache, ...(sub === undefined ? {} : { sub }) };
  };

  if (deps.passThrough.matches(rawTarget)) {
    const auth = await deps.verifier.verify(req.headers.authorization);
    if (!auth.ok) return refuse(PASS_THROUGH_ROUTE, auth.problem);
    const sent = await deps.passThrough.forward(req, res, reqId);
    return { route: PASS_THROUGH_ROUTE, ...sent, cache: 'pass', sub: auth.principal.subject };
  }

  const target = parseRequestTarget(method, rawTarget, deps.maxTargetBytes);
  // The origin's order: target length, route and method are refused before authentication,
  // parameter errors after it, so both servers answer any request identically.
  if (!target.ok && problemStatus(target.problem) !== 400) return refuse(target.route, target.problem);
  const route = target.ok ? target.target.route : target.route;
  const auth = await deps.verifier.verify(req.headers.authorization);
  if (!auth.ok) return refuse(route, auth.problem);
  const sub = auth.principal.subject;
  if (!target.ok) return refuse(route, target.problem, 'none', sub);

  const key = cacheKey(target);
  const context = { isHead, ifNoneMatch: req.headers['if-none-match'], requestId: reqId };
  const found = deps.cache.lookup(key, deps.now());
  if (found.kind === 'fresh') {
    const now = deps.now();
    const sent = deliver(res, found.response, { ...context, now, cacheStatus: hitStatus(ttlSeconds(found.response.freshness, now)) });
    return { route, ...sent, cache: 'hit', sub };
  }

  const forwarded = { authorization: req.headers.authorization, accept: req.headers.accept, requestId: reqId };
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
  const fwd = found.kind === 'stale' ? 'stale' : 'miss';
  if (outcome.kind === 'failed') {
    res.setHeader('cache-status', forwardStatus({ fwd, collapsed, fwdStatus: outcome.fwdStatus, detail: outcome.failure.code }));
    return { ...refuse(route, outcome.failure.problem, cache, sub), originMs: outcome.originMs };
  }
  const cacheStatus = forwardStatus({ fwd, stored: outcome.stored, collapsed, fwdStatus: outcome.response.status, detail: outcome.notStored });
  const sent = deliver(res, outcome.response, { ...context, now: deps.now(), cacheStatus });
  return { route, ...sent, cache, originMs: outcome.originMs, sub };
}

/** A failed fill is shared (every waiter gets the same 502/504); an answer only if it was storable. */
function reusableByWaiters(outcome: FillOutcome): boolean {
  return outcome.kind === 'failed' || outcome.stored || outcome.notStored === 'too-large';
}
