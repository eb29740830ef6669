/**
 * Listening and draining, the same for both servers and both listeners (made by http-server.ts,
 * which also answers what the parser refuses): drain stops accepting, lets in-flight requests
 * finish, answers every request it still reads with `Connection: close`, closes the keep-alive
 * connections that stay idle, and cuts what is left when the deadline passes.
 */
import cluster from 'node:cluster';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import { reopenLogFiles } from './log-sink.ts';

/** Binds a listener; with `reusePort`, on a socket of its own beside others on the port (Linux `SO_REUSEPORT`). */
export async function listen(server: NetServer, host: string, port: number, reusePort = false): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, reusePort }, () => {
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

/**
 * How long a drain leaves idle keep-alive connections open. A connection is idle between an
 * answer and the client's next request; closed then, it resets a request already on its way
 * (RFC 9112 §9.6 leaves such a retry to the client, and undici does not resend it). A busy
 * client's next request arrives within this and its answer closes the connection; only one that
 * stays idle this long is closed, the race its own keep-alive timeout runs anyway.
 */
const IDLE_GRACE_MS = 1000;

const closeAfterAnswer = (_req: IncomingMessage, res: ServerResponse): void => {
  res.shouldKeepAlive = false;
};

export async function drain(server: Server, deadlineMs: number): Promise<void> {
  if (!server.listening) return;
  // Before the handler, so that an answer sent at once (a hit) already carries the close.
  server.prependListener('request', closeAfterAnswer);
  // net.Server's close stops accepting; http.Server's would also destroy the idle connections at
  // once, and stop the sweep that enforces the header and request timeouts on the rest.
  const closed = new Promise<void>((resolve) =>
    NetServer.prototype.close.call(server, () => {
      resolve();
    }),
  );
  let sweeper: NodeJS.Timeout | undefined;
  const grace = setTimeout(
    () => {
      server.closeIdleConnections();
      sweeper = setInterval(() => {
        server.closeIdleConnections();
      }, 25);
    },
    Math.min(IDLE_GRACE_MS, deadlineMs),
  );
  const deadline = setTimeout(() => {
    server.closeAllConnections();
  }, deadlineMs);
  try {
    await closed;
  } finally {
    clearTimeout(grace);
    clearInterval(sweeper);
    clearTimeout(deadline);
    server.off('request', closeAfterAnswer);
  }
}

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits with its outcome; the same signal
 * again during the drain is ignored, not left to its default action: npm passes a Ctrl-C on to
 * a server the terminal has signalled already, and the second would cut the drain short. SIGUSR1
 * and SIGHUP reopen the log files (nginx reopens on USR1; HUP, its reload, would otherwise kill
 * the process, and a server without `onReloadSignal` has nothing else to do on it).
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
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  stopWithNpm(handler);
}

/** How often a server run by an npm script looks for its npm process. */
const PARENT_CHECK_MS = 1000;

/**
 * npm passes only SIGINT and SIGTERM on to the script it runs (@npmcli/run-script's
 * signal-manager.js); any other signal that ends npm (`kill -HUP` to `npm start`, say) would
 * leave this server orphaned, still serving. Run by an npm script (whose start line `exec`s
 * Node, so that npm is the parent, not a shell), it stops as on SIGTERM once npm is gone. A server
 * started otherwise keeps running when its parent goes: `nohup … &` means to.
 */
function stopWithNpm(stop: () => void): void {
  if (process.env.npm_lifecycle_event === undefined || !cluster.isPrimary) return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid === parent) return;
    process.stderr.write(
      `catalog-gateway: the npm process that ran this server (pid ${String(parent)}) has exited, so this server stops too; npm passes on only SIGINT and SIGTERM: reload with \`npx catalog-gateway reload\`, not a signal to npm\n`,
    );
    stop();
  }, PARENT_CHECK_MS).unref();
}

/** SIGHUP also reloads the configuration (nginx's `-s reload`, systemd's `ExecReload`). */
export function onReloadSignal(reload: () => void): void {
  process.on('SIGHUP', reload);
}

/**
 * SIGUSR2 replaces a primary's workers one at a time (workers/rolling-restart.ts). A process
 * without workers says so rather than let the signal's default action kill it.
 */
export function onRestartSignal(restart: (() => void) | undefined): void {
  process.on(
    'SIGUSR2',
    restart ??
      (() => {
        process.emitWarning('SIGUSR2 replaces the workers one at a time, and this gateway runs none (gateway.workers is 1): ignored');
      }),
  );
}
