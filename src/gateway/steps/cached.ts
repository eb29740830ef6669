/**
 * The cache steps of a GET or HEAD on a cached route (Varnish's hash → hit/miss → fetch →
 * deliver): look up the variant the request selects, let the rules decide how it may be reused,
 * then deliver it, deliver it stale while one background refresh runs, or fill from the origin
 * (joining the fill in flight for the key) and deliver what came back.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ClientAddress } from '../../shared/client-address.ts';
import { accepts } from '../../shared/encoding/negotiate.ts';
import type { CacheOutcome, CacheStatusValues, Forward } from '../cache-outcome.ts';
import { deliver } from '../deliver.ts';
import { refuse, type Answered, type Exchange, type Step } from '../exchange.ts';
import type { Negotiator } from '../encoding/negotiator.ts';
import type { FillOutcome, FillRequest } from '../fill/fetch.ts';
import type { Flights } from '../fill/flight.ts';
import type { GatewayMetrics, MetricRoute } from '../metrics.ts';
import { single, type HeaderFields } from '../rules/cache-control.ts';
import { isFresh, ttlSeconds } from '../rules/freshness.ts';
import { NO_DIRECTIVES, requestDirectives, reuse, type RequestDirectives } from '../rules/reuse.ts';
import type { RangeRequest } from '../rules/ranges.ts';
import { CLIENT_CONDITIONS, type Conditions } from '../rules/validation.ts';
import type { Route } from '../routes/route-table.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import type { Representation, StoredResponse } from '../store/stored-response.ts';
import type { Tiers } from '../store/tiers.ts';
import type { OriginRequest } from '../upstream/origin-client.ts';
import { relayInterim } from '../upstream/relay.ts';
import { relayFromOrigin, type RelayDeps } from './forward.ts';
import { problem } from '../../shared/problem.ts';

/** What the cache steps use; the relay's parts for a request that cannot take what is stored. */
export interface CacheDeps extends RelayDeps {
  readonly tiers: Tiers;
  /** Which representation answers a request's Accept-Encoding, remembered per value. */
  readonly negotiator: Negotiator;
  /** The `Cache-Status` values it sends, plain hits' kept. */
  readonly statusValues: CacheStatusValues;
  readonly flights: Flights;
  /**
   * While this process is cut off from the fleet's purges for longer than their bound, the age in
   * ms past which an entry is no longer served as fresh (it is revalidated): a purge it cannot
   * see leaves it stale for at most that long. Undefined otherwise.
   */
  readonly partitionMaxAgeMs: () => number | undefined;
  /** What `X-Forwarded-For` a fill sends the origin. */
  readonly clients: ClientAddress;
  readonly metrics: Pick<GatewayMetrics, 'originAnswer'>;
  readonly now: () => number;
}

/** What the cache steps need to know about the request, made by the route. */
export interface Cacheable {
  readonly key: CacheKey;
  readonly label: MetricRoute;
  readonly route: Route;
  /** The target a fill asks the origin for. */
  readonly originTarget: string;
  /** The request fields a fill sends; made only when the origin is asked. */
  readonly originHeaders: (ex: Exchange, clients: ClientAddress) => OriginRequest['headers'];
  /** Whether an origin 5xx is relayed (http routes) or becomes a 502 problem (catalog). */
  readonly relayServerErrors: boolean;
  /** Whether answers are compressed for clients that accept it (`gateway.compression`). */
  readonly compress: boolean;
  readonly sub: string | undefined;
}

const NOT_CACHED = problem('not-cached', 'the request asked for a stored response only (only-if-cached), and none may answer it');

export function serveCached(ex: Exchange, deps: CacheDeps, c: Cacheable): Step {
  const { req } = ex;
  const directives = bounded(c.route.honoursRequestCacheControl ? requestDirectives(req.headers) : NO_DIRECTIVES, deps.partitionMaxAgeMs());
  const now = deps.now();
  const found = deps.tiers.lookup(c.key, req.headers);
  if (found.kind !== 'found') {
    if (directives.onlyIfCached) return refuse(ex, c.label, NOT_CACHED, undefined, c.sub);
    return fill(ex, deps, c, directives, undefined, found.kind === 'vary-miss' ? 'vary-miss' : 'miss');
  }
  const stored = found.response;
  const use = reuse(stored, directives, now);
  if (use === 'fresh' || use === 'stale-accepted') {
    // RFC 9211 §2.8: a hit in the host's disk tier rather than this process's memory.
    const outcome: CacheOutcome =
      use === 'stale-accepted'
        ? { kind: 'stale', ttl: ttlSeconds(stored, now), detail: 'max-stale' }
        : found.fromDisk === true
          ? { kind: 'hit', ttl: ttlSeconds(stored, now), detail: 'disk' }
          : { kind: 'hit', ttl: ttlSeconds(stored, now) };
    try {
      return sent(ex, deps, c, stored, outcome);
    } finally {
      // Sent whole, a hit's bytes are read until its answer is written or closes: lent once the
      // send returned, so that one written whole already gives them back at once.
      deps.tiers.lend(found, ex.res);
    }
  }
  // Otherwise they may be read at any time later.
  deps.tiers.lend(found, undefined);
  switch (use) {
    case 'stale-while-revalidate':
      deps.flights.refresh(fillRequest(ex, deps, c, NO_DIRECTIVES), stored, ex.reqId);
      return sent(ex, deps, c, stored, { kind: 'stale', ttl: ttlSeconds(stored, now), detail: 'stale-while-revalidate' });
    case 'validate':
      // §5.2.1.7: only-if-cached and nothing usable without the origin.
      if (directives.onlyIfCached) return refuse(ex, c.label, NOT_CACHED, undefined, c.sub);
      return fill(ex, deps, c, directives, stored, isFresh(stored, now) && !stored.noCache ? 'request' : 'stale');
  }
}

