/**
 * A TLS listener spoken to in cleartext (`curl http://…` against an `https://` gateway) answers
 * with a 400 problem that says to use https, as nginx answers "The plain HTTP request was sent to
 * HTTPS port", instead of closing the connection on a failed handshake, which curl reports as
 * "Empty reply from server".
 *
 * OpenSSL tells: a connection whose first bytes are `GET `, `POST`, `HEAD` or `PUT ` instead of a
 * handshake record fails its handshake with "http request" (`CONNECT` with "https proxy request"),
 * which Node reports as the server's 'tlsClientError'. The answer goes on the TCP socket under the
 * TLS socket, in cleartext, before Node closes both. Any other method sent in cleartext fails the
 * handshake as other bytes that are no TLS do, and the connection closes without an answer.
 * Nothing runs for a connection that speaks TLS: reading each connection's first bytes in
 * JavaScript to tell (a listener, a pause, a timer, the bytes put back) cost 15–30 µs of CPU on
 * every TLS connection (docs/performance.md, "Workers accept their own connections").
 */
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import type { Refusal } from '../../shared/http-server.ts';
import { tcpSocketUnder } from '../../shared/node-http-internals.ts';
import { problem, rawProblemResponse } from '../../shared/problem.ts';

/** Node's codes for OpenSSL's SSL_R_HTTP_REQUEST and SSL_R_HTTPS_PROXY_REQUEST. */
const CLEARTEXT_HTTP = new Set(['ERR_SSL_HTTP_REQUEST', 'ERR_SSL_HTTPS_PROXY_REQUEST']);

const PLAIN_HTTP = problem('plain-http-to-https', 'this port speaks HTTPS only, and the request came as plain HTTP: send it again with https://');

export function answerPlainHttp(server: TlsServer, onRefused: (refusal: Refusal) => void): void {
  server.on('tlsClientError', (err: NodeJS.ErrnoException, tls: TLSSocket) => {
    if (err.code === undefined || !CLEARTEXT_HTTP.has(err.code)) return;
    onRefused({ reason: 'plain-http', method: undefined, target: undefined });
    const tcp = tcpSocketUnder(tls);
    if (tcp?.writable === true) tcp.end(rawProblemResponse(PLAIN_HTTP, '/'));
  });
}
