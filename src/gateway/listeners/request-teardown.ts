/**
 * The work node:http does on a request's stream that a request without a body does not need, and
 * which the gateway spares it. Stock node:http makes seven `nextTick`s a request; five are the
 * request stream's:
 *
 *   at the message's end   the parser ends the stream, which schedules a 'readable' event for a
 *                          reader that a GET never has;
 *   after the answer       `resOnFinish` calls the request's `_dump` when the handler never read
 *                          the body, which resumes the stream so that unread bytes are pulled off
 *                          the wire; the stream then runs to its end and is destroyed (four ticks).
 *
 * For a request without a body (neither `Content-Length` above 0 nor `Transfer-Encoding`, RFC 9112
 * §6.3) there is nothing to read or pull: the event is marked as emitted when node:http hands the
 * request over, before its parser reaches the end, and the request as dumped once it is complete,
 * which leaves it to the garbage collector without its 'readable', 'end' and 'close' events.
 * Nothing in the gateway listens for them. A request with a body is left as it is. On a bare
 * node:http server answering a prebuilt buffer, the drain forgone took 0.6–1.0 µs of CPU a request
 * and the event about 0.3 more (docs/performance.md, "A request's teardown"). Both use fields of
 * node:http's request that have no public name (shared/node-http-internals.ts); where they went
 * away, requests are drained and signalled as before. An HTTP/2 request (listeners/stream-request.ts)
 * is no stream of its own and has neither step.
 */
import { IncomingMessage } from 'node:http';
import type { RequestHead } from '../../shared/message-seam.ts';
import { forgoReadable, markDrained } from '../../shared/node-http-internals.ts';
import { hasBody } from '../../shared/request-content.ts';

/** Called as node:http hands a request over, while its parser may not have reached the message's end yet. */
export function forgoEndSignal(req: RequestHead): void {
  if (req instanceof IncomingMessage && !hasBody(req)) forgoReadable(req);
}

/**
 * Marks `req` as needing no drain when its message is complete with nothing left unread (a GET's,
 * as it reaches the pipeline); anything else is drained by node:http as before.
 */
export function forgoDrain(req: RequestHead): void {
  if (req instanceof IncomingMessage && req.complete && req.readableLength === 0) markDrained(req);
}
