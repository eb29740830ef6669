/**
 * The rapid-reset attack (CVE-2023-44487): a client opens streams and cancels them at once
 * (RST_STREAM), in a loop, so the server starts work for requests that no longer count against
 * the concurrent-stream limit. Each connection's resets are counted in one-second windows; past
 * the limit the connection gets GOAWAY with ENHANCE_YOUR_CALM (RFC 9113 §7) and is closed, which
 * costs every other connection nothing. nginx and nghttp2 bound resets per connection the same way.
 *
 * What counts is a stream that ended before its answer was sent whole, whatever the code: a client
 * resetting with NO_ERROR (allowed once it needs no more of the answer, RFC 9113 §8.1) costs the
 * server as much as with CANCEL. A stream the gateway itself resets (an origin body that broke off
 * mid-relay, an answer past its send deadline) counts too: it is rare, and a connection on which a
 * hundred of those happen in a second is worth closing anyway.
 */
import { constants, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';

const WINDOW_MS = 1000;
const RAPID_RESET = new Error('too many streams reset within a second (rapid reset)');

/**
 * Whether `stream`, now closed, ended before the whole of its answer had been handed to the
 * connection: reset with an error code, closed before the answer was ended (`aborted`: Node then
 * ends it itself, empty), or with bytes of it still unsent.
 */
export function endedEarly(stream: ServerHttp2Stream): boolean {
  return stream.rstCode !== constants.NGHTTP2_NO_ERROR || stream.aborted || !stream.writableFinished;
}

/** One connection's resets within the current window. */
export class ResetRate {
  readonly #maxPerSecond: number;
  #windowStart = 0;
  #resets = 0;

  constructor(maxPerSecond: number) {
    this.#maxPerSecond = maxPerSecond;
  }

  /** Records a reset at `now` (ms); true when it is one too many. */
  exceeded(now: number): boolean {
    if (now - this.#windowStart >= WINDOW_MS) {
      this.#windowStart = now;
      this.#resets = 0;
    }
    return ++this.#resets > this.#maxPerSecond;
  }
}

/** Closes `session` for rapid reset. */
export function calmDown(session: ServerHttp2Session): void {
  // destroy() sends its code in the final GOAWAY before the socket goes; it needs an error beside
  // the code, since a missing error defaults to NO_ERROR and that replaces the code.
  session.destroy(RAPID_RESET, constants.NGHTTP2_ENHANCE_YOUR_CALM);
}
