/**
 * The HTTP/2 bench's ceiling: a bare node:http2 server over TLS, on the bench's certificate, that
 * answers every stream with the prebuilt bytes of a gateway hit over HTTP/2 (same status, header
 * fields and body) by `stream.respond` and `end`, doing nothing else. Whatever the gateway does on
 * an HTTP/2 hit — the compatibility API, authenticate, look up, log, count — is measured against it.
 *
 * Run as a child process: `node bench/bare-h2-server.ts RESPONSE_FILE CERT KEY`, the file as
 * bare-server.ts reads it. It prints the server start contract's "listening" line.
 */
import { readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { serveAsChild } from './child-server.ts';

const [file, cert, key] = process.argv.slice(2);
if (file === undefined || cert === undefined || key === undefined) throw new Error('usage: bare-h2-server.ts RESPONSE_FILE CERT KEY');
const captured = JSON.parse(readFileSync(file, 'utf8')) as {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
};
const body = Buffer.from(captured.body, 'base64');
const fields = [...captured.headers.flat(), ':status', String(captured.status)];

const server = createSecureServer({ cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.2' });
server.on('stream', (stream) => {
  stream.respond(fields);
  stream.end(body);
});
serveAsChild(server, 'https');
