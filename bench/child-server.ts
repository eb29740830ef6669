/**
 * What every bench server run as a child process does: listen on a free loopback port, print the
 * server start contract's "listening" line, and stop on SIGTERM. With `sharedPort` it listens with
 * SO_REUSEPORT on that port (0: a free one, which the other processes then join), so the kernel
 * spreads the port's connections over several processes, as it does over the gateway's workers.
 */
import type { Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';

export function serveAsChild(server: Server | Http2SecureServer, scheme: 'http' | 'https' = 'http', sharedPort?: number): void {
  server.listen({ port: sharedPort ?? 0, host: '127.0.0.1', reusePort: sharedPort !== undefined }, () => {
    const { port } = server.address() as AddressInfo;
    console.log(JSON.stringify({ level: 'info', msg: 'listening', url: `${scheme}://127.0.0.1:${port}` }));
  });
  process.once('SIGTERM', () => {
    // An HTTP/2 server's close() ends its sessions itself.
    server.close(() => process.exit(0));
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
}
