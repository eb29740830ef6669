/**
 * The cache steps of a GET or HEAD on a cached route (Varnish's hash → hit/miss → fetch →
 * deliver): look up the variant the request selects, let the rules decide how it may be reused,
 * then deliver it, deliver it stale while one background refresh runs, or fill from the origin
 * (joining the fill in flight for the key) and deliver what came back.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { HeaderFields } from '../rules/cache-control.ts';
import { forwardStatus, hitStatus, type Forward } from '../cache-status.ts';
import { deliver } from '../deliver.ts';
import { refuse, type Answered, type Exchange, type Step } from '../exchange.ts';
import type { FillOutcome, FillRequest } from '../fill/fill.ts';
import type { MetricRoute } from '../metrics.ts';
import { isFresh, ttlSeconds } from '../rules/freshness.ts';
import { NO_DIRECTIVES, requestDirectives, reuse, type RequestDirectives } from '../rules/reuse.ts';
import type { Conditions } from '../rules/validation.ts';
import { varyMatches } from '../rules/vary.ts';
import type { Route } from '../routes/route-table.ts';
import type { CacheKey } from '../store/response-cache.ts';
import type { StoredResponse } from '../store/stored-response.ts';
import type { OriginRequest } from '../upstream/origin-client.ts';
import { problem } from '../../shared/problem.ts';

/** What the cache steps need to know about the request, made by the route. */
export interface Cacheable {
  readonly key: CacheKey;
  readonly label: MetricRoute;
  readonly route: Route;
  /** The target a fill asks the origin for. */
  readonly originTarget: string;
  /** The request fields a fill sends; made only when the origin is asked. */
  readonly originHeaders: (ex: Exchange) => OriginRequest['headers'];
  /** Whether an origin 5xx is relayed (http routes) or becomes a 502 problem (catalog). */
  readonly relayServerErrors: boolean;
  readonly sub: string | undefined;
}

const NOT_CACHED = problem('not-cached', 'the request asked for a stored response only (only-if-cached), and none may answer it');

export function serveCached(ex: Exchange, c: Cacheable): Step {
  const { deps, req } = ex;
  const directives = c.route.honoursRequestCacheControl ? requestDirectives(req.headers) : NO_DIRECTIVES;
  const now = deps.now();
  const found = deps.cache.lookup(c.key, req.headers);
  if (found.kind !== 'found') {
    if (directives.onlyIfCached) return refuse(ex, c.label, NOT_CACHED, 'none', c.sub);
    return fill(ex, c, directives, undefined, found.kind === 'vary-miss' ? 'vary-miss' : 'miss');
  }
  const stored = found.response;
  switch (reuse(stored, directives, now)) {
    case 'fresh':
      return sent(ex, c, stored, hitStatus(ttlSeconds(stored, now)), 'hit');
    case 'stale-accepted':
      deps.metrics.staleServed('max-stale');
      return sent(ex, c, stored, hitStatus(ttlSeconds(stored, now), 'max-stale'), 'stale');
    case 'stale-while-revalidate':
      refreshInBackground(ex, c, stored);
      deps.metrics.staleServed('stale-while-revalidate');
      return sent(ex, c, stored, hitStatus(ttlSeconds(stored, now), 'stale-while-revalidate'), 'stale');
    case 'validate':
      // §5.2.1.7: only-if-cached and nothing usable without the origin.
      if (directives.onlyIfCached) return refuse(ex, c.label, NOT_CACHED, 'none', c.sub);
      return fill(ex, c, directives, stored, isFresh(stored, now) && !stored.noCache ? 'request' : 'stale');
  }
}

const UNCONDITIONAL: Conditions = { ifNoneMatch: undefined, ifModifiedSince: undefined };

function conditionsOf(headers: IncomingHttpHeaders): Conditions {
  const ifNoneMatch = headers['if-none-match'];
  const ifModifiedSince = headers['if-modified-since'];
  return ifNoneMatch === undefined && ifModifiedSince === undefined ? UNCONDITIONAL : { ifNoneMatch, ifModifiedSince };
}

function sent(ex: Exchange, c: Cacheable, response: StoredResponse, cacheStatus: string, cache: Answered['cache'], originMs?: number): Answered {
  const { req } = ex;
  const delivered = deliver(ex.res, response, {
    isHead: ex.isHead,
    conditions: conditionsOf(req.headers),
    requestId: ex.reqId,
    now: ex.deps.now(),
    cacheStatus,
  });
  return { route: c.label, status: delivered.status, bytes: delivered.bytes, cache, sub: c.sub, originMs };
}

