/**
 * The fetch (Varnish's backend fetch): one origin exchange for a key, decided by the rules; the
 * flight keeps what the rules let be stored (flight.ts). It is the flight's leader that runs it (flight.ts), and it tells the flight, as
 * soon as the origin's header fields are in, who else the answer may serve (sharing.ts). Given a stored response that needs validation it asks conditionally with its
 * validators, and a 304 freshens it without a body (RFC 9111 §4.3.3, §4.3.4). When the origin
 * cannot be reached, times out or answers 5xx, a stored response within its stale-if-error
 * window answers instead (RFC 5861 §4). A failed fill stores nothing.
 *
 * Compression happens here, once per answer: a fill asks the origin with the gateway's own
 * `Accept-Encoding` (never the client's, so the answer depends on no client's and the cache key
 * does not fragment by it), and an answer worth it is compressed before it is kept
 * (../encoding/plan.ts); the codings clients get are chosen at delivery.
 */
import { performance } from 'node:perf_hooks';
import { codingOf, type Coding } from '../../shared/encoding/negotiate.ts';
import type { CompressionPolicy } from '../../shared/encoding/policy.ts';
import { problem, problemStatus } from '../../shared/problem.ts';
import { encodingPlan } from '../encoding/plan.ts';
import { asHeaderFields, single, type HeaderFields } from '../rules/cache-control.ts';
import { initialAgeMs } from '../rules/freshness.ts';
import { dated } from '../rules/message.ts';
import { isError, mayServeDisconnected, mayServeOnError, type RequestDirectives, type ReuseFacts } from '../rules/reuse.ts';
import {
  retiresStored,
  storageVerdict,
  storedFields,
  type NotStoredReason,
  type ResponseHead,
  type StoragePolicy,
  type StorageRequest,
  type StorageVerdict,
} from '../rules/storage.ts';
import { freshens, validationHeaders } from '../rules/validation.ts';
import { selectingValues, variesOnSent } from '../rules/vary.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import { fieldsAfter, type EntryMaker, type StoredResponse } from '../store/stored-response.ts';
import type { NotKept } from '../store/tier.ts';
import { parseTags } from '../store/tag-index.ts';
import type { OriginClient, OriginRequest } from '../upstream/origin-client.ts';
import { originServerError, type UpstreamFailure } from '../upstream/upstream-failure.ts';
import { ANY, NONE, selectedBy, type Sharing } from './sharing.ts';

export interface FillRequest {
  readonly key: CacheKey;
  /** The GET sent to the origin, without the client's own conditional fields. */
  readonly origin: OriginRequest;
  /** The client's request fields: a response's secondary key is taken from them (§4.1). */
  readonly requestHeaders: HeaderFields;
  readonly authorized: boolean;
  /** The request's cache directives (§5.2.1): no-store here, and whether a shared entry may answer. */
  readonly directives: RequestDirectives;
  readonly policy: StoragePolicy;
  /** Whether an origin 5xx is relayed as it is (http routes) or becomes a 502 problem (catalog). */
  readonly relayServerErrors: boolean;
  /** Whether the route compresses answers (`gateway.compression`). */
  readonly compress: boolean;
}

export type FillOutcome =
  | {
      readonly kind: 'response';
      /** What the request that caused the fill gets: the answer whole. */
      readonly response: StoredResponse;
      /**
       * What anyone else may get (collapsed waiters): the answer less the fields qualified
       * `private`/`no-cache` name (RFC 9111 §5.2.2.4, §5.2.2.7); the same object when none are named.
       */
      readonly shared: StoredResponse;
      /**
       * Whether it was stored: the fetch says whether the rules let it be, the flight, which keeps
       * it, whether the tiers did.
       */
      readonly stored: boolean;
      /** Why it was not stored: a rule's reason, or the tiers' when the rules allowed it. */
      readonly notStored: NotStoredReason | NotKept | undefined;
      /**
       * The stored response it validated is to be dropped: a newer answer that may not be stored
       * replaces it (§4.3.3). The flight drops it, here and everywhere else (flight.ts).
       */
      readonly retired: boolean;
      readonly originMs: number;
    }
  /**
   * The origin answered 304 to a validation: the stored response, fresh again, as the request that
   * caused the fill gets it (`response`) and as anyone else does (`shared`, the same object unless
   * the fields qualified `private`/`no-cache` name are left out). Not `stored` when the 304's fields
   * made it unstorable: then it is to be dropped (`retired`), as a newer answer's would be, unless
   * the request kept it out for its own sake (its Authorization, its no-store), which leaves the
   * stored response as it was.
   */
  | {
      readonly kind: 'revalidated';
      readonly response: StoredResponse;
      readonly shared: StoredResponse;
      readonly stored: boolean;
      readonly retired: boolean;
      readonly originMs: number;
    }
  /** The origin failed and a stored response stood in for it (stale-if-error, or §4.2.4 disconnected). */
  | {
      readonly kind: 'stale';
      readonly response: StoredResponse;
      readonly reason: 'stale-if-error' | 'disconnected';
      readonly fwdStatus: number | undefined;
      readonly failure: string;
      readonly originMs: number;
    }
  /** Another process had stored it (another of the fleet in Redis, or another worker of the host on disk): the origin not asked. */
  | { readonly kind: 'shared'; readonly response: StoredResponse; readonly tier: 'disk' | 'redis' }
  | { readonly kind: 'failed'; readonly failure: UpstreamFailure; readonly fwdStatus: number | undefined; readonly originMs: number };

