import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type ServerResponse } from 'node:http';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { connect as http2Connect, type ServerHttp2Stream } from 'node:http2';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { getGlobalDispatcher, request } from 'undici';
import { startGatewayFixture, type GatewayFixture } from '../support/gateway-fixture.ts';
import { get, metricValue, rawExchange, until, type Reply } from '../support/harness.ts';
import { PROTOCOLS, protocolOverrides } from '../support/protocols.ts';
import { canSendHeadText } from '../../src/gateway/listeners/whole-answer.ts';
import { raw, startScriptedOrigin, type ScriptedOrigin, type Seen } from '../support/scripted-origin.ts';

/** How the origin answers one target: fields, status and body; 304 when If-None-Match matches. */
interface Answer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
}

function answer(req: Seen, res: ServerResponse, a: Answer): void {
  const body = a.body ?? `${req.method} ${req.target}`;
  const headers: Record<string, string> = { 'content-type': 'text/plain', 'cache-control': 'max-age=60', etag: etagOf(body), ...a.headers };
  if ((a.status ?? 200) === 200 && headers.etag !== undefined && req.headers['if-none-match'] === headers.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(a.status ?? 200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

for (const protocol of PROTOCOLS)
  describe(`route table: http (a generic RFC 9111 shared cache) and pass routes, over ${protocol}`, () => {
    const answers = new Map<string, (req: Seen, res: ServerResponse) => void>();
    let origin: ScriptedOrigin;
    let fx: GatewayFixture;
    before(async () => {
      origin = await startScriptedOrigin((req, res) => {
        (
          answers.get(req.target) ??
          ((r, s) => {
            answer(r, s, {});
          })
        )(req, res);
      });
      fx = await startGatewayFixture(origin.url, {
        ...protocolOverrides(protocol),
        'gateway.upstream.headersTimeoutMs': 500,
        'gateway.routes': [
          { prefix: '/pass', mode: 'pass', auth: 'off' },
          { prefix: '/private-api', mode: 'pass', auth: 'required', scope: 'catalog:write' },
          { prefix: '/grace', mode: 'http', auth: 'off', staleIfErrorSeconds: 60, staleWhileRevalidateSeconds: 0 },
          { prefix: '/', mode: 'http', auth: 'off' },
        ],
      });
    });
    after(async () => {
      await fx.stop();
      await origin.close();
    });

    const send = (target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> =>
      get(`${fx.gateway.url}${target}`, headers, method, undefined, fx.dispatcher);
    const on = (target: string, a: Answer | ((req: Seen, res: ServerResponse) => void)): void => {
      answers.set(
        target,
        typeof a === 'function'
          ? a
          : (req, res) => {
              answer(req, res, a);
            },
      );
    };
    const status = (r: Reply): string => String(r.headers['cache-status']);

    test('GET is stored by its own directives, no token asked; HEAD is answered from the stored GET', async () => {
      const first = await send('/doc?a=1');
      assert.equal(first.status, 200);
      assert.equal(status(first), 'catalog-gateway; fwd=miss; stored; fwd-status=200');
      const again = await send('/doc?a=1');
      assert.match(status(again), /^catalog-gateway; hit; ttl=60$/);
      const head = await send('/doc?a=1', {}, 'HEAD');
      assert.equal(head.body, '');
      assert.equal(head.headers['content-length'], String(Buffer.byteLength('GET /doc?a=1')));
      assert.equal(origin.count('/doc?a=1'), 1);
    });

    /** Over HTTP/2 with Node's own client, which sends a body in DATA frames with no `content-length`. */
    const h2 = (headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> =>
      new Promise((resolve, reject) => {
        const cert = fx.config['http.tls.cert'];
        const session = http2Connect(fx.gateway.url, cert === null ? {} : { ca: readFileSync(cert) });
        session.on('error', reject);
        const stream = session.request(headers, { endStream: body === undefined });
        let text = '';
        let answer: Record<string, unknown> = {};
        stream.setEncoding('utf8');
        stream.on('response', (fields) => {
          answer = fields;
        });
        stream.on('data', (chunk: string) => {
          text += chunk;
        });
        stream.on('end', () => {
          session.close();
          resolve({ status: Number(answer[':status']), headers: answer, body: text });
        });
        stream.on('error', reject);
        if (body !== undefined) stream.end(body);
      });

    if (protocol !== 'http/1.1') {
      test('a request body in DATA frames with no content-length is forwarded whole (RFC 9113 §8.1)', async () => {
        const reply = await h2({ ':method': 'POST', ':path': '/pass/echo', 'content-type': 'text/plain' }, 'a body of 24 characters.');
        assert.equal(reply.status, 200);
        assert.equal(reply.body, 'POST /pass/echo');
        assert.equal(origin.seen.findLast((s) => s.target === '/pass/echo')?.body, 'a body of 24 characters.');
      });

      test("a hit is answered on its stream: Node's compatibility request and response are not made for it", async () => {
        await send('/doc?compat=1');
        // A compatibility request listens for its stream's trailers from the moment it is made, before any answer.
        const listening: number[] = [];
        const finished = ({ stream }: { stream: ServerHttp2Stream }): void => {
          listening.push(stream.listenerCount('trailers'));
        };
        subscribe('http2.server.stream.finish', finished as (message: unknown) => void);
        try {
          const hit = await h2({ ':path': '/doc?compat=1' });
          assert.equal(hit.status, 200);
          assert.match(String(hit.headers['cache-status']), /hit/);
        } finally {
          unsubscribe('http2.server.stream.finish', finished as (message: unknown) => void);
        }
        assert.deepEqual(listening, [0]);
      });

      test("RFC 9113 §8.1: an origin's 103 reaches the client as a HEADERS frame before the answer's, on a fill and on a relay", async () => {
        for (const target of ['/doc?hinted=1', '/pass/hinted']) {
          on(target, (req, res) => {
            res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
            answer(req, res, {});
          });
          const cert = fx.config['http.tls.cert'];
          const session = http2Connect(fx.gateway.url, cert === null ? {} : { ca: readFileSync(cert) });
          try {
            const stream = session.request({ ':path': target });
            const statuses: unknown[] = [];
            stream.on('headers', (fields) => statuses.push([fields[':status'], fields.link]));
            stream.on('response', (fields) => statuses.push(fields[':status']));
            stream.resume();
            await new Promise((resolve, reject) => {
              stream.on('end', resolve);
              stream.on('error', reject);
            });
            assert.deepEqual(statuses, [[103, '</style.css>; rel=preload; as=style'], 200], target);
          } finally {
            session.close();
          }
        }
      });

      test('Expect: 100-continue gets its 100 before the body is sent; another expectation gets a 417 problem', async () => {
        const cert = fx.config['http.tls.cert'];
        const session = http2Connect(fx.gateway.url, cert === null ? {} : { ca: readFileSync(cert) });
        try {
          const stream = session.request({ ':method': 'POST', ':path': '/pass/echo', expect: '100-continue' }, { endStream: false });
          const answered = new Promise<number>((resolve, reject) => {
            stream.on('response', (fields) => {
              resolve(Number(fields[':status']));
            });
            stream.on('error', reject);
          });
          // Node's client emits 'continue' on the interim 100; the body goes only after it.
          await new Promise((resolve) => stream.once('continue', resolve));
          stream.end('after the 100');
          stream.resume();
          assert.equal(await answered, 200);
          await until(() => Promise.resolve(origin.seen.findLast((s) => s.target === '/pass/echo')?.body === 'after the 100'));
        } finally {
          session.close();
        }
        const refused = await h2({ ':path': '/doc?a=1', expect: 'something-else' });
        assert.equal(refused.status, 417);
        assert.equal((JSON.parse(refused.body) as { type: string }).type, 'https://catalog.example/problems/expectation-failed');
      });

      test('CONNECT gets a 405 problem with Allow, as over HTTP/1.1', async () => {
        const reply = await h2({ ':method': 'CONNECT', ':authority': 'example.org:443' });
        assert.equal(reply.status, 405);
        assert.equal(reply.headers['content-type'], 'application/problem+json');
        assert.equal(reply.headers.allow, 'GET, HEAD');
        assert.equal((JSON.parse(reply.body) as { type: string }).type, 'https://catalog.example/problems/method-not-allowed');
      });
    }

    test('RFC 9110 §7.6.3: the origin sees Via naming the gateway after the hops before it, on fills and on passes', async () => {
      const hop = `${protocol === 'http/1.1' ? '1.1' : '2'} catalog-gateway`;
      await send('/via/fill');
      assert.equal(origin.seen.findLast((s) => s.target === '/via/fill')?.headers.via, hop);
      await send('/via/relayed', { via: '1.0 fred, 1.1 p.example.net' });
      assert.equal(origin.seen.findLast((s) => s.target === '/via/relayed')?.headers.via, `1.0 fred, 1.1 p.example.net, ${hop}`);
      await send('/pass/via', { via: '1.0 fred' });
      assert.equal(origin.seen.findLast((s) => s.target === '/pass/via')?.headers.via, `1.0 fred, ${hop}`);
    });

    test('stored answers are sent whole from the cache: a range of one (206), a 204, an empty 200, HEAD and a 304', async () => {
      on('/whole/ranged', { body: 'abcdefghij' });
      on('/whole/no-content', { status: 204, body: '' });
      on('/whole/empty', { body: '' });
      for (const target of ['/whole/ranged', '/whole/no-content', '/whole/empty']) await send(target);
      const part = await send('/whole/ranged', { range: 'bytes=2-4' });
      assert.equal(part.status, 206);
      assert.equal(part.body, 'cde');
      assert.equal(part.headers['content-range'], 'bytes 2-4/10');
      assert.equal(part.headers['content-length'], '3');
      const noContent = await send('/whole/no-content');
      assert.deepEqual([noContent.status, noContent.body], [204, '']);
      const empty = await send('/whole/empty');
      assert.deepEqual([empty.status, empty.body, empty.headers['content-length']], [200, '', '0']);
      const head = await send('/whole/ranged', {}, 'HEAD');
      assert.deepEqual([head.status, head.body, head.headers['content-length']], [200, '', '10']);
      const unchanged = await send('/whole/ranged', { 'if-none-match': etagOf('abcdefghij') });
      assert.deepEqual([unchanged.status, unchanged.body], [304, '']);
      for (const reply of [part, noContent, empty, head, unchanged]) assert.match(status(reply), /^catalog-gateway; hit; ttl=60$/);
      for (const target of ['/whole/ranged', '/whole/no-content', '/whole/empty']) assert.equal(origin.count(target), 1);
    });

    test('§5.2.2.4/§5.2.2.7 named fields are not stored; §4.2.1 Expires and §4.2.2 heuristic freshness set the lifetime', async () => {
      on('/fields', { headers: { 'cache-control': 'max-age=60, no-cache="x-once", private="set-cookie"', 'x-once': 'leader only', 'set-cookie': 'a=b' } });
      const first = await send('/fields');
      assert.equal(first.headers['x-once'], 'leader only', 'the answer that caused the fill is relayed whole');
      const hit = await send('/fields');
      assert.match(status(hit), /; hit;/);
      assert.equal(hit.headers['x-once'], undefined);
      assert.equal(hit.headers['set-cookie'], undefined);
      let release: (() => void) | undefined;
      on('/fields/collapsed', (req, res) => {
        release = () => {
          answer(req, res, { headers: { 'cache-control': 'max-age=60, private="set-cookie"', 'set-cookie': 'session=leader' } });
        };
      });
      const both = Promise.all([send('/fields/collapsed'), send('/fields/collapsed')]);
      await until(async () => metricValue(await fx.metrics(), 'catalog_gateway_fill_waiting_requests') === 1 && release !== undefined);
      release?.();
      // undici gives an HTTP/2 answer's Set-Cookie as a list, an HTTP/1.1 one's single field as a string.
      const cookies = (await both).flatMap((r) => r.headers['set-cookie'] ?? []);
      assert.deepEqual(cookies, ['session=leader'], 'the leader gets its cookie, the collapsed waiter does not');
      const date = new Date(fx.clock.now()).toUTCString();
      on('/expires', { headers: { 'cache-control': '', date, expires: new Date(fx.clock.now() + 120_000).toUTCString() } });
      await send('/expires');
      assert.match(status(await send('/expires')), /; hit; ttl=120$/);
      on('/heuristic', { headers: { 'cache-control': '', date, 'last-modified': new Date(fx.clock.now() - 1000_000).toUTCString() } });
      await send('/heuristic');
      assert.match(status(await send('/heuristic')), /; hit; ttl=100$/, '10% of the 1000 s since Last-Modified');
      assert.equal(origin.count('/fields') + origin.count('/expires') + origin.count('/heuristic'), 3);
    });

    test('§4.3 a stale entry is validated with its ETag; the 304 updates its fields and it is fresh again, no body moved', async () => {
      let maxAge = 10;
      on('/validated', (req, res) => {
        answer(req, res, { headers: { 'cache-control': `max-age=${maxAge}`, 'x-version': String(maxAge) } });
      });
      await send('/validated');
      fx.clock.advance(11_000);
      maxAge = 100;
      const revalidated = await send('/validated');
      assert.equal(revalidated.status, 200);
      assert.equal(revalidated.body, 'GET /validated');
      assert.equal(status(revalidated), 'catalog-gateway; fwd=stale; stored; fwd-status=304; ttl=100');
      assert.equal(revalidated.headers['x-version'], '100', '§3.2: the 304 fields replace the stored ones');
      assert.equal(origin.seen.at(-1)?.headers['if-none-match'], etagOf('GET /validated'));
      fx.clock.advance(50_000);
      assert.match(status(await send('/validated')), /; hit; ttl=50$/);
      assert.equal(origin.count('/validated'), 2);
      assert.ok(metricValue(await fx.metrics(), 'catalog_gateway_revalidations_total', { outcome: 'not-modified' }) >= 1);
    });

    test('client conditionals are answered 304 from storage; the fill itself asks for the whole representation', async () => {
      const target = '/conditional';
      const cold = await send(target, { 'if-none-match': etagOf(`GET ${target}`) });
      assert.equal(cold.status, 304);
      assert.equal(origin.seen.at(-1)?.headers['if-none-match'], undefined);
      assert.equal((await send(target)).status, 200, 'stored whole');
      assert.equal((await send(target, { 'if-none-match': etagOf(`GET ${target}`) })).status, 304);
      assert.equal(origin.count(target), 1);
    });

    test('§4.1 Vary: variants side by side, each reused for its own requests; Vary: * is never reused', async () => {
      on('/lang', (req, res) => {
        answer(req, res, { body: `lang ${String(req.headers['accept-language'])}`, headers: { vary: 'Accept-Language' } });
      });
      const en = await send('/lang', { 'accept-language': 'en' });
      const fr = await send('/lang', { 'accept-language': 'fr' });
      assert.equal(en.body, 'lang en');
      assert.equal(fr.body, 'lang fr');
      assert.equal(status(fr), 'catalog-gateway; fwd=vary-miss; stored; fwd-status=200');
      assert.equal((await send('/lang', { 'accept-language': 'en' })).body, 'lang en');
      assert.equal((await send('/lang', { 'accept-language': 'fr' })).body, 'lang fr');
      assert.equal(origin.count('/lang'), 2);
      on('/star', { headers: { vary: '*' } });
      await send('/star');
      await send('/star');
      assert.equal(origin.count('/star'), 2);
    });

    test('§5.2.1 request directives: no-cache validates, max-stale accepts stale, no-store stores nothing, only-if-cached → 504', async () => {
      await send('/directives');
      const forced = await send('/directives', { 'cache-control': 'no-cache' });
      assert.equal(status(forced), 'catalog-gateway; fwd=request; stored; fwd-status=304; ttl=60');
      fx.clock.advance(65_000);
      const stale = await send('/directives', { 'cache-control': 'max-stale=10' });
      assert.equal(status(stale), 'catalog-gateway; hit; ttl=-5; detail=max-stale');
      await send('/nostore', { 'cache-control': 'no-store' });
      await send('/nostore');
      assert.equal(origin.count('/nostore'), 2);
      const only = await send('/never-seen', { 'cache-control': 'only-if-cached' });
      assert.equal(only.status, 504);
      assert.equal(only.headers['content-type'], 'application/problem+json');
      assert.equal(origin.count('/never-seen'), 0);
    });

    test('RFC 5861 stale-while-revalidate: stale at once, one background refresh for many requests', async () => {
      let version = 1;
      let hold: (() => void) | undefined;
      on('/swr', (req, res) => {
        const body = `v${version}`;
        const go = (): void => {
          answer(req, res, { body, headers: { 'cache-control': 'max-age=1, stale-while-revalidate=30' } });
        };
        if (version === 1) go();
        else hold = go;
      });
      await send('/swr');
      fx.clock.advance(2000);
      version = 2;
      const replies = await Promise.all(Array.from({ length: 5 }, () => send('/swr')));
      assert.ok(replies.every((r) => r.body === 'v1' && status(r).endsWith('detail=stale-while-revalidate')));
      await until(() => Promise.resolve(hold !== undefined));
      assert.equal(origin.count('/swr'), 2, 'one refresh for five stale answers');
      hold?.();
      await until(async () => (await send('/swr')).body === 'v2');
      assert.equal(origin.count('/swr'), 2);
    });

    test('RFC 5861 stale-if-error: a 5xx or an unreachable origin gets the stale copy; must-revalidate never does', async () => {
      let failing = false;
      on('/sie', (req, res) => {
        answer(
          req,
          res,
          failing ? { status: 503, headers: { 'cache-control': 'no-store' } } : { headers: { 'cache-control': 'max-age=1, stale-if-error=60' } },
        );
      });
      on('/strict', (req, res) => {
        answer(
          req,
          res,
          failing
            ? { status: 503, body: 'down', headers: { 'cache-control': 'no-store' } }
            : { headers: { 'cache-control': 'max-age=1, must-revalidate, stale-if-error=60' } },
        );
      });
      await send('/sie');
      await send('/strict');
      fx.clock.advance(2000);
      failing = true;
      const stale = await send('/sie');
      assert.equal(stale.status, 200);
      assert.equal(status(stale), 'catalog-gateway; fwd=stale; fwd-status=503; ttl=-1; detail=stale-if-error');
      const strict = await send('/strict');
      assert.equal(strict.status, 503, 'http routes relay the origin status as it is');
      assert.equal(strict.body, 'down');
      assert.ok(metricValue(await fx.metrics(), 'catalog_gateway_stale_served_total', { reason: 'stale-if-error' }) >= 1);
    });

    test("a route's stale window applies when the origin names none, also when the origin is down", async () => {
      on('/grace/page', { headers: { 'cache-control': 'max-age=1' } });
      await send('/grace/page');
      fx.clock.advance(30_000);
      await origin.stop();
      try {
        const stale = await send('/grace/page');
        assert.equal(stale.status, 200);
        assert.match(status(stale), /^catalog-gateway; fwd=stale; ttl=-29; detail=stale-if-error$/);
        const cold = await send('/grace/cold');
        assert.equal(cold.status, 502);
      } finally {
        await origin.start();
      }
    });

    test('§4.4 an unsafe method is forwarded with its body, relayed unchanged, and invalidates its target and same-origin Location', async () => {
      for (const target of ['/items', '/items/7', '/items/8']) await send(target);
      on('/items', (req, res) => {
        if (req.method !== 'POST') {
          answer(req, res, {});
          return;
        }
        res.writeHead(201, { location: '/items/7', 'content-location': 'http://elsewhere.example/items/8', 'x-echo': req.body });
        res.end('created');
      });
      const created = await request(`${fx.gateway.url}/items`, {
        method: 'POST',
        body: '{"n":7}',
        headers: { 'content-type': 'application/json' },
        dispatcher: fx.dispatcher ?? getGlobalDispatcher(),
      });
      assert.equal(created.statusCode, 201);
      assert.equal(await created.body.text(), 'created');
      assert.equal(created.headers['x-echo'], '{"n":7}');
      assert.equal(created.headers['cache-status'], 'catalog-gateway; fwd=method; fwd-status=201');
      for (const target of ['/items', '/items/7', '/items/8']) await send(target);
      assert.equal(origin.count('/items', 'GET'), 2, 'the target was invalidated');
      assert.equal(origin.count('/items/7'), 2, 'the same-origin Location was invalidated');
      assert.equal(origin.count('/items/8'), 1, 'another origin cannot invalidate this one');
    });

    test('RFC 9110 §8.8.3: the form decoded from an answer the origin encoded does not carry the strong tag of the coded bytes', async () => {
      const text = 'decoded '.repeat(40);
      on('/coded', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', vary: 'accept-encoding', etag: '"v1"', 'cache-control': 'max-age=60' });
        res.end(gzipSync(text));
      });
      assert.equal((await send('/coded', { 'accept-encoding': 'gzip' })).headers.etag, '"v1"', 'the coded bytes keep their own tag');
      const identity = await send('/coded');
      assert.equal(identity.body, text);
      assert.equal(identity.headers.etag, 'W/"v1"');
      // §13.1.5: If-Range compares strongly, so the coded bytes' tag does not select a part of the decoded form.
      const ranged = await send('/coded', { range: 'bytes=10-', 'if-range': '"v1"' });
      assert.equal(ranged.status, 200);
      assert.equal(ranged.body, text);
      assert.equal((await send('/coded', { 'if-none-match': '"v1"' })).status, 304, 'If-None-Match compares weakly: either tag');
    });

    test('pass routes are never stored, and ask for the scope they name', async () => {
      await send('/pass/x');
      await send('/pass/x');
      assert.equal(origin.count('/pass/x'), 2);
      assert.equal((await send('/private-api/y')).status, 401);
      assert.equal((await fx.get('/private-api/y')).status, 403);
      const token = await fx.token('catalog:write');
      assert.equal((await send('/private-api/y', { authorization: `Bearer ${token}` })).status, 200);
    });

    test('unstorable answers release collapsed waiters at the origin headers, before the leader body ends', async () => {
      let finishLeader: (() => void) | undefined;
      on('/mine', (req, res) => {
        res.writeHead(200, { 'cache-control': 'private, max-age=60', 'content-type': 'text/plain' });
        res.write('part ');
        if (finishLeader === undefined) finishLeader = () => res.end('leader');
        else res.end('waiter');
      });
      const replies = Promise.all(Array.from({ length: 4 }, () => send('/mine')));
      // The waiters reach the origin while the leader's body is still held open.
      await until(() => Promise.resolve(origin.count('/mine') === 4));
      finishLeader?.();
      const all = await replies;
      assert.deepEqual(all.map((r) => r.body).sort(), ['part leader', 'part waiter', 'part waiter', 'part waiter']);
    });

    test('an origin that breaks framing ends that exchange only: no crash, nothing stored, next requests served', async () => {
      on('/pass/long', (_req, res) => {
        raw(res, 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n0123456789');
      });
      on('/pass/short', (_req, res) => {
        raw(res, 'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n0123456789');
        res.socket?.end();
      });
      on('/pass/304', (_req, res) => {
        raw(res, 'HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\netag: "x"\r\n\r\n');
      });
      on('/long', (_req, res) => {
        raw(res, 'HTTP/1.1 200 OK\r\ncache-control: max-age=60\r\ncontent-length: 5\r\n\r\n0123456789');
      });
      on('/pass/reset', (_req, res) => {
        raw(res, 'HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n01234');
        setImmediate(() => res.socket?.resetAndDestroy());
      });
      const long = await send('/pass/long');
      assert.equal(long.status, 200);
      assert.equal(long.body, '01234', 'exactly Content-Length bytes are relayed');
      await assert.rejects(send('/pass/short'), 'a body shorter than its Content-Length closes the client connection');
      await assert.rejects(send('/pass/reset'));
      const notModified = await send('/pass/304', { 'if-none-match': '"x"' });
      assert.equal(notModified.status, 304);
      assert.equal((await send('/long')).body, '01234');
      on('/cl304', (req, res) => {
        if (req.headers['if-none-match'] === '"c"')
          raw(res, 'HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\netag: "c"\r\ncache-control: max-age=60\r\n\r\n');
        else answer(req, res, { body: 'cl304', headers: { etag: '"c"', 'cache-control': 'max-age=1' } });
      });
      await send('/cl304');
      fx.clock.advance(2000);
      const revalidated = await send('/cl304');
      assert.equal(revalidated.body, 'cl304', 'a 304 with a Content-Length still validates the stored response');
      assert.match(status(revalidated), /fwd-status=304/);
      assert.equal((await send('/doc?after=faults')).status, 200);
      assert.equal((await get(`${fx.gateway.adminUrl}/healthz`)).status, 200);
    });

    test('an idle keep-alive socket the origin closed under a request is retried once for idempotent methods, never for POST', async () => {
      let n = 0;
      on('/race', (req, res) => {
        n++;
        // The second request meets a socket the origin drops at once, as at its keep-alive timeout.
        if (n === 2 || (req.method === 'POST' && n === 4)) {
          res.socket?.destroy();
          return;
        }
        answer(req, res, { headers: { 'cache-control': 'no-store' } });
      });
      assert.equal((await send('/race')).status, 200);
      assert.equal((await send('/race')).status, 200, 'retried on a new connection');
      assert.equal(n, 3);
      const post = await request(`${fx.gateway.url}/race`, { method: 'POST', body: 'x', dispatcher: fx.dispatcher ?? getGlobalDispatcher() });
      await post.body.dump();
      assert.equal(post.statusCode, 502, 'a request with a body is not replayed');
    });
  });

test('requests with Expect: 100-continue are forwarded without it, and take no origin connection for good', async () => {
  const origin = await startScriptedOrigin((req, res) => {
    res.writeHead(201, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
    res.end(`${req.body} ${req.headers.expect ?? 'no expect'}`);
  });
  const fx = await startGatewayFixture(origin.url, { 'gateway.upstream.connections': 2, 'gateway.routes': [{ prefix: '/', mode: 'pass', auth: 'off' }] });
  try {
    const post = (body: string): Promise<{ status: number; text: string }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${fx.gateway.url}/loans`, {
          method: 'POST',
          headers: { expect: '100-continue', 'content-type': 'text/plain', 'content-length': String(body.length) },
        });
        // The body goes only once the gateway has said 100 Continue.
        req.on('continue', () => {
          req.end(body);
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
          });
        });
        req.on('error', reject);
      });
    for (let i = 0; i < 5; i++) assert.deepEqual(await post(`loan ${i}`), { status: 201, text: `loan ${i} no expect` }, `request ${i + 1} over a pool of 2`);
    assert.equal((await get(`${fx.gateway.url}/after`)).status, 201);
    const metrics = await fx.metrics();
    assert.ok(metricValue(metrics, 'catalog_gateway_origin_connections') >= 1);
    assert.equal(metricValue(metrics, 'catalog_gateway_origin_requests_waiting'), 0, 'nothing waits for an origin connection');
  } finally {
    await fx.stop();
    await origin.close();
  }
});

test('targets undici refuses (`*`, another scheme) are refused at the edge and take no origin connection for good', async () => {
  const origin = await startScriptedOrigin((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' });
    res.end(`${req.method} ${req.target}`);
  });
  const fx = await startGatewayFixture(origin.url, { 'gateway.upstream.connections': 2, 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] });
  try {
    for (const line of ['GET *', 'OPTIONS *', 'POST *', 'GET ftp://a/x', 'DELETE foo://a/x']) {
      const response = await rawExchange(fx.gateway.url, `${line} HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n`);
      assert.match(response, /^HTTP\/1\.1 400 /, `${line} → ${response.slice(0, 200)}`);
      assert.match(response, /problems\/malformed-request/);
    }
    // Each had taken one of the pool's two connections, and every origin request after them waited for good.
    assert.equal((await get(`${fx.gateway.url}/after`, {}, 'GET', AbortSignal.timeout(3000))).body, 'GET /after');
    assert.equal((await get(`${fx.gateway.url}/after`, {}, 'POST', AbortSignal.timeout(3000))).body, 'POST /after');
    assert.equal(origin.seen.length, 2);
  } finally {
    await fx.stop();
    await origin.close();
  }
});

test("a forwarded request whose body the client never finishes is a 408, not the origin's failure", async () => {
  // An origin that gives up on a body that does not come, as a real one does after its own timeout.
  const origin = createServer((req) => {
    setTimeout(() => req.socket.destroy(), 100);
  });
  await new Promise<void>((resolve) =>
    origin.listen(0, '127.0.0.1', () => {
      resolve();
    }),
  );
  const address = origin.address();
  const fx = await startGatewayFixture(`http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, {
    'gateway.routes': [{ prefix: '/', mode: 'pass', auth: 'off' }],
  });
  try {
    const response = await rawExchange(
      fx.gateway.url,
      'POST /loans HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{"a\r\n',
      3000,
    );
    assert.match(response, /^HTTP\/1\.1 408 /, response.slice(0, 300));
    assert.match(response, /problems\/request-timeout/);
  } finally {
    await fx.stop();
    await new Promise((resolve) => origin.close(resolve));
  }
});

test('RFC 9112 §9.6: an origin answer relayed before the client sent its whole body closes the connection; the answer carries one X-Request-Id', async () => {
  // As the catalog origin refuses a loan body over its limit: at once, unread, echoing the request id.
  const origin = createServer((req, res) => {
    res.writeHead(413, { 'content-type': 'application/problem+json', 'x-request-id': String(req.headers['x-request-id']), connection: 'close' });
    res.end('{}');
  });
  await new Promise<void>((resolve) =>
    origin.listen(0, '127.0.0.1', () => {
      resolve();
    }),
  );
  const address = origin.address();
  const fx = await startGatewayFixture(`http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, {
    'gateway.routes': [{ prefix: '/', mode: 'pass', auth: 'off' }],
  });
  try {
    const { head, closedByServer } = await new Promise<{ head: string; closedByServer: boolean }>((resolve) => {
      let received = '';
      const socket = connect(Number(new URL(fx.gateway.url).port), '127.0.0.1', () => {
        socket.write(`POST /loans HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n${'x'.repeat(20_000)}`);
      });
      // Long enough for the keep-alive stall this replaces (the connection was reset after ~6 s).
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ head: received, closedByServer: false });
      }, 4000);
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('end', () => {
        clearTimeout(timer);
        socket.destroy();
        resolve({ head: received, closedByServer: true });
      });
      socket.on('error', () => undefined);
    });
    assert.match(head, /^HTTP\/1\.1 413 /, head.slice(0, 300));
    assert.match(head, /\r\nconnection: close\r\n/i);
    assert.equal(
      head
        .split('\r\n\r\n')[0]
        ?.split('\r\n')
        .filter((line) => /^x-request-id:/i.test(line)).length,
      1,
      head.slice(0, 500),
    );
    assert.ok(closedByServer, 'the gateway ended the connection after its answer');
  } finally {
    await fx.stop();
    await new Promise((resolve) => origin.close(resolve));
  }
});

test("a stored answer's HTTP/1.1 head, as written from its shape's text: one length, the stored Date, Node's connection fields", async () => {
  const origin = await startScriptedOrigin((req, res) => {
    res.writeHead(200, {
      'content-type': 'text/plain',
      'cache-control': 'max-age=60',
      date: 'Thu, 26 Nov 2026 08:00:00 GMT',
      etag: '"v1"',
      link: '</next>; rel="next"',
    });
    res.end(req.method === 'HEAD' ? undefined : 'twelve bytes');
  });
  const fx = await startGatewayFixture(origin.url, { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] });
  try {
    assert.equal(canSendHeadText, process.env.GATEWAY_NODE_HTTP !== 'public', 'the Node this project pins has the step the text is handed to');
    await get(`${fx.gateway.url}/doc`);
    const request = (method: string, version: string): string => `${method} /doc ${version}\r\nHost: a\r\nX-Request-Id: wire-1\r\n\r\n`;
    // Two requests on one connection: the first answer keeps it open, and the second is read from it.
    const kept = await rawExchange(fx.gateway.url, request('GET', 'HTTP/1.1') + request('HEAD', 'HTTP/1.1'), 1000);
    const [first = '', second = ''] = kept.split(/(?=HTTP\/1\.1 )/);
    const head = (answer: string): string[] => answer.split('\r\n\r\n')[0]?.split('\r\n') ?? [];
    const lines = head(first);
    assert.equal(lines[0], 'HTTP/1.1 200 OK');
    assert.deepEqual(
      lines.filter((l) => /^content-length:/i.test(l)),
      ['content-length: 12'],
      'one length, from the body sent',
    );
    assert.deepEqual(
      lines.filter((l) => /^date:/i.test(l)),
      ['date: Thu, 26 Nov 2026 08:00:00 GMT'],
      'the stored Date alone (RFC 9111 §4): Node adds none',
    );
    for (const field of [
      'etag: "v1"',
      'link: </next>; rel="next"',
      'content-type: text/plain',
      'x-request-id: wire-1',
      'cache-status: catalog-gateway; hit; ttl=60',
      'Connection: keep-alive',
    ])
      assert.ok(lines.includes(field), `${field} in ${lines.join(' | ')}`);
    assert.ok(lines.some((l) => /^age: \d+$/.test(l)));
    assert.equal(first.split('\r\n\r\n')[1], 'twelve bytes');
    assert.deepEqual(
      head(second).filter((l) => /^content-length:/i.test(l)),
      ['content-length: 12'],
      'HEAD: the length GET would send',
    );
    assert.equal(second.split('\r\n\r\n')[1], '', 'HEAD: no body');
    // An HTTP/1.0 client without keep-alive is told the connection closes, and it does (the exchange ends before its wait).
    const started = Date.now();
    const closing = await rawExchange(fx.gateway.url, request('GET', 'HTTP/1.0'), 5000);
    assert.ok(head(closing).includes('Connection: close'), closing);
    assert.ok(Date.now() - started < 4000, 'the gateway closed the connection');
    assert.equal(origin.count('/doc'), 1);
  } finally {
    await fx.stop();
    await origin.close();
  }
});

describe('request fields no cache key holds do not decide what others are served (unkeyed-input poisoning)', () => {
  let origin: ScriptedOrigin;
  let fx: GatewayFixture;
  before(async () => {
    // What it saw of each field, in its answer, which varies on the field the path names.
    origin = await startScriptedOrigin((req, res) => {
      const saw = ['x-lang', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded', 'x-original-url', 'x-http-method-override'].map(
        (name) => `${name}=${String(req.headers[name] ?? '-')}`,
      );
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60', vary: req.target === '/for' ? 'X-Forwarded-For' : 'X-Lang' });
      res.end(saw.join(' '));
    });
    fx = await startGatewayFixture(origin.url, { 'http.trustedProxies': ['127.0.0.2'], 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off' }] });
  });
  after(async () => {
    await fx.stop();
    await origin.close();
  });

  /** A GET from the local address `from` (127.0.0.2 is the trusted proxy): its Cache-Status and body. */
  const from = (address: string, target: string, fields = ''): Promise<{ cacheStatus: string; body: string }> =>
    new Promise((resolve, reject) => {
      let text = '';
      const socket = connect({ port: Number(new URL(fx.gateway.url).port), host: '127.0.0.1', localAddress: address }, () => {
        socket.write(`GET ${target} HTTP/1.1\r\nHost: a\r\n${fields}${/^connection:/im.test(fields) ? '' : 'Connection: close\r\n'}\r\n`);
      });
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('error', reject);
      socket.on('close', () => {
        resolve({ cacheStatus: /^cache-status: (.*)$/im.exec(text)?.[1]?.trim() ?? '', body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
    });

  test('§4.1: an answer varying on a field the origin did not get as the client sent it (named in Connection, X-Forwarded-For) is not stored', async () => {
    const dropped = await from('127.0.0.1', '/lang', 'X-Lang: fr\r\nConnection: x-lang, close\r\n');
    assert.match(dropped.body, /x-lang=- /, 'the field Connection named is not forwarded');
    assert.equal(dropped.cacheStatus, 'catalog-gateway; fwd=miss; fwd-status=200; detail=vary');
    const fr = await from('127.0.0.1', '/lang', 'X-Lang: fr\r\n');
    assert.match(fr.body, /x-lang=fr /, 'a French client gets the French answer, not the default one stored under its value');
    assert.equal(fr.cacheStatus, 'catalog-gateway; fwd=miss; stored; fwd-status=200');
    assert.equal((await from('127.0.0.1', '/lang', 'X-Lang: fr\r\n')).cacheStatus, 'catalog-gateway; hit; ttl=60');
    const one = await from('127.0.0.1', '/for');
    const other = await from('127.0.0.3', '/for');
    assert.match(one.body, /x-forwarded-for=127\.0\.0\.1 /);
    assert.match(other.body, /x-forwarded-for=127\.0\.0\.3 /, 'another client is not served the answer made for the first');
    assert.equal(other.cacheStatus, 'catalog-gateway; fwd=miss; fwd-status=200; detail=vary');
  });

  test('Forwarded and X-Forwarded-Host/Proto reach the origin from a trusted proxy only; X-Original-URL and method overrides never reach a fill', async () => {
    const claims =
      'X-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: javascript\r\nForwarded: host=evil.example\r\nX-Original-URL: /admin\r\nX-HTTP-Method-Override: DELETE\r\n';
    const forged = await from('127.0.0.1', '/links', claims);
    assert.match(forged.body, /x-forwarded-host=- x-forwarded-proto=- forwarded=- x-original-url=- x-http-method-override=-$/, forged.body);
    assert.doesNotMatch((await from('127.0.0.3', '/links')).body, /evil/, 'nothing forged was stored');
    const proxied = await from('127.0.0.2', '/proxied', claims);
    assert.match(
      proxied.body,
      /x-forwarded-host=evil\.example x-forwarded-proto=javascript forwarded=host=evil\.example x-original-url=- x-http-method-override=-$/,
      proxied.body,
    );
  });
});

test('§3.5: a request that names Authorization in Connection is still an authorized one: the answer the origin gave without the token is not stored for others', async () => {
  const origin = await startScriptedOrigin((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=60' });
    res.end(req.headers.authorization === undefined ? 'anonymous' : 'personal');
  });
  const fx = await startGatewayFixture(origin.url, { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'required' }] });
  try {
    const token = await fx.token();
    const hidden = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(Number(new URL(fx.gateway.url).port), '127.0.0.1', () => {
        socket.write(`GET /page HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nConnection: authorization, close\r\n\r\n`);
      });
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('error', reject);
      socket.on('close', () => {
        resolve(text);
      });
    });
    assert.match(hidden, /^HTTP\/1\.1 200 /);
    assert.match(hidden, /anonymous$/, 'the field Connection named is not forwarded');
    assert.match(hidden, /cache-status: catalog-gateway; fwd=miss; fwd-status=200; detail=authorization/i);
    const next = await fx.get('/page');
    assert.equal(next.body, 'personal', 'the next user is not served the answer made without a token');
  } finally {
    await fx.stop();
    await origin.close();
  }
});

test('RFC 9110 §9.3.8, §7.6.2: TRACE is not forwarded (405); an OPTIONS at Max-Forwards 0 is answered by the gateway, a larger count goes on one less', async () => {
  const origin = await startScriptedOrigin((_req, res) => {
    res.writeHead(200, { allow: 'GET, OPTIONS', 'content-length': '0' });
    res.end();
  });
  const fx = await startGatewayFixture(origin.url, {
    'gateway.routes': [
      { prefix: '/pass', mode: 'pass', auth: 'off' },
      { prefix: '/', mode: 'http', auth: 'off' },
    ],
  });
  try {
    const send = (target: string, method: string, headers: Record<string, string> = {}): Promise<Reply> =>
      get(`${fx.gateway.url}${target}`, headers, method, undefined, fx.dispatcher);
    for (const target of ['/echo', '/pass/echo']) {
      const trace = await send(target, 'TRACE', { cookie: 'session=secret' });
      assert.equal(trace.status, 405, target);
      assert.match(String(trace.headers.allow), /OPTIONS/);
      assert.doesNotMatch(trace.body, /secret/);
      assert.equal(origin.count(target, 'TRACE'), 0, `${target}: TRACE reached the origin`);
      const last = await send(target, 'OPTIONS', { 'max-forwards': '0' });
      assert.equal(last.status, 200, target);
      assert.equal(last.headers['content-length'], '0');
      assert.match(String(last.headers.allow), /GET/);
      assert.equal(origin.count(target, 'OPTIONS'), 0, `${target}: an OPTIONS at Max-Forwards 0 was forwarded`);
      await send(target, 'OPTIONS', { 'max-forwards': '3' });
      await send(target, 'OPTIONS');
      const forwarded = origin.seen.filter((s) => s.target === target && s.method === 'OPTIONS').map((s) => s.headers['max-forwards']);
      assert.deepEqual(forwarded, ['2', undefined], target);
    }
  } finally {
    await fx.stop();
    await origin.close();
  }
});

test('RFC 9111 §5.2.2.2: a stale must-revalidate response the origin cannot be reached to validate gets a 504, not the stale copy', async () => {
  const origin = await startScriptedOrigin((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'max-age=1, must-revalidate', etag: '"m"' });
    res.end('kept');
  });
  const fx = await startGatewayFixture(origin.url, { 'gateway.routes': [{ prefix: '/', mode: 'http', auth: 'off', staleIfDisconnectedSeconds: 60 }] });
  try {
    const send = (): Promise<Reply> => get(`${fx.gateway.url}/page`, {}, 'GET', undefined, fx.dispatcher);
    assert.equal((await send()).body, 'kept');
    await origin.close();
    fx.clock.advance(2000);
    const cut = await send();
    assert.equal(cut.status, 504, cut.body);
    assert.equal((JSON.parse(cut.body) as { type: string }).type, 'https://catalog.example/problems/gateway-timeout');
    assert.match(String(cut.headers['cache-status']), /detail=ECONNREFUSED/);
  } finally {
    await fx.stop();
  }
});
