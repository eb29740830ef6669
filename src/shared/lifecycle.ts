/**
 * Listening and draining, the same for both servers and both listeners: drain stops accepting,
 * lets in-flight requests finish (keep-alive connections are closed as soon as they go idle) and
 * cuts what is left when the deadline passes.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { problem, rawProblemResponse, type Problem } from './problem.ts';

/** What Node's HTTP parser refused, as a problem; `undefined` where no answer can be sent. */
function clientErrorProblem(code: string | undefined): Problem | undefined {
  switch (code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return problem('headers-too-large', 'the request header fields are larger than the server accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem('request-timeout', 'the request was not received in time');
    default:
      return problem('malformed-request', 'the request is not valid HTTP/1.1');
  }
}

/**
 * Node answers a request its parser refuses (garbage, oversized headers, a stalled request) with
 * a bare status line; both servers answer it with a problem like every other error instead.
 */
function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const refused = clientErrorProblem(err.code);
    if (refused !== undefined && socket.writable && socket.bytesWritten === 0) socket.end(rawProblemResponse(refused, '/'));
    else socket.destroy();
  });
}

/** Binds a listener; every listener also answers malformed requests with a problem. */
export async function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  answerClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

export function baseUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
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

/** Runs `stop` once on the first SIGTERM or SIGINT, then exits with its outcome. */
export function onShutdownSignal(stop: () => Promise<void>): void {
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
