/**
 * The bench's ceiling: a bare `node:http` server that answers every request with the prebuilt
 * bytes of a gateway cache hit (same status, headers and body), doing nothing else. Whatever the
 * gateway does on a hit — authenticate, look up, log, count — is measured against this.
 *
 * Run as a child process: `node bench/bare-server.ts RESPONSE_FILE`, where the file
 * holds `{ "status", "headers": [[name, value]…], "body": base64 }`. It prints the server start
 * contract's "listening" line.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { serveAsChild } from './child-server.ts';

interface CapturedResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
}

const file = process.argv[2];
if (file === undefined) throw new Error('usage: bare-server.ts RESPONSE_FILE');
const captured = JSON.parse(readFileSync(file, 'utf8')) as CapturedResponse;
const body = Buffer.from(captured.body, 'base64');
const headers = captured.headers.flat();

const server = createServer((_req, res) => {
  res.writeHead(captured.status, headers);
  res.end(body);
});
serveAsChild(server);
