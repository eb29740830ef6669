/**
 * The origin's request path, one named step after another; each step either passes or ends the
 * request with a problem, and only `deliverJson` / `sendProblem` write to the response.
 *
 * | step         | may end the request with                                   |
 * |--------------|------------------------------------------------------------|
 * | edge         | 400 strict framing, credentials in the target (+ close)    |
 * | draining     | 503 not-ready (+ Connection: close)                        |
 * | target       | 414, 404 unknown path, 405 + Allow                         |
 * | circulation  | loans, webhooks, event log (circulation.ts), after auth    |
 * | authenticate | 401 + WWW-Authenticate, 403                                |
 * | rate limit   | 429 + Retry-After, RateLimit, RateLimit-Policy             |
 * | parameters   | 400 (parsed with the target, reported only after auth)     |
 * | resolve      | 400 (search text, cursor), 404 unknown book or branch      |
 * | deliver      | 200, 304                                                   |
 *
 * Parameter errors wait until the token is verified so that an unauthenticated client learns
 * nothing about the API beyond its paths and methods. Any exception becomes a logged 500.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ArrivalFields, CLIENT_CLOSED, clientGone, roundMs, type AccessLog } from '../shared/access-log.ts';
import type { ClientAddress } from '../shared/client-address.ts';
import { credentialsInTarget, redactTarget, type CredentialNames } from '../shared/credentials.ts';
import { Framing } from '../shared/framing.ts';
import { bodyLeftUnread } from '../shared/request-content.ts';
import type { TokenVerifier } from '../shared/auth.ts';
import type { Logger } from '../shared/logger.ts';
import { problem, problemStatus, sendProblem } from '../shared/problem.ts';
import { UNMATCHED_ROUTE, originForm, parseRequestTarget, problemInstance, type RouteLabel } from '../shared/request-target.ts';
import type { CatalogDb } from './catalog-db.ts';
import type { CirculationDb } from './circulation-db.ts';
import {
  answerCirculation,
  CIRCULATION_ROUTES,
  matchCirculation,
  type CirculationAnswer,
  type CirculationRoute,
  type CirculationTarget,
} from './circulation.ts';
import { deliverJson, deliverWritten, type OriginCompression } from './deliver.ts';
import type { OriginMetrics } from './metrics.ts';
import type { RateLimiter } from './rate-limit.ts';
import { resolve } from './resources.ts';

export interface HandlerContext {
  readonly db: CatalogDb;
  readonly circulation: CirculationDb;
  /** Called after a loan or return commits, so its events go out at once. */
  readonly committed: () => void;
  readonly verifier: TokenVerifier;
  readonly limiter: RateLimiter;
  readonly metrics: OriginMetrics;
  readonly logger: Logger;
  readonly accessLog: AccessLog;
  readonly maxTargetBytes: number;
  /** `http.credentialParameters`, parsed: refused in targets and redacted when one is written. */
  readonly credentialNames: CredentialNames;
  readonly clients: ClientAddress;
  /** `Cache-Control`, and `CDN-Cache-Control` when set (see `cachingFields` in origin.ts). */
  readonly cachingFields: Readonly<Record<string, string>>;
  /** How answers are compressed for clients that ask (`gateway.compression.*`, the gateway's rules). */
  readonly compression: OriginCompression;
  readonly isDraining: () => boolean;
}

type Answer = CirculationAnswer | { readonly kind: 'document'; readonly body: string; readonly tags: string; readonly next: string | null };

interface Handled {
  route: RouteLabel | CirculationRoute;
  subject: string | undefined;
  isHead: boolean;
}

const DRAINING = problem('not-ready', 'the origin is shutting down', { connection: 'close' });

async function answerWrite(ctx: HandlerContext, req: IncomingMessage, handled: Handled, target: CirculationTarget, rawQuery: string): Promise<Answer> {
  handled.route = target.route;
  if (ctx.isDraining()) return { kind: 'problem', problem: DRAINING };
  const { methods, scope } = CIRCULATION_ROUTES[target.route];
  if (!(methods as readonly string[]).includes(req.method ?? '')) {
    return { kind: 'problem', problem: problem('method-not-allowed', `${target.route} supports ${methods.join(', ')}`, { allow: methods.join(', ') }) };
  }
  const auth = await ctx.verifier.verify(req.headers.authorization, scope);
  if (!auth.ok) return { kind: 'problem', problem: auth.problem };
  handled.subject = auth.principal.subject;
  const limited = ctx.limiter.take(auth.principal.subject);
  if (limited !== undefined) return { kind: 'problem', problem: limited };
  const answered = await answerCirculation(ctx.circulation, req, target, rawQuery);
  if (answered.kind === 'written' && target.route.startsWith('/v1/loans') && answered.status !== 200) ctx.committed();
  return answered;
}

