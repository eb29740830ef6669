/** Requests Node's HTTP parser refuses still get a problem, on every listener built with listen(). */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { drain, listen } from '../../src/shared/lifecycle.ts';
import { PROBLEM_BASE } from '../../src/shared/problem.ts';

/** Sends raw bytes, leaves the connection open, and collects everything until the server closes it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => { resolve(received); });
    socket.on('error', reject);
  });
}

function problemOf(raw: string): { status: number; type: string; contentType: string | undefined } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const status = Number(head.split(' ')[1]);
  const contentType = /^content-type: (.*)$/im.exec(head)?.[1];
  return { status, type: (JSON.parse(body) as { type: string }).type, contentType };
}

describe('client errors', () => {
  let server: Server;
  let port = 0;
  let answered = 0;
  before(async () => {
    server = createServer({ headersTimeout: 200, requestTimeout: 200, connectionsCheckingInterval: 50 }, (_req, res) => {
      answered++;
      res.end('ok');
    });
    port = (await listen(server, '127.0.0.1', 0)).port;
  });
  after(() => drain(server, 100));

  test('bytes that are not HTTP get a 400 malformed-request problem and a closed connection', async () => {
    const reply = problemOf(await exchange(port, 'GARBAGE\r\n\r\n'));
    assert.deepEqual(reply, { status: 400, type: `${PROBLEM_BASE}malformed-request`, contentType: 'application/problem+json' });
  });

  test('an oversized header section gets 431 headers-too-large', async () => {
    const reply = problemOf(await exchange(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(reply.status, 431);
    assert.equal(reply.type, `${PROBLEM_BASE}headers-too-large`);
  });

  test('headers that never finish get 408 request-timeout', async () => {
    const reply = problemOf(await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n'));
    assert.equal(reply.status, 408);
    assert.equal(reply.type, `${PROBLEM_BASE}request-timeout`);
    assert.equal(answered, 0, 'no refused request reached the handler');
  });
});
