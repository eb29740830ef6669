/**
 * `POST /purge` on the admin listener (contract, "Purge"): a `catalog:admin` token, a JSON body
 * naming what to purge, `200 {"purged": <entries>}`. Refusals are problems, and purge nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../shared/admin-server.ts';
import type { TokenVerifier } from '../../shared/auth.ts';
import { sendProblem } from '../../shared/problem.ts';
import { readJsonObject } from '../../shared/request-body.ts';
import type { CacheKey } from '../store/memory/response-cache.ts';
import { parsePurgeRequest } from './purge-request.ts';
import type { PurgeTaker } from './purger.ts';

export const PURGE_SCOPE = 'catalog:admin';
/** A thousand URLs of 2 KiB fit; anything larger is not a purge request. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export function purgeEndpoint(
  verifier: TokenVerifier,
  purger: PurgeTaker,
  keyOf: (url: string) => CacheKey | undefined,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const auth = await verifier.verify(req.headers.authorization, PURGE_SCOPE);
    if (!auth.ok) {
      req.resume();
      sendProblem(res, auth.problem, '/purge', false);
      return;
    }
    const body = await readJsonObject(req, MAX_BODY_BYTES);
    const parsed = body.ok ? parsePurgeRequest(body.value, keyOf) : body;
    if (!parsed.ok) {
      sendProblem(res, parsed.problem, '/purge', false);
      return;
    }
    sendJson(res, 200, { purged: await purger.purge(parsed.request.selector, parsed.request.soft, { kind: 'api', sub: auth.principal.subject }) });
  };
}
