/** Requests Node's HTTP parser refuses still get a problem, and are reported, on every listener built with createHttpServer(). */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createHttpServer, type Refusal } from '../../src/shared/http-server.ts';
import { drain, listen } from '../../src/shared/lifecycle.ts';
import { PROBLEM_BASE } from '../../src/shared/problem.ts';
import { rawExchange } from '../support/harness.ts';

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
  const refusals: Refusal[] = [];
  before(async () => {
    const limits = { headersTimeoutMs: 200, requestTimeoutMs: 200, keepAliveTimeoutMs: 1000, maxConnections: 100 };
    server = createHttpServer(
      (req, res) => {
        // A request whose body the parser refuses was handed over with its header section first
        // (Node emits it before reading the body); this one answers after an await, as the origin's
        // handler does, and is not counted.
        if (req.url === '/later') {
          setImmediate(() => res.end('late'));
          return;
        }
        answered++;
        res.end('ok');
      },
      limits,
      (refusal) => refusals.push(refusal),
    );
    port = (await listen(server, '127.0.0.1', 0)).port;
  });
  after(() => drain(server, 100));

  test('bytes that are not HTTP get a 400 malformed-request problem and a closed connection', async () => {
    const reply = problemOf(await rawExchange(`http://127.0.0.1:${port}`, 'GARBAGE\r\n\r\n'));
    assert.deepEqual(reply, { status: 400, type: `${PROBLEM_BASE}malformed-request`, contentType: 'application/problem+json' });
    assert.equal(refusals.at(-1)?.reason, 'HPE_INVALID_METHOD');
  });

  test('RFC 9110 §9.1: a well-formed request line whose method the parser does not know gets 501 not-implemented', async () => {
    const reply = problemOf(await rawExchange(`http://127.0.0.1:${port}`, 'FOO /v1/books?q=x HTTP/1.1\r\nHost: x\r\n\r\n'));
    assert.deepEqual(reply, { status: 501, type: `${PROBLEM_BASE}not-implemented`, contentType: 'application/problem+json' });
    assert.deepEqual({ reason: refusals.at(-1)?.reason, method: refusals.at(-1)?.method }, { reason: 'HPE_INVALID_METHOD', method: 'FOO' });
  });

  test('on a connection that was answered before, a refused request still gets its problem (RFC 9112 §6.3: two lengths are a 400)', async () => {
    for (const bad of ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab']) {
      const raw = await new Promise<string>((resolve) => {
        let received = '';
        const socket = connect(port, '127.0.0.1', () => socket.write('GET /later HTTP/1.1\r\nHost: x\r\n\r\n'));
        socket.on('data', (chunk: Buffer) => {
          // The first answer in whole, then the bad request on the same connection.
          if (received === '') setImmediate(() => socket.write(bad));
          received += chunk.toString();
        });
        socket.on('close', () => {
          resolve(received);
        });
        socket.on('error', () => {
          resolve(received);
        });
      });
      assert.match(raw, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nlateHTTP\/1\.1 400 /, raw);
      assert.equal(problemOf(raw.slice(raw.indexOf('lateHTTP/1.1 400') + 4)).type, `${PROBLEM_BASE}malformed-request`);
    }
  });

  test('a refused request pipelined behind one still being answered gets its problem after that answer', async () => {
    const raw = await rawExchange(`http://127.0.0.1:${port}`, 'GET /later HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n');
    assert.match(raw, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nlateHTTP\/1\.1 400 /, raw);
    assert.equal(problemOf(raw.slice(raw.indexOf('lateHTTP/1.1 400') + 4)).type, `${PROBLEM_BASE}malformed-request`);
  });

  test('a smuggling attempt (Content-Length and chunked together) is refused and reported with its request line', async () => {
    const reply = problemOf(
      await rawExchange(
        `http://127.0.0.1:${port}`,
        'POST /v1/books?q=x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ),
    );
    assert.equal(reply.status, 400);
    assert.deepEqual({ method: refusals.at(-1)?.method, target: refusals.at(-1)?.target }, { method: 'POST', target: '/v1/books?q=x' });
  });

  test('after the interim 100 to Expect: 100-continue, a body the parser refuses still gets its 400 problem', async () => {
    const raw = await rawExchange(`http://127.0.0.1:${port}`, 'POST /later HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: gzip\r\n\r\nabc');
    assert.ok(raw.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), raw);
    const reply = problemOf(raw.slice('HTTP/1.1 100 Continue\r\n\r\n'.length));
    assert.deepEqual(reply, { status: 400, type: `${PROBLEM_BASE}malformed-request`, contentType: 'application/problem+json' });
  });

  test('CONNECT gets a 405 problem instead of an empty reply', async () => {
    const raw = await rawExchange(`http://127.0.0.1:${port}`, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const reply = problemOf(raw);
    assert.equal(reply.status, 405);
    assert.equal(reply.type, `${PROBLEM_BASE}method-not-allowed`);
    assert.match(raw, /\r\nallow: GET, HEAD\r\n/);
    assert.equal(refusals.at(-1)?.reason, 'CONNECT');
  });

  test('an oversized header section gets 431 headers-too-large', async () => {
    const reply = problemOf(await rawExchange(`http://127.0.0.1:${port}`, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(reply.status, 431);
    assert.equal(reply.type, `${PROBLEM_BASE}headers-too-large`);
  });

  test('headers that never finish get 408 request-timeout', async () => {
    const reply = problemOf(await rawExchange(`http://127.0.0.1:${port}`, 'GET / HTTP/1.1\r\nHost: x\r\n'));
    assert.equal(reply.status, 408);
    assert.equal(reply.type, `${PROBLEM_BASE}request-timeout`);
    assert.equal(answered, 0, 'no refused request reached the handler');
  });
});