async function answer(ctx: HandlerContext, framing: Framing, req: IncomingMessage, handled: Handled): Promise<Answer> {
  const refused = framing.problem(req) ?? credentialsInTarget(req.url ?? '/', ctx.credentialNames);
  if (refused !== undefined) return { kind: 'problem', problem: refused };
  const target = originForm(req.url ?? '/');
  const qmark = target.indexOf('?');
  const circulation = Buffer.byteLength(req.url ?? '/') <= ctx.maxTargetBytes ? matchCirculation(qmark === -1 ? target : target.slice(0, qmark)) : undefined;
  if (circulation !== undefined) return answerWrite(ctx, req, handled, circulation, qmark === -1 ? '' : target.slice(qmark + 1));
  const verdict = parseRequestTarget(req.method ?? 'GET', req.url ?? '/', ctx.maxTargetBytes);
  if (verdict.ok) {
    handled.route = verdict.target.route;
    handled.isHead = verdict.isHead;
  } else {
    handled.route = verdict.route;
    handled.isHead = req.method === 'HEAD';
  }
  if (ctx.isDraining()) return { kind: 'problem', problem: DRAINING };
  if (!verdict.ok && problemStatus(verdict.problem) !== 400) return { kind: 'problem', problem: verdict.problem };

  const auth = await ctx.verifier.verify(req.headers.authorization);
  if (!auth.ok) return { kind: 'problem', problem: auth.problem };
  handled.subject = auth.principal.subject;

  const limited = ctx.limiter.take(auth.principal.subject);
  if (limited !== undefined) return { kind: 'problem', problem: limited };
  if (!verdict.ok) return { kind: 'problem', problem: verdict.problem };

  const resolution = resolve(ctx.db, verdict.target, (plan, seconds) => {
    ctx.metrics.search(plan, seconds);
  });
  if (!resolution.ok) return { kind: 'problem', problem: resolution.problem };
  return { kind: 'document', body: JSON.stringify(resolution.document), tags: resolution.tags, next: resolution.next ?? null };
}

export function createOriginHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  const framing = new Framing();
  const arrivals = new ArrivalFields();
  return (req, res) => {
    const started = performance.now();
    const id = arrivals.requestId(req.headers['x-request-id']);
    res.setHeader('x-request-id', id);
    const peer = arrivals.peer(req, ctx.clients);
    const shownTarget = redactTarget(req.url ?? '/', ctx.credentialNames);
    const handled: Handled = { route: UNMATCHED_ROUTE, subject: undefined, isHead: req.method === 'HEAD' };
    const send = (a: Answer): number => {
      if (bodyLeftUnread(req)) res.setHeader('connection', 'close');
      if (a.kind === 'document') {
        const { isHead } = handled;
        return deliverJson(res, a.body, {
          isHead,
          ifNoneMatch: req.headers['if-none-match'],
          acceptEncoding: req.headers['accept-encoding'],
          compression: ctx.compression,
          cachingFields: ctx.cachingFields,
          tags: a.tags,
          next: a.next,
        });
      }
      if (a.kind === 'written') return deliverWritten(res, a.status, a.body, a.location, handled.isHead);
      const bytes = sendProblem(res, a.problem, problemInstance(req.url ?? '/', ctx.maxTargetBytes, ctx.credentialNames), handled.isHead);
      return handled.isHead ? 0 : bytes;
    };
    const respond = async (): Promise<number> => {
      try {
        return send(await answer(ctx, framing, req, handled));
      } catch (err) {
        // A client that left in the middle of its body (the request stream's `aborted` error) is
        // no failure of the origin's: no error logged, and its line says CLIENT_CLOSED.
        if (req.destroyed && !req.complete) {
          res.destroy();
          return 0;
        }
        ctx.logger.error({ err, reqId: id, method: req.method, path: shownTarget }, 'request failed');
        if (!res.headersSent) return send({ kind: 'problem', problem: problem('internal-error', `the request failed; request id ${id}`) });
        res.destroy();
        return 0;
      }
    };
    respond()
      .then((bytes) => {
        const seconds = (performance.now() - started) / 1000;
        const status = clientGone(res) ? CLIENT_CLOSED : res.statusCode;
        ctx.metrics.request(handled.route, status, seconds);
        ctx.accessLog({
          reqId: id,
          method: req.method ?? '',
          path: shownTarget,
          status,
          bytes,
          durationMs: roundMs(seconds * 1000),
          sub: handled.subject,
          remote: peer.remote,
          ua: peer.ua,
          proto: peer.proto,
        });
      })
      .catch((err: unknown) => {
        ctx.logger.error({ err, reqId: id }, 'request bookkeeping failed');
      });
  };
}