function fillRequest(ex: Exchange, c: Cacheable, directives: RequestDirectives): FillRequest {
  const headers = c.originHeaders(ex);
  return {
    key: c.key,
    origin: { method: 'GET', target: c.originTarget, headers },
    requestHeaders: ex.req.headers,
    authorized: headers.authorization !== undefined,
    directives,
    policy: c.route.policy,
    relayServerErrors: c.relayServerErrors,
  };
}

/** RFC 5861 §3: one refresh per key, shared with any fill already in flight; nobody waits for it. */
function refreshInBackground(ex: Exchange, c: Cacheable, stored: StoredResponse): void {
  const { deps } = ex;
  const request = fillRequest(ex, c, NO_DIRECTIVES);
  const joined = deps.coalescer.join(c.key, (announce) => deps.filler.fill(request, stored, announce));
  if (joined.leader) {
    joined.flight.outcome.catch((err: unknown) => {
      deps.logger.error({ reqId: ex.reqId, err }, 'background refresh failed');
    });
  }
}

/** Whether a waiter may be handed another request's outcome: shared failures, or what its request selects (§4.1). */
function reusableBy(outcome: FillOutcome, request: HeaderFields): boolean {
  if (outcome.kind === 'failed') return true;
  // Storable answers the store did not keep (too large, or overtaken by a purge that came after
  // these waiters asked) are theirs too; an answer the rules kept from storage is not.
  if (outcome.kind === 'response' && !outcome.stored && outcome.notStored !== 'too-large' && outcome.notStored !== 'purged') return false;
  const { vary, selecting } = outcome.response;
  return vary.length === 0 || varyMatches(vary, selecting, request);
}

async function fill(ex: Exchange, c: Cacheable, directives: RequestDirectives, stored: StoredResponse | undefined, fwd: Forward): Promise<Answered> {
  const { deps } = ex;
  const request = fillRequest(ex, c, directives);
  const joined = deps.coalescer.join(c.key, (announce) => deps.filler.fill(request, stored, announce));
  let outcome: FillOutcome | undefined;
  let collapsed = false;
  if (joined.leader) {
    outcome = await joined.flight.outcome;
  } else {
    deps.metrics.coalesced();
    // RFC 9111 §4: a collapsed request may reuse only what could have been stored for it. An
    // answer the leader announces as not shareable releases its waiters at once, to ask on
    // their own (Varnish's hit-for-miss).
    if (await joined.flight.shareable) {
      const shared = await joined.flight.outcome;
      if (reusableBy(shared, ex.req.headers)) {
        outcome = shared;
        collapsed = true;
      }
    }
  }
  outcome ??= await deps.filler.fill(request, stored);
  return answerFill(ex, c, outcome, fwd, collapsed);
}

function answerFill(ex: Exchange, c: Cacheable, outcome: FillOutcome, fwd: Forward, collapsed: boolean): Answered {
  const { deps } = ex;
  switch (outcome.kind) {
    case 'failed':
      ex.res.setHeader('cache-status', forwardStatus({ fwd, collapsed, fwdStatus: outcome.fwdStatus, detail: outcome.failure.code }));
      return { ...refuse(ex, c.label, outcome.failure.problem, collapsed ? 'collapsed' : 'miss', c.sub), originMs: outcome.originMs };
    case 'stale': {
      deps.metrics.staleServed('stale-if-error');
      const ttl = ttlSeconds(outcome.response, deps.now());
      const status = forwardStatus({ fwd, collapsed, fwdStatus: outcome.fwdStatus, ttl, detail: 'stale-if-error' });
      return sent(ex, c, outcome.response, status, 'stale', outcome.originMs);
    }
    case 'shared': {
      // RFC 9211 §2.8: a hit in the fleet's shared tier rather than this process's own.
      const status = hitStatus(ttlSeconds(outcome.response, deps.now()), 'shared');
      return sent(ex, c, outcome.response, status, collapsed ? 'collapsed' : 'hit');
    }
    case 'revalidated': {
      const status = forwardStatus({ fwd, stored: outcome.stored, collapsed, fwdStatus: 304, ttl: ttlSeconds(outcome.response, deps.now()) });
      return sent(ex, c, outcome.response, status, 'revalidated', outcome.originMs);
    }
    case 'response': {
      const status = forwardStatus({ fwd, stored: outcome.stored, collapsed, fwdStatus: outcome.response.status, detail: outcome.notStored });
      return sent(ex, c, collapsed ? outcome.shared : outcome.response, status, collapsed ? 'collapsed' : 'miss', outcome.originMs);
    }
  }
}
