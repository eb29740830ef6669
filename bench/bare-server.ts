/**
 * The bench's ceiling: a bare `node:http` server that answers every request with the prebuilt
 * bytes of a gateway cache hit (same status, headers and body), doing nothing else. Whatever the
 * gateway does on a hit — authenticate, look up, log, count — is measured against this.
 *
 * Run as a child process: `node bench/bare-server.ts RESPONSE_FILE [CERT KEY]`, where the file
 * holds `{ "status", "headers": [[name, value]…], "body": base64 }`; with a certificate and its
 * key it is a `node:https` server (the TLS bench's ceiling). It prints the server start
 * contract's "listening" line.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { serveAsChild } from './child-server.ts';

interface CapturedResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

const [file, cert, key] = process.argv.slice(2);
if (file === undefined || (cert === undefined) !== (key === undefined)) throw new Error('usage: bare-server.ts RESPONSE_FILE [CERT KEY]');
const captured = JSON.parse(readFileSync(file, 'utf8')) as CapturedResponse;
const body = Buffer.from(captured.body, 'base64');
const headers = captured.headers.flat();

const answer = (_req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(captured.status, headers);
  res.end(body);
};
if (cert === undefined || key === undefined) serveAsChild(createServer(answer));
else serveAsChild(createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.2' }, answer), 'https');
