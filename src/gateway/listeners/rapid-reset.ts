/**
 * The rapid-reset attack (CVE-2023-44487): a client opens streams and cancels them at once
 * (RST_STREAM), in a loop, so the server starts work for requests that no longer count against
 * the concurrent-stream limit. Each connection's resets are counted in one-second windows; past
 * the limit the connection gets GOAWAY with ENHANCE_YOUR_CALM (RFC 9113 §7) and is closed, which
 * costs every other connection nothing. nginx and nghttp2 bound resets per connection the same way.
 *
 * A stream the gateway itself resets (an origin body that broke off mid-relay) counts too: it is
 * rare, and a connection on which a hundred of those happen in a second is worth closing anyway.
 */
import { constants, type Http2SecureServer, type Http2Server, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { performance } from 'node:perf_hooks';

const WINDOW_MS = 1000;
const RAPID_RESET = new Error('too many streams reset within a second (rapid reset)');

export function guardRapidReset(server: Http2Server | Http2SecureServer, maxPerSecond: number, onCutOff: () => void): void {
  server.on('session', (session: ServerHttp2Session) => {
    let windowStart = 0;
    let resets = 0;
    session.on('stream', (stream: ServerHttp2Stream) => {
      stream.once('close', () => {
        if (stream.rstCode === constants.NGHTTP2_NO_ERROR || session.destroyed) return;
        const now = performance.now();
        if (now - windowStart >= WINDOW_MS) {
          windowStart = now;
          resets = 0;
        }
        if (++resets <= maxPerSecond) return;
        onCutOff();
        // destroy() sends its code in the final GOAWAY before the socket goes; it needs an error
        // beside the code, since a missing error defaults to NO_ERROR and that replaces the code.
        session.destroy(RAPID_RESET, constants.NGHTTP2_ENHANCE_YOUR_CALM);
      });
    });
  });
}
