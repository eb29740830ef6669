/**
 * A request whose message is complete with nothing unread is not drained by node:http after its
 * answer (src/gateway/listeners/request-teardown.ts), and a request with an unread body still is:
 * on a real server, over one kept-alive connection, each next request is answered as it was sent.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { forgoDrain } from '../../src/gateway/listeners/request-teardown.ts';

describe('forgoDrain', () => {
  const seen: { req: IncomingMessage; ended: boolean; marked: boolean }[] = [];
  const server = createServer((req, res) => {
    // As the pipeline sees a request: at the end of the turn it was parsed in.
    setImmediate(() => {
      forgoDrain(req);
      const record = { req, ended: false, marked: (req as { _dumped?: boolean })._dumped === true };
      req.on('end', () => {
        record.ended = true;
      });
      seen.push(record);
      res.end(`${req.method ?? ''} ${req.url ?? ''}`);
    });
  });
  const agent = new Agent({ connections: 1, pipelining: 1 });
  let base = '';

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await agent.close();
    server.close();
  });

  test('a GET is left undrained, and the connection goes on serving the next requests', async () => {
    seen.length = 0;
    for (const n of [1, 2, 3]) {
      const answer = await request(`${base}/get/${n}`, { dispatcher: agent });
      assert.equal(await answer.body.text(), `GET /get/${n}`);
    }
    await nextTurn();
    await nextTurn();
    assert.deepEqual(seen.map((s) => s.marked), [true, true, true], 'each marked');
    assert.deepEqual(seen.map((s) => s.ended), [false, false, false], 'no stream ran to its end after the answer');
    assert.equal(new Set(seen.map((s) => s.req.socket)).size, 1, 'one connection throughout');
  });

  test('a body nobody read is still drained, so the request after it on the connection is read from where it starts', async () => {
    seen.length = 0;
    const body = 'x'.repeat(256 * 1024);
    const posted = await request(`${base}/post`, { dispatcher: agent, method: 'POST', body });
    assert.equal(await posted.body.text(), 'POST /post');
    const next = await request(`${base}/after`, { dispatcher: agent });
    assert.equal(await next.body.text(), 'GET /after');
    const [post, get] = seen;
    assert.ok(post !== undefined && get !== undefined, 'both requests reached the handler');
    assert.equal(post.marked, false, 'the POST with its body unread is drained by node:http');
    assert.equal(get.marked, true);
    assert.equal(post.req.socket, get.req.socket, 'the same connection');
  });
});