/** Cut off from the fleet's purges, the gateway asks of its entries what a client's `max-age` would (§5.2.1.1). */
function bounded(directives: RequestDirectives, maxAgeMs: number | undefined): RequestDirectives {
  if (maxAgeMs === undefined) return directives;
  const maxAge = Math.min(directives.maxAge ?? Number.POSITIVE_INFINITY, maxAgeMs / 1000);
  return { ...directives, maxAge };
}

const UNCONDITIONAL: Conditions = { ifMatch: undefined, ifUnmodifiedSince: undefined, ifNoneMatch: undefined, ifModifiedSince: undefined };

function conditionsOf(headers: IncomingHttpHeaders): Conditions {
  const { 'if-match': ifMatch, 'if-unmodified-since': ifUnmodifiedSince, 'if-none-match': ifNoneMatch, 'if-modified-since': ifModifiedSince } = headers;
  if (ifMatch === undefined && ifUnmodifiedSince === undefined && ifNoneMatch === undefined && ifModifiedSince === undefined) return UNCONDITIONAL;
  return { ifMatch, ifUnmodifiedSince, ifNoneMatch, ifModifiedSince };
}

/** RFC 9110 §14.2: only a GET's Range is answered; HEAD ignores it. */
function rangeOf(ex: Exchange): RangeRequest | undefined {
  const range = single(ex.req.headers.range);
  return range === undefined || ex.isHead ? undefined : { range, ifRange: single(ex.req.headers['if-range']) };
}

/**
 * The representation this request gets (RFC 9110 §12.5.3), made from the kept one the first time
 * a coding is asked for. A body the origin labelled with a coding it is not in cannot be decoded;
 * it is sent as it came, as a proxy that never decodes would.
 */
function representationFor(ex: Exchange, deps: CacheDeps, c: Cacheable, response: StoredResponse, outcome: CacheOutcome): Representation {
  if (response.offered.length === 0) return response.kept;
  const coding = deps.negotiator.choose(single(ex.req.headers['accept-encoding']), response.offered);
  try {
    return deps.tiers.represent(c.key, response, coding, askedBefore(outcome));
  } catch (err) {
    deps.logger.warn({ reqId: ex.reqId, err, coding: response.kept.coding }, 'stored body does not decode; sent as stored');
    return response.kept;
  }
}

/**
 * Whether the stored answer was asked for before this request: not when this request's own fill
 * (from the origin, or from the fleet's shared tier) brought it, nor when it has just come up from
 * the disk tier (its first ask in memory: a representation kept for it would double what a
 * promotion costs, and a memory too small for the disk hits' working set evicts it unasked); a
 * request that waited for another's fill is a second ask.
 */
function askedBefore(outcome: CacheOutcome): boolean {
  if (outcome.collapsed === true) return true;
  return outcome.kind !== 'miss' && outcome.detail !== 'shared' && outcome.detail !== 'disk';
}

/**
 * Whether `response` can be sent only in a coding this request does not accept: it was kept as the
 * origin encoded it, with `no-transform` (RFC 9110 §7.7) or in a coding the gateway cannot decode.
 */
function refusesCoding(ex: Exchange, response: StoredResponse): boolean {
  return response.offered.length === 0 && response.kept.coding !== 'identity' && !accepts(single(ex.req.headers['accept-encoding']), response.kept.coding);
}

/** What a relay for the client passes on of its own request: it is answered by the origin, not from what is stored. */
const CLIENT_OWN = ['accept-encoding', ...CLIENT_CONDITIONS];

/**
 * A request that cannot take what is stored is relayed to the origin as the client asked, with its
 * own Accept-Encoding, conditions and range, and the answer streamed back unstored, as Varnish
 * passes a request (docs/caching.md, "Compression"). `fwd`: why the cache went to the origin for
 * this request. `only-if-cached` gets its 504 instead (§5.2.1.7).
 */
