/**
 * One request on its way through the gateway's steps, what the steps share, and how a request
 * ends when a step refuses it. Steps return an `Answered` (or a promise of one); only `deliver`,
 * `relay` and `refuse` write to the response.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessLog, AccessRecord, Peer } from '../shared/access-log.ts';
import type { ClientAddress } from '../shared/client-address.ts';
import type { TokenVerifier } from '../shared/auth.ts';
import type { Logger } from '../shared/logger.ts';
import { problemStatus, sendProblem, type Problem } from '../shared/problem.ts';
import { problemInstance } from '../shared/request-target.ts';
import type { TokenBuckets } from './steps/token-bucket.ts';
import type { Delivered } from './deliver.ts';
import { cacheStatus, REFUSED, type CacheOutcome, type CacheResult } from './cache-outcome.ts';
import type { Negotiator } from './encoding/negotiator.ts';
import type { Flights } from './fill/flight.ts';
import type { GatewayMetrics, MetricRoute } from './metrics.ts';
import type { Purger } from './purge/purger.ts';
import type { ResponseCache } from './store/response-cache.ts';
import type { OriginClient } from './upstream/origin-client.ts';

export interface PipelineDeps {
  readonly maxTargetBytes: number;
  /** Origin response fields clients never see: the tag field unless `gateway.purge.exposeTagHeader`. */
  readonly hiddenFields: readonly string[];
  /** `http.credentialParameters`, parsed. */
  readonly credentialNames: readonly string[];
  /** Who the client is, and what `X-Forwarded-For` the origin gets. */
  readonly clients: ClientAddress;
  /** Per-token and per-address rate limits (`gateway.rateLimit`). */
  readonly tokenLimits: TokenBuckets;
  readonly ipLimits: TokenBuckets;
  /** True once the gateway is shutting down: every answer then closes its connection. */
  readonly isDraining: () => boolean;
  /** Responses not yet finished, so that a drain can tell each to close its connection. */
  readonly unfinished: Set<ServerResponse>;
  readonly verifier: TokenVerifier;
  readonly cache: ResponseCache;
  /** Which representation answers a request's Accept-Encoding, remembered per value. */
  readonly negotiator: Negotiator;
  readonly flights: Flights;
  /**
   * While this process is cut off from the fleet's purges for longer than their bound, the age in
   * ms past which an entry is no longer served as fresh (it is revalidated): a purge it cannot
   * see leaves it stale for at most that long. Undefined otherwise.
   */
  readonly partitionMaxAgeMs: () => number | undefined;
  /** The one way to forget: RFC 9111 §4.4 invalidation goes through it. */
  readonly purger: Purger;
  readonly origin: OriginClient;
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
  /** The content coding of the stored answer's representation sent (`identity` for none). */
  readonly encoding: string | undefined;
}

export interface Exchange {
  readonly deps: PipelineDeps;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly reqId: string;
  readonly method: string;
  readonly rawTarget: string;
  readonly isHead: boolean;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** Read on arrival: once the answer is sent, the request may have let go of its socket. */
  readonly peer: Peer;
}

/** How one request was answered: what the log and the metrics record. */
export interface Answered extends Delivered {
  readonly route: MetricRoute;
  readonly outcome: CacheOutcome;
  readonly originMs?: number | undefined;
  readonly sub?: string | undefined;
}

/** A step answers at once (hits, refusals) or, when it has to wait (signature, origin), later. */
export type Step = Answered | Promise<Answered>;

/** Ends the request with a problem (RFC 9457); `outcome` says how far it got, when it got to the cache. */
export function refuse(ex: Exchange, route: MetricRoute, p: Problem, outcome: CacheOutcome = REFUSED, sub?: string): Answered {
  ex.res.setHeader('x-request-id', ex.reqId);
  const status = cacheStatus(outcome);
  if (status !== undefined) ex.res.setHeader('cache-status', status);
  const bytes = sendProblem(ex.res, p, problemInstance(ex.rawTarget, ex.deps.maxTargetBytes, ex.deps.credentialNames), ex.isHead);
  return { route, status: problemStatus(p), bytes: ex.isHead ? 0 : bytes, outcome, sub };
}
