/** Graceful shutdown: what clients see while the origin drains, and that it ends cleanly. */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { test } from 'node:test';
import { request } from 'undici';
import { get } from '../support/gateway-fixture.ts';
import { startOriginFixture } from '../support/origin-fixture.ts';

/** Resolves with everything read once `done` holds for it; rejects if the socket closes first. */
function readUntil(socket: Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (done(text)) {
        cleanup();
        resolve(text);
      }
    };
    const onEnd = (): void => {
      cleanup();
      if (done(text)) resolve(text);
      else reject(new Error(`connection ended after: ${text}`));
    };
    const cleanup = (): void => {
      socket.off('data', onData);
      socket.off('end', onEnd);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
  });
}

const completeResponse = (text: string): boolean => {
  const split = text.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: ([0-9]+)/i.exec(text)?.[1];
  return split !== -1 && length !== undefined && text.length >= split + 4 + Number(length);
};

test('while draining: a request on an open connection gets 503 with Connection: close, /readyz is 503, then the origin stops', async () => {
  const f = await startOriginFixture();
  const token = await f.token();
  const { port, hostname } = new URL(f.origin.url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  const headers = `Host: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  // The second request is pipelined but incomplete, so the connection is busy, not idle, when
  // the drain starts: the drain must wait for it instead of closing it.
  socket.write(`GET /v1/branches HTTP/1.1\r\n${headers}GET /v1/books?q=river HTTP/1.1\r\n`);
  const first = await readUntil(socket, completeResponse);
  assert.match(first, /^HTTP\/1\.1 200 /);

  const stopped = f.stop();
  const ready = await get(`${f.origin.adminUrl}/readyz`);
  assert.equal(ready.status, 503);
  assert.equal((JSON.parse(ready.body) as { type: string }).type, 'https://catalog.example/problems/not-ready');

  const rest = readUntil(socket, completeResponse);
  socket.write(headers);
  const second = await rest;
  assert.match(second, /^HTTP\/1\.1 503 /);
  assert.match(second, /\r\nconnection: close\r\n/i);
  assert.match(second, /\r\ncache-control: no-store\r\n/i);
  assert.match(second, /"type":"https:\/\/catalog\.example\/problems\/not-ready"/);
  await once(socket, 'close');
  await stopped;
  await assert.rejects(request(`${f.origin.url}/v1/branches`), { code: 'ECONNREFUSED' });
  assert.ok(f.logs.lines().some((l) => l.msg === 'request' && l.status === 503 && l.path === '/v1/books?q=river'));
});

test('stop() is idempotent and an idle origin stops at once', async () => {
  const f = await startOriginFixture();
  assert.equal((await f.get('/v1/branches')).status, 200);
  await Promise.all([f.stop(), f.stop()]);
  await f.stop();
  await assert.rejects(request(`${f.origin.adminUrl}/healthz`), { code: 'ECONNREFUSED' });
});
