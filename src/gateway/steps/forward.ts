/**
 * The forward step (Varnish's pass): a request the cache does not answer (a `pass` route, or an
 * unsafe method on an `http` route) is streamed to the origin and its answer streamed back. A
 * non-error answer to an unsafe method invalidates what it changed (RFC 9111 §4.4). The cache
 * steps relay a request the same way when what is stored is in a coding it does not accept
 * (cached.ts).
 */
import { performance } from 'node:perf_hooks';
import type { ClientAddress } from '../../shared/client-address.ts';
import type { Logger } from '../../shared/logger.ts';
import type { RequestHead } from '../../shared/message-seam.ts';
import { problem } from '../../shared/problem.ts';
import { hasBody } from '../../shared/request-content.ts';
import { originForm } from '../../shared/request-target.ts';
import { cacheStatus, type CacheOutcome, type Forward } from '../cache-outcome.ts';
import { answerHere, refuse, type Answered, type Exchange } from '../exchange.ts';
import type { GatewayMetrics, MetricRoute } from '../metrics.ts';
import type { Purger, PurgeCause } from '../purge/purger.ts';
import { asHeaderFields } from '../rules/cache-control.ts';
import { endToEndFields } from '../rules/hop-by-hop.ts';
import { invalidatedTargets } from '../rules/invalidation.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import { discard, type OpenedAnswer, type OriginClient, type OriginRequest } from '../upstream/origin-client.ts';
import { relay, relayInterim } from '../upstream/relay.ts';
import { nodePair } from '../listeners/stream-request.ts';
import { respondFields } from '../respond.ts';
import { originServerError } from '../upstream/upstream-failure.ts';

/** What relaying a request to the origin uses. */
export interface RelayDeps {
  readonly origin: OriginClient;
  /** Origin response fields clients never see: the tag field unless `gateway.purge.exposeTagHeader`. */
  readonly hiddenFields: readonly string[];
  readonly metrics: Pick<GatewayMetrics, 'originAnswer'>;
  readonly logger: Logger;
}

/** What the forward step uses. */
export interface ForwardDeps extends RelayDeps {
  /** The one way to forget: RFC 9111 §4.4 invalidation goes through it. */
  readonly purger: Purger;
  /** The cache key of a target the answer invalidates, by the route it falls under (routes/cache-keys.ts). */
  readonly keyOf: (url: string) => CacheKey | undefined;
  /** What `X-Forwarded-For` the origin gets. */
  readonly clients: ClientAddress;
}

const INVALIDATION: PurgeCause = { kind: 'invalidation' };

const BODY_NOT_RECEIVED = problem('request-timeout', 'the request body was not received whole, so the origin could not answer it');

/**
 * Fields the gateway sets itself, or that belong to this connection to the gateway. `Expect:
 * 100-continue` is met here: Node sends the client its 100 before the body (RFC 9110 §10.1.1), and
 * the body then comes to the origin with the request. undici refuses the field, and a request it
 * refuses as it is dispatched leaves one connection of the pool busy for good (undici 8.12:
 * DispatcherBase.dispatch answers false, and the pool waits for a drain that never comes), so 32
 * such requests took every origin connection and every miss after them waited forever.
 */
const SET_BY_GATEWAY = ['host', 'x-request-id', 'x-forwarded-for', 'expect', 'via'];

/**
 * What a proxy in front tells of the client besides its address: the host, scheme, port and path
 * prefix it was asked for (RFC 7239 `Forwarded`, the `X-Forwarded-*` family). Origins behind a
 * proxy build links and redirects from them and no cache key holds them, so a client's own
 * `X-Forwarded-Host: evil.example` would be stored in an answer served to everyone. Passed on
 * only from a trusted proxy, as `X-Forwarded-For` is.
 */
const FORWARDING_CLAIMS = ['forwarded', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'x-forwarded-prefix', 'x-forwarded-scheme'];

/**
 * RFC 9110 §7.6.3: a gateway names itself in `Via` in every request it sends on, after the hops
 * the request came through (so that a loop back to the gateway shows), with the protocol it
 * received (`1.1`, or `2` for HTTP/2).
 */
export function viaFor(req: RequestHead): string {
  const hop = `${req.httpVersionMajor === 2 ? '2' : req.httpVersion} catalog-gateway`;
  const before = req.headers.via;
  return before === undefined || before === '' ? hop : `${before}, ${hop}`;
}

/**
 * The request fields the origin gets: the end-to-end ones less `drop`, the request id,
 * `X-Forwarded-For` ending with the peer the gateway saw (a client's own claim, and the other
 * forwarding fields, are passed on only from a trusted proxy), and `Via`.
 */
export function forwardedHeaders(ex: Exchange, clients: ClientAddress, drop: readonly string[] = []): Record<string, string | string[]> {
  const unsent = clients.trustsPeer(ex.req) ? [...SET_BY_GATEWAY, ...drop] : [...SET_BY_GATEWAY, ...FORWARDING_CLAIMS, ...drop];
  const headers = asHeaderFields(endToEndFields(ex.req.headers, unsent));
  headers['x-request-id'] = ex.reqId;
  headers['x-forwarded-for'] = clients.forwardFor(ex.req);
  headers.via = viaFor(ex.req);
  return headers;
}

