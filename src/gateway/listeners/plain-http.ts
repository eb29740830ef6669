/**
 * A TLS listener spoken to in cleartext (`curl http://…` against an `https://` gateway) answers
 * with a 400 problem that says to use https, as nginx answers "The plain HTTP request was sent to
 * HTTPS port", instead of closing the connection on a failed handshake, which curl reports as
 * "Empty reply from server". A connection's first bytes tell: every TLS connection opens with a
 * handshake record (RFC 8446 §5.1, content type 22), every HTTP/1.1 request with a method's
 * letters. The peek happens once per connection, before the handshake; requests never see it.
 */
import type { Server, Socket } from 'node:net';
import type { Refusal } from '../../shared/http-server.ts';
import { problem, rawProblemResponse } from '../../shared/problem.ts';

const TLS_HANDSHAKE_RECORD = 0x16;
/** A request line's method: RFC 9110 §9's tokens, as every HTTP client sends them, in capitals. */
const HTTP_METHOD = /^[A-Z]{3,10} /;

const PLAIN_HTTP = problem('plain-http-to-https', 'this port speaks HTTPS only, and the request came as plain HTTP: send it again with https://');

/**
 * Puts the peek in front of the TLS server's own handling of new connections (the listeners of
 * 'connection' it has now), which gets every connection that does not look like plain HTTP with
 * its first bytes put back. `waitMs`: how long a connection may stay silent before it is closed.
 */
export function answerPlainHttp(server: Server, waitMs: number, onRefused: (refusal: Refusal) => void): void {
  const tls = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const gone = (): void => {
      socket.destroy();
    };
    socket.on('error', gone);
    socket.setTimeout(waitMs, gone);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      socket.off('error', gone);
      // The TLS socket made over it reads what is buffered first.
      socket.unshift(first);
      const head = first.subarray(0, 16).toString('latin1');
      if (first[0] === TLS_HANDSHAKE_RECORD || !HTTP_METHOD.test(head)) {
        for (const listener of tls) listener.call(server, socket);
        return;
      }
      socket.on('error', gone);
      onRefused({ reason: 'plain-http', method: head.slice(0, head.indexOf(' ')), target: undefined });
      // What else the client sends is read and dropped, so that its close is seen and this one closes too.
      socket.resume();
      socket.end(rawProblemResponse(PLAIN_HTTP, '/'));
    });
  });
}
