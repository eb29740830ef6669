import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { problem, sendProblem } from '../../src/shared/problem.ts';

const NO_ROUTE = problem('not-found', 'no resource at this path');

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('a problem sent again has the body of its own detail and instance, whichever was sent before it', async () => {
  // One problem kept for every request, and one made per request with the same kind: each answer
  // must name its own request, whether the body before it was the same or not.
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const p = url.searchParams.has('own') ? problem('not-found', `nothing at ${url.pathname}`) : NO_ROUTE;
    sendProblem(res, p, req.url ?? '/', req.method === 'HEAD');
  });
  const base = await listening(server);
  try {
    for (const target of ['/a', '/a', '/b', '/b?own', '/b?own', '/b', '/é?own', '/a']) {
      const answer = await fetch(base + target);
      const text = await answer.text();
      assert.equal(answer.status, 404);
      assert.equal(answer.headers.get('content-length'), String(Buffer.byteLength(text)));
      const body = JSON.parse(text) as { instance: string; detail: string };
      assert.equal(body.instance, new URL(base + target).pathname + new URL(base + target).search);
      assert.equal(body.detail, target.endsWith('?own') ? `nothing at ${new URL(base + target).pathname}` : 'no resource at this path');
    }
    const get = await (await fetch(`${base}/a`)).text();
    const head = await fetch(`${base}/a`, { method: 'HEAD' });
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(get)));
    assert.equal(await head.text(), '');
  } finally {
    server.close();
  }
});
