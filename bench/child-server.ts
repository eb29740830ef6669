/**
 * What every bench server run as a child process does: listen on a free loopback port, print the
 * server start contract's "listening" line, and stop on SIGTERM.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function serveAsChild(server: Server): void {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(JSON.stringify({ level: 'info', msg: 'listening', url: `http://127.0.0.1:${port}` }));
  });
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