/** Facts of a response that is relayed once and never reused: only its Age means anything. */
function notReusable(receivedAt: number, ageMs: number): ReuseFacts {
  return { lifetimeMs: 0, initialAgeMs: ageMs, storedAt: receivedAt, staleWhileRevalidateMs: 0, staleIfErrorMs: 0, mustRevalidate: true, noCache: true };
}

/**
 * Who else the answer with this head may serve (flight.ts), decided once: what is stored, the
 * waiters it selects (§4.1); a 5xx that becomes a failure, everyone, or a stale answer, those the
 * stored response selects; anything else (a 5xx relayed as it is, too), nobody, so waiters ask on
 * their own at once (Varnish's hit-for-miss). A 304 to a validation is judged by the response it
 * freshens, in `Fetcher#fetch`.
 */
function sharingOf(head: ResponseHead, verdict: StorageVerdict, request: FillRequest, stored: StoredResponse | undefined, now: number): Sharing {
  if (verdict.store)
    return verdict.vary.length === 0 ? ANY : selectedBy({ vary: verdict.vary, selecting: selectingValues(verdict.vary, request.requestHeaders) });
  if (head.status < 500) return NONE;
  if (standsInFor(head.status, request, stored, now)) return selectedBy(stored);
  return request.relayServerErrors ? NONE : ANY;
}

/** RFC 5861 §4: whether `stored` answers instead of the origin's `status`, a 5xx. */
function standsInFor(status: number, request: FillRequest, stored: StoredResponse | undefined, now: number): stored is StoredResponse {
  return stored !== undefined && isError(status, request.relayServerErrors) && mayServeOnError(stored, now);
}

/** Where the origin's tags arrive, and whether clients see them. */
export interface TagPolicy {
  /** Lower-case field name, `surrogate-key` by default. */
  readonly header: string;
  readonly expose: boolean;
}

/** Origin fields clients never see, whether an answer is stored or relayed: the tag field, unless exposed. */
export function hiddenFields(tags: TagPolicy): readonly string[] {
  return tags.expose ? [] : [tags.header];
}

/** How fills ask for and keep encoded answers. */
export interface FillEncoding {
  /** `gateway.upstream.acceptEncoding`, sent on every fill. */
  readonly acceptEncoding: string;
  readonly policy: CompressionPolicy;
}

/**
 * The verdict without `accept-encoding` in its secondary key: every fill sends the gateway's own
 * `Accept-Encoding`, so the answer does not depend on the client's, and the codings a client gets
 * are negotiated from the one stored answer (Traffic Server normalises the field for the same end).
 */
function keyedWithoutEncoding(verdict: StorageVerdict): StorageVerdict {
  if (!verdict.store || !verdict.vary.includes('accept-encoding')) return verdict;
  return { ...verdict, vary: verdict.vary.filter((name) => name !== 'accept-encoding') };
}

const MUST_REVALIDATE = problem(
  'gateway-timeout',
  'the origin could not be reached, and the stored response must be revalidated before it is used again (RFC 9111 §5.2.2.2)',
);

/** Not stored: the answer varies on a field the origin did not get as the client sent it (vary.ts). */
const VARIES_ON_UNSENT: StorageVerdict = { store: false, reason: 'vary' };

