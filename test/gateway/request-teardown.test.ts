/**
 * node:http's work on the stream of a request without a body, forgone
 * (src/gateway/listeners/request-teardown.ts): on a real server, over one kept-alive connection,
 * a GET's stream schedules none of its own ticks and each next request is answered as it was
 * sent; a request with a body, read or not, is left to node:http as before. Run with
 * GATEWAY_NODE_HTTP=public (node-http-internals.test.ts), nothing is forgone and all is served.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { forgoDrain, forgoEndSignal } from '../../src/gateway/listeners/request-teardown.ts';
import { internals } from '../../src/shared/node-http-internals.ts';

const forgoes = internals.drain && internals.endSignal;

interface Seen {
  readonly req: IncomingMessage;
  readonly body: string;
  ended: boolean;
}

/** A server that answers at the end of the turn, as the pipeline does: the method, the target and, for a POST asked to echo, the body it read. */
function server(forgo: boolean, seen: Seen[]): Server {
  const handler: RequestListener = (req, res) => {
    if (forgo) forgoEndSignal(req);
    setImmediate(() => {
      void (async () => {
        if (forgo) forgoDrain(req);
        let body = '';
        if (req.url === '/echo') for await (const chunk of req) body += String(chunk);
        const record: Seen = { req, body, ended: false };
        req.on('end', () => {
          record.ended = true;
        });
        seen.push(record);
        res.end(`${req.method ?? ''} ${req.url ?? ''} ${String(body.length)}`);
      })();
    });
  };
  return createServer(handler);
}

async function listening(s: Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${String((s.address() as AddressInfo).port)}`;
}

describe('a request without a body spared its stream work', () => {
  const seen: Seen[] = [];
  const stockSeen: Seen[] = [];
  const forgoing = server(true, seen);
  const stock = server(false, stockSeen);
  const agent = new Agent({ connections: 1, pipelining: 1 });
  let base = '';
  let stockBase = '';

  before(async () => {
    base = await listening(forgoing);
    stockBase = await listening(stock);
  });
  after(async () => {
    await agent.close();
    forgoing.close();
    stock.close();
  });

  test('GETs go on being served over one connection, and their streams never run to their end', async () => {
    seen.length = 0;
    for (const n of [1, 2, 3]) {
      const answer = await request(`${base}/get/${String(n)}`, { dispatcher: agent });
      assert.equal(await answer.body.text(), `GET /get/${String(n)} 0`);
    }
    await nextTurn();
    await nextTurn();
    assert.deepEqual(
      seen.map((s) => s.ended),
      [!forgoes, !forgoes, !forgoes],
      forgoes ? 'not drained after the answer' : 'drained by node:http',
    );
    assert.equal(new Set(seen.map((s) => s.req.socket)).size, 1, 'one connection throughout');
  });

  test('a GET makes at least four fewer ticks than on stock node:http (five of its stream, less the noise of the client in the same process); as many without the private fields', async () => {
    const ticksPerRequest = async (url: string): Promise<number> => {
      await (await request(url, { dispatcher: agent })).body.text();
      const original = process.nextTick.bind(process);
      let ticks = 0;
      process.nextTick = ((...args: Parameters<typeof process.nextTick>) => {
        ticks++;
        original(...args);
      }) as typeof process.nextTick;
      try {
        for (let i = 0; i < 20; i++) await (await request(url, { dispatcher: agent })).body.text();
      } finally {
        process.nextTick = original;
      }
      return ticks / 20;
    };
    // The client in this process adds ticks now and then (its timers, a socket's events), never
    // takes any away: the fewest of six measures, the two servers in turn, is each server's own
    // (three each let a busy machine's noise read 10.55 against 14.35).
    let stockTicks = Number.POSITIVE_INFINITY;
    let spared = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 6; round++) {
      stockTicks = Math.min(stockTicks, await ticksPerRequest(`${stockBase}/get`));
      spared = Math.min(spared, await ticksPerRequest(`${base}/get`));
    }
    if (forgoes) assert.ok(spared <= stockTicks - 4, `${String(spared)} ticks a request against stock node:http's ${String(stockTicks)}`);
    // Without the private fields a request makes stock node:http's ticks, give or take what else
    // the process does meanwhile: a loaded suite read 15.65 against 14, the fewest of three each.
    else assert.ok(Math.abs(spared - stockTicks) < 2, `${String(spared)} ticks a request, as stock node:http's ${String(stockTicks)}`);
  });

  test('a body nobody read is still drained, so the request after it on the connection is read from where it starts', async () => {
    seen.length = 0;
    const posted = await request(`${base}/post`, { dispatcher: agent, method: 'POST', body: 'x'.repeat(256 * 1024) });
    assert.equal(await posted.body.text(), 'POST /post 0');
    const next = await request(`${base}/after`, { dispatcher: agent });
    assert.equal(await next.body.text(), 'GET /after 0');
    const [post, get] = seen;
    assert.ok(post !== undefined && get !== undefined, 'both requests reached the handler');
    assert.equal(post.req.socket, get.req.socket, 'the same connection');
  });

  test('a body is read whole however it is framed, and the connection goes on', async () => {
    seen.length = 0;
    const sized = await request(`${base}/echo`, { dispatcher: agent, method: 'POST', body: 'y'.repeat(5000) });
    assert.equal(await sized.body.text(), 'POST /echo 5000');
    const chunked = await request(`${base}/echo`, { dispatcher: agent, method: 'PUT', body: Readable.from(['a'.repeat(100), 'b'.repeat(200)]) });
    assert.equal(await chunked.body.text(), 'PUT /echo 300');
    const empty = await request(`${base}/echo`, { dispatcher: agent, method: 'POST', body: '' });
    assert.equal(await empty.body.text(), 'POST /echo 0');
    assert.equal(new Set(seen.map((s) => s.req.socket)).size, 1, 'one connection throughout');
  });
});
