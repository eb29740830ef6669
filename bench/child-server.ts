/**
 * What every bench server run as a child process does: listen on a free loopback port, print the
 * server start contract's "listening" line, and stop on SIGTERM.
 */
import type { Server } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';

export function serveAsChild(server: Server | Http2SecureServer, scheme: 'http' | 'https' = 'http'): void {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(JSON.stringify({ level: 'info', msg: 'listening', url: `${scheme}://127.0.0.1:${port}` }));
  });
  process.once('SIGTERM', () => {
    // An HTTP/2 server's close() ends its sessions itself.
    server.close(() => process.exit(0));
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
}