/** A request sent on to the origin, whose answer is streamed back as it comes and never stored. */
export interface Relaying {
  readonly request: Omit<OriginRequest, 'onInterim'>;
  /** How the answer is told (Cache-Status, log, metric); the origin's status is added to it. */
  readonly outcome: CacheOutcome;
  /** Whether an origin 5xx is relayed as it is, or becomes a 502 problem (catalog routes). */
  readonly relayServerErrors: boolean;
  /** Runs once the origin's head is in, before it is relayed. */
  readonly beforeRelay?: ((answer: OpenedAnswer) => Promise<void>) | undefined;
}

/**
 * Sends `relaying.request` to the origin and streams the answer back, its 1xx first (RFC 9110
 * §15.2); a failure, or a 5xx on a route that does not relay them, ends the request as a problem.
 */
export async function relayFromOrigin(ex: Exchange, deps: RelayDeps, label: MetricRoute, sub: string | undefined, relaying: Relaying): Promise<Answered> {
  const { request } = relaying;
  const started = performance.now();
  const opened = await deps.origin.open({
    ...request,
    onInterim: (status, headers) => {
      relayInterim(ex.req, ex.res, status, headers);
    },
  });
  if (!opened.ok) {
    deps.metrics.originAnswer('error', (performance.now() - started) / 1000);
    // An origin that gave up on a body the client never finished sending failed because of the client.
    const failure = request.body !== undefined && !ex.req.complete ? BODY_NOT_RECEIVED : opened.failure.problem;
    return refuse(ex, label, failure, { ...relaying.outcome, failure: opened.failure.code }, sub);
  }
  const { answer } = opened;
  if (answer.status >= 500 && !relaying.relayServerErrors) {
    discard(answer.body);
    deps.metrics.originAnswer(answer.status, (performance.now() - started) / 1000);
    const failure = originServerError(answer.status);
    return refuse(ex, label, failure.problem, { ...relaying.outcome, fwdStatus: answer.status, failure: failure.code }, sub);
  }
  await relaying.beforeRelay?.(answer);
  const outcome: CacheOutcome = { ...relaying.outcome, fwdStatus: answer.status };
  const added: string[] = [];
  respondFields(added, 0, undefined, cacheStatus(outcome), ex.reqId);
  const relayed = await relay(answer, nodePair(ex.req, ex.res), ex.method, deps.hiddenFields, added);
  deps.metrics.originAnswer(relayed.brokenBody === undefined ? answer.status : 'error', (performance.now() - started) / 1000);
  if (relayed.brokenBody !== undefined) {
    deps.logger.warn(
      { reqId: ex.reqId, code: relayed.brokenBody, bytes: relayed.bytes },
      'origin body broke off after the headers were relayed; client connection closed',
    );
  }
  return { route: label, status: relayed.status, bytes: relayed.bytes, outcome, sub };
}

/** The methods a forwarding route passes on, as `Allow` names them. */
const FORWARDED = { allow: 'GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE' } as const;

/**
 * RFC 9110 §9.3.8: the final recipient of a TRACE echoes the request it received, and a browser
 * page that can send one reads back the credentials and cookies its own script cannot (cross-site
 * tracing). So the gateway does not forward it, as nginx does not.
 */
const NO_TRACE = problem('method-not-allowed', 'TRACE is not forwarded: its answer would echo the request, credentials included (RFC 9110 §9.3.8)', FORWARDED);

/** RFC 9110 §7.6.2: the request's Max-Forwards, when it is a valid count. */
function maxForwards(ex: Exchange): number | undefined {
  const value = ex.req.headers['max-forwards'];
  return typeof value === 'string' && /^[0-9]{1,9}$/.test(value) ? Number(value) : undefined;
}

export function forward(ex: Exchange, deps: ForwardDeps, label: MetricRoute, sub: string | undefined, fwd: Forward): Promise<Answered> {
  const { req } = ex;
  if (ex.method === 'TRACE') return Promise.resolve(refuse(ex, label, NO_TRACE, undefined, sub));
  // §7.6.2: an OPTIONS whose Max-Forwards has run out is answered here; a count left goes on one less.
  const hops = ex.method === 'OPTIONS' ? maxForwards(ex) : undefined;
  if (hops === 0) return Promise.resolve(answerHere(ex, label, FORWARDED, sub));
  const headers = forwardedHeaders(ex, deps.clients);
  if (hops !== undefined) headers['max-forwards'] = String(hops - 1);
  const target = originForm(ex.rawTarget);
  return relayFromOrigin(ex, deps, label, sub, {
    request: { method: ex.method, target, headers, body: hasBody(req) ? nodePair(req, ex.res).req : undefined },
    outcome: { kind: 'pass', fwd },
    relayServerErrors: true,
    async beforeRelay(answer) {
      const stale = invalidatedTargets(ex.method, answer.status, target, [req.headers.host, deps.origin.authority], answer.headers);
      // Before the answer goes out: the next request through any worker or gateway of the fleet
      // must not find what this one changed.
      const keys = stale.map(deps.keyOf).filter((key) => key !== undefined);
      if (keys.length > 0) await deps.purger.purge({ kind: 'urls', keys }, false, INVALIDATION);
    },
  });
}
