/**
 * The TLS bench's ceiling for a server of two processes: two bare `node:https` servers
 * (bare-server.ts) on one SO_REUSEPORT port, as the gateway's two workers are with
 * `gateway.workerAccept: reuseport`, sharing the key that encrypts session tickets, so a session
 * one of them issued resumes on a connection the kernel hands the other. Beside the one-process
 * bare server it prices what two processes pay that one does not: each connection may wake
 * either, and they take turns on the cores.
 *
 * Run as a child process: `node bench/bare-https-workers.ts RESPONSE_FILE CERT KEY`. The servers
 * are its children, so the bench's CPU time and pinning of a server's process tree cover both, as
 * they cover the gateway's primary and workers. It prints the server start contract's "listening"
 * line once both listen, and stops them on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { exited } from '../src/loadtest/server-process.ts';

const [file, cert, key] = process.argv.slice(2);
if (file === undefined || cert === undefined || key === undefined) throw new Error('usage: bare-https-workers.ts RESPONSE_FILE CERT KEY');
// Node's ticket key: 16 bytes of key name, 16 of HMAC secret, 16 of AES key.
const ticketKeys = randomBytes(48).toString('hex');
const BARE_SERVER_ARGS = [fileURLToPath(new URL('bare-server.ts', import.meta.url)), file, cert, key];

const servers: ChildProcess[] = [];
let stopping = false;

function start(port: number): ChildProcess {
  // The same Node flags as this process: the bench gives it the gateway's.
  const server = spawn(process.execPath, [...process.execArgv, ...BARE_SERVER_ARGS, String(port), ticketKeys], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  servers.push(server);
  // One process alone is not the server this row measures.
  server.once('exit', () => {
    if (!stopping) process.exit(1);
  });
  return server;
}

/** The server's "listening" line, and the port in it. */
async function listening(server: ChildProcess): Promise<{ readonly line: string; readonly port: number }> {
  if (server.stdout === null) throw new Error('bare-server.ts has no stdout');
  for await (const line of createInterface({ input: server.stdout })) {
    const { msg, url } = JSON.parse(line) as { msg?: unknown; url?: unknown };
    if (msg === 'listening' && typeof url === 'string') return { line, port: Number(new URL(url).port) };
  }
  throw new Error('bare-server.ts exited before listening');
}

// However this process ends, its servers end too: none is left holding the port.
process.on('exit', () => {
  for (const server of servers) server.kill('SIGTERM');
});
process.once('SIGTERM', () => {
  stopping = true;
  for (const server of servers) server.kill('SIGTERM');
  void Promise.all(servers.map(exited)).then(() => process.exit(0));
});

// The first takes a free port, the second joins it.
const first = await listening(start(0));
await listening(start(first.port));
console.log(first.line);
