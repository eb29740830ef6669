/**
 * The seam between the protocols and the request path: what a step reads of a request and where
 * it writes the answer, whichever protocol carried them.
 *
 *   request   node:http's IncomingMessage is a RequestHead as it stands; an HTTP/2 stream's is
 *             the listener's own (gateway/listeners/stream-request.ts), made from the stream and
 *             its header object, without Node's compatibility Http2ServerRequest
 *   answer    node:http's ServerResponse over HTTP/1.1, the HTTP/2 stream itself otherwise: an
 *             answer is one `respond` and one `end` on it (gateway/listeners/whole-answer.ts,
 *             problem.ts), with no Http2ServerResponse between
 *
 * Building Node's compatibility pair for every stream (the two objects, their listeners on the
 * stream, the ticks of their teardown) was about a seventh of an HTTP/2 hit's CPU
 * (docs/performance.md, "HTTP/2 hits served from the stream").
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

/** What the request path reads of a request. */
export interface RequestHead {
  readonly method?: string | undefined;
  /** The request target as received (`:path` over HTTP/2). */
  readonly url?: string | undefined;
  /** Lowercase names; over HTTP/2 the pseudo-header fields too, and Host from `:authority` when the client sent none. */
  readonly headers: IncomingHttpHeaders;
  /** Names and values as received, in turn. */
  readonly rawHeaders: readonly string[];
  /** `1.0`, `1.1` or `2.0`. */
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** Whether the request's content has been received whole (or it has none left to come). */
  readonly complete: boolean;
  readonly socket: { readonly remoteAddress?: string | undefined };
  /** The HTTP/2 stream that carried the request; undefined over HTTP/1.1. */
  readonly stream?: ServerHttp2Stream | undefined;
}

/** Where an answer is written. */
export type Reply = ServerResponse | ServerHttp2Stream;

/** Whether `reply` is an HTTP/2 stream (`respond`), not node:http's response (`writeHead`). */
export function isStream(reply: Reply): reply is ServerHttp2Stream {
  return 'respond' in reply;
}
