/**
 * What node:http does with a request after its answer is sent: when the handler never read the
 * request's body, `resOnFinish` calls the request's `_dump`, which resumes the stream so that
 * unread body bytes are pulled off the wire, and the stream then runs to its end and is destroyed.
 * For a request with no body that is four more `nextTick`s (resume, end, destroy, its callback)
 * and the stream machinery between them, for nothing: the parser has read the whole message
 * already. Marking such a request as dumped leaves it to the garbage collector, as it is, without
 * its `end` and `close` events, which nothing in the gateway listens for. A bare node:http server
 * answering a prebuilt buffer took 0.6–1.0 µs less CPU a request so (docs/performance.md, "A
 * request's teardown"). Over HTTP/2 the compatibility API's request has no such step.
 */
import type { IncomingMessage } from 'node:http';
import { http2Stream } from '../../shared/http2-stream.ts';

/** The field `_dump` checks first: set, the call returns at once. */
interface Dumpable {
  _dumped?: boolean;
}

/**
 * Marks `req` as needing no drain when its message is complete with nothing left unread (a GET's,
 * as it reaches the pipeline); anything else is drained by node:http as before.
 */
export function forgoDrain(req: IncomingMessage): void {
  if (req.complete && req.readableLength === 0 && http2Stream(req) === undefined) (req as Dumpable)._dumped = true;
}
