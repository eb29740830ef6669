/**
 * A client that sends a body without end: what a server does with a request it answers before
 * the body is read (docs/problems.md: such an answer closes the connection).
 */
import { once } from 'node:events';
import { connect } from 'node:net';

export interface Streamed {
  /** The status line and header section of the answer. */
  readonly head: string;
  readonly sentBytes: number;
  readonly closed: boolean;
}

/**
 * Sends `POST target` with a chunked JSON body that never ends, for up to five seconds or until
 * the server closes the connection.
 */
export async function streamEndlessBody(baseUrl: string, target: string, headers: Record<string, string>): Promise<Streamed> {
  const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  const state = { closed: false };
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('close', () => (state.closed = true));
  socket.on('error', () => undefined);
  const fields = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST ${target} HTTP/1.1\r\nHost: x\r\n${fields}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
  const chunk = `10000\r\n${'x'.repeat(0x10000)}\r\n`;
  const deadline = performance.now() + 5000;
  let sentBytes = 0;
  while (!state.closed && performance.now() < deadline) {
    sentBytes += 0x10000;
    // Not `once`: it rejects on the EPIPE that a write after the server's close ends with.
    if (!socket.write(chunk)) await new Promise((resume) => socket.once('drain', resume).once('close', resume));
  }
  socket.destroy();
  return { head: received.split('\r\n\r\n', 1)[0] ?? '', sentBytes, closed: state.closed };
}
