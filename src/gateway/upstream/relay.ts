/**
 * Relays a response as it streams from the origin (pass routes, and unsafe methods on http
 * routes): status and end-to-end fields as received, then the body. An origin that breaks framing
 * after the headers went out (body shorter than its Content-Length, reset mid-body) cannot be
 * turned into a problem any more, so the client connection is closed: the client sees a truncated
 * message, never a wrong one. Nothing here can throw into the event loop.
 */
import { pipeline } from 'node:stream/promises';
import { isStream, type Reply, type RequestHead } from '../../shared/message-seam.ts';
import { bodyLeftUnread } from '../../shared/request-content.ts';
import type { NodePair } from '../listeners/stream-request.ts';
import { asHeaderFields, type HeaderFields } from '../rules/cache-control.ts';
import { endToEndFields } from '../rules/hop-by-hop.ts';
import { hasNoContent } from '../rules/message.ts';
import { discard, type OpenedAnswer } from './origin-client.ts';
import { upstreamFailure } from './upstream-failure.ts';

export interface RelayOutcome {
  readonly status: number;
  /** Body bytes written to the client. */
  readonly bytes: number;
  /** The upstream error code when the body broke off after the headers were sent. */
  readonly brokenBody: string | undefined;
}

/**
 * RFC 9110 §15.2: a proxy forwards the 1xx responses it receives, except to an HTTP/1.0 client,
 * and only before the final answer has begun (a background refresh has no one to tell). Node
 * writes a 103 Early Hints (RFC 8297) with its end-to-end fields and a 102 bare; it has no public
 * way to write another 1xx, and 100 Continue is Node's own to send (undici refuses an unasked-for
 * one from the origin), so those stop here. Over HTTP/2 either goes on the stream as a HEADERS
 * frame of its own (RFC 9113 §8.1). Nothing interim is ever stored.
 */
export function relayInterim(req: RequestHead, reply: Reply, status: number, headers: HeaderFields): void {
  if (reply.headersSent || reply.destroyed || (req.httpVersionMajor === 1 && req.httpVersionMinor === 0)) return;
  if (status !== 102 && status !== 103) return;
  try {
    if (isStream(reply)) reply.additionalHeaders(status === 102 ? { ':status': 102 } : { ...asHeaderFields(endToEndFields(headers)), ':status': 103 });
    else if (status === 102) reply.writeProcessing();
    else reply.writeEarlyHints(asHeaderFields(endToEndFields(headers)));
  } catch {
    // Node refuses a Link it cannot validate (ERR_INVALID_ARG_VALUE): the hint is dropped, the
    // final answer is not affected.
  }
}

/**
 * A Content-Length on a 204 or 304 describes a body that is not there (RFC 9110 §8.6); clients
 * that check it against the bytes received (undici does) fail the whole exchange, so it is dropped.
 */
const NO_LENGTH = ['content-length'];

/**
 * The fields in `extra` replace the origin's of the same name (an origin echoes the request id it
 * was sent, and two would be read as a list, RFC 9110 §5.3), except `Cache-Status`, a list to which
 * each cache adds its own member (RFC 9211 §2).
 */
function replacedBy(extra: readonly string[]): string[] {
  const names: string[] = [];
  for (let i = 0; i < extra.length; i += 2) if (extra[i] !== 'cache-status') names.push(extra[i] ?? '');
  return names;
}

/**
 * `pair`: the client's request and response as node:http streams (over HTTP/2, Node's
 * compatibility pair, listeners/stream-request.ts); `hidden`: origin fields clients never see (the
 * tag field, unless exposed); `extra`: fields the gateway adds.
 */
export async function relay(answer: OpenedAnswer, pair: NodePair, method: string, hidden: readonly string[], extra: readonly string[]): Promise<RelayOutcome> {
  const { status, body } = answer;
  const noContent = hasNoContent(status, method);
  const fields = [...endToEndFields(answer.headers, [...hidden, ...replacedBy(extra), ...(noContent && method !== 'HEAD' ? NO_LENGTH : [])]), ...extra];
  // An origin may answer before it has read the request's body (a 413, a 415): what the client
  // still sends would then be read by no one, so the connection ends with this answer, as the
  // gateway's own refusals end it (request-content.ts; RFC 9112 §9.6).
  const { req, res } = pair;
  if (req.httpVersionMajor === 1 && bodyLeftUnread(req)) fields.push('connection', 'close');
  res.writeHead(status, fields);
  if (noContent) {
    discard(body);
    res.end();
    return { status, bytes: 0, brokenBody: undefined };
  }
  let bytes = 0;
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  try {
    await pipeline(body, res);
    return { status, bytes, brokenBody: undefined };
  } catch (err) {
    // pipeline has destroyed both ends: the client connection closes without a complete message.
    return { status, bytes, brokenBody: res.destroyed && !res.writableFinished ? upstreamFailure(err).code : undefined };
  }
}
