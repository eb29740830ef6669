/**
 * One request on its way through the gateway's steps, and how a request ends when a step refuses
 * it. Steps return an `Answered` (or a promise of one); only `deliver`, `relay`, `refuse` and
 * `answerHere` write to the response.
 */
import type { AccessRecord, Peer } from '../shared/access-log.ts';
import type { CredentialNames } from '../shared/credentials.ts';
import type { Reply, RequestHead } from '../shared/message-seam.ts';
import { problemStatus, sendProblem, type Problem } from '../shared/problem.ts';
import { problemInstance } from '../shared/request-target.ts';
import type { Delivered } from './deliver.ts';
import { respondFields } from './respond.ts';
import { sendWhole } from './listeners/whole-answer.ts';
import { cacheStatus, REFUSED, type CacheOutcome, type CacheResult } from './cache-outcome.ts';
import type { MetricRoute } from './metrics.ts';
import type { CacheKey } from './store/memory/response-cache.ts';
import type { TargetFacts } from './target-memo.ts';

/**
 * `http.maxTargetBytes` and `http.credentialParameters` (parsed): how long a request target may
 * be, and which of its query parameters are credentials, refused at the edge and redacted
 * wherever the target is named.
 */
export interface TargetRules {
  readonly maxBytes: number;
  readonly credentialNames: CredentialNames;
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
  /** The rules the request arrived under: every step that refuses names the target by them. */
  readonly targetRules: TargetRules;
  /** What the request path reads of the request, and where its answer goes, over either protocol (../shared/message-seam.ts). */
  readonly req: RequestHead;
  readonly res: Reply;
  readonly reqId: string;
  readonly method: string;
  readonly rawTarget: string;
  /** What the edge knows of the raw target (target-memo.ts). */
  readonly facts: TargetFacts;
  readonly isHead: boolean;
  /** `performance.now()` when the request arrived. */
  readonly started: number;
  /** Read on arrival: once the answer is sent, the request may have let go of its socket. */
  readonly peer: Peer;

  // What the states learn on the way (pipeline.ts), in the order they learn it.
  /** The metric and log route: a catalog route's template, another route's prefix. */
  label: MetricRoute;
  /** Where an authenticated request goes: the cache steps, or the origin. */
  then: 'lookup' | 'pass';
  /** A refusal the route defers until the request is authenticated (a catalog parameter's 400). */
  refusal: Problem | undefined;
  /** On the way to the cache: its key, and the target a fill asks the origin for. */
  key: CacheKey | undefined;
  originTarget: string;
  /** The token's subject, once authenticated; undefined on a route that asks for no token. */
  sub: string | undefined;
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
  const added: string[] = [];
  respondFields(added, 0, undefined, cacheStatus(outcome), ex.reqId);
  const bytes = sendProblem(ex.res, p, problemInstance(ex.rawTarget, ex.targetRules.maxBytes, ex.targetRules.credentialNames), ex.isHead, added);
  return { route, status: problemStatus(p), bytes: ex.isHead ? 0 : bytes, outcome, sub };
}

/**
 * Ends the request with the gateway's own empty 200 and `fields`, as the final recipient of a
 * request it does not forward (OPTIONS at the end of its Max-Forwards, steps/forward.ts).
 */
export function answerHere(ex: Exchange, route: MetricRoute, fields: Readonly<Record<string, string>>, sub: string | undefined): Answered {
  const head = [...Object.entries(fields).flat(), 'content-length', '0'];
  respondFields(head, head.length, undefined, undefined, ex.reqId);
  sendWhole(ex.res, 200, head, undefined);
  return { route, status: 200, bytes: 0, outcome: REFUSED, sub };
}