/** The verdict on an answer to `request` as it was sent to the origin (`sent`), keyed as the cache keys it. */
function verdictOn(head: ResponseHead, request: FillRequest, sent: OriginRequest['headers'], storage: StorageRequest): StorageVerdict {
  const verdict = keyedWithoutEncoding(storageVerdict(head, storage, request.policy));
  return verdict.store && !variesOnSent(verdict.vary, request.requestHeaders, sent) ? VARIES_ON_UNSENT : verdict;
}

/** Called by a fetch once it knows who else its answer may serve. */
export type Announce = (sharing: Sharing) => void;

export class Fetcher {
  readonly #origin: OriginClient;
  readonly #maker: EntryMaker;
  readonly #metrics: GatewayMetrics;
  readonly #now: () => number;
  readonly #tagHeader: string;
  /** Fields not kept besides those the storage rules name: the tag field, unless exposed. */
  readonly #hidden: readonly string[];
  readonly #encoding: FillEncoding;

  constructor(origin: OriginClient, maker: EntryMaker, metrics: GatewayMetrics, now: () => number, tags: TagPolicy, encoding: FillEncoding) {
    this.#origin = origin;
    this.#maker = maker;
    this.#metrics = metrics;
    this.#now = now;
    this.#tagHeader = tags.header;
    this.#hidden = hiddenFields(tags);
    this.#encoding = encoding;
  }

