/**
 * Listening and draining, the same for both servers and both listeners (made by http-server.ts,
 * which also answers what the parser refuses): drain stops accepting,
 * lets in-flight requests finish (keep-alive connections are closed as soon as they go idle) and
 * cuts what is left when the deadline passes.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { reopenLogFiles } from './log-sink.ts';

/** Binds a listener. */
export async function listen(server: NetServer, host: string, port: number): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

export function baseUrl(address: AddressInfo, scheme: 'http' | 'https' = 'http'): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}

export async function drain(server: Server, deadlineMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => { resolve(); }));
  const sweeper = setInterval(() => { server.closeIdleConnections(); }, 25);
  const deadline = setTimeout(() => { server.closeAllConnections(); }, deadlineMs);
  server.closeIdleConnections();
  try {
    await closed;
  } finally {
    clearInterval(sweeper);
    clearTimeout(deadline);
  }
}

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits with its outcome. SIGUSR1 and
 * SIGHUP reopen the log files (nginx reopens on USR1; HUP, its reload, would otherwise kill the
 * process: configuration is read at start only, so a reopen is what HUP can usefully do).
 */
export function onShutdownSignal(stop: () => Promise<void>): void {
  process.on('SIGUSR1', reopenLogFiles);
  process.on('SIGHUP', reopenLogFiles);
  let stopping = false;
  const handler = (): void => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
