/**
 * The bench's ceiling: a bare `node:http` server that answers every request with the prebuilt
 * bytes of a gateway cache hit (same status, headers and body), doing nothing else. Whatever the
 * gateway does on a hit — authenticate, look up, log, count — is measured against this.
 *
 * Run as a child process: `node bench/bare-server.ts RESPONSE_FILE [CERT KEY [PORT TICKET_KEYS]]`,
 * where the file holds `{ "status", "headers": [[name, value]…], "body": base64 }`; with a
 * certificate and its key it is a `node:https` server (the TLS bench's ceiling). With a port and
 * 48 bytes of session ticket keys in hex it is one of several such processes on that SO_REUSEPORT
 * port (bare-https-workers.ts), and a ticket any of them issued resumes on all. It prints the
 * server start contract's "listening" line.
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

const [file, cert, key, sharedPort, ticketKeys] = process.argv.slice(2);
if (file === undefined || (cert === undefined) !== (key === undefined) || (sharedPort === undefined) !== (ticketKeys === undefined))
  throw new Error('usage: bare-server.ts RESPONSE_FILE [CERT KEY [PORT TICKET_KEYS]]');
const captured = JSON.parse(readFileSync(file, 'utf8')) as CapturedResponse;
const body = Buffer.from(captured.body, 'base64');
const headers = captured.headers.flat();

const answer = (_req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(captured.status, headers);
  res.end(body);
};
if (cert === undefined || key === undefined) serveAsChild(createServer(answer));
else {
  // OpenSSL resumes only a session of the same context, which Node derives from the process's
  // arguments by default, and the first of the processes is given port 0.
  const shared = ticketKeys === undefined ? {} : { ticketKeys: Buffer.from(ticketKeys, 'hex'), sessionIdContext: 'bare-https-workers' };
  const server = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key), minVersion: 'TLSv1.2', ...shared }, answer);
  serveAsChild(server, 'https', sharedPort === undefined ? undefined : Number(sharedPort));
}