  /** Fills `request.key` from the origin; `stored`, when given, is validated rather than refetched. */
  async fetch(request: FillRequest, stored: StoredResponse | undefined, announce?: Announce): Promise<FillOutcome> {
    const requestTime = this.#now();
    const conditional = stored === undefined ? {} : validationHeaders(stored);
    const origin = { ...request.origin, headers: { ...request.origin.headers, 'accept-encoding': this.#encoding.acceptEncoding, ...conditional } };
    let verdict: StorageVerdict | undefined;
    const started = performance.now();
    const answer = await this.#origin.fetch(origin, (status, headers) => {
      if (status === 304 && stored !== undefined) {
        // §4.3.4: a 304 naming another representation leads to a fetch in full, which announces its own.
        if (freshens(stored, headers)) announce?.(this.#afterNotModified(request, stored, headers, requestTime).verdict.store ? selectedBy(stored) : NONE);
        return;
      }
      verdict = verdictOn({ status, headers }, request, origin.headers, this.#storageRequest(request, requestTime));
      announce?.(sharingOf({ status, headers }, verdict, request, stored, this.#now()));
    });
    const originMs = performance.now() - started;
    this.#metrics.originAnswer(answer.ok ? answer.response.status : 'error', originMs / 1000);
    if (!answer.ok) return this.#failed(request, stored, answer.failure, undefined, originMs);
    const response = dated(answer.response, this.#now());
    if (response.status >= 500 && (!request.relayServerErrors || standsInFor(response.status, request, stored, this.#now()))) {
      return this.#failed(request, stored, originServerError(response.status), response.status, originMs);
    }
    if (response.status === 304 && stored !== undefined) {
      // §4.3.4: a 304 that names another representation updates nothing; ask once more in full.
      if (!freshens(stored, response.headers)) return this.fetch(request, undefined, announce);
      return this.#revalidated(request, stored, response.headers, requestTime, originMs);
    }
    if (stored !== undefined) this.#metrics.revalidation('replaced');
    const decided = verdict ?? verdictOn(response, request, origin.headers, this.#storageRequest(request, requestTime));
    const tags = parseTags(response.headers[this.#tagHeader]);
    const plan = encodingPlan(response.status, response.headers, response.body.length, this.#encoding.policy, request.compress);
    const body = this.#kept(response.body, codingOf(single(response.headers['content-encoding'])), plan.keep);
    if (!decided.store) {
      // Kept out for this request's own fields, as for its Authorization or no-store: the stored one stays.
      const retired = stored !== undefined && decided !== VARIES_ON_UNSENT && retiresStored(response.status, this.#storageRequest(request, requestTime));
      const facts = notReusable(this.#now(), initialAgeMs(response.headers, requestTime, this.#now()));
      const relayed = this.#maker.prepare(response.status, response.headers, body, plan, facts, undefined, this.#hidden, tags);
      return { kind: 'response', response: relayed, shared: relayed, stored: false, notStored: decided.reason, retired, originMs };
    }
    const key = decided.vary.length === 0 ? undefined : { vary: decided.vary, selecting: selectingValues(decided.vary, request.requestHeaders) };
    const shared = this.#maker.prepare(response.status, response.headers, body, plan, decided.facts, key, [...decided.omit, ...this.#hidden], tags);
    const whole =
      decided.omit.length === 0 ? shared : this.#maker.prepare(response.status, response.headers, body, plan, decided.facts, key, this.#hidden, tags);
    return { kind: 'response', response: whole, shared, stored: true, notStored: undefined, retired: false, originMs };
  }

  /** The body to keep: as it came, or compressed, once, when the plan says so. */
  #kept(body: Buffer, sent: Coding | undefined, keep: Coding | undefined): Buffer {
    if (keep === undefined || keep === sent || sent !== 'identity') return body;
    const compressed = this.#maker.codec.encode(body, keep);
    this.#metrics.compressed(keep, body.length, compressed.length);
    return compressed;
  }

  /** What the storage rules need of the request, with the response arriving now. */
  #storageRequest(request: FillRequest, requestTime: number): StorageRequest {
    return { authorized: request.authorized, noStore: request.directives.noStore, requestTime, responseTime: this.#now() };
  }

  /**
   * The origin failed; a stored response stands in when stale-if-error allows it (RFC 5861 §4),
   * or, when the origin could not be reached, closed or timed out, the route's bound on staleness
   * while disconnected does (RFC 9111 §4.2.4).
   */
  #failed(request: FillRequest, stored: StoredResponse | undefined, failure: UpstreamFailure, fwdStatus: number | undefined, originMs: number): FillOutcome {
    if (stored === undefined) return { kind: 'failed', failure, fwdStatus, originMs };
    this.#metrics.revalidation('failed');
    const now = this.#now();
    if (mayServeOnError(stored, now)) return { kind: 'stale', response: stored, reason: 'stale-if-error', fwdStatus, failure: failure.code, originMs };
    if (failure.disconnected && mayServeDisconnected(stored, now, request.policy.staleIfDisconnectedMs)) {
      return { kind: 'stale', response: stored, reason: 'disconnected', fwdStatus, failure: failure.code, originMs };
    }
    // §5.2.2.2: disconnected from the origin, a cache holding a response it must revalidate
    // generates an error, and that error SHOULD be 504, whatever the connection's failure was.
    if (failure.disconnected && stored.mustRevalidate && problemStatus(failure.problem) !== 504) {
      return { kind: 'failed', failure: { ...failure, problem: MUST_REVALIDATE }, fwdStatus, originMs };
    }
    return { kind: 'failed', failure, fwdStatus, originMs };
  }

  /**
   * §3.2: the stored response's fields as the 304 updates them, and the storage rules' verdict on
   * the result. The 304's own Age is the age of the response it freshens (§4.2.3); stored fields
   * never carry one.
   */
  #afterNotModified(
    request: FillRequest,
    stored: StoredResponse,
    notModified: HeaderFields,
    requestTime: number,
  ): { readonly fields: string[]; readonly verdict: StorageVerdict } {
    const fields = fieldsAfter(stored, notModified, this.#hidden);
    const verdict = storageVerdict(
      { status: stored.status, headers: { ...asHeaderFields(fields), age: notModified.age } },
      this.#storageRequest(request, requestTime),
      request.policy,
    );
    return { fields, verdict };
  }

  /**
   * §4.3.4: the 304's fields update the stored response (§3.2), which is fresh again by them. The
   * fields qualified `private` or `no-cache` name (§5.2.2.7, §5.2.2.4), which the 304 may bring or
   * newly name, are left out of what is stored, as from a 200; the request that validated gets them.
   */
  #revalidated(request: FillRequest, stored: StoredResponse, notModified: HeaderFields, requestTime: number, originMs: number): FillOutcome {
    this.#metrics.revalidation('not-modified');
    const { fields, verdict } = this.#afterNotModified(request, stored, notModified, requestTime);
    if (!verdict.store) {
      // §4.3.3: as for a full answer, a 304 kept out for the request's own sake (its Authorization,
      // its no-store) leaves the stored response as it was; one whose fields forbid storing drops it.
      const retired = retiresStored(304, this.#storageRequest(request, requestTime));
      const relayed = this.#maker.freshen(stored, fields, notReusable(this.#now(), 0));
      return { kind: 'revalidated', response: relayed, shared: relayed, stored: false, retired, originMs };
    }
    const updated = this.#maker.freshen(stored, verdict.omit.length === 0 ? fields : storedFields(asHeaderFields(fields), verdict.omit), verdict.facts);
    const whole = verdict.omit.length === 0 ? updated : this.#maker.freshen(stored, fields, verdict.facts);
    return { kind: 'revalidated', response: whole, shared: updated, stored: true, retired: false, originMs };
  }
}