function relayForClient(ex: Exchange, deps: CacheDeps, c: Cacheable, fwd: Forward): Step {
  if (c.route.honoursRequestCacheControl && requestDirectives(ex.req.headers).onlyIfCached) return refuse(ex, c.label, NOT_CACHED, undefined, c.sub);
  const headers = Object.fromEntries(Object.entries(c.originHeaders(ex, deps.clients)).filter(([name]) => !CLIENT_OWN.includes(name)));
  for (const name of CLIENT_OWN) {
    const value = ex.req.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  const request = { method: ex.method, target: c.originTarget, headers };
  return relayFromOrigin(ex, deps, c.label, c.sub, {
    request,
    outcome: { kind: 'miss', fwd, detail: 'not-acceptable' },
    relayServerErrors: c.relayServerErrors,
  });
}

function sent(ex: Exchange, deps: CacheDeps, c: Cacheable, response: StoredResponse, outcome: CacheOutcome, originMs?: number): Step {
  if (refusesCoding(ex, response)) return relayForClient(ex, deps, c, outcome.fwd ?? 'vary-miss');
  const { req } = ex;
  const delivered = deliver(ex.res, response, representationFor(ex, deps, c, response, outcome), {
    isHead: ex.isHead,
    conditions: conditionsOf(req.headers),
    range: rangeOf(ex),
    requestId: ex.reqId,
    now: deps.now(),
    cacheStatus: deps.statusValues.of(outcome) ?? '',
  });
  if ('kind' in delivered) return { ...refuse(ex, c.label, delivered, outcome, c.sub), originMs };
  return { route: c.label, status: delivered.status, bytes: delivered.bytes, encoding: delivered.encoding, outcome, sub: c.sub, originMs };
}

function fillRequest(ex: Exchange, deps: CacheDeps, c: Cacheable, directives: RequestDirectives): FillRequest {
  const headers = c.originHeaders(ex, deps.clients);
  return {
    key: c.key,
    origin: { method: 'GET', target: c.originTarget, headers },
    requestHeaders: ex.req.headers,
    // §3.5 asks of the request the client made: one that names Authorization in Connection still
    // carried it here, though the origin does not see it, and the answer made without it must not
    // reach the route's other users.
    authorized: headers.authorization !== undefined || ex.req.headers.authorization !== undefined,
    directives,
    policy: c.route.policy,
    relayServerErrors: c.relayServerErrors,
    compress: c.compress,
  };
}

async function fill(
  ex: Exchange,
  deps: CacheDeps,
  c: Cacheable,
  directives: RequestDirectives,
  stored: StoredResponse | undefined,
  fwd: Forward,
): Promise<Answered> {
  const request = fillRequest(ex, deps, c, directives);
  // RFC 9110 §15.2: the 1xx of a fill this request leads reach its client (a background refresh has none).
  const origin = {
    ...request.origin,
    onInterim: (status: number, headers: HeaderFields) => {
      relayInterim(ex.req, ex.res, status, headers);
    },
  };
  const { outcome, collapsed } = await deps.flights.answer({ ...request, origin }, stored);
  return answerFill(ex, deps, c, outcome, fwd, collapsed);
}

function answerFill(ex: Exchange, deps: CacheDeps, c: Cacheable, outcome: FillOutcome, fwd: Forward, collapsed: boolean): Step {
  switch (outcome.kind) {
    case 'failed':
      return {
        ...refuse(ex, c.label, outcome.failure.problem, { kind: 'miss', fwd, collapsed, fwdStatus: outcome.fwdStatus, failure: outcome.failure.code }, c.sub),
        originMs: outcome.originMs,
      };
    case 'stale': {
      const ttl = ttlSeconds(outcome.response, deps.now());
      return sent(
        ex,
        deps,
        c,
        outcome.response,
        { kind: 'stale', fwd, collapsed, fwdStatus: outcome.fwdStatus, ttl, detail: outcome.reason },
        outcome.originMs,
      );
    }
    case 'shared':
      // RFC 9211 §2.8: a hit in the fleet's shared tier, or the host's disk tier, rather than this process's memory.
      return sent(ex, deps, c, outcome.response, {
        kind: 'hit',
        collapsed,
        ttl: ttlSeconds(outcome.response, deps.now()),
        detail: outcome.tier === 'disk' ? 'disk' : 'shared',
      });
    case 'revalidated': {
      const response = collapsed ? outcome.shared : outcome.response;
      return sent(
        ex,
        deps,
        c,
        response,
        { kind: 'revalidated', fwd, stored: outcome.stored, collapsed, fwdStatus: 304, ttl: ttlSeconds(response, deps.now()) },
        outcome.originMs,
      );
    }
    case 'response':
      return sent(
        ex,
        deps,
        c,
        collapsed ? outcome.shared : outcome.response,
        { kind: 'miss', fwd, stored: outcome.stored, collapsed, fwdStatus: outcome.response.status, detail: outcome.notStored },
        outcome.originMs,
      );
  }
}
